/**
 * Webhook delivery for the embedded mode: a durable queue in SQLite (api/store/webhooks.ts) and a
 * worker that attempts due deliveries (API.md "Webhooks", Standard Webhooks):
 *
 * - Every attempt re-checks the URL with the SSRF guard, connects to an address it returned, and
 *   signs with the tenant's signing secrets of that moment (both during a rotation). The
 *   `webhook-id` is the row id, the same on every retry; `webhook-timestamp` is the attempt's time.
 * - Success is any 2xx. `410 Gone` gives up at once. Anything else (3xx included: redirects are not
 *   followed) is retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, each ±20 % at random so
 *   that deliveries failing together do not retry together: 8 attempts over about 28 hours.
 * - A circuit breaker (opossum) per tenant and destination host (`host:port`) opens when more than half of at
 *   least 5 attempts to it within 10 minutes failed with a network error, a timeout, 408, 429 or
 *   5xx (other answers come from a healthy host and do not count); after a minute it lets one probe
 *   through. While it is open, due deliveries to that host are deferred without an
 *   attempt, so they do not use up their schedule; a deferral that would pass the end of the
 *   delivery's whole retry window (the schedule's sum, +20 %) is cut to its end, and a delivery
 *   still facing an open circuit there gives up: the breaker never stretches the window. Keying by
 *   tenant too means one tenant's failing receivers never defer another tenant's deliveries to
 *   the same host (a shared receiver such as a SaaS's webhook ingress; issue #10 item 12).
 * - The queue survives restarts: rows are claimed with a lease, so a delivery interrupted by a crash
 *   is retried once the lease lapses, and `stop()` hands back in-flight ones at once.
 * Secrets never reach a log line, and neither does the URL (its path may carry a token): only its host.
 */
import CircuitBreaker from "opossum";
import { newId } from "../../core/ids.ts";
import type { Logger } from "../../core/logger.ts";
import type { SsrfGuard, UrlCheck } from "../../core/net/ssrf.ts";
import type { JobObject } from "../../core/schemas/api.ts";
import { rfc3339 } from "../../core/time.ts";
import { RETRY_JITTER, RETRY_SCHEDULE_MS, retryDelay } from "../../core/webhooks/schedule.ts";
import { signHeaders, unixSeconds } from "../../core/webhooks/sign.ts";
import type { Db } from "../store/db.ts";
import type { WebhookState } from "../store/jobs.ts";
import type { Tenant } from "../store/tenants.ts";
import { WebhookStore, type DeliveryRow, type WebhookEventType } from "../store/webhooks.ts";
import { postWebhook, type PostOutcome, type TlsTrust } from "../../core/webhooks/http.ts";

export { RETRY_SCHEDULE_MS, retryDelay } from "../../core/webhooks/schedule.ts";

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;

/** Per attempt one of delivered | failed | blocked (the guard refused the URL); gave_up once more at the end. */
export type WebhookOutcome = "delivered" | "failed" | "gave_up" | "blocked";

/** The part of TenantStore delivery needs. */
export interface SigningSecrets {
  byId(id: string): Tenant | undefined;
  signingSecrets(t: Tenant, now?: number): string[];
}

export interface BreakerOptions {
  /** Attempts within the rolling window before the breaker may open. */
  volumeThreshold: number;
  /** Percentage of failed attempts in the window above which it opens. */
  errorThresholdPercentage: number;
  /** How long it stays open before one probe attempt is let through. */
  resetTimeoutMs: number;
  rollingWindowMs: number;
}

