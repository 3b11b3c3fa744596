/**
 * Prometheus metrics (prom-client). Labels are bounded sets only — route templates, methods,
 * status codes, operations, outcomes — never ids, tenants or anything a client chooses.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { registerJobMetrics } from "../core/metrics/job-metrics.ts";

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: "folio_http_requests_total",
    help: "HTTP requests by route template, method and status code.",
    labelNames: ["route", "method", "status"] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: "folio_http_request_duration_seconds",
    help: "HTTP request latency by route template, method and status code.",
    labelNames: ["route", "method", "status"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  // folio_jobs_total, folio_job_duration_seconds, folio_job_queue_wait_seconds: shared with the
  // controller, which emits them in Kubernetes mode (core/metrics/job-metrics.ts).
  readonly #jobMetrics = registerJobMetrics(this.registry);
  readonly jobs = this.#jobMetrics.jobs;
  readonly jobDuration = this.#jobMetrics.jobDuration;
  readonly jobWait = this.#jobMetrics.jobWait;
  readonly queueDepth = new Gauge({ name: "folio_jobs_queued", help: "Jobs waiting for a worker.", registers: [this.registry] });
  readonly running = new Gauge({ name: "folio_jobs_running", help: "Jobs running now.", registers: [this.registry] });
  readonly webhooks = new Counter({
    name: "folio_webhook_deliveries_total",
    help: "Webhook delivery attempts by outcome (delivered, failed, gave_up, blocked).",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: "folio_" });
  }
}
