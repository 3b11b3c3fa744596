/**
 * The circuit breaker of webhook receivers, one policy for both modes (API.md "Webhooks"): a
 * breaker per tenant and destination host (`host:port`) opens when more than half of at least 5
 * attempts to it within 10 minutes found it unwell — a network error, a timeout, 408, 429 or 5xx
 * (any other answer comes from a healthy host and does not count) — and after a minute lets one
 * probe through. Keying by tenant too means one tenant's failing receivers never defer another
 * tenant's deliveries to the same host (a shared receiver such as a SaaS's webhook ingress).
 *
 * While a circuit is open, a due delivery is deferred without an attempt, so it does not use up
 * its schedule: it comes back when the breaker would let a probe through (jittered), but never
 * past the end of its series' whole retry window (core/webhooks/retry.ts `retryWindowMs`); one
 * still facing an open circuit there gives up. The breaker never stretches the window.
 *
 * Both modes hold their breakers in memory (opossum), in the process that sends: the embedded
 * worker, and the controller's sender (only the leader sends). That is soft state by design: a
 * restart or a fail-over starts with closed circuits, which costs at most a few attempts to a host
 * that is still failing (the breaker reopens after `volumeThreshold` of them). What is durable is
 * what each mode already keeps: attempts, their count and the give-up. Embedded mode writes a
 * deferral into the queue row (a cheap local UPDATE); the controller makes it a requeue-after and
 * leaves the PdfJob's status alone (controller/ledger.ts `deferWebhook`), so a host that is down
 * does not cost a status write and an Event per waiting job every minute; a restarted controller
 * then simply attempts the delivery, as its fresh breaker would allow anyway.
 */
import CircuitBreaker from "opossum";
import type { PostOutcome } from "./http.ts";
import { retryWindowMs, type RetryPolicy } from "./retry.ts";

const MIN = 60_000;

export interface BreakerPolicy {
  /** Attempts within the rolling window before the breaker may open. */
  volumeThreshold: number;
  /** Percentage of unwell answers in the window above which it opens. */
  errorThresholdPercentage: number;
  /** How long it stays open before one probe attempt is let through. */
  resetTimeoutMs: number;
  rollingWindowMs: number;
}

export const DEFAULT_BREAKER_POLICY: BreakerPolicy = Object.freeze({
  volumeThreshold: 5,
  errorThresholdPercentage: 50,
  resetTimeoutMs: MIN,
  rollingWindowMs: 10 * MIN,
});

/** An answer that says the host is unwell (counted by the breaker). An aborted attempt is not. */
export function unhealthy(o: PostOutcome): boolean {
  return o.kind === "error" ? !o.aborted : o.status >= 500 || o.status === 408 || o.status === 429;
}

/**
 * When a delivery meeting an open circuit at `nowMs` comes back, its series having started at
 * `seriesStartMs`; null = give up (the series' retry window is over).
 */
export function circuitDeferral(
  nowMs: number,
  seriesStartMs: number,
  policy: { breaker: BreakerPolicy; retry: RetryPolicy },
  random: () => number,
): number | null {
  const windowEnd = seriesStartMs + retryWindowMs(policy.retry);
  if (nowMs >= windowEnd) return null;
  // Back when the breaker lets a probe through, but never past the window: the last chance is at its end.
  const at = nowMs + Math.round(policy.breaker.resetTimeoutMs * (1 + random() * policy.retry.jitter));
  return Math.min(at, windowEnd);
}

/** An unwell answer, thrown through opossum so it counts, then unwrapped again. */
class Unhealthy extends Error {
  readonly outcome: PostOutcome;
  constructor(outcome: PostOutcome) {
    super("unhealthy");
    this.outcome = outcome;
  }
}

type Post = () => Promise<PostOutcome>;
const MAX_BREAKERS = 1000;

export interface ReceiverBreakersOptions {
  policy?: Partial<BreakerPolicy>;
  /** Told when a circuit opens or closes (a log line). */
  onChange?: (state: "open" | "close", tenant: string, host: string) => void;
}

/** The breakers of one sending process, by tenant and host; see the module comment. */
export class ReceiverBreakers {
  readonly policy: BreakerPolicy;
  private readonly onChange: ReceiverBreakersOptions["onChange"];
  /** By "<tenant> <host:port>". */
  private readonly breakers = new Map<string, CircuitBreaker<[Post], PostOutcome>>();

  constructor(o: ReceiverBreakersOptions = {}) {
    this.policy = { ...DEFAULT_BREAKER_POLICY, ...o.policy };
    this.onChange = o.onChange;
  }

  /** Makes the attempt `post` through the circuit of `tenant` and `host`: its outcome, or null (open: nothing sent). */
  async send(tenant: string, host: string, post: Post): Promise<PostOutcome | null> {
    try {
      return await this.breakerFor(tenant, host).fire(async () => {
        const outcome = await post();
        if (unhealthy(outcome)) throw new Unhealthy(outcome);
        return outcome;
      });
    } catch (err) {
      if (err instanceof Unhealthy) return err.outcome;
      if ((err as { code?: string }).code === "EOPENBREAKER") return null;
      throw err;
    }
  }

  /** Stops every breaker's timers and forgets them. */
  shutdown(): void {
    for (const b of this.breakers.values()) b.shutdown();
    this.breakers.clear();
  }

  private breakerFor(tenant: string, host: string): CircuitBreaker<[Post], PostOutcome> {
    const key = `${tenant} ${host}`;
    let b = this.breakers.get(key);
    if (b) return b;
    if (this.breakers.size >= MAX_BREAKERS) this.forgetOneClosed();
    const o = this.policy;
    b = new CircuitBreaker<[Post], PostOutcome>((post) => post(), {
      name: host,
      timeout: false, // postWebhook enforces its own 15 s
      volumeThreshold: o.volumeThreshold,
      errorThresholdPercentage: o.errorThresholdPercentage,
      resetTimeout: o.resetTimeoutMs,
      rollingCountTimeout: o.rollingWindowMs,
      rollingCountBuckets: 10,
      enableSnapshots: false,
    });
    b.on("open", () => this.onChange?.("open", tenant, host));
    b.on("close", () => this.onChange?.("close", tenant, host));
    this.breakers.set(key, b);
    return b;
  }

  /** Forgets the oldest breaker that is closed; open ones keep protecting their host. */
  private forgetOneClosed(): void {
    for (const [k, old] of this.breakers) {
      if (!old.closed) continue;
      old.shutdown();
      this.breakers.delete(k);
      return;
    }
  }
}
