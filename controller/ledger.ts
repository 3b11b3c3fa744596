/**
 * Pure status helpers of the reconciler: metav1.Conditions and the webhook delivery ledger.
 *
 * Conditions follow the Kubernetes API conventions: `lastTransitionTime` changes only when the
 * status does, each carries the generation it was computed from. `Succeeded` summarises the job
 * the way Tekton's does (Unknown while pending or running, True, or False with the reason);
 * `WebhookDelivered` follows the webhook (Unknown while pending or failing, True, False = gave up).
 *
 * The ledger (API.md "Webhooks"): at-least-once delivery, the same `webhook-id` on every
 * attempt, and what follows an attempt decided by the rule embedded mode follows too
 * (core/webhooks/retry.ts `nextStep`: the shared schedule, `410 Gone` ends it at once), jittered by
 * a seeded random so that every replica computes the same time.
 *
 * A delivery that met an open circuit (core/webhooks/breaker.ts) made no attempt, so nothing is
 * recorded (`deferWebhook`): it is retried by a requeue-after at the time `circuitDeferral` gives,
 * the status untouched, which keeps a failing host from costing one status write and one Event
 * per due job every minute. Like the breaker itself this is soft state: a restarted controller
 * attempts it at once, with closed circuits. Once the series' retry window is over, a delivery
 * still facing an open circuit is given up, attempts unchanged: that one is written.
 */
import { rfc3339 } from "../core/time.ts";
import {
  RECENT_ATTEMPTS_MAX,
  type Condition,
  type PdfJobStatus,
  type WebhookAttemptEntry,
  type WebhookLedger,
} from "../core/schemas/pdfjob.ts";
import { circuitDeferral, DEFAULT_BREAKER_POLICY, type BreakerPolicy } from "../core/webhooks/breaker.ts";
import { webhookMessageId, type WebhookEventType } from "../core/webhooks/events.ts";
import { DEFAULT_RETRY_POLICY, nextStep, type AttemptOutcome, type RetryPolicy } from "../core/webhooks/retry.ts";
import { seededUnit } from "../core/webhooks/schedule.ts";

export const SUCCEEDED = "Succeeded";
export const WEBHOOK_DELIVERED = "WebhookDelivered";

export interface ConditionInput {
  type: string;
  status: Condition["status"];
  reason: string;
  message: string;
}

/** `conditions` with `c` set: the transition time kept while the status stays the same. */
export function withCondition(
  conditions: readonly Condition[] | undefined,
  c: ConditionInput,
  nowMs: number,
  generation: number,
): Condition[] {
  const list = conditions ?? [];
  const prior = list.find((x) => x.type === c.type);
  const next: Condition = {
    type: c.type,
    status: c.status,
    observedGeneration: generation,
    lastTransitionTime: prior && prior.status === c.status ? prior.lastTransitionTime : rfc3339(nowMs),
    reason: c.reason,
    message: c.message,
  };
  return prior ? list.map((x) => (x.type === c.type ? next : x)) : [...list, next];
}

/** "invalid_pdf" → "InvalidPdf": a job error code as a condition or event reason (CamelCase). */
export function camelReason(code: string): string {
  return code.replace(/(^|_)([a-z0-9])/g, (_m, _s: string, c: string) => c.toUpperCase());
}

/** A new ledger for the job's final event, due at once. */
export function newLedger(jobId: string, eventType: WebhookEventType, dueMs: number): WebhookLedger {
  return { eventType, messageId: webhookMessageId(jobId, eventType), status: "pending", attempts: 0, nextAttemptTime: rfc3339(dueMs) };
}

/** True once nothing more will be attempted. */
export function settled(w: WebhookLedger): boolean {
  return w.status === "delivered" || w.status === "gave_up";
}

/** When the next attempt is due (ms); null when settled. An unparsable time is due now. */
export function nextAttemptMs(w: WebhookLedger): number | null {
  if (settled(w)) return null;
  const t = w.nextAttemptTime === undefined ? Number.NaN : Date.parse(w.nextAttemptTime);
  return Number.isNaN(t) ? 0 : t;
}

export interface WebhookOptions {
  schedule?: readonly number[];
  jitter?: number;
  /** The breaker's policy, for how long an open circuit defers (core/webhooks/breaker.ts). */
  breaker?: Pick<BreakerPolicy, "resetTimeoutMs">;
}

/**
 * How one attempt went, as the sender (controller/webhooks.ts) reports it: core's AttemptOutcome
 * (core/webhooks/retry.ts) in the ledger's shape. `gone`: the receiver answered 410 Gone and asked
 * us to stop; `blocked`: the SSRF guard refused the URL (retried like any failure, counted apart in
 * the metrics); `circuitOpen`: nothing was sent, the receiver's circuit is open (not an attempt: deferWebhook).
 */
