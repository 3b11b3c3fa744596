/**
 * Webhook delivery for the embedded mode: a durable queue in SQLite (api/store/webhooks.ts) and a
 * worker that attempts due deliveries (API.md "Webhooks", Standard Webhooks):
 *
 * - Every attempt re-checks the URL with the SSRF guard, connects to an address it returned, and
 *   signs with the tenant's signing secrets of that moment (both during a rotation). The
 *   `webhook-id` is the row id, the same on every retry; `webhook-timestamp` is the attempt's time.
 * - The rules are core's, shared with the Kubernetes controller: the body (core/webhooks/events.ts,
 *   built once at enqueue and stored, so every retry sends and signs the same bytes), the outcome
 *   of an attempt and what follows it (core/webhooks/retry.ts: 2xx delivered, 410 gives up at once,
 *   anything else retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, ±20 % at random), and
 *   the circuit breaker per tenant and host (core/webhooks/breaker.ts: while open, due deliveries
 *   to that host are deferred without an attempt, within the delivery's retry window).
 * - The queue survives restarts: rows are claimed with a lease, so a delivery interrupted by a crash
 *   is retried once the lease lapses, and `stop()` hands back in-flight ones at once.
 * Secrets never reach a log line, and neither does the URL (its path may carry a token): only its host.
 */
import { newId } from "../../core/ids.ts";
import type { Logger } from "../../core/logger.ts";
import type { SsrfGuard, UrlCheck } from "../../core/net/ssrf.ts";
import type { JobObject } from "../../core/schemas/api.ts";
import { rfc3339 } from "../../core/time.ts";
import { circuitDeferral, ReceiverBreakers, type BreakerPolicy } from "../../core/webhooks/breaker.ts";
import { webhookBody, webhookRequest, type WebhookEventType } from "../../core/webhooks/events.ts";
import { postWebhook, type PostOutcome, type TlsTrust } from "../../core/webhooks/http.ts";
import { classifyPost, classifyRefusal, nextStep, type AttemptOutcome, type RetryPolicy } from "../../core/webhooks/retry.ts";
import { RETRY_JITTER, RETRY_SCHEDULE_MS } from "../../core/webhooks/schedule.ts";
import type { Db } from "../store/db.ts";
import type { WebhookState } from "../store/jobs.ts";
import type { Tenant } from "../store/tenants.ts";
import { WebhookStore, type DeliveryRow } from "../store/webhooks.ts";

export { RETRY_SCHEDULE_MS, retryDelay } from "../../core/webhooks/schedule.ts";

const S = 1000;
const H = 60 * 60 * S;

/** Per attempt one of delivered | failed | blocked (the guard refused the URL); gave_up once more at the end. */
export type WebhookOutcome = "delivered" | "failed" | "gave_up" | "blocked";

/** The part of TenantStore delivery needs. */
export interface SigningSecrets {
  byId(id: string): Tenant | undefined;
  signingSecrets(t: Tenant, now?: number): string[];
}

/** The breaker's settings (core/webhooks/breaker.ts). */
export type BreakerOptions = BreakerPolicy;

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

/** When an attempt that reached the network started, what it got and how long it took. */
interface Answered {
  at: number;
  latencyMs: number;
  status: number | null;
}

/** The durable webhook queue and its worker; see the module comment. */
export class WebhookDelivery {
  private readonly store: WebhookStore;
  private readonly o: WebhookDeliveryOptions;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly retry: RetryPolicy;
  private readonly timeoutMs: number;
  private readonly breakers: ReceiverBreakers;
  private readonly inFlight = new Map<string, { done: Promise<void>; abort: AbortController }>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private lastPurge = 0;