export interface WebhookDeliveryOptions {
  db: Db;
  tenants: SigningSecrets;
  guard: SsrfGuard;
  log: Logger;
  now?: () => number;
  /** Delays between attempts; the number of attempts is its length + 1. */
  schedule?: readonly number[];
  /** Relative jitter applied to each delay: 0.2 = ±20 %. */
  jitter?: number;
  random?: () => number;
  pollIntervalMs?: number;
  /** Attempts in flight at once. */
  concurrency?: number;
  /** Total time for one attempt (API.md: 15 s). */
  timeoutMs?: number;
  /** Trust for a test receiver's self-signed certificate; never set in production. */
  tls?: TlsTrust;
  breaker?: Partial<BreakerOptions>;
  /** Finished deliveries are deleted this long after they were created. */
  retentionMs?: number;
  /** Metrics hook (a prom-client counter by outcome). */
  onOutcome?: (outcome: WebhookOutcome) => void;
  /** Each attempt made (the dashboard's attempt log): HTTP status or error, latency, next retry. */
  onAttempt?: (a: AttemptRecord) => void;
}

export interface AttemptRecord {
  delivery: DeliveryRow;
  at: number;
  status: number | null;
  latencyMs: number | null;
  error: string | null;
  nextAttemptAt: number | null;
}

/** An answer that says the host is unwell: counted by the breaker, then unwrapped again. */
class Unhealthy extends Error {
  readonly outcome: PostOutcome;
  constructor(outcome: PostOutcome) {
    super("unhealthy");
    this.outcome = outcome;
  }
}

const unhealthy = (o: PostOutcome): boolean => (o.kind === "error" ? !o.aborted : o.status >= 500 || o.status === 408 || o.status === 429);

type Post = () => Promise<PostOutcome>;
const MAX_BREAKERS = 1000;

/** The durable webhook queue and its worker; see the module comment. */
export class WebhookDelivery {
  private readonly store: WebhookStore;
  private readonly o: WebhookDeliveryOptions;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly schedule: readonly number[];
  private readonly jitter: number;
  private readonly timeoutMs: number;
  private readonly breakerOpts: BreakerOptions;
  /** By "<tenant id> <host:port>". */
  private readonly breakers = new Map<string, CircuitBreaker<[Post], PostOutcome>>();
  private readonly inFlight = new Map<string, { done: Promise<void>; abort: AbortController }>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private lastPurge = 0;

  constructor(options: WebhookDeliveryOptions) {
    this.o = options;
    this.store = new WebhookStore(options.db);
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.schedule = options.schedule ?? RETRY_SCHEDULE_MS;
    this.jitter = options.jitter ?? RETRY_JITTER;
    this.timeoutMs = options.timeoutMs ?? 15 * S;
    this.breakerOpts = {
      volumeThreshold: 5,
      errorThresholdPercentage: 50,
      resetTimeoutMs: MIN,
      rollingWindowMs: 10 * MIN,
      ...options.breaker,
    };
  }

  /**
   * Queues the event for the job's webhook URL and returns the message id (`webhook-id`). `job` is
   * the Job object as of the event, sent as `data`. Enqueuing the same event of a job twice returns
   * the first message, so a retried state transition never notifies twice.
   */
  enqueue(tenantId: string, jobId: string, url: string, type: WebhookEventType, job: JobObject): string {
    const existing = this.store.byJobEvent(jobId, type);
    if (existing) return existing.id;
    const now = this.now();
    const id = newId("msg");
    const payload = JSON.stringify({ type, timestamp: rfc3339(now), data: job });
    this.store.insert({
      id,
      job_id: jobId,
      tenant_id: tenantId,
      url,
      event_type: type,
      payload,
      status: "pending",
      attempts: 0,
      next_attempt_at: now,
      last_attempt_at: null,
      last_error: null,
      created_at: now,
    });
    this.o.log.debug({ delivery: id, job: jobId, type }, "Enqueued webhook");
    this.wake(0);
    return id;
  }

  /** The state of the job's latest delivery, for the Job object's `webhook` field; null if none. */
  stateForJob(jobId: string): WebhookState | null {
    const r = this.store.latestForJob(jobId);
    return r ? { status: r.status, attempts: r.attempts, last_attempt_at: r.last_attempt_at, last_error: r.last_error } : null;
  }

