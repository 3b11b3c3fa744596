/**
 * One reconcile of one PdfJob key: read the PdfJob, its Job and the newest runner pod's
 * termination from the informers' caches, decide() (pure), apply the actions, and tell the queue
 * what happened (ARCHITECTURE.md "Controller rules"). Level-based: the key is all it gets.
 */
import type { V1Job, V1Pod } from "@kubernetes/client-node";
import type { Logger } from "../core/logger.ts";
import { PDFJOB_ANNOTATIONS, TERMINAL_PHASES, type PdfJob } from "../core/schemas/pdfjob.ts";
import type { ObjectStore } from "../core/storage/store.ts";
import { applyActions, statusCodeOf, type ApplyDeps, type ApplyResult } from "./apply.ts";
import { isOwnResultKey, RESULT_MAX_BYTES } from "./validate.ts";
import { decide, type Action, type ObservedPod } from "./decide.ts";
import type { FairQueue } from "./fair-queue.ts";
import { childJobName, RUNNER_CONTAINER, type JobTemplateOptions } from "./job-template.ts";
import { resultRefKey } from "./observe.ts";
import { splitKey } from "./informer.ts";
import type { WorkQueue } from "./queue.ts";

/** Read access to the caches (the informers, or plain maps in tests). */
export interface Caches {
  pdfJob(key: string): PdfJob | undefined;
  pdfJobs(): Iterable<PdfJob>;
  job(namespace: string, name: string): V1Job | undefined;
  /** The pods of a Job (by the controller's `batch.kubernetes.io/job-name` label or ownerReference). */
  podsOfJob(namespace: string, jobName: string, jobUid: string | undefined): V1Pod[];
}

/** How a reconcile ended, for the metrics: requeue is a success that is due again later. */
export type ReconcileResult = "success" | "error" | "requeue";

export interface ReconcilerOptions extends ApplyDeps {
  caches: Caches;
  template: JobTemplateOptions;
  store: ObjectStore;
  /** Failed reconciles are logged at warn with the PdfJob's key, its tenant and the error. */
  logger?: Logger;
  /** Told how every reconcile of `work()` ended and how long it took. */
  onReconcile?: (result: ReconcileResult, seconds: number) => void;
  /** Hands out the places of FOLIO_MAX_RUNNING_JOBS (controller/fair-queue.ts); none: no limit. */
  fairQueue?: Pick<FairQueue, "admit" | "release">;
  /**
   * Whether a Secret exists (one GET), asked before a PdfJob that names one gets its first Job
   * (decide()'s `secretMissing`). Absent: never asked, as if it existed.
   */
  secretExists?: (namespace: string, name: string) => Promise<boolean>;
}

export interface ReconcileOutcome {
  actions: Action[];
  result: ApplyResult;
}

const createdMs = (p: V1Pod): number => {
  const t = p.metadata?.creationTimestamp as Date | string | undefined;
  return t === undefined ? 0 : t instanceof Date ? t.getTime() : Date.parse(t);
};

/** The runner container's last termination in the newest pod. */
export function newestTermination(pods: readonly V1Pod[]): ObservedPod | undefined {
  const newest = [...pods].sort((a, b) => createdMs(b) - createdMs(a))[0];
  if (!newest) return undefined;
  const cs = newest.status?.containerStatuses?.find((c) => c.name === RUNNER_CONTAINER);
  const term = cs?.state?.terminated ?? cs?.lastState?.terminated;
  if (!term) return undefined;
  return {
    ...(term.message === undefined ? {} : { terminationMessage: term.message }),
    exitCode: term.exitCode,
    ...(term.reason ? { reason: term.reason } : {}),
  };
}

