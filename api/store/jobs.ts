/**
 * Job records of the embedded store, and the API's Job object as a pure function of a record
 * (the Kubernetes backend derives the same object from a PdfJob).
 */
import type { JobObject, JobStatus } from "../../core/schemas/api.ts";
import type { Operation } from "../../core/schemas/options.ts";
import { rfc3339 } from "../../core/time.ts";
import { sql, type Db } from "./db.ts";
import { fileObject, type FileRow } from "./files.ts";

/** A job's input: the upload it was made from, as it was at submission. */
export type JobInput = Pick<FileRow, "filename" | "content_type" | "size" | "sha256" | "pages" | "storage_key"> & {
  file_id: string;
  page_spec?: string;
};

export interface JobRow {
  id: string;
  tenant_id: string;
  operation: Operation;
  status: JobStatus;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  expires_at: number | null;
  inputs: JobInput[];
  options: Record<string, unknown>;
  output_filename: string | null;
  result: { figures: Record<string, unknown> } | null;
  error: { code: string; message: string } | null;
  webhook_url: string | null;
  metadata: Record<string, string>;
  attempts: number;
  retention_ms: number;
}

export interface WebhookState {
  status: "pending" | "delivered" | "failing" | "gave_up";
  attempts: number;
  last_attempt_at: number | null;
  last_error: string | null;
}

type RawRow = Omit<JobRow, "inputs" | "options" | "result" | "error" | "metadata"> & {
  inputs: string;
  options: string;
  result: string | null;
  error: string | null;
  metadata: string;
};

const parse = (r: RawRow): JobRow => ({
  ...r,
  inputs: JSON.parse(r.inputs) as JobInput[],
  options: JSON.parse(r.options) as Record<string, unknown>,
  result: r.result ? (JSON.parse(r.result) as JobRow["result"]) : null,
  error: r.error ? (JSON.parse(r.error) as JobRow["error"]) : null,
  metadata: JSON.parse(r.metadata) as Record<string, string>,
});

export const UNFINISHED: readonly JobStatus[] = ["queued", "running"];

/** The API's Job object (API.md "Jobs"). */
export function jobObject(job: JobRow, outputs: FileRow[], webhook: WebhookState | null): JobObject {
  return {
    id: job.id,
    object: "job",
    operation: job.operation,
    status: job.status,
    created_at: rfc3339(job.created_at),
    started_at: rfc3339(job.started_at),
    completed_at: rfc3339(job.completed_at),
    expires_at: rfc3339(job.expires_at),
    inputs: job.inputs.map((i) => ({
      file_id: i.file_id,
      filename: i.filename,
      content_type: i.content_type,
      size: i.size,
      sha256: i.sha256,
      pages: i.pages,
    })),
    options: job.options,
    result:
      job.status === "succeeded" && job.result
        ? { files: outputs.map((f) => ({ ...fileObject(f), download_url: `/v1/files/${f.id}/content` })), ...job.result.figures }
        : null,
    error: (job.error as JobObject["error"]) ?? null,
    webhook:
      job.webhook_url && webhook
        ? {
            url: job.webhook_url,
            status: webhook.status,
            attempts: webhook.attempts,
            last_attempt_at: rfc3339(webhook.last_attempt_at),
            last_error: webhook.last_error,
          }
        : job.webhook_url
          ? { url: job.webhook_url, status: "pending", attempts: 0, last_attempt_at: null, last_error: null }
          : null,
    metadata: job.metadata,
  };
}

