/**
 * The durable webhook queue: one `webhook_deliveries` row per message (the row id is the
 * `webhook-id` header, the same on every retry). Every state change is a single UPDATE guarded by
 * the state it expects, so a delivery is attempted by one worker at a time even when two processes
 * share the database file, and a crash mid-attempt only delays the next try until the claim lapses.
 */
import type { WebhookEventType } from "../../core/webhooks/events.ts";
import { sql, type Db } from "./db.ts";
import type { WebhookState } from "./jobs.ts";

export type DeliveryStatus = WebhookState["status"];

export interface DeliveryRow {
  id: string;
  job_id: string;
  tenant_id: string;
  url: string;
  event_type: WebhookEventType;
  /** The exact body that is signed and sent (core/webhooks/events.ts `webhookBody`). */
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  last_error: string | null;
  created_at: number;
}

/** SQL over `webhook_deliveries`; no policy (schedule, signing) lives here. */
export class WebhookStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  insert(r: DeliveryRow): void {
    sql(
      this.db,
      `INSERT INTO webhook_deliveries (id, job_id, tenant_id, url, event_type, payload, status, attempts, next_attempt_at,
           last_attempt_at, last_error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      r.id,
      r.job_id,
      r.tenant_id,
      r.url,
      r.event_type,
      r.payload,
      r.status,
      r.attempts,
      r.next_attempt_at,
      r.last_attempt_at,
      r.last_error,
      r.created_at,
    );
  }

  get(id: string): DeliveryRow | undefined {
    return sql(this.db, "SELECT * FROM webhook_deliveries WHERE id = ?").get(id) as DeliveryRow | undefined;
  }

  /** The delivery of one event of one job, if it was already enqueued (enqueue is idempotent). */
  byJobEvent(jobId: string, type: WebhookEventType): DeliveryRow | undefined {
    return sql(this.db, "SELECT * FROM webhook_deliveries WHERE job_id = ? AND event_type = ? LIMIT 1").get(jobId, type) as
      DeliveryRow | undefined;
  }

  /** The job's most recent delivery: what the Job object shows as `webhook`. */
  latestForJob(jobId: string): DeliveryRow | undefined {
    return sql(this.db, "SELECT * FROM webhook_deliveries WHERE job_id = ? ORDER BY created_at DESC, rowid DESC LIMIT 1").get(jobId) as
      DeliveryRow | undefined;
  }

  /** Unfinished deliveries whose next attempt is due, oldest due first (uses deliveries_due). */
  due(now: number, limit: number): DeliveryRow[] {
    return sql(
      this.db,
      `SELECT * FROM webhook_deliveries WHERE status IN ('pending', 'failing') AND next_attempt_at <= ?
         ORDER BY next_attempt_at, rowid LIMIT ?`,
    ).all(now, limit) as unknown as DeliveryRow[];
  }

  /**
   * Takes a due delivery for one attempt by moving its next_attempt_at to `leaseUntil`: if the
   * process dies mid-attempt, the delivery becomes due again then. False if someone else took it.
   */
  claim(row: DeliveryRow, leaseUntil: number): boolean {
    return (
      sql(
        this.db,
        "UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ? AND status IN ('pending', 'failing') AND next_attempt_at = ?",
      ).run(leaseUntil, row.id, row.next_attempt_at).changes > 0
    );
  }

  /** A 2xx: done. */
  delivered(id: string, now: number): void {
    sql(
      this.db,
      "UPDATE webhook_deliveries SET status = 'delivered', attempts = attempts + 1, last_attempt_at = ?, last_error = NULL, next_attempt_at = NULL WHERE id = ?",
    ).run(now, id);
  }

  /** A failed attempt: retried at `nextAttemptAt`, or given up when that is null. */
  failed(id: string, now: number, error: string, nextAttemptAt: number | null): void {
    sql(
      this.db,
      `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, last_attempt_at = ?, last_error = ?, next_attempt_at = ?
         WHERE id = ?`,
    ).run(nextAttemptAt === null ? "gave_up" : "failing", now, error, nextAttemptAt, id);
  }

  /** No attempt was made (circuit open, worker stopping): try again at `at`, attempts unchanged. */
  defer(id: string, at: number): void {
    sql(this.db, "UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ? AND status IN ('pending', 'failing')").run(at, id);
  }

  /** Gives up without an attempt (e.g. the tenant no longer exists, or the circuit stayed open too long). */
  giveUp(id: string, error: string): void {
    sql(this.db, "UPDATE webhook_deliveries SET status = 'gave_up', last_error = ?, next_attempt_at = NULL WHERE id = ?").run(error, id);
  }

  /** Deletes finished deliveries created before `before` (their payload holds a copy of the job). */
  purgeFinished(before: number): number {
    return Number(
      sql(this.db, "DELETE FROM webhook_deliveries WHERE status IN ('delivered', 'gave_up') AND created_at < ?").run(before).changes,
    );
  }
}
