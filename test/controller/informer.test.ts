/**
 * controller/informer.ts against a scripted API server on loopback (node:http speaking the list
 * and watch protocol): re-list on 410 Gone, resuming from a bookmark after a normal close, and
 * the silent-watch watchdog.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import { Informer, objectKey, splitKey, type ChangeKind } from "../../controller/informer.ts";

interface Obj {
  metadata: { name: string; namespace: string; resourceVersion: string };
}
const obj = (name: string, rv: string): Obj => ({ metadata: { name, namespace: "ns", resourceVersion: rv } });

type WatchScript = (res: ServerResponse, query: URLSearchParams) => void;

let server: Server | undefined;
let informer: Informer<Obj> | undefined;

afterEach(async () => {
  await informer?.stop();
  informer = undefined;
  server?.closeAllConnections();
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** A server whose n-th watch request is answered by watches[n] (the last one repeats). */
async function fakeApi(watches: WatchScript[], watchQueries: URLSearchParams[]): Promise<KubeConfig> {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.searchParams.get("watch") === "true") {
      watchQueries.push(url.searchParams);
      res.writeHead(200, { "content-type": "application/json" });
      const script = watches[Math.min(watchQueries.length - 1, watches.length - 1)]!;
      script(res, url.searchParams);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "c", server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: "u" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  return kc;
}

const send = (res: ServerResponse, type: string, object: unknown): boolean => res.write(JSON.stringify({ type, object }) + "\n");
const hang: WatchScript = () => undefined;

async function until(fn: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("Informer", () => {
  it("should make and split namespace/name keys", () => {
    expect(objectKey(obj("a", "1"))).toBe("ns/a");
    expect(splitKey("ns/a")).toEqual({ namespace: "ns", name: "a" });
    expect(splitKey("a")).toEqual({ namespace: "", name: "a" });
  });

  it("should re-list after a 410 Gone and drop what the new list no longer has", async () => {
    const lists = [
      { items: [obj("a", "1")], resourceVersion: "10" },
      { items: [obj("b", "20")], resourceVersion: "20" },
    ];
    let listed = 0;
    const queries: URLSearchParams[] = [];
    const kc = await fakeApi(
      [
        (res) => {
          send(res, "ERROR", { kind: "Status", code: 410, message: "too old resource version" });
          res.end();
        },
        hang,
      ],
      queries,
    );
    const seen: [string, ChangeKind][] = [];
    informer = new Informer<Obj>({
      name: "test",
      kubeConfig: kc,
      list: () => Promise.resolve(lists[Math.min(listed++, 1)]!),
      watchPath: "/api/v1/things",
      onChange: (o, kind) => seen.push([o.metadata.name, kind]),
      resyncMs: 0,
    });
    informer.start();
    await informer.waitForSync();
    await until(() => queries.length >= 2);
    expect(listed).toBe(2);
    expect(queries[0]!.get("resourceVersion")).toBe("10");
    expect(queries[1]!.get("resourceVersion")).toBe("20");
    expect(informer.list().map((o) => o.metadata.name)).toEqual(["b"]);
    expect(seen).toEqual([
      ["a", "add"],
      ["b", "add"],
      ["a", "delete"],
    ]);
  });

  it("should apply events, and resume from a bookmark's resourceVersion without re-listing after a normal close", async () => {
    let listed = 0;
    const queries: URLSearchParams[] = [];
    const kc = await fakeApi(
      [
        (res) => {
          send(res, "ADDED", obj("a", "11"));
          send(res, "MODIFIED", obj("a", "12"));
          send(res, "ADDED", obj("b", "13"));
          send(res, "DELETED", obj("b", "14"));
          send(res, "BOOKMARK", { metadata: { resourceVersion: "99" } });
          res.end();
        },
        hang,
      ],
      queries,
    );
    const seen: [string, ChangeKind][] = [];
    informer = new Informer<Obj>({
      name: "test",
      kubeConfig: kc,
      list: () => {
        listed++;
        return Promise.resolve({ items: [], resourceVersion: "10" });
      },
      watchPath: "/api/v1/things",
      onChange: (o, kind) => seen.push([o.metadata.name, kind]),
      resyncMs: 0,
    });
    informer.start();
    await until(() => queries.length >= 2);
    expect(listed).toBe(1);
    expect(queries[1]!.get("resourceVersion")).toBe("99");
    expect(queries[0]!.get("allowWatchBookmarks")).toBe("true");
    expect(informer.get("ns/a")?.metadata.resourceVersion).toBe("12");
    expect(informer.get("ns/b")).toBeUndefined();
    expect(seen).toEqual([
      ["a", "add"],
      ["a", "update"],
      ["b", "add"],
      ["b", "delete"],
    ]);
  });

  it("should abort a silent watch and re-list (watchdog), and hand every object over again at resync", async () => {
    let listed = 0;
    const queries: URLSearchParams[] = [];
    const kc = await fakeApi([hang], queries);
    const seen: ChangeKind[] = [];
    informer = new Informer<Obj>({
      name: "test",
      kubeConfig: kc,
      list: () => {
        listed++;
        return Promise.resolve({ items: [obj("a", "1")], resourceVersion: "10" });
      },
      watchPath: "/api/v1/things",
      onChange: (_o, kind) => seen.push(kind),
      silentMs: 150,
      resyncMs: 100,
    });
    informer.start();
    await until(() => listed >= 2 && queries.length >= 2);
    await until(() => seen.includes("resync"));
    expect(seen[0]).toBe("add");
  });
});
