/* eslint-disable @typescript-eslint/require-await -- a synchronous SQLite implementation of an asynchronous contract (Kubernetes mode keeps these in the cluster) */
/**
 * Every webhook attempt of embedded mode (time, HTTP status, latency, next retry), for the job
 * page, and "redeliver": a finished delivery made due again with the same `webhook-id`, so a
 * receiver that already processed it can tell (Standard Webhooks: the id is the idempotency key).
 */
import type { WebhookEventType } from "../../core/webhooks/events.ts";
import { migrateDashboard } from "./dashboard-schema.ts";
import { sql, type Db } from "./db.ts";

export interface WebhookAttempt {
  delivery_id: string;
  job_id: string;
  tenant_id: string;
  at: number;
  status_code: number | null;
  latency_ms: number | null;
  error: string | null;
  next_attempt_at: number | null;
}

export interface DeliverySummary {
  id: string;
  event_type: WebhookEventType;
  url: string;
  status: string;
  attempts: number;
  next_attempt_at: number | null;
}

/**
 * What the dashboard reads and asks for, in both modes (Kubernetes mode: the ledger in each
 * PdfJob's status, api/store/kubernetes/webhook-attempts.ts).
 */
export interface WebhookAttempts {
  forJob(tenantId: string, jobId: string): Promise<{ deliveries: DeliverySummary[]; attempts: WebhookAttempt[] }>;
  /** Makes the tenant's delivery of this job due again; false when it is unknown or still being retried. */
  redeliver(tenantId: string, jobId: string, deliveryId: string, now?: number): Promise<boolean>;
  /** Deliveries waiting for an attempt (pending or failing), for the service health page. */
  backlog(): Promise<number>;
}

/** Embedded mode's attempt log, which the delivery worker writes. */
export interface WebhookAttemptLog extends WebhookAttempts {
  record(a: WebhookAttempt): Promise<void>;
  purge(before: number): Promise<void>;
}

export class SqliteWebhookAttempts implements WebhookAttemptLog {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
    migrateDashboard(db);
  }

  async record(a: WebhookAttempt): Promise<void> {
    sql(
      this.db,
      `INSERT INTO webhook_attempts (delivery_id, job_id, tenant_id, at, status_code, latency_ms, error, next_attempt_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(a.delivery_id, a.job_id, a.tenant_id, a.at, a.status_code, a.latency_ms, a.error, a.next_attempt_at);
  }

  async forJob(tenantId: string, jobId: string): Promise<{ deliveries: DeliverySummary[]; attempts: WebhookAttempt[] }> {
    const deliveries = sql(
      this.db,
      `SELECT id, event_type, url, status, attempts, next_attempt_at FROM webhook_deliveries
         WHERE tenant_id = ? AND job_id = ? ORDER BY created_at, rowid`,
    ).all(tenantId, jobId) as unknown as DeliverySummary[];
    const attempts = sql(this.db, "SELECT * FROM webhook_attempts WHERE tenant_id = ? AND job_id = ? ORDER BY at, id").all(
      tenantId,
      jobId,
    ) as unknown as WebhookAttempt[];
    return { deliveries, attempts };
  }

  async redeliver(tenantId: string, jobId: string, deliveryId: string, now = Date.now()): Promise<boolean> {
    return (
      sql(
        this.db,
        `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, last_error = NULL
           WHERE id = ? AND tenant_id = ? AND job_id = ? AND status IN ('delivered', 'gave_up')`,
      ).run(now, deliveryId, tenantId, jobId).changes > 0
    );
  }

  async backlog(): Promise<number> {
    return (sql(this.db, "SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status IN ('pending', 'failing')").get() as { n: number }).n;
  }

  async purge(before: number): Promise<void> {
    sql(this.db, "DELETE FROM webhook_attempts WHERE at < ?").run(before);
  }
}
