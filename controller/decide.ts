/**
 * The reconciler's brain: a pure `decide(pdfJob, observedJob, now, opts)` that returns what to
 * do (ARCHITECTURE.md "Controller rules"; controller-runtime's level-based reconcile). It reads
 * the world as it is — the PdfJob, its child Job, the runner pod's termination message — never
 * the event that woke it, and returns the same actions for the same inputs; once the status
 * reflects the world it returns nothing (at most a requeue for the next due time).
 *
 * Phases: Pending (Job created) → Running (the Job has a pod) → Succeeded | Failed, or Canceled
 * when the PdfJob is deleted before it ended. A terminal status is final: nothing re-reads the Job.
 *
 * The apply layer performs the actions in order and stops at the first error (the key is then
 * requeued with backoff; the next reconcile recomputes everything):
 * - createJob: 409 AlreadyExists is success (the name is deterministic);
 * - updateStatus: writes the whole status through the status subresource (at most one per list;
 *   a 409 Conflict requeues like any error);
 * - deliverWebhook: one attempt, then writes `recordWebhookAttempt(pdfJob.status, …)` (controller/
 *   ledger.ts) and requeues after its delay. It only ever comes from a ledger already in the
 *   PdfJob's status, never in the same list as an updateStatus;
 * - deleteStorage: deletes the keys and everything under the prefixes; absent objects are fine;
 * - deleteJob: foreground propagation, so the runner has stopped before storage is deleted;
 * - deleteSecret: the PdfJob's own Secret (404 is fine), when a deleted PdfJob is kept to hold
 *   its idempotency key: its passwords must not outlive the job;
 * - requeueAfter: at most one, always last.
 */
import type { V1Job } from "@kubernetes/client-node";
import { jobIdOf, pdfJobToApiJob } from "../core/pdfjob-view.ts";
import type { JobObject } from "../core/schemas/api.ts";
import {
  IDEMPOTENCY_KEY_MS,
  PDFJOB_ANNOTATIONS,
  PDFJOB_FINALIZER,
  TERMINAL_PHASES,
  validatePdfJobSpec,
  type PdfJob,
  type PdfJobSpec,
  type PdfJobStatus,
} from "../core/schemas/pdfjob.ts";
import { jobStoragePrefix } from "../core/schemas/storage-keys.ts";
import { rfc3339 } from "../core/time.ts";
import { webhookEventFor, type WebhookEventType } from "../core/webhooks/events.ts";
import { buildJob, childJobName, runnerPodSpec, RUNNER_SPEC_MAX_BYTES, type JobTemplateOptions } from "./job-template.ts";
import { shownPosition } from "./fair-queue.ts";
import {
  camelReason,
  newLedger,
  nextAttemptMs,
  redeliveredLedger,
  redeliveryRequestMs,
  settled,
  SUCCEEDED,
  WEBHOOK_DELIVERED,
  withCondition,
} from "./ledger.ts";
import { jobFinished, jobStarted, ownedBy, readOutcome, toMs, type ObservedPod, type Outcome } from "./observe.ts";
import { isTenantKey, specOwnershipProblem } from "./validate.ts";

export type { ObservedPod } from "./observe.ts";

export type EventType = "Normal" | "Warning";

/** One Standard Webhooks message to attempt. */
export interface WebhookDelivery {
  url: string;
  tenant: string;
  /** The PdfJob's namespace, where its Secret lives. */
  namespace: string;
  /** The PdfJob's Secret (`spec.secretRef`) holding the signing secrets; absent without one. */
  secretName?: string;
  /** `webhook-id`: the same on every attempt. */
  messageId: string;
  eventType: WebhookEventType;
  /** 1 for the first attempt. */
  attempt: number;
  /** The message: the Job object as of the event (its webhook field as before any attempt); core/webhooks/events.ts makes it the body. */
  payload: { type: WebhookEventType; timestamp: string; data: JobObject };
}

export type Action =
  | { action: "addFinalizer" }
  | { action: "createJob"; job: V1Job }
  | { action: "deleteJob"; name: string }
  | { action: "updateStatus"; status: PdfJobStatus }
  | { action: "recordEvent"; type: EventType; reason: string; message: string }
  | { action: "deliverWebhook"; delivery: WebhookDelivery }
  | { action: "deleteStorage"; keys: string[]; prefixes: string[] }
  | { action: "deletePdfJob" }
  | { action: "deleteSecret"; name: string }
  | { action: "removeFinalizer" }
  | { action: "requeueAfter"; ms: number };