export type WebhookOutcome = (
  { delivered: true } | { delivered: false; error: string; gone?: boolean; blocked?: boolean; circuitOpen?: boolean }
) & {
  /** The receiver's HTTP status, when it answered; the time the exchange took, when one was made. */
  statusCode?: number;
  latencyMs?: number;
};

/** The ledger's attempt log with this attempt appended, the oldest dropped beyond RECENT_ATTEMPTS_MAX. */
function withAttempt(w: WebhookLedger, outcome: WebhookOutcome, nowMs: number, nextMs: number | null): WebhookAttemptEntry[] {
  const entry: WebhookAttemptEntry = {
    time: rfc3339(nowMs),
    ...(outcome.statusCode !== undefined ? { statusCode: outcome.statusCode } : {}),
    ...(outcome.latencyMs !== undefined ? { latencyMs: Math.max(0, Math.round(outcome.latencyMs)) } : {}),
    ...(outcome.delivered ? {} : { error: outcome.error.slice(0, 1024) }),
    ...(nextMs !== null ? { nextAttemptTime: rfc3339(nextMs) } : {}),
  };
  return [...(w.recentAttempts ?? []), entry].slice(-RECENT_ATTEMPTS_MAX);
}

/** The time of a folio.dev/redeliver-requested annotation; null when absent or not a time. */
export function redeliveryRequestMs(value: string | undefined): number | null {
  if (value === undefined || !/^\d{4}-\d{2}-\d{2}T/.test(value)) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : t;
}

/**
 * The ledger after a redelivery asked for at `requestedMs`, when it should start one: the ledger
 * is settled (one being retried goes on its schedule, as in embedded mode) and the request is
 * newer than the last one answered. The same message (`webhook-id`: receivers deduplicate on it,
 * Standard Webhooks), due now, a new series of retries; `attempts` keeps counting. Else null.
 */
export function redeliveredLedger(w: WebhookLedger, requestedMs: number, nowMs: number): WebhookLedger | null {
  if (!settled(w)) return null;
  const answered = w.redelivery ? Date.parse(w.redelivery.requestedTime) : Number.NaN;
  if (!Number.isNaN(answered) && requestedMs <= answered) return null;
  const { deliveredTime: _d, lastError: _e, ...rest } = w;
  return {
    ...rest,
    status: "pending",
    nextAttemptTime: rfc3339(nowMs),
    redelivery: { requestedTime: new Date(requestedMs).toISOString(), attemptsBefore: w.attempts },
  };
}

export interface AttemptRecord {
  /** The status to write: the ledger and the WebhookDelivered condition updated. */
  status: PdfJobStatus;
  event: { type: "Normal" | "Warning"; reason: string; message: string };
  /** When to reconcile again for the next attempt; null when the ledger is settled. */
  requeueAfterMs: number | null;
}

/** The shared outcome (core/webhooks/retry.ts) of the ledger's. */
function attemptOutcome(o: WebhookOutcome): AttemptOutcome {
  if (o.delivered) return { kind: "delivered" };
  return { kind: o.gone ? "gone" : o.blocked ? "blocked" : "failed", error: o.error };
}

/** The status with the ledger `webhook` and the WebhookDelivered condition set. */
function withLedger(status: PdfJobStatus, webhook: WebhookLedger, c: Omit<ConditionInput, "type">, nowMs: number): PdfJobStatus {
  const conditions = withCondition(status.conditions, { type: WEBHOOK_DELIVERED, ...c }, nowMs, status.observedGeneration ?? 0);
  return { ...status, webhook, conditions };
}

/** An attempt succeeded. */
function deliveredRecord(status: PdfJobStatus, w: WebhookLedger, outcome: WebhookOutcome, nowMs: number): AttemptRecord {
  const attempts = w.attempts + 1;
  const { nextAttemptTime: _n, ...rest } = w;
  const webhook: WebhookLedger = {
    ...rest,
    attempts,
    lastAttemptTime: rfc3339(nowMs),
    status: "delivered",
    deliveredTime: rfc3339(nowMs),
    recentAttempts: withAttempt(w, outcome, nowMs, null),
  };
  const message = `Delivered ${w.eventType} after ${attempts} attempt(s).`;
  return {
    status: withLedger(status, webhook, { status: "True", reason: "Delivered", message }, nowMs),
    event: { type: "Normal", reason: "WebhookDelivered", message: `Delivered webhook ${w.eventType}` },
    requeueAfterMs: null,
  };
}

/**
 * Nothing more will be attempted, after `attempt` (the outcome of one more attempt) or without
 * one (a circuit still open at the end of the retry window: attempts unchanged, nothing logged).
 */
