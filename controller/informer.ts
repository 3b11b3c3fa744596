/**
 * A shared informer (client-go's reflector + store, the part controller-runtime's caches build
 * on): list, then watch from the list's resourceVersion, keeping a cache of the objects; handlers
 * only ever enqueue keys (ARCHITECTURE.md "Controller rules": reconcile reads the world, never the
 * event).
 *
 * - any watch error, and a 410 Gone (resourceVersion too old) in particular, leads to a re-list
 *   after a backoff; a watch the server closes normally resumes from the last resourceVersion;
 * - bookmarks are asked for, so the resourceVersion keeps moving on a quiet watch;
 * - a watchdog aborts a watch that has been silent (no event, no bookmark) for `silentMs` and
 *   re-lists: a half-open connection must not freeze the cache;
 * - every `resyncMs` all cached objects are handed to the handler again (a level-based safety net).
 */
import { Watch, type KubeConfig } from "@kubernetes/client-node";

/** What an informer needs of an object. */
export interface KubernetesObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

export type ChangeKind = "add" | "update" | "delete" | "resync";

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

export interface InformerOptions<T extends KubernetesObject> {
  /** For logs. */
  name: string;
  kubeConfig: KubeConfig;
  list(): Promise<ListResult<T>>;
  /** The watch URL path, e.g. `/apis/batch/v1/jobs`. */
  watchPath: string;
  labelSelector?: string;
  onChange(obj: T, kind: ChangeKind): void;
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
  readonly #stop = new AbortController();
  #resourceVersion = "";
  #synced = false;
  #syncedWaiters: (() => void)[] = [];
  #loop: Promise<void> | undefined;
  #resync: NodeJS.Timeout | undefined;
  #failures = 0;

  constructor(o: InformerOptions<T>) {
    this.#o = o;
  }

  get(key: string): T | undefined {
    return this.#cache.get(key);
  }

  list(): T[] {
    return [...this.#cache.values()];
  }

  get hasSynced(): boolean {
    return this.#synced;
  }

  /** Resolves once the first list has filled the cache. */
  waitForSync(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve) => this.#syncedWaiters.push(resolve));
  }

  start(): void {
    if (this.#loop) return;
    this.#loop = this.#run();
    const resyncMs = this.#o.resyncMs ?? 600_000;
    if (resyncMs > 0) {
      this.#resync = setInterval(() => {
        for (const obj of this.#cache.values()) this.#o.onChange(obj, "resync");
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
    const seen = new Set<string>();
    for (const obj of items) {
      const key = objectKey(obj);
      seen.add(key);
      const prior = this.#cache.get(key);
      this.#cache.set(key, obj);
      if (!prior) this.#o.onChange(obj, "add");
      else if (prior.metadata?.resourceVersion !== obj.metadata?.resourceVersion) this.#o.onChange(obj, "update");
    }
    for (const [key, obj] of this.#cache) {
      if (seen.has(key)) continue;
      this.#cache.delete(key);
      this.#o.onChange(obj, "delete");
    }
    this.#resourceVersion = resourceVersion;
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#syncedWaiters.splice(0)) resolve();
    }
  }

  /** One watch from the current resourceVersion; resolves when the server closes it normally. */
  #watchOnce(): Promise<void> {
    const silentMs = this.#o.silentMs ?? 300_000;
    return new Promise<void>((resolve, reject) => {
      let controller: AbortController | undefined;
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
      new Watch(this.#o.kubeConfig)
        .watch(
          this.#o.watchPath,
          params,
          (phase: string, obj: T & { code?: number; message?: string }) => {
            if (finished) return;
            arm();
            if (phase === "ERROR") {
              finish(
                obj.code === 410 ? new Gone(obj.message ?? "Gone") : new Error(`watch error ${obj.code ?? "?"}: ${obj.message ?? ""}`),
              );
              return;
            }
            const rv = obj.metadata?.resourceVersion;
            if (rv) this.#resourceVersion = rv;
            if (phase === "BOOKMARK") return;
            const key = objectKey(obj);
            if (phase === "DELETED") {
              this.#cache.delete(key);
              this.#o.onChange(obj, "delete");
            } else {
              const prior = this.#cache.get(key);
              this.#cache.set(key, obj);
              this.#o.onChange(obj, prior ? "update" : "add");
            }
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
