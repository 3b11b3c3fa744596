/**
 * A Chrome DevTools Protocol client over Chromium's `--remote-debugging-pipe` (fd 3 in, fd 4 out,
 * JSON messages separated by NUL bytes): no port is opened, so nothing else on the machine can
 * drive the browser. Commands may be sent to the browser or, with the flat session protocol
 * (Target.attachToTarget flatten: true), to one page's session. Events go to listeners by method.
 */
import type { Readable, Writable } from "node:stream";

type Json = Record<string, unknown>;

export class CdpError extends Error {
  override readonly name = "CdpError";
}

interface Pending {
  resolve: (v: Json) => void;
  reject: (e: Error) => void;
}

export class CdpConnection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, Set<(params: Json, sessionId: string | undefined) => void>>();
  private buffer: Buffer = Buffer.alloc(0);
  private closedWith: Error | null = null;
  private readonly out: Writable;

  constructor(input: Readable, out: Writable) {
    this.out = out;
    input.on("data", (chunk: Buffer) => this.receive(chunk));
    input.on("close", () => this.fail(new CdpError("the browser closed its DevTools pipe")));
    input.on("error", (e: Error) => this.fail(new CdpError(`DevTools pipe: ${e.message}`)));
    out.on("error", (e: Error) => this.fail(new CdpError(`DevTools pipe: ${e.message}`)));
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    for (let end = this.buffer.indexOf(0); end >= 0; end = this.buffer.indexOf(0)) {
      const text = this.buffer.subarray(0, end).toString("utf8");
      this.buffer = this.buffer.subarray(end + 1);
      let msg: { id?: number; method?: string; params?: Json; result?: Json; error?: { message: string }; sessionId?: string };
      try {
        msg = JSON.parse(text) as typeof msg;
      } catch {
        continue;
      }
      if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p?.reject(new CdpError(msg.error.message));
        else p?.resolve(msg.result ?? {});
      } else if (msg.method) {
        for (const l of this.listeners.get(msg.method) ?? []) l(msg.params ?? {}, msg.sessionId);
      }
    }
  }

  private fail(err: Error): void {
    if (this.closedWith) return;
    this.closedWith = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  get closed(): boolean {
    return this.closedWith !== null;
  }

  /** Sends a command (to a page's session when given) and resolves with its result. */
  send<T = Json>(method: string, params: Json = {}, sessionId?: string): Promise<T> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: Json) => void, reject });
      this.out.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + "\0");
    });
  }

  /** Listens to an event; returns the function that stops listening. */
  on(method: string, listener: (params: Json, sessionId: string | undefined) => void): () => void {
    let set = this.listeners.get(method);
    if (!set) this.listeners.set(method, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }
}