  /** Starts the worker: a timer (unref'd, so it never keeps the process alive) polling for due deliveries. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.wake(0);
  }

  /** Stops the worker: aborts attempts in flight (they stay due, uncounted) and waits for them. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const inFlight = [...this.inFlight.values()];
    for (const f of inFlight) f.abort.abort();
    await Promise.allSettled(inFlight.map((f) => f.done));
    for (const b of this.breakers.values()) b.shutdown();
    this.breakers.clear();
  }

  /** Attempts every delivery due now (up to the concurrency) and waits for them; returns how many. */
  async runDue(): Promise<number> {
    const started = this.fill();
    await Promise.all(started);
    return started.length;
  }

  private wake(ms: number): void {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      // Each attempt handles its own errors (see fill); the loop only starts them.
      void Promise.all(this.fill());
      this.wake(this.o.pollIntervalMs ?? S);
    }, ms);
    this.timer.unref();
  }

  private fill(): Promise<void>[] {
    const free = (this.o.concurrency ?? 8) - this.inFlight.size;
    const started: Promise<void>[] = [];
    if (free <= 0) return started;
    try {
      const now = this.now();
      this.purge(now);
      for (const row of this.store.due(now, free)) {
        // The lease outlasts the attempt's timeout; a crash mid-attempt makes the row due again then.
        if (!this.store.claim(row, now + this.timeoutMs + 45 * S)) continue;
        const abort = new AbortController();
        const done = this.attempt(row, abort.signal)
          .catch((err: unknown) => this.o.log.error({ err, delivery: row.id }, "Webhook attempt crashed"))
          .finally(() => {
            this.inFlight.delete(row.id);
            this.wake(0);
          });
        this.inFlight.set(row.id, { done, abort });
        started.push(done);
      }
    } catch (err) {
      this.o.log.error({ err }, "Could not read the webhook queue");
    }
    return started;
  }

  private purge(now: number): void {
    if (now - this.lastPurge < H) return;
    this.lastPurge = now;
    this.store.purgeFinished(now - (this.o.retentionMs ?? 48 * H));
  }

  private async attempt(row: DeliveryRow, signal: AbortSignal): Promise<void> {
    const tenant = this.o.tenants.byId(row.tenant_id);
    if (!tenant) return this.giveUp(row, "the tenant no longer exists");
    const check = await this.o.guard.check(row.url);
    if (signal.aborted) return this.store.defer(row.id, this.now());
    if (!check.ok) {
      // An unresolvable host is an ordinary failure (DNS may recover); anything else the guard refused is "blocked".
      if (check.code === "unresolvable") return this.failed(row, check.reason, "failed");
      return this.failed(row, `blocked: webhook_url ${check.reason}`, "blocked");
    }
    const breaker = this.breakerFor(row.tenant_id, check.url.host);
    const started = this.now();
    let outcome: PostOutcome;
    try {
      outcome = await breaker.fire(() => this.post(row, tenant, check, signal));
    } catch (err) {
      if (err instanceof Unhealthy) outcome = err.outcome;
      else if ((err as { code?: string }).code === "EOPENBREAKER") return this.deferForCircuit(row, check.url.host);
      else throw err;
    }
    const answered = { at: started, latencyMs: this.now() - started, status: outcome.kind === "response" ? outcome.status : null };
    if (outcome.kind === "error") {
      if (outcome.aborted) return this.store.defer(row.id, this.now());
      return this.failed(row, outcome.error, "failed", false, answered);
    }
    const { status } = outcome;
    if (status >= 200 && status < 300) {
      this.store.delivered(row.id, this.now());
      this.recordAttempt({ delivery: row, ...answered, error: null, nextAttemptAt: null });
      this.o.log.info({ delivery: row.id, job: row.job_id, host: check.url.host, attempts: row.attempts + 1 }, "Delivered webhook");
      return this.emit("delivered");
    }
    // RFC 9110 §15.5.11: 410 means the endpoint is gone for good; Standard Webhooks says stop.
    if (status === 410) return this.failed(row, "HTTP 410 Gone: the receiver asked to stop", "failed", true, answered);
    if (status >= 300 && status < 400) return this.failed(row, `redirect (HTTP ${status}) not followed`, "failed", false, answered);
    return this.failed(row, `HTTP ${status}`, "failed", false, answered);
  }

  private async post(row: DeliveryRow, tenant: Tenant, check: Extract<UrlCheck, { ok: true }>, signal: AbortSignal): Promise<PostOutcome> {
    const now = this.now();
    const signed = signHeaders(this.o.tenants.signingSecrets(tenant, now), row.id, unixSeconds(now), row.payload);
    const outcome = await postWebhook({
      url: check.url,
      address: check.addresses[0]!,
      headers: { "content-type": "application/json", "user-agent": "Folio-Webhooks/1", ...signed },
      body: row.payload,
      timeoutMs: this.timeoutMs,
      signal,
      ...(this.o.tls ? { tls: this.o.tls } : {}),
    });
    if (unhealthy(outcome)) throw new Unhealthy(outcome);
    return outcome;
  }

  private failed(
    row: DeliveryRow,
    error: string,
    outcome: "failed" | "blocked",
    stop = false,
    answered?: { at: number; latencyMs: number; status: number | null },
  ): void {
    const now = this.now();
    const attempts = row.attempts + 1;
    const delay = stop ? null : retryDelay(attempts, this.schedule, this.jitter, this.random);
    this.store.failed(row.id, now, error, delay === null ? null : now + delay);
    this.recordAttempt({
      delivery: row,
      at: answered?.at ?? now,
      status: answered?.status ?? null,
      latencyMs: answered?.latencyMs ?? null,
      error,
      nextAttemptAt: delay === null ? null : now + delay,
    });
    this.emit(outcome);
    const fields = { delivery: row.id, job: row.job_id, attempts, error };
    if (delay === null) {
      this.o.log.warn(fields, "Gave up webhook");
      this.emit("gave_up");
    } else {
      this.o.log.info({ ...fields, next_attempt_at: rfc3339(now + delay) }, "Webhook attempt failed");
    }
  }

  private giveUp(row: DeliveryRow, error: string): void {
    this.store.giveUp(row.id, error);
    this.o.log.warn({ delivery: row.id, job: row.job_id, error }, "Gave up webhook");
    this.emit("gave_up");
  }

  /** Circuit open: wait for its probe instead of spending an attempt, within the retry window. */
  private deferForCircuit(row: DeliveryRow, host: string): void {
    const now = this.now();
    const windowEnd = row.created_at + Math.round(this.schedule.reduce((a, b) => a + b, 0) * (1 + this.jitter));
    if (now >= windowEnd) return this.giveUp(row, `circuit open: ${host} kept failing`);
    // Back when the breaker lets a probe through, but never past the window: the last chance is at its end.
    const at = now + Math.round(this.breakerOpts.resetTimeoutMs * (1 + this.random() * this.jitter));
    this.store.defer(row.id, Math.min(at, windowEnd));
    this.o.log.debug({ delivery: row.id, host }, "Deferred webhook, circuit open");
  }

  private breakerFor(tenantId: string, host: string): CircuitBreaker<[Post], PostOutcome> {
    const key = `${tenantId} ${host}`;
    let b = this.breakers.get(key);
    if (b) return b;
    if (this.breakers.size >= MAX_BREAKERS) {
      // Forget the oldest breaker that is closed; open ones keep protecting their host.
      for (const [k, old] of this.breakers) {
        if (!old.closed) continue;
        old.shutdown();
        this.breakers.delete(k);
        break;
      }
    }
    const o = this.breakerOpts;
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
    b.on("open", () => this.o.log.warn({ tenant: tenantId, host }, "Opened webhook circuit"));
    b.on("close", () => this.o.log.info({ tenant: tenantId, host }, "Closed webhook circuit"));
    this.breakers.set(key, b);
    return b;
  }

  private recordAttempt(a: AttemptRecord): void {
    try {
      this.o.onAttempt?.(a);
    } catch (err) {
      this.o.log.error({ err }, "Webhook attempt hook threw");
    }
  }

  private emit(outcome: WebhookOutcome): void {
    try {
      this.o.onOutcome?.(outcome);
    } catch (err) {
      this.o.log.error({ err }, "Webhook outcome hook threw");
    }
  }
}
