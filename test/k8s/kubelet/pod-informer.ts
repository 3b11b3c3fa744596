/**
 * A list-watch cache of pods with the robustness client-go's reflector has and the TypeScript
 * client lacks (the STYLE.md lesson from pepr): list, then watch from the list's
 * resourceVersion; on any watch error or 410 Gone, back off and re-list; a watchdog re-lists a
 * watch that has gone silent longer than its server-side timeout; and a periodic resync replays
 * every cached pod so that level-based handlers converge even if an event was missed.
 */
import { CoreV1Api, Watch, type KubeConfig, type V1Pod } from "@kubernetes/client-node";

export interface PodInformerOptions {
  /** A field selector (`spec.nodeName=<node>` for a kubelet, `spec.nodeName=` for a scheduler). */
  readonly fieldSelector: string;
  /** Called for every added, modified or resynced pod. */
  readonly onUpsert: (pod: V1Pod) => void;
  /** Called when a pod is deleted, or vanished between two lists. */
  readonly onDelete: (pod: V1Pod) => void;
  /** Replay interval of the cache (informer resync). */
  readonly resyncMs?: number;
  /**
   * Server-side watch timeout (default 25 s: under the client's 30 s inactivity timeout, so an
   * idle watch is closed by the server, cleanly); the watchdog fires 15 s after it.
   */
  readonly watchTimeoutSeconds?: number;
  readonly log?: (line: string) => void;
}

const describe = (err: unknown): string => (err instanceof Error ? err.message : JSON.stringify(err));

const key = (pod: V1Pod): string => `${pod.metadata?.namespace ?? ""}/${pod.metadata?.name ?? ""}`;

/** A running pod informer; `stop()` ends it for good. */
export class PodInformer {
  readonly #kc: KubeConfig;
  readonly #opts: PodInformerOptions;
  readonly #cache = new Map<string, V1Pod>();
  #resourceVersion = "";
  #abort: AbortController | undefined;
  /** Bumped whenever a watch is replaced: callbacks of an older watch are ignored. */
  #generation = 0;
  #stopped = false;
  #lastEvent = Date.now();
  #failures = 0;
  #timers: NodeJS.Timeout[] = [];

  constructor(kc: KubeConfig, opts: PodInformerOptions) {
    this.#kc = kc;
    this.#opts = opts;
  }

  /** Lists once (rejecting if that fails), then keeps watching in the background. */
  async start(): Promise<void> {
    await this.#list();
    this.#watch();
    const resync = this.#opts.resyncMs ?? 10_000;
    const silentMs = ((this.#opts.watchTimeoutSeconds ?? 25) + 15) * 1000;
    this.#timers.push(
      setInterval(() => {
        this.resync();
      }, resync),
      setInterval(() => {
        if (Date.now() - this.#lastEvent > silentMs) this.#restart("watch silent", true);
      }, 5000),
    );
  }

  /** Replays every cached pod to onUpsert now (what the periodic resync does). */
  resync(): void {
    for (const pod of this.#cache.values()) this.#opts.onUpsert(pod);
  }

  /** The cached pod `namespace/name`. */
  get(namespace: string, name: string): V1Pod | undefined {
    return this.#cache.get(`${namespace}/${name}`);
  }

  stop(): void {
    this.#stopped = true;
    for (const t of this.#timers) clearInterval(t);
    this.#abort?.abort();
  }

  async #list(): Promise<void> {
    const list = await this.#kc.makeApiClient(CoreV1Api).listPodForAllNamespaces({ fieldSelector: this.#opts.fieldSelector });
    const seen = new Set<string>();
    // Watch events carry the API's JSON (timestamps as strings) while typed calls return Dates;
    // the round trip gives the cache one shape whichever way a pod arrived.
    for (const pod of list.items.map((p) => JSON.parse(JSON.stringify(p)) as V1Pod)) {
      seen.add(key(pod));
      this.#cache.set(key(pod), pod);
      this.#opts.onUpsert(pod);
    }
    for (const [k, pod] of this.#cache) {
      if (!seen.has(k)) {
        this.#cache.delete(k);
        this.#opts.onDelete(pod);
      }
    }
    this.#resourceVersion = list.metadata?.resourceVersion ?? "";
    this.#lastEvent = Date.now();
  }

  #watch(): void {
    if (this.#stopped) return;
    const generation = ++this.#generation;
    const current = (): boolean => generation === this.#generation && !this.#stopped;
    this.#lastEvent = Date.now(); // a fresh watch gets a full timeout before the watchdog bites
    const query = {
      fieldSelector: this.#opts.fieldSelector,
      resourceVersion: this.#resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: this.#opts.watchTimeoutSeconds ?? 25,
    };
    new Watch(this.#kc)
      .watch(
        "/api/v1/pods",
        query,
        (phase: string, obj: V1Pod & { code?: number }) => {
          if (!current()) return;
          this.#lastEvent = Date.now();
          this.#failures = 0;
          if (phase === "ERROR") {
            // 410 Gone: our resourceVersion was compacted away; only a fresh list recovers.
            this.#restart(`watch error ${String(obj.code)}`, true);
            return;
          }
          if (obj.metadata?.resourceVersion) this.#resourceVersion = obj.metadata.resourceVersion;
          if (phase === "BOOKMARK") return;
          // DELETED also means "no longer matches the field selector" (a pod bound elsewhere).
          if (phase === "DELETED") {
            this.#cache.delete(key(obj));
            this.#opts.onDelete(obj);
          } else {
            this.#cache.set(key(obj), obj);
            this.#opts.onUpsert(obj);
          }
        },
        (err: unknown) => {
          if (!current()) return;
          // Called when the watch ends. A server-side close (timeoutSeconds) or the client's own
          // 30 s inactivity timeout (TimeoutError: an idle cluster sends nothing) just resumes from
          // our resourceVersion (a 410 then forces the re-list); any other error re-lists now,
          // since we cannot know what we missed.
          const quiet = !err || (err as { name?: unknown }).name === "TimeoutError";
          this.#restart(quiet ? "" : `watch ended: ${describe(err)}`, !quiet);
        },
      )
      .then(
        (abort) => {
          if (current()) this.#abort = abort;
          else abort.abort();
        },
        (err: unknown) => {
          if (current()) this.#restart(`watch failed: ${describe(err)}`, true);
        },
      );
  }

  #restart(why: string, relist: boolean): void {
    if (this.#stopped) return;
    this.#generation++;
    this.#abort?.abort();
    this.#abort = undefined;
    if (why) this.#opts.log?.(`pod informer: ${why}${relist ? "; re-listing" : ""}`);
    if (!relist) {
      this.#watch();
      return;
    }
    // Exponential backoff, 250 ms to 8 s, reset by the next event that arrives.
    const delay = Math.min(8000, 250 * 2 ** this.#failures++);
    const generation = this.#generation;
    setTimeout(() => {
      if (generation !== this.#generation || this.#stopped) return;
      this.#list().then(
        () => {
          this.#watch();
        },
        (err: unknown) => {
          this.#restart(`list failed: ${describe(err)}`, true);
        },
      );
    }, delay).unref();
  }
}
