/**
 * Pure status helpers of the reconciler: metav1.Conditions and the webhook delivery ledger.
 *
 * Conditions follow the Kubernetes API conventions: `lastTransitionTime` changes only when the
 * status does, each carries the generation it was computed from. `Succeeded` summarises the job
 * the way Tekton's does (Unknown while pending or running, True, or False with the reason);
 * `WebhookDelivered` follows the webhook (Unknown while pending or failing, True, False = gave up).
 *
 * The ledger (API.md "Webhooks"): at-least-once delivery, the same `webhook-id` on every
 * attempt, retries after the shared schedule (core/webhooks/schedule.ts) jittered by a seeded
 * random so that every replica computes the same time, `410 Gone` ends it at once.
 */
import { rfc3339 } from "../core/time.ts";
import { RETRY_JITTER, RETRY_SCHEDULE_MS, retryDelay, seededUnit } from "../core/webhooks/schedule.ts";
import {
  RECENT_ATTEMPTS_MAX,
  webhookMessageId,
  type Condition,
  type PdfJobStatus,
  type WebhookAttemptEntry,
  type WebhookEventType,
  type WebhookLedger,
} from "../core/schemas/pdfjob.ts";

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
}

/**
 * How one attempt went. `gone`: the receiver answered 410 Gone and asked us to stop; `blocked`:
 * the SSRF guard refused the URL (retried like any failure, counted apart in the metrics).
 */
export type WebhookOutcome = ({ delivered: true } | { delivered: false; error: string; gone?: boolean; blocked?: boolean }) & {
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

/**
 * The status after one delivery attempt (the apply layer performs `deliverWebhook` and writes
 * this). Delays come from the shared schedule, jittered by a random seeded with the message id
 * and attempt number.
 */
export function recordWebhookAttempt(status: PdfJobStatus, outcome: WebhookOutcome, now: Date, o: WebhookOptions = {}): AttemptRecord {
  const w = status.webhook;
  if (!w) throw new Error("recordWebhookAttempt: the status has no webhook ledger");
  const nowMs = now.getTime();
  const attempts = w.attempts + 1;
  const generation = status.observedGeneration ?? 0;
  const base = { ...w, attempts, lastAttemptTime: rfc3339(nowMs) };
  if (outcome.delivered) {
    const { nextAttemptTime: _n, ...rest } = base;
    const webhook: WebhookLedger = {
      ...rest,
      status: "delivered",
      deliveredTime: rfc3339(nowMs),
      recentAttempts: withAttempt(w, outcome, nowMs, null),
    };
    const conditions = withCondition(
      status.conditions,
      { type: WEBHOOK_DELIVERED, status: "True", reason: "Delivered", message: `Delivered ${w.eventType} after ${attempts} attempt(s).` },
      nowMs,
      generation,
    );
    return {
      status: { ...status, webhook, conditions },
      event: { type: "Normal", reason: "WebhookDelivered", message: `Delivered webhook ${w.eventType}` },
      requeueAfterMs: null,
    };
  }
  // A redelivery's series follows the schedule from its start (attempts of the series, not in all).
  const inSeries = attempts - (w.redelivery?.attemptsBefore ?? 0);
  const delay = outcome.gone
    ? null
    : retryDelay(inSeries, o.schedule ?? RETRY_SCHEDULE_MS, o.jitter ?? RETRY_JITTER, () => seededUnit(`${w.messageId}/${attempts}`));
  if (delay === null) {
    const { nextAttemptTime: _n, ...rest } = base;
    const webhook: WebhookLedger = {
      ...rest,
      status: "gave_up",
      lastError: outcome.error,
      recentAttempts: withAttempt(w, outcome, nowMs, null),
    };
    const conditions = withCondition(
      status.conditions,
      { type: WEBHOOK_DELIVERED, status: "False", reason: "GaveUp", message: `Gave up after ${attempts} attempt(s): ${outcome.error}` },
      nowMs,
      generation,
    );
    return {
      status: { ...status, webhook, conditions },
      event: {
        type: "Warning",
        reason: "WebhookGaveUp",
        message: `Gave up webhook ${w.eventType} after ${attempts} attempt(s): ${outcome.error}`,
      },
      requeueAfterMs: null,
    };
  }
  const webhook: WebhookLedger = {
    ...base,
    status: "failing",
    lastError: outcome.error,
    nextAttemptTime: rfc3339(nowMs + delay),
    recentAttempts: withAttempt(w, outcome, nowMs, nowMs + delay),
  };
  const conditions = withCondition(
    status.conditions,
    { type: WEBHOOK_DELIVERED, status: "Unknown", reason: "Failing", message: `Attempt ${attempts} failed: ${outcome.error}` },
    nowMs,
    generation,
  );
  return {
    status: { ...status, webhook, conditions },
    event: { type: "Warning", reason: "WebhookFailed", message: `Webhook attempt ${attempts} failed: ${outcome.error}` },
    requeueAfterMs: delay,
  };
}
