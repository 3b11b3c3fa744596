/**
 * The controller's Prometheus metrics (prom-client) and the plain-HTTP server that exposes them
 * with the probes: GET /metrics, /healthz (the process answers) and /readyz (its informers have
 * synced, leader or not). The names are controller-runtime's, prefixed `folio_controller_`, and
 * the Helm chart's alerts and dashboard (helm/folio/files) use exactly these:
 *
 * - folio_controller_reconcile_total{result="success"|"error"|"requeue"},
 *   folio_controller_reconcile_duration_seconds;
 * - folio_controller_workqueue_depth, _adds_total, _queue_duration_seconds, _work_duration_seconds,
 *   _retries_total (controller/queue.ts's hooks);
 * - folio_controller_leader: 1 while this replica leads (or runs without leader election);
 * - folio_controller_webhook_deliveries_total{outcome="delivered"|"failed"|"blocked"|"gave_up"}:
 *   one of the first three per attempt, gave_up once more when the ledger stops;
 * - folio_controller_s3_errors_total{operation}: failed object-store calls (a missing object on
 *   get is an answer, not an error);
 * - folio_pdfjobs{phase}: PdfJobs in the informer cache by phase, reported by the leader only, so
 *   that the chart's sums over replicas count each PdfJob once;
 * - the job metrics the API emits in embedded mode, defined once in core/metrics/job-metrics.ts:
 *   folio_jobs_total{operation,outcome}, folio_job_duration_seconds{operation,outcome} and
 *   folio_job_queue_wait_seconds{operation}, from the phase changes the apply layer writes
 *   (controller/apply.ts PhaseChange: each once across replicas, a 409 Conflict reports nothing).
 *   A job is counted and its duration (startTime → completionTime) observed when it becomes
 *   terminal. Its queue wait (creationTimestamp → startTime) is observed when it starts: when it
 *   becomes Running, or, for a job never seen Running, when it becomes terminal with a startTime
 *   (a runner that ended before a reconcile saw it run); a job that never started has none;
 * - the process's default metrics, prefixed `folio_` like the API's.
 *
 * Labels are fixed small sets: never a tenant, a job, a URL or a secret.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { registerJobMetrics } from "../core/metrics/job-metrics.ts";
import { PDFJOB_PHASES, TERMINAL_PHASES, type PdfJobPhase, type PdfJobStatus } from "../core/schemas/pdfjob.ts";
import { ObjectNotFound, type ObjectStore } from "../core/storage/store.ts";
import type { PhaseChange, WebhookAttemptResult } from "./apply.ts";
import type { QueueMetrics } from "./queue.ts";
import type { ReconcileResult } from "./reconciler.ts";

export const RECONCILE_RESULTS: readonly ReconcileResult[] = ["success", "error", "requeue"];
export const WEBHOOK_RESULTS: readonly WebhookAttemptResult[] = ["delivered", "failed", "blocked", "gave_up"];
export const STORE_OPERATIONS = ["put", "putFile", "get", "delete", "deletePrefix", "exists", "ready"] as const;
export type StoreOperation = (typeof STORE_OPERATIONS)[number];

/** controller-runtime's latency buckets, in seconds. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const QUEUE_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300, 1000];

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconcileTotal = new Counter({
    name: "folio_controller_reconcile_total",
    help: "Reconciles by result: success, error (retried with backoff) or requeue (success, due again later).",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });
  readonly reconcileDuration = new Histogram({
    name: "folio_controller_reconcile_duration_seconds",
    help: "Time one reconcile took.",
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: "folio_controller_workqueue_depth",
    help: "Keys waiting in the work queue.",
    registers: [this.registry],
  });
  readonly queueAdds = new Counter({
    name: "folio_controller_workqueue_adds_total",
    help: "Keys added to the work queue.",
    registers: [this.registry],
  });
  readonly queueDuration = new Histogram({
    name: "folio_controller_workqueue_queue_duration_seconds",
    help: "Time a key waited in the work queue before a worker took it.",
    buckets: QUEUE_BUCKETS,
    registers: [this.registry],
  });
  readonly workDuration = new Histogram({
    name: "folio_controller_workqueue_work_duration_seconds",
    help: "Time a worker spent on a key.",
    buckets: QUEUE_BUCKETS,
    registers: [this.registry],
  });
  readonly queueRetries = new Counter({
    name: "folio_controller_workqueue_retries_total",
    help: "Keys requeued with backoff after an error.",
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: "folio_controller_leader",
    help: "1 while this replica is the active controller (holds the leader Lease), else 0.",
    registers: [this.registry],
  });
  readonly webhookDeliveries = new Counter({
    name: "folio_controller_webhook_deliveries_total",
    help: "Webhook delivery attempts by outcome (delivered, failed, blocked), and deliveries given up (gave_up).",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  readonly s3Errors = new Counter({
    name: "folio_controller_s3_errors_total",
    help: "Failed object-store calls by operation.",
    labelNames: ["operation"] as const,
    registers: [this.registry],
  });
  readonly #jobMetrics = registerJobMetrics(this.registry);
  readonly jobs = this.#jobMetrics.jobs;
  readonly jobDuration = this.#jobMetrics.jobDuration;
  readonly jobWait = this.#jobMetrics.jobWait;
  #phases: () => Iterable<string | undefined> | null = () => null;

  constructor(o: { defaultMetrics?: boolean } = {}) {
    const phases = (): Iterable<string | undefined> | null => this.#phases();
    new Gauge({
      name: "folio_pdfjobs",
      help: "PdfJobs by phase (a PdfJob without a status yet counts as Pending); reported by the leader only.",
      labelNames: ["phase"] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        const list = phases();
        if (!list) return;
        const counts = new Map<string, number>(PDFJOB_PHASES.map((p) => [p, 0]));
        for (const phase of list) {
          const p = phase ?? "Pending";
          if (counts.has(p)) counts.set(p, counts.get(p)! + 1);
        }
        for (const [phase, n] of counts) this.set({ phase }, n);
      },
    });
    // Every series exists from the first scrape, so that rate() sees its first increase.
    for (const result of RECONCILE_RESULTS) this.reconcileTotal.inc({ result }, 0);
    for (const outcome of WEBHOOK_RESULTS) this.webhookDeliveries.inc({ outcome }, 0);
    for (const operation of STORE_OPERATIONS) this.s3Errors.inc({ operation }, 0);
    this.leader.set(0);
    if (o.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: "folio_" });
  }

  /** Where folio_pdfjobs reads the phases from; the source answers null while it must not report. */
  observePdfJobs(phases: () => Iterable<string | undefined> | null): void {
    this.#phases = phases;
  }

  reconciled(result: ReconcileResult, seconds: number): void {
    this.reconcileTotal.inc({ result });
    this.reconcileDuration.observe(seconds);
  }

  webhook(outcome: WebhookAttemptResult): void {
    this.webhookDeliveries.inc({ outcome });
  }

  /** The job metrics of a phase change the apply layer wrote (controller/apply.ts onPhaseChange). */
  phaseChanged({ from, pdfJob }: PhaseChange): void {
    const status = pdfJob.status ?? {};
    const to = status.phase;
    const operation = pdfJob.spec.operation;
    const ends = isTerminal(to) && !isTerminal(from);
    const starts = (to === "Running" || ends) && from !== "Running";
    const created = Date.parse(pdfJob.metadata.creationTimestamp ?? "");
    const started = Date.parse(status.startTime ?? "");
    if (starts && !Number.isNaN(created) && !Number.isNaN(started)) this.jobWait.observe({ operation }, seconds(started - created));
    if (!ends) return;
    this.jobs.inc({ operation, outcome: jobOutcome(status) });
    const completed = Date.parse(status.completionTime ?? "");
    if (!Number.isNaN(started) && !Number.isNaN(completed))
      this.jobDuration.observe({ operation, outcome: to!.toLowerCase() }, seconds(completed - started));
  }

  setLeader(leading: boolean): void {
    this.leader.set(leading ? 1 : 0);
  }

  /** The work queue's hooks (controller/queue.ts WorkQueueOptions.metrics). */
  queueMetrics(): QueueMetrics {
    return {
      adds: () => this.queueAdds.inc(),
      depth: (n) => this.queueDepth.set(n),
      queueLatency: (s) => this.queueDuration.observe(s),
      workDuration: (s) => this.workDuration.observe(s),
      retries: () => this.queueRetries.inc(),
    };
  }

  /** `store`, counting its failed calls in folio_controller_s3_errors_total. */
  instrumentStore(store: ObjectStore): ObjectStore {
    const counted =
      <A extends unknown[], R>(operation: StoreOperation, call: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        try {
          return await call(...args);
        } catch (err) {
          if (!(err instanceof ObjectNotFound)) this.s3Errors.inc({ operation });
          throw err;
        }
      };
    return {
      put: counted("put", (key, body) => store.put(key, body)),
      putFile: counted("putFile", (key, file) => store.putFile(key, file)),
      get: counted("get", (key, opts) => store.get(key, opts)),
      delete: counted("delete", (key) => store.delete(key)),
      deletePrefix: counted("deletePrefix", (prefix) => store.deletePrefix(prefix)),
      exists: counted("exists", (key) => store.exists(key)),
      ...(store.localPath ? { localPath: (key: string) => store.localPath!(key) } : {}),
      // ready() answers false rather than throwing when the store is unreachable.
      ready: counted("ready", async () => {
        if (await store.ready()) return true;
        this.s3Errors.inc({ operation: "ready" });
        return false;
      }),
    };
  }
}

