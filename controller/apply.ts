/**
 * The thin layer that performs decide()'s actions (controller/decide.ts) against the API server
 * and the object store, in order, stopping at the first error. It holds no state (the memory of
 * the webhook attempts made is handed in, controller/sent-attempts.ts) and makes no decisions of
 * its own beyond "409 AlreadyExists on create is success", "404 on delete is success" and "an
 * attempt made already is recorded, not sent again"; everything else is recomputed by the next
 * reconcile.
 *
 * It tells the metrics what it did (ApplyDeps' hooks): every webhook attempt it recorded, and
 * every phase change it wrote (see PhaseChange).
 *
 * The caller (controller/reconciler.ts) turns the result into queue calls: an error →
 * `queue.addRateLimited(key)`; success → `queue.forget(key)` and, when asked, `addAfter`.
 */
import {
  ApiException,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Event,
  type KubeConfig,
  type V1Job,
} from "@kubernetes/client-node";
import {
  PDFJOB_API_VERSION,
  PDFJOB_FINALIZER,
  PDFJOB_GROUP,
  PDFJOB_KIND,
  PDFJOB_PLURAL,
  PDFJOB_VERSION,
  TERMINAL_PHASES,
  type PdfJob,
  type PdfJobPhase,
  type PdfJobStatus,
} from "../core/schemas/pdfjob.ts";
import type { ObjectStore } from "../core/storage/store.ts";
import { rfc3339 } from "../core/time.ts";
import type { Action, EventType, WebhookDelivery } from "./decide.ts";
import { attemptName, type SentAttempts } from "./sent-attempts.ts";
import { deferWebhook, recordWebhookAttempt, type WebhookOutcome } from "./ledger.ts";

/** The API calls the apply layer makes; `kubeClient(kc)` implements them with client-node. */
export interface KubeClient {
  createJob(namespace: string, job: V1Job): Promise<void>;
  deleteJobForeground(namespace: string, name: string): Promise<void>;
  /** PUT …/status with the object's resourceVersion (409 Conflict when stale). */
  replaceStatus(pj: PdfJob, status: PdfJobStatus): Promise<PdfJob>;
  /** A merge patch of metadata.finalizers guarded by the object's resourceVersion. */
  setFinalizers(pj: PdfJob, finalizers: string[]): Promise<PdfJob>;
  deletePdfJob(namespace: string, name: string, uid: string | undefined): Promise<void>;
  deleteSecret(namespace: string, name: string): Promise<void>;
  createEvent(namespace: string, event: CoreV1Event): Promise<void>;
}

/** Sends one webhook attempt (Standard Webhooks); the apply layer records its outcome. */
export type WebhookSender = (delivery: WebhookDelivery) => Promise<WebhookOutcome>;

/** One attempt's result as the metrics count it; `gave_up` comes once more when the ledger stops. */
export type WebhookAttemptResult = "delivered" | "failed" | "blocked" | "gave_up";

/**
 * A phase change this controller wrote: `from` is the phase before (undefined without a status),
 * `pdfJob` the PdfJob as written. Each change is reported once across all writers: status and
 * finalizer writes carry the object's resourceVersion, so a write from a stale copy fails with
 * 409 Conflict (another write happened first) and reports nothing; and only the leader writes.
 *
 * A PdfJob let go (its finalizer removed) while its status was not terminal — deleted before it
 * ended, with no webhook to send — never gets a terminal status written: it ends when it is let
 * go, and is reported then as a change to Canceled completed at that moment.
 */
export interface PhaseChange {
  from: PdfJobPhase | undefined;
  pdfJob: PdfJob;
}

export interface ApplyDeps {
  kube: KubeClient;
  store: ObjectStore;
  /** Without a sender, an attempt is recorded as failed ("no webhook sender configured"). */
  sendWebhook?: WebhookSender;
  /**
   * The webhook attempts this controller made (controller/sent-attempts.ts): one is recorded, not
   * sent again, when a reconcile of a stale copy asks for it. Absent: every attempt asked for is sent.
   */
  sent?: SentAttempts;
  /** Told the result of every recorded attempt (the webhook deliveries metric). */
  onWebhookAttempt?: (result: WebhookAttemptResult) => void;
  /** Told every phase change written (the job metrics). */
  onPhaseChange?: (change: PhaseChange) => void;
  now?: () => Date;
  /** The reporting component of events. */
  component?: string;
  /** Before a Job is created: what its pod needs first (its storage access Secret; 409 is fine). */
  prepareJob?: (namespace: string, job: V1Job) => Promise<void>;
}

export interface ApplyResult {
  /** The first error; the actions after it were not performed. */
  error?: unknown;
  /** Reconcile again after this many ms (a requeueAfter action or a webhook retry). */
  requeueAfterMs?: number;
  /** How many actions were performed. */
  performed: number;
}