export interface DecideOptions {
  template: JobTemplateOptions;
  /** The runner container's last termination (the newest pod of the Job), if any. */
  observedPod?: ObservedPod;
  /** Input keys that other unfinished PdfJobs still use: never deleted from under them. */
  inputKeysInUse?: Pick<ReadonlySet<string>, "has">;
  /**
   * The fair queue's answer for a PdfJob without a Job (controller/fair-queue.ts): start it now,
   * or keep it queued at `position`. Absent: start at once (no limit on running Jobs).
   */
  queue?: { start: boolean; position: number };
  /**
   * The PdfJob names a Secret (`spec.secretRef`) that does not exist: asked by the reconciler
   * only before a PdfJob's first Job. Absent: it exists, or it was not asked.
   */
  secretMissing?: boolean;
}

/**
 * How long a PdfJob waits, from its creation, for the Secret it names. The API writes the Secret
 * right after the PdfJob; a replica stopped in between (SIGKILL, a rolling restart) leaves the job
 * without its passwords or signing secrets, and the client's retry writes them
 * (api/jobs/kubernetes.ts `#completeSecret`). A job never started without them cannot lose a
 * webhook to "no signing secret" nor start a protect without its passwords; one whose Secret
 * never comes fails.
 */
export const SECRET_WAIT_MS = 60_000;
const SECRET_POLL_MS = 1_000;

/** How long to wait for a deleted Job's runner to stop before looking again. */
export const JOB_GONE_POLL_MS = 5000;
const INTERNAL_MESSAGE = "The job failed because of an internal error.";

interface Ctx {
  pj: PdfJob;
  status: PdfJobStatus;
  now: number;
  generation: number;
  opts: DecideOptions;
}

const event = (type: EventType, reason: string, message: string): Action => ({ action: "recordEvent", type, reason, message });
const isTerminal = (s: PdfJobStatus): boolean => s.phase !== undefined && TERMINAL_PHASES.includes(s.phase);

/** Order-insensitive deep equality of JSON values. */
function sameJson(a: unknown, b: unknown): boolean {
  const canon = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canon)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([, x]) => x !== undefined)
              .sort(([x], [y]) => (x < y ? -1 : 1))
              .map(([k, x]) => [k, canon(x)]),
          )
        : v;
  return JSON.stringify(canon(a)) === JSON.stringify(canon(b));
}

function updateIfChanged(ctx: Ctx, next: PdfJobStatus): Action[] {
  return sameJson(ctx.status, next) ? [] : [{ action: "updateStatus", status: next }];
}

/** What to do for this PdfJob now; see the module comment. */
export function decide(pj: PdfJob, observedJob: V1Job | null, now: Date, opts: DecideOptions): Action[] {
  const ctx: Ctx = { pj, status: pj.status ?? {}, now: now.getTime(), generation: pj.metadata.generation ?? 0, opts };
  // Taken back by the API before anyone was told of it: nothing runs, nothing is announced.
  if (pj.metadata.annotations?.[PDFJOB_ANNOTATIONS.rejected] !== undefined) return takeBack(ctx, observedJob);
  if (pj.metadata.deletionTimestamp) return finalize(ctx, observedJob);
  // The finalizer first, alone: the metadata write wakes the next reconcile.
  if (!pj.metadata.finalizers?.includes(PDFJOB_FINALIZER)) return [{ action: "addFinalizer" }];
  if (isTerminal(ctx.status)) return afterEnd(ctx);
  const checked = validatePdfJobSpec(pj.spec);
  if (!checked.ok) return end(ctx, { phase: "Failed", error: { code: "validation_failed", message: checked.message } });
  // Another tenant's files or another job's Secret: never run (controller/validate.ts).
  const foreign = specOwnershipProblem(pj, checked.spec);
  if (foreign) return end(ctx, { phase: "Failed", error: { code: "validation_failed", message: foreign } });
  return run(ctx, checked.spec, observedJob);
}

// --- pending and running ---------------------------------------------------------------------------

