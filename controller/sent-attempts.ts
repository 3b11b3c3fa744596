/**
 * The webhook attempts this controller made, remembered so that it never makes one twice.
 *
 * An attempt is sent first and recorded in the PdfJob's status after (controller/apply.ts). Two
 * things can make a later reconcile see the ledger as it was before the attempt: the informer's
 * cache had not caught up with the status write when another event (the Job's pods going, say)
 * woke the key, or the write itself lost a race (409 Conflict). Either way decide() asks for the
 * same attempt again. The apply layer asks this memory first: an attempt it made, delivered or
 * failed, is recorded from what it remembers and nothing is sent; a stale copy's write then fails
 * with 409 and the retry reads the status that holds the attempt. (Resent, a failed attempt would
 * reach a receiver early, out of its schedule; a delivered one, twice.)
 *
 * An attempt is named by the PdfJob's uid, the message id and the ledger's attempt count before
 * it: the next attempt of a series, and a redelivery asked for later, count on from the recorded
 * attempts, so each is a new name and is sent. A delivery that met an open circuit made no attempt
 * and is not remembered. Like the receivers' circuit breakers (core/webhooks/breaker.ts) this is
 * soft state, bounded, oldest forgotten first: a restarted or newly elected controller may send a
 * message once more, which the contract allows (at-least-once, the same `webhook-id`, API.md
 * "Webhooks").
 */
import type { PdfJob } from "../core/schemas/pdfjob.ts";
import type { WebhookOutcome } from "./ledger.ts";

/** An attempt made: what came of it, and when it was made. */
export interface SentAttempt {
  outcome: WebhookOutcome;
  at: Date;
}

/** The name of the attempt the PdfJob's ledger is due for; undefined without a ledger. */
export function attemptName(pj: PdfJob): string | undefined {
  const w = pj.status?.webhook;
  return w ? `${pj.metadata.uid ?? pj.metadata.name}/${w.messageId}/${w.attempts}` : undefined;
}

export class SentAttempts {
  readonly #max: number;
  readonly #attempts = new Map<string, SentAttempt>();

  /** `max`: how many it remembers; a few minutes of attempts at any rate one controller sends. */
  constructor(max = 10_000) {
    this.#max = max;
  }

  remember(name: string, attempt: SentAttempt): void {
    this.#attempts.delete(name);
    this.#attempts.set(name, attempt);
    if (this.#attempts.size > this.#max) this.#attempts.delete(this.#attempts.keys().next().value!);
  }

  recall(name: string): SentAttempt | undefined {
    return this.#attempts.get(name);
  }

  get size(): number {
    return this.#attempts.size;
  }
}