  constructor(options: WebhookDeliveryOptions) {
    this.o = options;
    this.store = new WebhookStore(options.db);
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.retry = { schedule: options.schedule ?? RETRY_SCHEDULE_MS, jitter: options.jitter ?? RETRY_JITTER };
    this.timeoutMs = options.timeoutMs ?? 15 * S;
    this.breakers = new ReceiverBreakers({
      ...(options.breaker ? { policy: options.breaker } : {}),
      onChange: (state, tenant, host) =>
        state === "open"
          ? this.o.log.warn({ tenant, host }, "Opened webhook circuit")
          : this.o.log.info({ tenant, host }, "Closed webhook circuit"),
    });
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
    this.store.insert({
      id,
      job_id: jobId,
      tenant_id: tenantId,
      url,
      event_type: type,
      payload: webhookBody({ type, timestamp: rfc3339(now), data: job }),
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
    this.breakers.shutdown();
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
    if (!check.ok) return this.settle(row, classifyRefusal(check));
    const host = check.url.host;
    const started = this.now();
    const outcome = await this.breakers.send(row.tenant_id, host, () => this.post(row, tenant, check, signal));
    if (outcome === null) return this.deferForCircuit(row, host);
    // Stopping: the attempt is handed back, uncounted.
    if (outcome.kind === "error" && outcome.aborted) return this.store.defer(row.id, this.now());
    const answered = { at: started, latencyMs: this.now() - started, status: outcome.kind === "response" ? outcome.status : null };
    return this.settle(row, classifyPost(outcome), answered, host);
  }

  private post(row: DeliveryRow, tenant: Tenant, check: Extract<UrlCheck, { ok: true }>, signal: AbortSignal): Promise<PostOutcome> {
    const now = this.now();
    // The stored payload is the body, byte for byte: signed and sent as it is.
    const request = webhookRequest(this.o.tenants.signingSecrets(tenant, now), row.id, now, row.payload);
    return postWebhook({
      url: check.url,
      address: check.addresses[0]!,
      headers: request.headers,
      body: request.body,
      timeoutMs: this.timeoutMs,
      signal,
      ...(this.o.tls ? { tls: this.o.tls } : {}),
    });
  }

  /** Records an attempt's outcome and what follows it (core/webhooks/retry.ts). */
  private settle(row: DeliveryRow, outcome: AttemptOutcome, answered?: Answered, host?: string): void {
    const now = this.now();
    const attempts = row.attempts + 1;
    const step = nextStep(attempts, outcome, this.retry, this.random);
    if (outcome.kind === "delivered") {
      this.store.delivered(row.id, now);
      this.recordAttempt({ delivery: row, ...answered!, error: null, nextAttemptAt: null });
      this.o.log.info({ delivery: row.id, job: row.job_id, host, attempts }, "Delivered webhook");
      return this.emit("delivered");
    }
    const { error } = outcome;
    const next = step.kind === "retry" ? now + step.delayMs : null;
    this.store.failed(row.id, now, error, next);
    this.recordAttempt({
      delivery: row,
      at: answered?.at ?? now,
      status: answered?.status ?? null,
      latencyMs: answered?.latencyMs ?? null,
      error,
      nextAttemptAt: next,
    });
    this.emit(outcome.kind === "blocked" ? "blocked" : "failed");
    const fields = { delivery: row.id, job: row.job_id, attempts, error };
    if (next === null) {
      this.o.log.warn(fields, "Gave up webhook");
      this.emit("gave_up");
    } else {
      this.o.log.info({ ...fields, next_attempt_at: rfc3339(next) }, "Webhook attempt failed");
    }
  }

  private giveUp(row: DeliveryRow, error: string): void {
    this.store.giveUp(row.id, error);
    this.o.log.warn({ delivery: row.id, job: row.job_id, error }, "Gave up webhook");
    this.emit("gave_up");
  }

  /** Circuit open: wait for its probe instead of spending an attempt, within the retry window. */
  private deferForCircuit(row: DeliveryRow, host: string): void {
    const at = circuitDeferral(this.now(), row.created_at, { breaker: this.breakers.policy, retry: this.retry }, this.random);
    if (at === null) return this.giveUp(row, `circuit open: ${host} kept failing`);
    this.store.defer(row.id, at);
    this.o.log.debug({ delivery: row.id, host }, "Deferred webhook, circuit open");
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