function progress(ctx: Ctx, phase: "Pending" | "Running", jobName: string, startTime?: string): PdfJobStatus {
  const message = phase === "Running" ? `Job ${jobName} is running.` : `Job ${jobName} was created.`;
  const { queuePosition: _q, ...status } = ctx.status;
  return {
    ...status,
    phase,
    observedGeneration: ctx.generation,
    jobName,
    ...(startTime ? { startTime } : {}),
    conditions: withCondition(
      ctx.status.conditions,
      { type: SUCCEEDED, status: "Unknown", reason: phase, message },
      ctx.now,
      ctx.generation,
    ),
  };
}

/** A PdfJob waiting for a runner (FOLIO_MAX_RUNNING_JOBS): Pending, with its place in the fair queue. */
function queued(ctx: Ctx, position: number): Action[] {
  const next: PdfJobStatus = {
    ...ctx.status,
    phase: "Pending",
    observedGeneration: ctx.generation,
    queuePosition: shownPosition(position),
    conditions: withCondition(
      ctx.status.conditions,
      {
        type: SUCCEEDED,
        status: "Unknown",
        reason: "Queued",
        message: "Waiting for a runner: the cluster runs at most FOLIO_MAX_RUNNING_JOBS Jobs.",
      },
      ctx.now,
      ctx.generation,
    ),
  };
  return updateIfChanged(ctx, next);
}

/** When the PdfJob was created: the API's annotation, else its creationTimestamp. */
function createdAt(pj: PdfJob): number | undefined {
  const annotated = Number(pj.metadata.annotations?.[PDFJOB_ANNOTATIONS.createdMs]);
  if (Number.isFinite(annotated) && annotated > 0) return annotated;
  return toMs(pj.metadata.creationTimestamp) ?? undefined;
}

/** A PdfJob whose Secret is not there yet: look again soon; fail it after SECRET_WAIT_MS. */
function awaitSecret(ctx: Ctx): Action[] {
  const created = createdAt(ctx.pj) ?? ctx.now;
  if (ctx.now - created < SECRET_WAIT_MS) return [{ action: "requeueAfter", ms: SECRET_POLL_MS }];
  return end(ctx, {
    phase: "Failed",
    error: { code: "internal_error", message: "The job's request was not fully recorded; send it again." },
    detail: `its Secret ${ctx.pj.spec.secretRef?.name ?? ""} did not appear within ${SECRET_WAIT_MS / 1000} s of its creation`,
  });
}

function create(ctx: Ctx, spec: PdfJobSpec, name: string): Action[] {
  const queue = ctx.opts.queue;
  // A Running PdfJob whose Job vanished holds its place already.
  if (queue && !queue.start && ctx.status.phase !== "Running") return queued(ctx, queue.position);
  if (ctx.opts.secretMissing) return awaitSecret(ctx);
  if (JSON.stringify(runnerPodSpec(ctx.pj, spec, ctx.opts.template.limits)).length > RUNNER_SPEC_MAX_BYTES) {
    return end(ctx, {
      phase: "Failed",
      error: { code: "limit_exceeded", message: "The job has too many inputs or page ranges that are too long." },
    });
  }
  const actions: Action[] = [{ action: "createJob", job: buildJob(ctx.pj, spec, ctx.opts.template) }];
  // A Running PdfJob without its Job: the Job was deleted from under it (or expired by its TTL
  // while no controller ran). Running it again is safe: outputs go to deterministic keys.
  const phase = ctx.status.phase === "Running" ? "Running" : "Pending";
  actions.push(...updateIfChanged(ctx, progress(ctx, phase, name)));
  if (!ctx.status.jobName) actions.push(event("Normal", "JobCreated", `Created Job ${name}`));
  else if (phase === "Running") actions.push(event("Warning", "JobRecreated", `Re-created Job ${name}, which had disappeared`));
  return actions;
}

function run(ctx: Ctx, spec: PdfJobSpec, job: V1Job | null): Action[] {
  const name = childJobName(ctx.pj);
  if (!job) return create(ctx, spec, name);
  if (!ownedBy(job, ctx.pj)) {
    return end(ctx, {
      phase: "Failed",
      error: { code: "internal_error", message: INTERNAL_MESSAGE },
      detail: `Job ${name} exists and is not controlled by this PdfJob`,
    });
  }
  const outcome = readOutcome(job, ctx.opts.observedPod, spec, jobStoragePrefix(spec.tenant, jobIdOf(ctx.pj)));
  if (outcome) return end(ctx, { ...outcome, startTime: toMs(job.status?.startTime) });
  // Phases never go back: a re-created Job of a Running PdfJob keeps it Running.
  if (!jobStarted(job)) return updateIfChanged(ctx, progress(ctx, ctx.status.phase === "Running" ? "Running" : "Pending", name));
  const startTime = ctx.status.startTime ?? rfc3339(toMs(job.status?.startTime) ?? ctx.now);
  const next = progress(ctx, "Running", name, startTime);
  const actions = updateIfChanged(ctx, next);
  if (ctx.status.phase !== "Running") actions.push(event("Normal", "Started", `Job ${name} started`));
  return actions;
}

