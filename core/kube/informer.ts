/**
 * A shared informer (client-go's reflector + store + indexer, the part controller-runtime's caches
 * build on): list, then watch from the list's resourceVersion, keeping a cache of the objects. The
 * controller's handlers only ever enqueue keys (ARCHITECTURE.md "Controller rules": reconcile
 * reads the world, never the event); the API's replicas read through the same caches
 * (api/store/kubernetes/), so it lives in core. It knows the Kubernetes client only through
 * `watch` (structurally typed, like core/net/kube-connections.ts): core imports no client.
 *
 * - any watch error, and a 410 Gone (resourceVersion too old) in particular, leads to a re-list
 *   after a backoff; a watch the server closes normally resumes from the last resourceVersion;
 * - bookmarks are asked for, so the resourceVersion keeps moving on a quiet watch;
 * - a watchdog aborts a watch that has been silent (no event, no bookmark) for `silentMs` and
 *   re-lists: a half-open connection must not freeze the cache;
 * - every `resyncMs` all cached objects are handed to the handler again (a level-based safety net);
 * - `indexers` keep secondary indexes (client-go's Indexers): `byIndex("tenant", "acme")`;
 * - `transform` trims each object before it is cached (client-go's SetTransform; e.g. managedFields);
 * - `waitForResourceVersion(rv)` resolves once the cache has seen every change up to `rv` — the
 *   read-your-writes of a replica that just wrote (resourceVersions of one resource, from one
 *   etcd, are decimal integers that grow with every write: KEP-5504 "comparable resource
 *   versions"; an unparsable one is never waited for).
 */

/** What an informer needs of an object. */
export interface KubernetesObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

export type ChangeKind = "add" | "update" | "delete" | "resync";

/** What a handler learns besides the object: the cached version it replaces, and whether a watch event (not a list) told it. */
export interface ChangeInfo<T> {
  prior: T | undefined;
  /** True for a watch event; false for a change a (re-)list found, and for resyncs. */
  live: boolean;
}

/**
 * The watch call: client-node's `Watch.watch` has this shape (`new Watch(kc).watch`). Events are
 * handed over in the order the server sent them; `done` is called once when the watch ends.
 */
export type WatchFn = (
  path: string,
  params: Record<string, string | number | boolean | undefined>,
  onEvent: (phase: string, obj: unknown) => void,
  done: (err: unknown) => void,
) => Promise<{ abort(): void }>;

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

export interface InformerOptions<T extends KubernetesObject> {
  /** For logs. */
  name: string;
  watch: WatchFn;
  list(): Promise<ListResult<T>>;
  /** The watch URL path, e.g. `/apis/batch/v1/jobs`. */
  watchPath: string;
  labelSelector?: string;
  onChange?(obj: T, kind: ChangeKind, info: ChangeInfo<T>): void;
  /** Secondary indexes: name → the index values of an object. */
  indexers?: Readonly<Record<string, (obj: T) => readonly string[]>>;
  /** Applied to every object before it is cached (and handed to onChange). */
  transform?(obj: T): T;
  /** Called after every (re-)list has been applied, when the cache is whole again. */
  onListed?(): void;
  /** Default 10 min; 0 disables. */
  resyncMs?: number;
  /** Default 5 min: longer than the server's bookmark interval (≈1 min). */
  silentMs?: number;
  /** Server-side watch timeout; default 5 min (client-go picks 5–10 min). */
  watchTimeoutSeconds?: number;
  log?: (msg: string) => void;
}

