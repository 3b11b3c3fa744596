/**
 * Every API replica's view of the namespace's PdfJobs: one informer (list + watch,
 * core/kube/informer.ts) with indexes by tenant, by job id and by output file id, so that
 * `GET /v1/jobs/{id}`, `GET /v1/files/{id}`, job lists and the unfinished count cost the apiserver
 * nothing (docs/adr/0008). On top of it:
 *
 * - **Admission** (the unfinished-jobs cap, exact across replicas): a replica that creates a
 *   PdfJob decides whether it is admitted at the moment its own cache first shows it — the tenant
 *   is under its cap if fewer than `cap` other unfinished, not-rejected PdfJobs of the tenant are
 *   in the cache right then. Every cache applies the apiserver's events in the same order, so of
 *   jobs created concurrently through any replicas, each one is judged against all created
 *   before it; a job judged over the cap is taken back (annotated rejected, deleted) and its
 *   request answered 429. Until then other replicas count it, which can only refuse, never admit
 *   too many.
 * - **Read-your-writes**: the creating replica answers after its cache shows the job (admission
 *   waits for that). Another replica that does not know an id reads it through (the backend: one
 *   label-selected list), since its watch may be a few milliseconds behind.
 * - **Prefer: wait** is woken by the watch event that ends the job, not by a timer.
 */
import type { Logger } from "../../../core/logger.ts";
import { Informer } from "../../../core/kube/informer.ts";
import { jobIdOf } from "../../../core/pdfjob-view.ts";
import { PDFJOB_ANNOTATIONS, TERMINAL_PHASES, type PdfJob } from "../../../core/schemas/pdfjob.ts";
import { fileIdFromKey } from "../../../core/schemas/storage-keys.ts";
import { kubeWatch, type PdfJobClient } from "../../jobs/pdfjob-client.ts";
import type { KubeConfig } from "@kubernetes/client-node";

export const ended = (pj: PdfJob): boolean => TERMINAL_PHASES.includes(pj.status?.phase ?? "Pending");
export const rejected = (pj: PdfJob): boolean => pj.metadata.annotations?.[PDFJOB_ANNOTATIONS.rejected] !== undefined;
/** A PdfJob the API shows: not being deleted, not taken back. */
export const live = (pj: PdfJob): boolean => !pj.metadata.deletionTimestamp && !rejected(pj);
/**
 * A PdfJob that names a Secret and has not been given a Job yet: the controller starts it only
 * once the Secret exists (the API writes it right after the PdfJob; controller/decide.ts).
 */
export const awaitsSecret = (pj: PdfJob): boolean =>
  live(pj) && !ended(pj) && typeof pj.spec.secretRef?.name === "string" && !pj.status?.jobName;
/** A PdfJob that holds one of its tenant's places under the cap. */
const holdsPlace = (pj: PdfJob): boolean => live(pj) && !ended(pj);

/** Whether a new PdfJob is under its tenant's cap; "unseen" when the cache did not show it in time. */
export type Admission = "admitted" | "rejected" | "unseen";

/** Registers a waiter under `name` in `waiters`, resolved when called or after `ms`. */
function wait(waiters: Map<string, Set<() => void>>, name: string, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    let set = waiters.get(name);
    if (!set) waiters.set(name, (set = new Set()));
    const done = (): void => {
      clearTimeout(timer);
      set.delete(done);
      if (set.size === 0) waiters.delete(name);
      resolve();
    };
    const timer = setTimeout(done, ms);
    set.add(done);
  });
}

interface Pending {
  tenant: string;
  cap: number;
  /** (Not named resolve: the image's module pruner takes a resolve call on a string literal for a package.) */
  settle: (a: Admission) => void;
}

/** Adds `p` to the set under `name`. */
function pend(map: Map<string, Set<Pending>>, name: string, p: Pending): void {
  let set = map.get(name);
  if (!set) map.set(name, (set = new Set()));
  set.add(p);
}

export class PdfJobCache {
  readonly #informer: Informer<PdfJob>;
  readonly #log: Logger;
  /**
   * Creations this replica waits to see, by PdfJob name (several requests may try one name: the
   * idempotency key's; the apiserver lets one create it, the others cancel).
   */
  readonly #pending = new Map<string, Set<Pending>>();
  /** Pending names a (re-)list showed: decided once the list is whole. */
  #listedPending: string[] = [];
  /** Waiters for a PdfJob to end or go, and to go, by name. */
  readonly #endWaiters = new Map<string, Set<() => void>>();
  readonly #goneWaiters = new Map<string, Set<() => void>>();
  readonly #changeWaiters = new Map<string, Set<() => void>>();

