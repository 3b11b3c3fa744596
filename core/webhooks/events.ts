/**
 * The webhook messages Folio sends (API.md "Webhooks"), declared once for both modes: the event
 * types, which job ending announces which event, the message id of a job's event, and the one
 * function that turns a message into the bytes that are signed and sent.
 *
 * - A job announces its end once: `job.succeeded`, `job.failed`, or `job.canceled` for a job
 *   deleted before it ended. The dashboard's "Send a test event" sends `webhook.test`, which is
 *   never queued or retried.
 * - The body is JSON `{"type", "timestamp", "data"}` in that key order (Standard Webhooks
 *   "Payload structure"). `webhookMessage` serialises it and signs those very bytes, so the body
 *   signed is the body sent by construction: the embedded queue stores `body` and sends it on
 *   every retry, the controller rebuilds it from the PdfJob at each attempt.
 *
 * core/webhooks/ holds every webhook rule: this file (messages), sign.ts (Standard Webhooks
 * signatures), http.ts (the SSRF-pinned POST), schedule.ts and retry.ts (the outcome of an attempt
 * and what follows it), breaker.ts (the per-receiver circuit breaker). The two modes only adapt
 * them: api/webhooks/ (embedded: the SQLite queue's worker and its wiring) and
 * controller/webhooks.ts with controller/ledger.ts (Kubernetes: one attempt per reconcile, the
 * ledger in the PdfJob's status). api/store/webhooks.ts and webhook-attempts.ts are storage.
 */
import { derivedId } from "../ids.ts";
import { signHeaders, unixSeconds, type WebhookHeaders } from "./sign.ts";

export const WEBHOOK_EVENT_TYPES = ["job.succeeded", "job.failed", "job.canceled"] as const;
/** The event a job's webhook announces. */
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
/** The dashboard's test message: signed like the others, sent once, never queued. */
export const TEST_EVENT_TYPE = "webhook.test";

/** How a job ended, as the PdfJob's terminal phases spell it. */
export type EndingPhase = "Succeeded" | "Failed" | "Canceled";

const EVENT_FOR_PHASE: Readonly<Record<EndingPhase, WebhookEventType>> = {
  Succeeded: "job.succeeded",
  Failed: "job.failed",
  Canceled: "job.canceled",
};

/** The event that announces a job's ending. */
export function webhookEventFor(phase: EndingPhase): WebhookEventType {
  return EVENT_FOR_PHASE[phase];
}

/**
 * The Standard Webhooks `webhook-id` of a job's event in Kubernetes mode: derived, so every
 * replica and every retry computes the same one. (Embedded mode uses its queue row's random id.)
 */
export function webhookMessageId(jobId: string, eventType: WebhookEventType): string {
  return derivedId("msg", ["folio-webhook", jobId, eventType]);
}

/** A message before serialisation: `data` is the Job object as of the event (or the test's note). */
export interface WebhookPayload<T = unknown> {
  type: WebhookEventType | typeof TEST_EVENT_TYPE;
  /** RFC 3339: when the event happened. */
  timestamp: string;
  data: T;
}

/** The exact bytes of a message's body: `{"type","timestamp","data"}`, in that order. */
export function webhookBody(p: WebhookPayload): string {
  return JSON.stringify({ type: p.type, timestamp: p.timestamp, data: p.data });
}

/** The headers every webhook request carries besides the signature. */
export const WEBHOOK_REQUEST_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "application/json",
  "user-agent": "Folio-Webhooks/1",
};

/** One attempt's request: the body and the headers that sign exactly it. */
export interface WebhookRequest {
  body: string;
  headers: Record<string, string> & WebhookHeaders;
}

/**
 * The request of one attempt of message `msgId`: `body` (a string from `webhookBody`, e.g. as the
 * embedded queue stored it, or the payload itself) signed with every secret at `nowMs`. Throws
 * WebhookSecretError (core/webhooks/sign.ts) for a malformed or missing secret.
 */
export function webhookRequest(secrets: readonly string[], msgId: string, nowMs: number, body: string | WebhookPayload): WebhookRequest {
  const bytes = typeof body === "string" ? body : webhookBody(body);
  return { body: bytes, headers: { ...WEBHOOK_REQUEST_HEADERS, ...signHeaders(secrets, msgId, unixSeconds(nowMs), bytes) } };
}