// --- the end ----------------------------------------------------------------------------------------

type Ending = Outcome & { startTime?: number | null; completionTime?: number | null };

const ENDING_MESSAGE: Record<"Succeeded" | "Canceled", string> = {
  Succeeded: "The job succeeded.",
  Canceled: "The PdfJob was deleted before the job ended.",
};

/** The Succeeded condition of an ending: its reason is the error code for a failure. */
function endingCondition(ctx: Ctx, e: Ending): PdfJobStatus["conditions"] {
  const reason = e.phase === "Failed" ? camelReason(e.error.code) : e.phase;
  const message = e.phase === "Failed" ? e.error.message : ENDING_MESSAGE[e.phase];
  const condition = { type: SUCCEEDED, status: e.phase === "Succeeded" ? "True" : "False", reason, message } as const;
  return withCondition(ctx.status.conditions, condition, ctx.now, ctx.generation);
}

/** What an ending adds: its outputs or its error, and when its record expires (never for a cancel). */
function endingFields(ctx: Ctx, e: Ending, completion: number): Partial<PdfJobStatus> {
  const retentionMs = (typeof ctx.pj.spec.retentionSeconds === "number" ? ctx.pj.spec.retentionSeconds : 3600) * 1000;
  if (e.phase === "Canceled") return {};
  const expireTime = rfc3339(completion + retentionMs);
  return e.phase === "Succeeded" ? { outputs: e.outputs, figures: e.figures, expireTime } : { error: e.error, expireTime };
}

/** The terminal status of an ending (completion time, expiry, ledger, condition). */
function terminalStatus(ctx: Ctx, e: Ending): PdfJobStatus {
  const completion = e.completionTime ?? ctx.now;
  const { error: _e, outputs: _o, figures: _f, ...rest } = ctx.status;
  const url = ctx.pj.spec.webhook?.url;
  const startTime = ctx.status.startTime ?? (e.startTime ? rfc3339(e.startTime) : undefined);
  return {
    ...rest,
    phase: e.phase,
    observedGeneration: ctx.generation,
    ...(startTime ? { startTime } : {}),
    completionTime: rfc3339(completion),
    ...endingFields(ctx, e, completion),
    ...(url && !ctx.status.webhook ? { webhook: newLedger(jobIdOf(ctx.pj), webhookEventFor(e.phase), completion) } : {}),
    conditions: endingCondition(ctx, e),
  };
}

function endEvent(ctx: Ctx, e: Ending): Action {
  const job = ctx.status.jobName ?? childJobName(ctx.pj);
  if (e.phase === "Succeeded") return event("Normal", "Succeeded", `Job ${job} succeeded with ${e.outputs.length} output(s)`);
  if (e.phase === "Canceled") return event("Normal", "Canceled", "Canceled: the PdfJob is being deleted");
  return event("Warning", camelReason(e.error.code), `Job failed: ${e.error.message}${e.detail ? ` (${e.detail})` : ""}`);
}

function inputKeys(ctx: Ctx): string[] {
  const inUse = ctx.opts.inputKeysInUse ?? new Set<string>();
  // Asked only here, when a job has ended: the reconciler computes the set lazily.
  // Never another tenant's: a foreign spec must not make the controller delete someone's files.
  const keys = (Array.isArray(ctx.pj.spec.inputs) ? ctx.pj.spec.inputs : [])
    .map((i) => i.key)
    .filter((k) => typeof k === "string" && isTenantKey(ctx.pj.spec.tenant, k) && !inUse.has(k));
  return [...new Set(keys)];
}

/** The job ended: delete its inputs (API.md "Retention"), then record the terminal status. */
function end(ctx: Ctx, e: Ending): Action[] {
  const keys = inputKeys(ctx);
  const status = { ...terminalStatus(ctx, e), inputsDeletedTime: rfc3339(ctx.now) };
  return [
    ...(keys.length ? [{ action: "deleteStorage" as const, keys, prefixes: [] }] : []),
    { action: "updateStatus", status },
    endEvent(ctx, e),
  ];
}