export function statusCodeOf(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  const code = (err as { code?: unknown; statusCode?: unknown } | null)?.code ?? (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === "number" ? code : undefined;
}

const namespaceOf = (pj: PdfJob): string => pj.metadata.namespace ?? "default";

function eventFor(pj: PdfJob, type: EventType, reason: string, message: string, at: Date, component: string): CoreV1Event {
  const ns = namespaceOf(pj);
  return {
    metadata: { generateName: `${pj.metadata.name}.`, namespace: ns },
    involvedObject: {
      apiVersion: PDFJOB_API_VERSION,
      kind: PDFJOB_KIND,
      name: pj.metadata.name,
      namespace: ns,
      ...(pj.metadata.uid ? { uid: pj.metadata.uid } : {}),
      ...(pj.metadata.resourceVersion ? { resourceVersion: pj.metadata.resourceVersion } : {}),
    },
    type,
    reason,
    message: message.length > 1024 ? message.slice(0, 1023) + "…" : message,
    source: { component },
    reportingComponent: component,
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
  };
}

/**
 * Awaits `call()`, treating an API error with status `code` (404 on delete, 409 on create) as
 * success; answers whether the call itself succeeded (false: it was that error).
 */
async function tolerating(code: number, call: () => Promise<unknown>): Promise<boolean> {
  try {
    await call();
    return true;
  } catch (err) {
    if (statusCodeOf(err) !== code) throw err;
    return false;
  }
}

interface Step {
  current: PdfJob;
  requeueAfterMs?: number;
}

const isTerminal = (phase: PdfJobPhase | undefined): boolean => phase !== undefined && TERMINAL_PHASES.includes(phase);

/** Writes the status, and reports the phase change it made, if any. */
async function updateStatus(step: Step, status: PdfJobStatus, deps: ApplyDeps): Promise<void> {
  const before = step.current;
  step.current = await deps.kube.replaceStatus(before, status);
  const from = before.status?.phase;
  if (step.current.status?.phase !== from) deps.onPhaseChange?.({ from, pdfJob: step.current });
}

/** Removes the finalizer; a PdfJob let go before it ended is reported as canceled now (see PhaseChange). */
async function removeFinalizer(pj: PdfJob, deps: ApplyDeps, now: Date): Promise<void> {
  const finalizers = pj.metadata.finalizers ?? [];
  if (!finalizers.includes(PDFJOB_FINALIZER)) return;
  // 404: the PdfJob is gone already, let go by another write, which reported its end.
  const removed = await tolerating(404, () =>
    deps.kube.setFinalizers(
      pj,
      finalizers.filter((f) => f !== PDFJOB_FINALIZER),
    ),
  );
  const from = pj.status?.phase;
  if (removed && !isTerminal(from))
    deps.onPhaseChange?.({ from, pdfJob: { ...pj, status: { ...pj.status, phase: "Canceled", completionTime: rfc3339(now.getTime()) } } });
}

/** Sends the attempt, or recalls it when this controller made it already (controller/sent-attempts.ts). */
async function attempt(pj: PdfJob, delivery: WebhookDelivery, deps: ApplyDeps, now: Date): Promise<{ outcome: WebhookOutcome; at: Date }> {
  const name = attemptName(pj);
  const earlier = name === undefined ? undefined : deps.sent?.recall(name);
  if (earlier) return earlier;
  const outcome: WebhookOutcome = deps.sendWebhook
    ? await deps
        .sendWebhook(delivery)
        .catch((err: unknown) => ({ delivered: false as const, error: err instanceof Error ? err.message : "webhook attempt failed" }))
    : { delivered: false, error: "no webhook sender configured" };
  // An open circuit sent nothing: no attempt to remember.
  const made = outcome.delivered || outcome.circuitOpen !== true;
  if (made && name !== undefined) deps.sent?.remember(name, { outcome, at: now });
  return { outcome, at: now };
}

async function deliver(step: Step, delivery: WebhookDelivery, deps: ApplyDeps, now: Date, event: EventFn): Promise<void> {
  const { outcome, at } = await attempt(step.current, delivery, deps, now);
  // An open circuit sent nothing: no attempt to record or count; a requeue-after, or a give-up past the window.
  const circuitOpen = !outcome.delivered && outcome.circuitOpen === true;
  const record = circuitOpen
    ? deferWebhook(step.current.status ?? {}, outcome.error, now)
    : recordWebhookAttempt(step.current.status ?? {}, outcome, at);
  if ("deferMs" in record) return requeueAfter(step, record.deferMs);
  // A write from a stale copy fails here (409): the attempt is remembered, not sent again.
  step.current = await deps.kube.replaceStatus(step.current, record.status);
  if (!circuitOpen) deps.onWebhookAttempt?.(outcome.delivered ? "delivered" : outcome.blocked ? "blocked" : "failed");
  if (record.status.webhook?.status === "gave_up") deps.onWebhookAttempt?.("gave_up");
  await event(step.current, record.event.type, record.event.reason, record.event.message);
  if (record.requeueAfterMs !== null) requeueAfter(step, record.requeueAfterMs);
}

type EventFn = (pj: PdfJob, type: EventType, reason: string, message: string) => Promise<void>;

async function addFinalizer(step: Step, deps: ApplyDeps): Promise<void> {
  const finalizers = step.current.metadata.finalizers ?? [];
  if (!finalizers.includes(PDFJOB_FINALIZER)) step.current = await deps.kube.setFinalizers(step.current, [...finalizers, PDFJOB_FINALIZER]);
}

async function createJob(ns: string, job: V1Job, deps: ApplyDeps): Promise<void> {
  // The names are deterministic: if they exist already, the next reconcile reads them.
  if (deps.prepareJob) await tolerating(409, () => deps.prepareJob!(ns, job));
  await tolerating(409, () => deps.kube.createJob(ns, job));
}

async function deleteStorage(keys: readonly string[], prefixes: readonly string[], deps: ApplyDeps): Promise<void> {
  for (const key of keys) await deps.store.delete(key);
  for (const prefix of prefixes) await deps.store.deletePrefix(prefix);
}

/** Keeps the soonest of the requeues asked for. */
function requeueAfter(step: Step, ms: number): void {
  step.requeueAfterMs = Math.min(step.requeueAfterMs ?? Infinity, ms);
}

async function perform(step: Step, a: Action, deps: ApplyDeps, now: Date, event: EventFn): Promise<void> {
  const pj = step.current;
  const ns = namespaceOf(pj);
  switch (a.action) {
    case "addFinalizer":
      return addFinalizer(step, deps);
    case "removeFinalizer":
      return removeFinalizer(pj, deps, now);
    case "createJob":
      return createJob(ns, a.job, deps);
    case "deleteJob":
      await tolerating(404, () => deps.kube.deleteJobForeground(ns, a.name));
      return;
    case "updateStatus":
      return updateStatus(step, a.status, deps);
    case "recordEvent":
      return event(pj, a.type, a.reason, a.message);
    case "deliverWebhook":
      return deliver(step, a.delivery, deps, now, event);
    case "deleteStorage":
      return deleteStorage(a.keys, a.prefixes, deps);
    case "deletePdfJob":
      await tolerating(404, () => deps.kube.deletePdfJob(ns, pj.metadata.name, pj.metadata.uid));
      return;
    case "deleteSecret":
      await tolerating(404, () => deps.kube.deleteSecret(ns, a.name));
      return;
    case "requeueAfter":
      return requeueAfter(step, a.ms);
  }
}

/** Performs `actions` in order for `pj`; stops at the first error. */
export async function applyActions(pj: PdfJob, actions: readonly Action[], deps: ApplyDeps): Promise<ApplyResult> {
  const now = (deps.now ?? (() => new Date()))();
  const component = deps.component ?? "folio-controller";
  // Events are best effort and, like client-go's recorder, sent without holding up the reconcile
  // (they were half of its API writes): a lost one never blocks or fails it.
  const event: EventFn = (target, type, reason, message) => {
    void (async () => {
      try {
        await deps.kube.createEvent(namespaceOf(target), eventFor(target, type, reason, message, now, component));
      } catch {
        // dropped
      }
    })();
    return Promise.resolve();
  };
  // Each write returns the new object: later actions of the list use its resourceVersion.
  const step: Step = { current: pj };
  let performed = 0;
  let error: unknown;
  try {
    for (const a of actions) {
      await perform(step, a, deps, now, event);
      performed++;
    }
  } catch (err) {
    error = err ?? new Error("unknown error");
  }
  return {
    performed,
    ...(error === undefined ? {} : { error }),
    ...(step.requeueAfterMs === undefined ? {} : { requeueAfterMs: step.requeueAfterMs }),
  };
}

/** The KubeClient of a kubeconfig (client-node's generated APIs). */
export function kubeClient(kc: KubeConfig): KubeClient {
  const batch = kc.makeApiClient(BatchV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const crd = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL };
  return {
    async createJob(namespace, job) {
      await batch.createNamespacedJob({ namespace, body: job });
    },
    async deleteJobForeground(namespace, name) {
      await batch.deleteNamespacedJob({ namespace, name, propagationPolicy: "Foreground" });
    },
    async replaceStatus(pj, status) {
      const body = { apiVersion: PDFJOB_API_VERSION, kind: PDFJOB_KIND, metadata: pj.metadata, spec: pj.spec, status };
      return (await custom.replaceNamespacedCustomObjectStatus({
        ...crd,
        namespace: namespaceOf(pj),
        name: pj.metadata.name,
        body,
      })) as PdfJob;
    },
    async setFinalizers(pj, finalizers) {
      const body = { metadata: { finalizers, resourceVersion: pj.metadata.resourceVersion } };
      return (await custom.patchNamespacedCustomObject(
        { ...crd, namespace: namespaceOf(pj), name: pj.metadata.name, body },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      )) as PdfJob;
    },
    async deletePdfJob(namespace, name, uid) {
      await custom.deleteNamespacedCustomObject({ ...crd, namespace, name, ...(uid ? { body: { preconditions: { uid } } } : {}) });
    },
    async deleteSecret(namespace, name) {
      await core.deleteNamespacedSecret({ namespace, name });
    },
    async createEvent(namespace, event) {
      await core.createNamespacedEvent({ namespace, body: event });
    },
  };
}