export class JobStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  insert(j: JobRow): void {
    sql(
      this.db,
      `INSERT INTO jobs (id, tenant_id, operation, status, created_at, started_at, completed_at, expires_at, inputs, options,
           output_filename, result, error, webhook_url, metadata, attempts, retention_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      j.id,
      j.tenant_id,
      j.operation,
      j.status,
      j.created_at,
      j.started_at,
      j.completed_at,
      j.expires_at,
      JSON.stringify(j.inputs),
      JSON.stringify(j.options),
      j.output_filename,
      j.result ? JSON.stringify(j.result) : null,
      j.error ? JSON.stringify(j.error) : null,
      j.webhook_url,
      JSON.stringify(j.metadata),
      j.attempts,
      j.retention_ms,
    );
  }

  /** A tenant's job; another tenant's id is simply not found. */
  get(tenantId: string, id: string): JobRow | undefined {
    const r = sql(this.db, "SELECT * FROM jobs WHERE id = ? AND tenant_id = ?").get(id, tenantId) as RawRow | undefined;
    return r && parse(r);
  }

  byId(id: string): JobRow | undefined {
    const r = sql(this.db, "SELECT * FROM jobs WHERE id = ?").get(id) as RawRow | undefined;
    return r && parse(r);
  }

  /** Newest first; `startingAfter` is the last id of the previous page (cursor pagination). */
  list(
    tenantId: string,
    q: { status?: JobStatus; operation?: Operation; limit: number; startingAfter?: string },
  ): { rows: JobRow[]; hasMore: boolean } {
    const where = ["tenant_id = ?"];
    const args: (string | number)[] = [tenantId];
    for (const [column, value] of [
      ["status", q.status],
      ["operation", q.operation],
    ] as const) {
      if (!value) continue;
      where.push(`${column} = ?`);
      args.push(value);
    }
    if (q.startingAfter) {
      const cursor = sql(this.db, "SELECT created_at, id FROM jobs WHERE id = ? AND tenant_id = ?").get(q.startingAfter, tenantId) as
        { created_at: number; id: string } | undefined;
      if (!cursor) return { rows: [], hasMore: false };
      where.push("(created_at < ? OR (created_at = ? AND id < ?))");
      args.push(cursor.created_at, cursor.created_at, cursor.id);
    }
    const rows = sql(this.db, `SELECT * FROM jobs WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`).all(
      ...args,
      q.limit + 1,
    ) as unknown as RawRow[];
    return { rows: rows.slice(0, q.limit).map(parse), hasMore: rows.length > q.limit };
  }

  countUnfinished(tenantId: string): number {
    return (
      sql(this.db, "SELECT COUNT(*) AS n FROM jobs WHERE tenant_id = ? AND status IN ('queued', 'running')").get(tenantId) as { n: number }
    ).n;
  }

  /** Queued jobs, oldest first. */
  queued(limit: number): JobRow[] {
    return (
      sql(this.db, "SELECT * FROM jobs WHERE status = 'queued' ORDER BY created_at, id LIMIT ?").all(limit) as unknown as RawRow[]
    ).map(parse);
  }

  byStatus(status: JobStatus): JobRow[] {
    return (sql(this.db, "SELECT * FROM jobs WHERE status = ?").all(status) as unknown as RawRow[]).map(parse);
  }

  /** queued → running, only if still queued (so a job never starts twice). */
  markRunning(id: string, now: number): boolean {
    return (
      sql(this.db, "UPDATE jobs SET status = 'running', started_at = ?, attempts = attempts + 1 WHERE id = ? AND status = 'queued'").run(
        now,
        id,
      ).changes > 0
    );
  }

  requeue(id: string): void {
    sql(this.db, "UPDATE jobs SET status = 'queued', started_at = NULL WHERE id = ? AND status = 'running'").run(id);
  }

  /** running → succeeded/failed, only if still running; sets the expiry. */
  finish(id: string, status: "succeeded" | "failed", now: number, fields: { result?: JobRow["result"]; error?: JobRow["error"] }): boolean {
    return (
      sql(
        this.db,
        "UPDATE jobs SET status = ?, completed_at = ?, expires_at = ? + retention_ms, result = ?, error = ? WHERE id = ? AND status IN ('running', 'queued')",
      ).run(status, now, now, fields.result ? JSON.stringify(fields.result) : null, fields.error ? JSON.stringify(fields.error) : null, id)
        .changes > 0
    );
  }

  delete(id: string): void {
    sql(this.db, "DELETE FROM jobs WHERE id = ?").run(id);
    sql(this.db, "DELETE FROM job_secrets WHERE job_id = ?").run(id);
  }

  expired(now: number, limit = 500): JobRow[] {
    return (
      sql(this.db, "SELECT * FROM jobs WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?").all(now, limit) as unknown as RawRow[]
    ).map(parse);
  }

  putSecret(jobId: string, sealed: Buffer): void {
    sql(this.db, "INSERT OR REPLACE INTO job_secrets (job_id, sealed) VALUES (?, ?)").run(jobId, sealed);
  }

  getSecret(jobId: string): Buffer | undefined {
    const r = sql(this.db, "SELECT sealed FROM job_secrets WHERE job_id = ?").get(jobId) as { sealed: Uint8Array } | undefined;
    return r ? Buffer.from(r.sealed) : undefined;
  }

  deleteSecret(jobId: string): void {
    sql(this.db, "DELETE FROM job_secrets WHERE job_id = ?").run(jobId);
  }
}