// --- after the end: webhook and retention -------------------------------------------------------------

function deliver(ctx: Ctx): Action | null {
  const w = ctx.status.webhook;
  const url = ctx.pj.spec.webhook?.url;
  if (!w || !url || settled(w) || (nextAttemptMs(w) ?? Infinity) > ctx.now) return null;
  const { webhook: _w, ...rest } = ctx.status;
  const data = pdfJobToApiJob({ ...ctx.pj, status: rest });
  const timestamp = data.completed_at ?? rfc3339(ctx.now);
  const secretName = ctx.pj.spec.secretRef?.name;
  const delivery: WebhookDelivery = {
    url,
    tenant: ctx.pj.spec.tenant,
    namespace: ctx.pj.metadata.namespace ?? "default",
    ...(secretName ? { secretName } : {}),
    messageId: w.messageId,
    eventType: w.eventType,
    attempt: w.attempts + 1,
    payload: { type: w.eventType, timestamp, data },
  };
  return { action: "deliverWebhook", delivery };
}

/**
 * "Redeliver" on the dashboard (the API may annotate a PdfJob, never write its status): a
 * folio.dev/redeliver-requested time newer than the last one answered, on a settled ledger,
 * starts a new attempt series of the same message, written first like any ledger (its write
 * wakes the reconcile that attempts it); the ledger records the time it answered, so the
 * request is never repeated. Null when there is nothing to start.
 */
function redeliver(ctx: Ctx): Action[] | null {
  const asked = redeliveryRequestMs(ctx.pj.metadata.annotations?.[PDFJOB_ANNOTATIONS.redeliverRequested]);
  const w = ctx.status.webhook;
  if (asked === null || !w || !ctx.pj.spec.webhook?.url) return null;
  const webhook = redeliveredLedger(w, asked, ctx.now);
  if (!webhook) return null;
  const conditions = withCondition(
    ctx.status.conditions,
    {
      type: WEBHOOK_DELIVERED,
      status: "Unknown",
      reason: "Redelivering",
      message: `Sending ${w.eventType} again, as asked on the dashboard.`,
    },
    ctx.now,
    ctx.generation,
  );
  return [
    { action: "updateStatus", status: { ...ctx.status, webhook, conditions } },
    event("Normal", "WebhookRedelivery", `Sending webhook ${w.eventType} again (${webhook.redelivery!.requestedTime} request)`),
  ];
}

function requeueAt(ctx: Ctx, times: (number | null | undefined)[]): Action[] {
  const future = times.filter((t): t is number => typeof t === "number" && t > ctx.now);
  return future.length ? [{ action: "requeueAfter", ms: Math.min(...future) - ctx.now }] : [];
}

function allStorage(ctx: Ctx): Action {
  const tenant = ctx.pj.spec.tenant;
  const keys = [...inputKeys(ctx), ...(ctx.status.outputs ?? []).map((o) => o.key)];
  return { action: "deleteStorage", keys: [...new Set(keys)], prefixes: [jobStoragePrefix(tenant, jobIdOf(ctx.pj))] };
}

function afterEnd(ctx: Ctx): Action[] {
  const actions: Action[] = [];
  let status = ctx.status;
  if (!status.inputsDeletedTime) {
    const keys = inputKeys(ctx);
    if (keys.length) actions.push({ action: "deleteStorage", keys, prefixes: [] });
    status = { ...status, inputsDeletedTime: rfc3339(ctx.now) };
  }
  const expire = status.expireTime === undefined ? null : Date.parse(status.expireTime);
  if (expire !== null && !Number.isNaN(expire) && ctx.now >= expire) {
    if (!status.storageDeletedTime) {
      actions.push(allStorage(ctx), { action: "updateStatus", status: { ...status, storageDeletedTime: rfc3339(ctx.now) } });
      actions.push(event("Normal", "Expired", "Deleted the job's storage objects: its retention ended"));
    }
    return [...actions, { action: "deletePdfJob" }];
  }
  // A status write wakes the next reconcile, which attempts the webhook from the written ledger.
  if (status !== ctx.status) return [...actions, { action: "updateStatus", status }];
  const redelivery = redeliver(ctx);
  if (redelivery) return redelivery;
  const delivery = deliver(ctx);
  if (delivery) return [delivery];
  return requeueAt(ctx, [status.webhook ? nextAttemptMs(status.webhook) : null, expire]);
}

