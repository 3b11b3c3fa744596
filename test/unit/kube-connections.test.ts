/**
 * shareConnections (core/net/kube-connections.ts) is pure plumbing around client-node's
 * per-request dispatchers; this checks it with a stand-in KubeConfig. That it really keeps one
 * connection pool against a real apiserver shows in `make bench-k8s` (Jobs created per second).
 */
import { describe, expect, it } from "vitest";
import { shareConnections } from "../../core/net/kube-connections.ts";

class Dispatcher {
  closed = false;
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

class Context {
  dispatcher: Dispatcher | undefined;
  getDispatcher(): Dispatcher | undefined {
    return this.dispatcher;
  }
  setDispatcher(d: Dispatcher): void {
    this.dispatcher = d;
  }
}

/** Like client-node 2.0: a new dispatcher for every request, and a header set each time. */
class KubeConfigLike {
  made: Dispatcher[] = [];
  applySecurityAuthentication(context: Context & { authorization?: string }): Promise<void> {
    const d = new Dispatcher();
    this.made.push(d);
    context.setDispatcher(d);
    context.authorization = `Bearer token-${this.made.length}`;
    return Promise.resolve();
  }
}

describe("shareConnections", () => {
  it("keeps the first dispatcher for every request, closes the spare ones, and still applies the headers", async () => {
    const kc = shareConnections(new KubeConfigLike());
    const contexts = [new Context(), new Context(), new Context()] as (Context & { authorization?: string })[];
    for (const c of contexts) await kc.applySecurityAuthentication(c);
    const first = kc.made[0]!;
    expect(contexts.map((c) => c.dispatcher)).toEqual([first, first, first]);
    expect(kc.made.map((d) => d.closed)).toEqual([false, true, true]);
    expect(contexts.map((c) => c.authorization)).toEqual(["Bearer token-1", "Bearer token-2", "Bearer token-3"]);
  });

  it("is harmless when applied twice", async () => {
    const kc = shareConnections(shareConnections(new KubeConfigLike()));
    const a = new Context();
    const b = new Context();
    await kc.applySecurityAuthentication(a);
    await kc.applySecurityAuthentication(b);
    expect(b.dispatcher).toBe(a.dispatcher);
    expect(a.dispatcher?.closed).toBe(false);
  });
});
