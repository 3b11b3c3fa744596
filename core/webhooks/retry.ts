/**
 * The retry rule of webhook deliveries (API.md "Webhooks"), one for both modes: the embedded
 * worker (api/webhooks/delivery.ts, a SQLite queue) and the controller (controller/webhooks.ts
 * sends, controller/ledger.ts records the attempt in the PdfJob's status and requeues after the
 * delay). Each mode only stores the answer its own way.
 *
 * - `classify…` turn what happened into one of four outcomes: `delivered` (any 2xx); `gone`
 *   (410: RFC 9110 §15.5.11 says the endpoint is gone for good, Standard Webhooks says stop);
 *   `blocked` (the SSRF guard refused the URL: retried like a failure, counted apart in the
 *   metrics); `failed` (anything else: a network error, a timeout, a 3xx, since redirects are
 *   never followed, a 4xx or 5xx; an unresolvable host too, as DNS may recover).
 * - `nextStep` says what follows: done, give up (after 410, or after the last attempt of the
 *   schedule), or retry after the schedule's delay for this attempt (core/webhooks/schedule.ts),
 *   jittered by the caller's random (Math.random in embedded mode, a seeded one in the controller
 *   so that every replica computes the same time).
 *
 * The error texts are fixed phrases, HTTP statuses or network error codes: they reach job
 * objects, Events and logs, so they never carry a secret or the URL (whose path may hold a token).
 */
import type { UrlCheck } from "../net/ssrf.ts";
import type { PostOutcome } from "./http.ts";
import { RETRY_JITTER, RETRY_SCHEDULE_MS, retryDelay } from "./schedule.ts";

/** How one attempt went. */
export type AttemptOutcome = { kind: "delivered" } | { kind: "gone" | "blocked" | "failed"; error: string };

/** What happens after an attempt. */
export type NextStep = { kind: "done" } | { kind: "give_up" } | { kind: "retry"; delayMs: number };

export interface RetryPolicy {
  /** Delays before the 2nd, 3rd, … attempt; the number of attempts is its length + 1. */
  schedule: readonly number[];
  /** Relative jitter applied to each delay: 0.2 = ±20 %. */
  jitter: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({ schedule: RETRY_SCHEDULE_MS, jitter: RETRY_JITTER });

/** The outcome of a receiver's answer with HTTP `status`. */
export function classifyResponse(status: number): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: "delivered" };
  if (status === 410) return { kind: "gone", error: "HTTP 410 Gone: the receiver asked to stop" };
  if (status >= 300 && status < 400) return { kind: "failed", error: `redirect (HTTP ${status}) not followed` };
  return { kind: "failed", error: `HTTP ${status}` };
}

/** The outcome of a POST (core/webhooks/http.ts): its answer, or its network error as a failure. */
export function classifyPost(o: PostOutcome): AttemptOutcome {
  return o.kind === "response" ? classifyResponse(o.status) : { kind: "failed", error: o.error };
}

/** The outcome of a URL the SSRF guard refused: unresolvable is an ordinary failure, the rest "blocked". */
export function classifyRefusal(check: Extract<UrlCheck, { ok: false }>): AttemptOutcome {
  if (check.code === "unresolvable") return { kind: "failed", error: check.reason };
  return { kind: "blocked", error: `blocked: webhook_url ${check.reason}` };
}

/**
 * What follows an attempt with `outcome`, `attempts` being the attempts of this series so far,
 * that one included (a redelivery starts a new series).
 */
export function nextStep(attempts: number, outcome: AttemptOutcome, policy: RetryPolicy, random: () => number): NextStep {
  if (outcome.kind === "delivered") return { kind: "done" };
  if (outcome.kind === "gone") return { kind: "give_up" };
  const delayMs = retryDelay(attempts, policy.schedule, policy.jitter, random);
  return delayMs === null ? { kind: "give_up" } : { kind: "retry", delayMs };
}

/** How long a series of retries can last: the schedule's sum at its largest jitter. */
export function retryWindowMs(policy: RetryPolicy): number {
  return Math.round(policy.schedule.reduce((a, b) => a + b, 0) * (1 + policy.jitter));
}