// --- deletion -------------------------------------------------------------------------------------------

/**
 * A deleted PdfJob made under an Idempotency-Key is kept (its finalizer stays) until the key is
 * 24 h old: its name is the key, and a retry must find it taken — the API answers 404 for its
 * job, never a second one (docs/adr/0008). Its Secret goes at once: no password outlives the job.
 * Null when there is nothing to hold.
 */
function hold(ctx: Ctx, status: PdfJobStatus): Action[] | null {
  if (ctx.pj.metadata.annotations?.[PDFJOB_ANNOTATIONS.idempotencyHash] === undefined) return null;
  const created = Number(ctx.pj.metadata.annotations[PDFJOB_ANNOTATIONS.createdMs]) || Date.parse(ctx.pj.metadata.creationTimestamp ?? "");
  const until = (Number.isNaN(created) ? ctx.now : created) + IDEMPOTENCY_KEY_MS;
  if (ctx.now >= until) return null;
  const actions: Action[] = [];
  if (!status.idempotencyHeldUntil) {
    const secret = ctx.pj.spec.secretRef?.name;
    if (secret) actions.push({ action: "deleteSecret", name: secret });
    status = { ...status, idempotencyHeldUntil: rfc3339(until) };
  }
  return [...actions, ...updateIfChanged(ctx, status), { action: "requeueAfter", ms: until - ctx.now }];
}

/** A PdfJob the API took back (annotated rejected): stop a Job that may have started, then let it go. */
function takeBack(ctx: Ctx, job: V1Job | null): Action[] {
  if (!ctx.pj.metadata.deletionTimestamp || !ctx.pj.metadata.finalizers?.includes(PDFJOB_FINALIZER)) return [];
  if (job && ownedBy(job, ctx.pj) && !jobFinished(job)) {
    const stop: Action[] = job.metadata?.deletionTimestamp
      ? []
      : [{ action: "deleteJob", name: job.metadata?.name ?? childJobName(ctx.pj) }];
    return [...stop, { action: "requeueAfter", ms: JOB_GONE_POLL_MS }];
  }
  // Its inputs stay: they are the tenant's uploads, which its retry may use.
  return [{ action: "removeFinalizer" }];
}

/**
 * A PdfJob being deleted (the API's DELETE, the retention sweep, kubectl): cancel it if it had
 * not ended, stop its Job and wait for the runner to be gone, delete every storage object of the
 * job, see its webhook through (the `job.canceled` one included), then let it go.
 */
function finalize(ctx: Ctx, job: V1Job | null): Action[] {
  if (!ctx.pj.metadata.finalizers?.includes(PDFJOB_FINALIZER)) return [];
  const actions: Action[] = [];
  let status = ctx.status;
  if (!isTerminal(status)) {
    const canceled: Ending = { phase: "Canceled" };
    status = terminalStatus(ctx, canceled);
    actions.push(endEvent(ctx, canceled));
  }
  if (job && ownedBy(job, ctx.pj) && !jobFinished(job)) return [...updateIfChanged(ctx, status), ...actions, ...stopJob(ctx, job)];
  const storage: Action[] = [];
  if (!status.storageDeletedTime) {
    storage.push(allStorage(ctx));
    status = { ...status, storageDeletedTime: rfc3339(ctx.now) };
  }
  if (!status.webhook || settled(status.webhook))
    return [...storage, ...actions, ...(hold(ctx, status) ?? [{ action: "removeFinalizer" }])];
  // Attempts go out only from a persisted ledger; a new one is written first (its write wakes us).
  const delivery = deliver(ctx);
  const wait = delivery ? [delivery] : requeueAt(ctx, [nextAttemptMs(status.webhook)]);
  return [...storage, ...updateIfChanged(ctx, status), ...actions, ...wait];
}

/** A runner Job still running under a PdfJob being deleted: delete it (once) and look again soon. */
function stopJob(ctx: Ctx, job: V1Job): Action[] {
  const name = job.metadata?.name ?? childJobName(ctx.pj);
  const stop: Action[] = job.metadata?.deletionTimestamp ? [] : [{ action: "deleteJob", name }];
  return [...stop, { action: "requeueAfter", ms: JOB_GONE_POLL_MS }];
}