function gaveUpRecord(status: PdfJobStatus, w: WebhookLedger, error: string, nowMs: number, attempt?: WebhookOutcome): AttemptRecord {
  const attempts = attempt ? w.attempts + 1 : w.attempts;
  const { nextAttemptTime: _n, ...rest } = w;
  const webhook: WebhookLedger = {
    ...rest,
    ...(attempt ? { attempts, lastAttemptTime: rfc3339(nowMs), recentAttempts: withAttempt(w, attempt, nowMs, null) } : {}),
    status: "gave_up",
    lastError: error,
  };
  const message = `Gave up after ${attempts} attempt(s): ${error}`;
  return {
    status: withLedger(status, webhook, { status: "False", reason: "GaveUp", message }, nowMs),
    event: { type: "Warning", reason: "WebhookGaveUp", message: `Gave up webhook ${w.eventType} after ${attempts} attempt(s): ${error}` },
    requeueAfterMs: null,
  };
}

/** An attempt failed; the next one is due in `delayMs`. */
function failingRecord(
  status: PdfJobStatus,
  w: WebhookLedger,
  error: string,
  outcome: WebhookOutcome,
  nowMs: number,
  delayMs: number,
): AttemptRecord {
  const attempts = w.attempts + 1;
  const webhook: WebhookLedger = {
    ...w,
    attempts,
    lastAttemptTime: rfc3339(nowMs),
    status: "failing",
    lastError: error,
    nextAttemptTime: rfc3339(nowMs + delayMs),
    recentAttempts: withAttempt(w, outcome, nowMs, nowMs + delayMs),
  };
  return {
    status: withLedger(status, webhook, { status: "Unknown", reason: "Failing", message: `Attempt ${attempts} failed: ${error}` }, nowMs),
    event: { type: "Warning", reason: "WebhookFailed", message: `Webhook attempt ${attempts} failed: ${error}` },
    requeueAfterMs: delayMs,
  };
}

/** When the ledger's current series of attempts started: the redelivery asked for, else the job's end. */
function seriesStartMs(status: PdfJobStatus, w: WebhookLedger, nowMs: number): number {
  const t = Date.parse(w.redelivery?.requestedTime ?? status.completionTime ?? "");
  return Number.isNaN(t) ? nowMs : t;
}

/**
 * A delivery whose receiver's circuit is open (no attempt was made; see the module comment): how
 * long to wait before trying again, or, its series' retry window being over, the status that gives
 * it up with its attempts unchanged.
 */
export function deferWebhook(status: PdfJobStatus, error: string, now: Date, o: WebhookOptions = {}): { deferMs: number } | AttemptRecord {
  const w = status.webhook;
  if (!w) throw new Error("deferWebhook: the status has no webhook ledger");
  const nowMs = now.getTime();
  const policy = { breaker: { ...DEFAULT_BREAKER_POLICY, ...o.breaker }, retry: retryPolicy(o) };
  const at = circuitDeferral(nowMs, seriesStartMs(status, w, nowMs), policy, () => seededUnit(`${w.messageId}/deferred/${nowMs}`));
  return at === null ? gaveUpRecord(status, w, error, nowMs) : { deferMs: at - nowMs };
}

function retryPolicy(o: WebhookOptions): RetryPolicy {
  return { schedule: o.schedule ?? DEFAULT_RETRY_POLICY.schedule, jitter: o.jitter ?? DEFAULT_RETRY_POLICY.jitter };
}

/**
 * The status after one delivery attempt (the apply layer performs `deliverWebhook` and writes
 * this). What follows is core's rule (`nextStep`); delays are jittered by a random seeded with the
 * message id and attempt number.
 */
export function recordWebhookAttempt(status: PdfJobStatus, outcome: WebhookOutcome, now: Date, o: WebhookOptions = {}): AttemptRecord {
  const w = status.webhook;
  if (!w) throw new Error("recordWebhookAttempt: the status has no webhook ledger");
  const nowMs = now.getTime();
  if (!outcome.delivered && outcome.circuitOpen)
    throw new Error("recordWebhookAttempt: no attempt was made (circuit open); see deferWebhook");
  const attempts = w.attempts + 1;
  // A redelivery's series follows the schedule from its start (attempts of the series, not in all).
  const inSeries = attempts - (w.redelivery?.attemptsBefore ?? 0);
  const shared = attemptOutcome(outcome);
  const step = nextStep(inSeries, shared, retryPolicy(o), () => seededUnit(`${w.messageId}/${attempts}`));
  if (shared.kind === "delivered") return deliveredRecord(status, w, outcome, nowMs);
  if (step.kind === "retry") return failingRecord(status, w, shared.error, outcome, nowMs, step.delayMs);
  return gaveUpRecord(status, w, shared.error, nowMs, outcome);
}