  constructor(kc: KubeConfig, client: PdfJobClient, log: Logger) {
    this.#log = log;
    this.#informer = new Informer<PdfJob>({
      name: "api-pdfjobs",
      watch: kubeWatch(kc),
      list: () => client.list(),
      watchPath: client.watchPath,
      resyncMs: 0,
      indexers: {
        tenant: (pj) => [pj.spec.tenant],
        jobId: (pj) => [jobIdOf(pj)],
        output: (pj) => (pj.status?.phase === "Succeeded" ? (pj.status.outputs ?? []).map((o) => fileIdFromKey(o.key)) : []),
      },
      // managedFields are a third of a PdfJob's bytes and nothing here reads them.
      transform: (pj) => {
        if (pj.metadata.managedFields === undefined) return pj;
        const { managedFields: _m, ...metadata } = pj.metadata;
        return { ...pj, metadata };
      },
      onChange: (pj, kind, info) => this.#changed(pj, kind, info.live),
      onListed: () => this.#listed(),
      log: (msg) => log.warn(msg),
    });
  }

  start(): void {
    this.#informer.start();
  }

  stop(): Promise<void> {
    return this.#informer.stop();
  }

  synced(): Promise<void> {
    return this.#informer.waitForSync();
  }

  get hasSynced(): boolean {
    return this.#informer.hasSynced;
  }

  get size(): number {
    return this.#informer.size;
  }

  /** The PdfJob of this name as cached, whatever its state. */
  byName(name: string, namespace: string): PdfJob | undefined {
    return this.#informer.get(`${namespace}/${name}`);
  }

  /** The live PdfJob of a job id. */
  byJobId(jobId: string): PdfJob | undefined {
    return this.#informer.byIndex("jobId", jobId).find(live);
  }

  /** Every cached PdfJob, whatever its state (the dashboard's webhook backlog). */
  all(): PdfJob[] {
    return this.#informer.list();
  }

  /** The tenant's live PdfJobs. */
  byTenant(tenant: string): PdfJob[] {
    return this.#informer.byIndex("tenant", tenant).filter((pj) => live(pj) && pj.spec.tenant === tenant);
  }

  /** The live, succeeded PdfJob that has this output file id. */
  byOutput(fileId: string): PdfJob | undefined {
    return this.#informer.byIndex("output", fileId).find(live);
  }

  /** The tenant's unfinished jobs (queued or running, not taken back). */
  unfinished(tenant: string): number {
    return this.#informer.byIndex("tenant", tenant).filter(holdsPlace).length;
  }

  /**
   * Call before creating the PdfJob `name`: resolves once this cache shows it, with whether it
   * is admitted (see the module comment), or "unseen" after `timeoutMs` without a sight of it.
   * `cancel()` when the create failed.
   */
  expectCreation(name: string, tenant: string, cap: number, timeoutMs: number): { admission: Promise<Admission>; cancel: () => void } {
    let timer: NodeJS.Timeout | undefined;
    let entry: Pending | undefined;
    const admission = new Promise<Admission>((resolve) => {
      entry = {
        tenant,
        cap,
        settle: (a: Admission): void => {
          clearTimeout(timer);
          const set = this.#pending.get(name);
          set?.delete(entry!);
          if (set?.size === 0) this.#pending.delete(name);
          resolve(a);
        },
      };
      pend(this.#pending, name, entry);
      timer = setTimeout(() => {
        this.#log.warn({ pdfjob: name }, "The PdfJob did not reach this replica's cache in time; taking it back");
        entry!.settle("unseen");
      }, timeoutMs);
      timer.unref();
    });
    return { admission, cancel: () => entry!.settle("unseen") };
  }

  #decide(name: string): void {
    for (const p of [...(this.#pending.get(name) ?? [])]) {
      const others = this.#informer.byIndex("tenant", p.tenant).filter((pj) => pj.metadata.name !== name && holdsPlace(pj));
      p.settle(others.length < p.cap ? "admitted" : "rejected");
    }
  }

  #changed(pj: PdfJob, kind: string, isLive: boolean): void {
    const name = pj.metadata.name;
    if (kind === "add" && this.#pending.has(name)) {
      // Judged now, against exactly what came before it; a list is judged once it is whole.
      if (isLive) this.#decide(name);
      else this.#listedPending.push(name);
    }
    if (kind === "delete" || ended(pj) || !live(pj)) for (const w of [...(this.#endWaiters.get(name) ?? [])]) w();
    if (kind === "delete") for (const w of [...(this.#goneWaiters.get(name) ?? [])]) w();
    for (const w of [...(this.#changeWaiters.get(name) ?? [])]) w();
  }

  #listed(): void {
    for (const name of this.#listedPending.splice(0)) this.#decide(name);
  }

  /**
   * Resolves when the PdfJob has ended, is gone, or `ms` have passed (Prefer: wait); woken by
   * the watch event.
   */
  waitForEnd(name: string, namespace: string, ms: number): Promise<void> {
    const now = this.byName(name, namespace);
    if (!now || ended(now) || !live(now) || ms <= 0) return Promise.resolve();
    return wait(this.#endWaiters, name, ms);
  }

  /** Resolves at the next change of the PdfJob `name` in the cache, or after `ms`. */
  waitForChange(name: string, _namespace: string, ms: number): Promise<void> {
    return ms <= 0 ? Promise.resolve() : wait(this.#changeWaiters, name, ms);
  }

  /** Resolves when the PdfJob is gone from the cache, or after `ms`. */
  waitForGone(name: string, namespace: string, ms: number): Promise<void> {
    if (!this.byName(name, namespace) || ms <= 0) return Promise.resolve();
    return wait(this.#goneWaiters, name, ms);
  }

  /** Resolves once the cache has seen every change up to `rv`; false after `ms`. */
  waitForResourceVersion(rv: string | undefined, ms: number): Promise<boolean> {
    return this.#informer.waitForResourceVersion(rv, ms);
  }
}
