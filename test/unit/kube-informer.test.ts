/**
 * What the API's caches add to the shared informer (core/kube/informer.ts): secondary indexes
 * kept in step with adds, updates and deletes; a transform applied before caching; waits for a
 * resourceVersion (read-your-writes), moved by events and bookmarks; handlers told whether a
 * change came from a watch event or a list, and when a list is whole. The watch is a scripted
 * WatchFn (the informer takes the watch as a function); the list/watch protocol against a server
 * is in test/controller/informer.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { compareResourceVersions, Informer, type WatchFn } from "../../core/kube/informer.ts";

interface Obj {
  metadata: { name: string; namespace: string; resourceVersion: string; labels?: Record<string, string>; managedFields?: unknown };
}
const obj = (name: string, rv: string, tenant: string): Obj => ({
  metadata: { name, namespace: "ns", resourceVersion: rv, labels: { tenant }, managedFields: [{ big: true }] },
});

/** A watch whose events the test pushes. */
function scripted(): { watch: WatchFn; push: (phase: string, o: unknown) => void } {
  let onEvent: ((phase: string, o: unknown) => void) | undefined;
  return {
    watch: (_path, _params, cb) => {
      onEvent = cb;
      return Promise.resolve({ abort: () => undefined });
    },
    push: (phase, o) => onEvent!(phase, o),
  };
}

let informer: Informer<Obj> | undefined;
afterEach(async () => {
  await informer?.stop();
  informer = undefined;
});

describe("the shared informer's caches", () => {
  it("compares resourceVersions as KEP-5504 says: integers of any length, nothing else", () => {
    expect(compareResourceVersions("9", "10")).toBe(-1);
    expect(compareResourceVersions("123456789012345678901", "123456789012345678900")).toBe(1);
    expect(compareResourceVersions("42", "42")).toBe(0);
    expect(compareResourceVersions("042", "42")).toBeNull();
    expect(compareResourceVersions("abc", "1")).toBeNull();
  });

  it("keeps indexes in step with adds, updates and deletes, and trims objects before caching them", async () => {
    const w = scripted();
    const seen: [string, string, boolean][] = [];
    informer = new Informer<Obj>({
      name: "t",
      watch: w.watch,
      list: () => Promise.resolve({ items: [obj("a", "5", "acme"), obj("b", "6", "acme")], resourceVersion: "10" }),
      watchPath: "/x",
      indexers: { tenant: (o) => [o.metadata.labels?.tenant ?? ""] },
      transform: (o) => ({ metadata: { ...o.metadata, managedFields: undefined } }),
      onChange: (o, kind, info) => seen.push([o.metadata.name, kind, info.live]),
      resyncMs: 0,
    });
    informer.start();
    await informer.waitForSync();
    expect(
      informer
        .byIndex("tenant", "acme")
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(["a", "b"]);
    expect(informer.get("ns/a")?.metadata.managedFields).toBeUndefined();
    await new Promise((r) => setImmediate(r));
    w.push("MODIFIED", obj("b", "11", "globex"));
    w.push("ADDED", obj("c", "12", "globex"));
    w.push("DELETED", obj("a", "13", "acme"));
    expect(informer.byIndex("tenant", "acme")).toEqual([]);
    expect(
      informer
        .byIndex("tenant", "globex")
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(["b", "c"]);
    expect(seen).toEqual([
      ["a", "add", false],
      ["b", "add", false],
      ["b", "update", true],
      ["c", "add", true],
      ["a", "delete", true],
    ]);
  });

  it("resolves a resourceVersion wait when an event or a bookmark reaches it, and times out otherwise", async () => {
    const w = scripted();
    let listed = 0;
    informer = new Informer<Obj>({
      name: "t",
      watch: w.watch,
      list: () => Promise.resolve({ items: [], resourceVersion: "100" }),
      watchPath: "/x",
      onListed: () => listed++,
      resyncMs: 0,
    });
    informer.start();
    await informer.waitForSync();
    await new Promise((r) => setImmediate(r));
    expect(listed).toBe(1);
    expect(await informer.waitForResourceVersion("99", 10)).toBe(true);
    const byEvent = informer.waitForResourceVersion("101", 5000);
    const byBookmark = informer.waitForResourceVersion("150", 5000);
    const never = informer.waitForResourceVersion("1000", 50);
    w.push("ADDED", obj("x", "101", "t"));
    expect(await byEvent).toBe(true);
    w.push("BOOKMARK", { metadata: { resourceVersion: "160" } });
    expect(await byBookmark).toBe(true);
    expect(await never).toBe(false);
    expect(informer.resourceVersion).toBe("160");
  });
});
