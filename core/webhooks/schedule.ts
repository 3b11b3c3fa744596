/**
 * The webhook retry schedule (API.md "Webhooks"), shared by both delivery paths: the embedded
 * worker (api/webhooks/delivery.ts) and the Kubernetes controller, whose delivery ledger lives
 * in the PdfJob's status and whose retries are requeue-afters.
 *
 * Standard Webhooks suggests (and Svix uses) retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h
 * and 10 h: 8 attempts over about 28 hours. Each delay is jittered so that deliveries failing
 * together do not retry together.
 */
import { createHash } from "node:crypto";

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;

/** Delays before the 2nd, 3rd, … attempt; the number of attempts is its length + 1. */
export const RETRY_SCHEDULE_MS: readonly number[] = [5 * S, 5 * MIN, 30 * MIN, 2 * H, 5 * H, 10 * H, 10 * H];

/** Relative jitter applied to each delay: 0.2 = ±20 %. */
export const RETRY_JITTER = 0.2;

/** The delay before the next attempt after `attempts` failed ones, jittered; null = give up. */
export function retryDelay(attempts: number, schedule: readonly number[], jitter: number, random: () => number): number | null {
  const base = schedule[attempts - 1];
  if (base === undefined) return null;
  return Math.round(base * (1 + (random() * 2 - 1) * jitter));
}

/**
 * A number in [0, 1) derived from `seed`: jitter for a pure reconciler, which must return the
 * same answer for the same input (the controller seeds it with the message id and attempt).
 */
export function seededUnit(seed: string): number {
  return createHash("sha256").update(seed).digest().readUInt32BE(0) / 2 ** 32;
}