/** `namespace/name` (or `name` for a cluster-scoped object). */
export function objectKey(obj: KubernetesObject): string {
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${obj.metadata?.name ?? ""}` : (obj.metadata?.name ?? "");
}

/** The namespace and name of a key made by objectKey. */
export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf("/");
  return i < 0 ? { namespace: "", name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

const RV = /^[1-9]\d*$/;

/**
 * Compares two resourceVersions of one resource as KEP-5504 defines it (client-go's
 * CompareResourceVersion): positive integers of any length, no leading zeros. Null when either is
 * not one (then nothing can be said of their order).
 */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number | null {
  if (!a || !b || !RV.test(a) || !RV.test(b)) return null;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a === b ? 0 : a < b ? -1 : 1;
}

/** Waits `ms`, or less if `signal` aborts first (never rejects). */
export const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

class Gone extends Error {}

export class Informer<T extends KubernetesObject> {
  readonly #o: InformerOptions<T>;
  readonly #cache = new Map<string, T>();
  /** index name → index value → keys. */
  readonly #indexes = new Map<string, Map<string, Set<string>>>();
  readonly #stop = new AbortController();
  #resourceVersion = "";
  #synced = false;
  #syncedWaiters: (() => void)[] = [];
  /** Waiters for a resourceVersion, resolved as the cache reaches it. */
  #rvWaiters: { rv: string; resolve: () => void }[] = [];
  #loop: Promise<void> | undefined;
  #resync: NodeJS.Timeout | undefined;
  #failures = 0;

  constructor(o: InformerOptions<T>) {
    this.#o = o;
    for (const name of Object.keys(o.indexers ?? {})) this.#indexes.set(name, new Map());
  }

  get(key: string): T | undefined {
    return this.#cache.get(key);
  }

  list(): T[] {
    return [...this.#cache.values()];
  }

  get size(): number {
    return this.#cache.size;
  }

  /** The objects whose index `name` has `value` (an unknown index throws). */
  byIndex(name: string, value: string): T[] {
    const index = this.#indexes.get(name);
    if (!index) throw new Error(`informer ${this.#o.name}: no index ${name}`);
    return [...(index.get(value) ?? [])].map((key) => this.#cache.get(key)!);
  }

  /** The resourceVersion the cache is at (of the last list, event or bookmark). */
  get resourceVersion(): string {
    return this.#resourceVersion;
  }

  get hasSynced(): boolean {
    return this.#synced;
  }

  /** Resolves once the first list has filled the cache. */
  waitForSync(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve) => this.#syncedWaiters.push(resolve));
  }

  /**
   * Resolves true once the cache has seen every change up to `rv` (a write's resourceVersion),
   * false after `timeoutMs` (or at once for an rv that is not a number).
   */
  waitForResourceVersion(rv: string | undefined, timeoutMs: number): Promise<boolean> {
    if (!rv || !RV.test(rv)) return Promise.resolve(false);
    if (this.#synced && (compareResourceVersions(this.#resourceVersion, rv) ?? -1) >= 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        rv,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.#rvWaiters = this.#rvWaiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      timer.unref();
      this.#rvWaiters.push(waiter);
    });
  }

  start(): void {
    if (this.#loop) return;
    this.#loop = this.#run();
    const resyncMs = this.#o.resyncMs ?? 600_000;
    if (resyncMs > 0) {
      this.#resync = setInterval(() => {
        for (const obj of this.#cache.values()) this.#o.onChange?.(obj, "resync", { prior: obj, live: false });
      }, resyncMs);
      this.#resync.unref();
    }
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    if (this.#resync) clearInterval(this.#resync);
    await this.#loop;
  }

  #log(msg: string): void {
    this.#o.log?.(`informer ${this.#o.name}: ${msg}`);
  }

  #put(key: string, obj: T): T | undefined {
    const prior = this.#cache.get(key);
    if (prior) this.#unindex(key, prior);
    this.#cache.set(key, obj);
    for (const [name, fn] of Object.entries(this.#o.indexers ?? {})) {
      const index = this.#indexes.get(name)!;
      for (const value of fn(obj)) {
        let keys = index.get(value);
        if (!keys) index.set(value, (keys = new Set()));
        keys.add(key);
      }
    }
    return prior;
  }

  #remove(key: string): T | undefined {
    const prior = this.#cache.get(key);
    if (!prior) return undefined;
    this.#unindex(key, prior);
    this.#cache.delete(key);
    return prior;
  }

  #unindex(key: string, obj: T): void {
    for (const [name, fn] of Object.entries(this.#o.indexers ?? {})) {
      const index = this.#indexes.get(name)!;
      for (const value of fn(obj)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }

  /** Moves the cache's resourceVersion and wakes the waiters it satisfies. */
  #advance(rv: string): void {
    this.#resourceVersion = rv;
    if (!this.#synced || this.#rvWaiters.length === 0) return;
    const reached = (w: { rv: string }): boolean => (compareResourceVersions(rv, w.rv) ?? -1) >= 0;
    const due = this.#rvWaiters.filter(reached);
    if (due.length === 0) return;
    this.#rvWaiters = this.#rvWaiters.filter((w) => !reached(w));
    for (const w of due) w.resolve();
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) await this.#relist();
        needList = false;
        await this.#watchOnce();
        this.#failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        needList = true;
        const backoff = Math.min(200 * 2 ** this.#failures++, 30_000);
        this.#log(
          `${err instanceof Gone ? "resourceVersion expired" : `watch failed: ${err instanceof Error ? (err.message.split("\n")[0] ?? "") : "unknown"}`}; re-listing in ${backoff} ms`,
        );
        await sleep(backoff, signal);
      }
    }
  }

  async #relist(): Promise<void> {
    const { items, resourceVersion } = await this.#o.list();
    const transform = (o: T): T => (this.#o.transform ? this.#o.transform(o) : o);
    const seen = new Set<string>();
    for (const raw of items) {
      const obj = transform(raw);
      const key = objectKey(obj);
      seen.add(key);
      const prior = this.#put(key, obj);
      if (!prior) this.#o.onChange?.(obj, "add", { prior, live: false });
      else if (prior.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.#o.onChange?.(obj, "update", { prior, live: false });
    }
    for (const [key, obj] of this.#cache) {
      if (seen.has(key)) continue;
      this.#remove(key);
      this.#o.onChange?.(obj, "delete", { prior: obj, live: false });
    }
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#syncedWaiters.splice(0)) resolve();
    }
    this.#o.onListed?.();
    this.#advance(resourceVersion);
  }

  /** Applies one watch event to the cache (events arrive in the server's order). */
  #apply(phase: string, raw: T): void {
    const rv = raw.metadata?.resourceVersion;
    if (phase !== "BOOKMARK") {
      const obj = this.#o.transform ? this.#o.transform(raw) : raw;
      const key = objectKey(obj);
      if (phase === "DELETED") {
        const prior = this.#remove(key);
        this.#o.onChange?.(obj, "delete", { prior, live: true });
      } else {
        const prior = this.#put(key, obj);
        this.#o.onChange?.(obj, prior ? "update" : "add", { prior, live: true });
      }
    }
    if (rv) this.#advance(rv);
  }

  /** One watch from the current resourceVersion; resolves when the server closes it normally. */
  #watchOnce(): Promise<void> {
    const silentMs = this.#o.silentMs ?? 300_000;
    return new Promise<void>((resolve, reject) => {
      let controller: { abort(): void } | undefined;
      let finished = false;
      let watchdog: NodeJS.Timeout | undefined;
      const finish = (err?: unknown): void => {
        if (finished) return;
        finished = true;
        if (watchdog) clearTimeout(watchdog);
        this.#stop.signal.removeEventListener("abort", onStop);
        controller?.abort();
        if (err) reject(err instanceof Error ? err : new Error(JSON.stringify(err)));
        else resolve();
      };
      const arm = (): void => {
        if (watchdog) clearTimeout(watchdog);
        watchdog = setTimeout(() => finish(new Error(`no event for ${silentMs} ms`)), silentMs);
        watchdog.unref();
      };
      const onStop = (): void => finish();
      this.#stop.signal.addEventListener("abort", onStop, { once: true });
      arm();
      const params: Record<string, string | number | boolean | undefined> = {
        resourceVersion: this.#resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: this.#o.watchTimeoutSeconds ?? 300,
        ...(this.#o.labelSelector ? { labelSelector: this.#o.labelSelector } : {}),
      };
      this.#o
        .watch(
          this.#o.watchPath,
          params,
          (phase: string, raw: unknown) => {
            if (finished) return;
            const obj = raw as T & { code?: number; message?: string };
            arm();
            if (phase === "ERROR") {
              finish(
                obj.code === 410 ? new Gone(obj.message ?? "Gone") : new Error(`watch error ${obj.code ?? "?"}: ${obj.message ?? ""}`),
              );
              return;
            }
            this.#apply(phase, obj);
          },
          (err: unknown) =>
            finish(err === null || err === undefined ? undefined : err instanceof Error ? err : new Error(JSON.stringify(err))),
        )
        .then((c) => {
          controller = c;
          if (finished) c.abort();
        }, finish);
    });
  }
}