/** The stored result's text, or "" (an invalid result: the job fails) when it is larger than `max`. */
async function readText(store: ObjectStore, key: string, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  const body = await store.get(key);
  for await (const chunk of body) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    size += b.length;
    if (size > max) {
      body.destroy();
      return "";
    }
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** A set made on its first question. */
function lazySet(make: () => ReadonlySet<string>): Pick<ReadonlySet<string>, "has"> {
  let set: ReadonlySet<string> | undefined;
  return { has: (key) => (set ??= make()).has(key) };
}

/** Whether the actions created a Job: they asked for one and all were performed. */
function createdJob(actions: readonly Action[], result: ApplyResult): boolean {
  return result.error === undefined && actions.some((a) => a.action === "createJob");
}

export class Reconciler {
  readonly #o: ReconcilerOptions;

  constructor(o: ReconcilerOptions) {
    this.#o = o;
  }

  /** Input keys of the other unfinished PdfJobs (never deleted from under them). O(PdfJobs). */
  #inputKeysInUse(self: PdfJob): Set<string> {
    const keys = new Set<string>();
    for (const pj of this.#o.caches.pdfJobs()) {
      if (pj.metadata.uid === self.metadata.uid && pj.metadata.name === self.metadata.name) continue;
      if (pj.status?.phase && TERMINAL_PHASES.includes(pj.status.phase)) continue;
      for (const i of Array.isArray(pj.spec.inputs) ? pj.spec.inputs : []) if (typeof i.key === "string") keys.add(i.key);
    }
    return keys;
  }

  /** Reconciles `key` once (no queue involved); null when the PdfJob is gone. */
  async reconcile(key: string): Promise<ReconcileOutcome | null> {
    const pj = this.#o.caches.pdfJob(key);
    if (!pj) return null;
    const { namespace } = splitKey(key);
    const jobName = pj.status?.jobName ?? childJobName(pj);
    const job = this.#o.caches.job(namespace, jobName) ?? null;
    const observedPod = job ? await this.#observedPod(pj, namespace, jobName, job) : undefined;
    // A PdfJob that would get a Job asks the fair queue for a place first.
    const queue = !job && this.#o.fairQueue ? this.#o.fairQueue.admit(key) : undefined;
    const secretMissing = await this.#secretMissing(pj, namespace, job, queue);
    const actions = decide(pj, job, (this.#o.now ?? (() => new Date()))(), {
      template: this.#o.template,
      ...(observedPod ? { observedPod } : {}),
      // Scanning every PdfJob is only needed when a job ends and its inputs go.
      inputKeysInUse: lazySet(() => this.#inputKeysInUse(pj)),
      ...(queue ? { queue } : {}),
      secretMissing,
    });
    const result = await applyActions(pj, actions, this.#o);
    // A place handed out for a Job that was not created goes back.
    if (queue?.reserved && !createdJob(actions, result)) this.#o.fairQueue!.release(key);
    return { actions, result };
  }

  /** Whether a PdfJob about to get its first Job names a Secret that is not there (decide.ts SECRET_WAIT_MS). */
  async #secretMissing(pj: PdfJob, namespace: string, job: V1Job | null, queue: { start: boolean } | undefined): Promise<boolean> {
    const name = pj.spec.secretRef?.name;
    const first =
      !job &&
      (!queue || queue.start) &&
      !pj.status?.jobName &&
      !pj.metadata.deletionTimestamp &&
      pj.metadata.annotations?.[PDFJOB_ANNOTATIONS.rejected] === undefined &&
      !(pj.status?.phase && TERMINAL_PHASES.includes(pj.status.phase));
    if (!this.#o.secretExists || typeof name !== "string" || !first) return false;
    return !(await this.#o.secretExists(namespace, name));
  }

  /** The runner's newest termination among the Job's pods, with a stored result read in place of its reference. */
  async #observedPod(pj: PdfJob, namespace: string, jobName: string, job: V1Job): Promise<ObservedPod | undefined> {
    const observed = newestTermination(this.#o.caches.podsOfJob(namespace, jobName, job.metadata?.uid));
    // A result too large for the termination message was stored; decide() reads its text.
    const ref = resultRefKey(observed?.terminationMessage);
    if (!observed || !ref) return observed;
    // Only from the job's own prefix, and only so much (controller/validate.ts); otherwise the
    // result is invalid and the job fails rather than reading another tenant's object.
    const text = isOwnResultKey(pj, ref) ? await readText(this.#o.store, ref, RESULT_MAX_BYTES) : "";
    return { ...observed, terminationMessage: text };
  }

  /**
   * A failed reconcile, retried with the queue's backoff: one structured line, a warning — but a
   * write that lost a race with another (409 Conflict, the object has been modified) is routine,
   * as in controller-runtime: the retry reads the newer object. It is logged at debug.
   */
  #failed(key: string, err: unknown): void {
    const tenant = this.#o.caches.pdfJob(key)?.spec.tenant;
    const fields = { pdfjob: key, ...(tenant ? { tenant } : {}), err };
    if (statusCodeOf(err) === 409) this.#o.logger?.debug(fields, "reconcile failed; retrying with backoff");
    else this.#o.logger?.warn(fields, "reconcile failed; retrying with backoff");
  }

  /** A worker: takes keys from the queue until it shuts down. */
  async work(queue: WorkQueue): Promise<void> {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      const started = performance.now();
      let result: ReconcileResult = "error";
      try {
        const out = await this.reconcile(key);
        if (out?.result.error !== undefined) {
          this.#failed(key, out.result.error);
          queue.addRateLimited(key);
        } else {
          queue.forget(key);
          result = "success";
          if (out?.result.requeueAfterMs !== undefined) {
            queue.addAfter(key, out.result.requeueAfterMs);
            result = "requeue";
          }
        }
      } catch (err) {
        this.#failed(key, err);
        queue.addRateLimited(key);
      } finally {
        queue.done(key);
        this.#o.onReconcile?.(result, (performance.now() - started) / 1000);
      }
    }
  }
}