const isTerminal = (phase: PdfJobPhase | undefined): boolean => phase !== undefined && TERMINAL_PHASES.includes(phase);
const seconds = (ms: number): number => Math.max(0, ms) / 1000;

/** folio_jobs_total's outcome, as the API's: succeeded, the error code of a failed job, or canceled. */
function jobOutcome(status: PdfJobStatus): string {
  if (status.phase === "Succeeded") return "succeeded";
  if (status.phase === "Canceled") return "canceled";
  return status.error?.code ?? "internal_error";
}

export interface MetricsServer {
  /** The port it listens on (the configured one, or the one the system chose for 0). */
  readonly port: number;
  close(): Promise<void>;
}

/** Serves /metrics, /healthz and /readyz over plain HTTP (cluster-internal, never exposed by an Ingress). */
export async function serveMetrics(o: { registry: Registry; port: number; host?: string; ready: () => boolean }): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("method not allowed\n");
      return;
    }
    if (path === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
    } else if (path === "/readyz") {
      const ready = o.ready();
      res.writeHead(ready ? 200 : 503, { "content-type": "text/plain" }).end(ready ? "ok\n" : "informers not synced\n");
    } else if (path === "/metrics") {
      o.registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": o.registry.contentType }).end(text),
        () => res.writeHead(500, { "content-type": "text/plain" }).end("metrics unavailable\n"),
      );
    } else {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
