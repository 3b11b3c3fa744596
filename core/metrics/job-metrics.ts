/**
 * The job metrics, defined once for both components that run jobs: the API's scheduler in
 * embedded mode (api/metrics.ts) and the controller in Kubernetes mode (controller/metrics.ts).
 * The Helm chart's job alerts and dashboard panels query these names, so both must emit the same
 * names, labels, label values and buckets:
 *
 * - folio_jobs_total{operation, outcome}: jobs that ended; the outcome is "succeeded", the error
 *   code of a failed job (internal_error, timeout, invalid_pdf…) or "canceled";
 * - folio_job_duration_seconds{operation, outcome}: from the start to the end of a job that
 *   started; the outcome is the job's status (succeeded, failed or canceled);
 * - folio_job_queue_wait_seconds{operation}: from the creation of a job to its start, once per job.
 */
import { Counter, Histogram, type Registry } from "prom-client";

export interface JobMetrics {
  jobs: Counter<"operation" | "outcome">;
  jobDuration: Histogram<"operation" | "outcome">;
  jobWait: Histogram<"operation">;
}

/** Registers the job metrics on `registry`. */
export function registerJobMetrics(registry: Registry): JobMetrics {
  return {
    jobs: new Counter({
      name: "folio_jobs_total",
      help: "Jobs that ended, by operation and outcome (succeeded, failed with an error code, canceled).",
      labelNames: ["operation", "outcome"] as const,
      registers: [registry],
    }),
    jobDuration: new Histogram({
      name: "folio_job_duration_seconds",
      help: "Time from start to end of a job in the runner, by operation and outcome.",
      labelNames: ["operation", "outcome"] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers: [registry],
    }),
    jobWait: new Histogram({
      name: "folio_job_queue_wait_seconds",
      help: "Time from the creation of a job to its start (a worker or a runner pod took it), by operation.",
      labelNames: ["operation"] as const,
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
  };
}
