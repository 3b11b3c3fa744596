/**
 * The embedded job backend: jobs and files in SQLite, bytes on the local disk, operations run by
 * the runner worker pool (scheduler.ts), expiry by retention.ts. node:sqlite is synchronous, so
 * every check-then-write below that has no `await` in between is atomic within this single
 * process (idempotency: concurrent identical requests create one job).
 */
import { EventEmitter } from "node:events";
import { newId } from "../../core/ids.ts";
import type { FileObject, JobObject } from "../../core/schemas/api.ts";
import { redactOptions } from "../../core/schemas/options.ts";
import { seal } from "../../core/seal.ts";
import { rfc3339 } from "../../core/time.ts";
import type { UploadedPart } from "../http/uploads.ts";
import { sql, transaction } from "../store/db.ts";
import { fileObject, FileStore } from "../store/files.ts";
import { jobObject, JobStore, type JobRow } from "../store/jobs.ts";
import { IDEMPOTENCY_TTL_MS, type FileContent, type JobBackend, type JobListQuery, type NewJob, type SubmitResult } from "./backend.ts";
import { sweepExpired } from "./retention.ts";
import { JobScheduler, type EmbeddedDeps } from "./scheduler.ts";

export type { WebhookEvent, WebhookSink } from "./scheduler.ts";
const SECRET_FIELDS = ["user_password", "owner_password"];
export { IDEMPOTENCY_TTL_MS } from "./backend.ts";

export interface LocalBackendDeps extends EmbeddedDeps {
  now?: () => number;
}

export class LocalBackend implements JobBackend {
  private readonly d: LocalBackendDeps;
  private readonly jobs: JobStore;
  private readonly files: FileStore;
  private readonly ended = new EventEmitter();
  private readonly now: () => number;
  private readonly scheduler: JobScheduler;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(deps: LocalBackendDeps) {
    this.d = deps;
    this.jobs = new JobStore(deps.db);
    this.files = new FileStore(deps.db);
    this.now = deps.now ?? Date.now;
    this.ended.setMaxListeners(0);
    this.scheduler = new JobScheduler({
      ...deps,
      jobs: this.jobs,
      files: this.files,
      now: this.now,
      view: (job) => this.view(job),
      ended: this.ended,
    });
  }

  // --- files ---------------------------------------------------------------------------------

  newUploadKey(tenantId: string): string {
    return `${tenantId}/${newId("file")}`;
  }

  async deleteUploadedObjects(keys: string[]): Promise<void> {
    await Promise.all(keys.map((k) => this.d.store.delete(k)));
  }

  addUploads(tenantId: string, parts: UploadedPart[]): Promise<FileObject[]> {
    return Promise.resolve(this.files.addUploads(tenantId, parts, this.now(), this.d.config.FOLIO_UPLOAD_TTL_SECONDS * 1000));
  }

  getFile(tenantId: string, id: string): Promise<FileObject | null> {
    const f = this.files.get(tenantId, id, this.now());
    return Promise.resolve(f ? fileObject(f) : null);
  }

  async openFile(tenantId: string, id: string): Promise<FileContent | null> {
    const f = this.files.get(tenantId, id, this.now());
    if (!f) return null;
    return { file: fileObject(f), body: await this.d.store.get(f.storage_key) };
  }

  async deleteFile(tenantId: string, id: string): Promise<boolean> {
    const f = this.files.get(tenantId, id, this.now());
    if (!f) return false;
    this.files.delete(f.id);
    await this.d.store.delete(f.storage_key);
    return true;
  }

  // --- jobs ----------------------------------------------------------------------------------

  private view(job: JobRow): JobObject {
    return jobObject(
      job,
      job.status === "succeeded" ? this.files.byJob(job.id) : [],
      job.webhook_url ? this.d.webhooks.stateForJob(job.id) : null,
    );
  }

  submit(nj: NewJob, idem: { key: string; hash: string } | null): Promise<SubmitResult> {
    return Promise.resolve(this.submitNow(nj, idem));
  }

  /** The whole submission in one SQLite transaction (no await inside: atomic in this process). */
  private submitNow(nj: NewJob, idem: { key: string; hash: string } | null): SubmitResult {
    const now = this.now();
    return transaction(this.d.db, (): SubmitResult => {
      if (idem) {
        // Keys are kept 24 h (API.md); an older one is free to be used again.
        const prior = sql(this.d.db, "SELECT request_hash, job_id FROM idempotency WHERE tenant_id = ? AND key = ? AND created_at > ?").get(
          nj.tenantId,
          idem.key,
          now - IDEMPOTENCY_TTL_MS,
        ) as { request_hash: string; job_id: string } | undefined;
        if (prior && prior.request_hash !== idem.hash) return { kind: "idempotency_conflict" };
        if (prior) {
          const job = this.jobs.get(nj.tenantId, prior.job_id);
          if (job) return { kind: "replayed", job: this.view(job) };
        }
      }
      const inputs = [];
      for (const [index, i] of nj.inputs.entries()) {
        const f = this.files.get(nj.tenantId, i.file_id, now);
        if (!f || f.role !== "upload") return { kind: "unknown_file", index };
        inputs.push({
          file_id: f.id,
          filename: f.filename,
          content_type: f.content_type,
          size: f.size,
          sha256: f.sha256,
          pages: f.pages,
          storage_key: f.storage_key,
          ...(i.page_spec ? { page_spec: i.page_spec } : {}),
        });
      }
      const job: JobRow = {
        id: newId("job"),
        tenant_id: nj.tenantId,
        operation: nj.operation,
        status: "queued",
        created_at: now,
        started_at: null,
        completed_at: null,
        expires_at: null,
        inputs,
        options: redactOptions(nj.operation, nj.options),
        output_filename: nj.outputFilename,
        result: null,
        error: null,
        webhook_url: nj.webhookUrl,
        metadata: nj.metadata,
        attempts: 0,
        retention_ms: nj.retentionMs,
      };
      this.jobs.insert(job);
      const secrets = Object.fromEntries(SECRET_FIELDS.filter((k) => nj.options[k] !== undefined).map((k) => [k, nj.options[k]]));
      if (Object.keys(secrets).length) this.jobs.putSecret(job.id, seal(this.d.sealKey, JSON.stringify(secrets)));
      // While a job is unfinished its input files must not expire under it.
      for (const i of inputs) sql(this.d.db, "UPDATE files SET expires_at = NULL WHERE id = ?").run(i.file_id);
      if (idem) {
        sql(this.d.db, "INSERT OR REPLACE INTO idempotency (tenant_id, key, request_hash, job_id, created_at) VALUES (?, ?, ?, ?, ?)").run(
          nj.tenantId,
          idem.key,
          idem.hash,
          job.id,
          now,
        );
      }
      queueMicrotask(() => this.scheduler.pump());
      return { kind: "created", job: this.view(job) };
    });
  }

  getJob(tenantId: string, id: string): Promise<JobObject | null> {
    return Promise.resolve(this.jobNow(tenantId, id));
  }

  private jobNow(tenantId: string, id: string): JobObject | null {
    const job = this.jobs.get(tenantId, id);
    return job ? this.view(job) : null;
  }

  listJobs(tenantId: string, q: JobListQuery): Promise<{ data: JobObject[]; has_more: boolean }> {
    const { rows, hasMore } = this.jobs.list(tenantId, q);
    return Promise.resolve({ data: rows.map((r) => this.view(r)), has_more: hasMore });
  }

  storedBytes(tenantId: string): Promise<number> {
    const row = sql(
      this.d.db,
      "SELECT COALESCE(SUM(size), 0) AS n FROM files WHERE tenant_id = ? AND (expires_at IS NULL OR expires_at > ?)",
    ).get(tenantId, this.now()) as { n: number };
    return Promise.resolve(Number(row.n));
  }

  countUnfinished(tenantId: string): Promise<number> {
    return Promise.resolve(this.jobs.countUnfinished(tenantId));
  }

  async deleteJob(tenantId: string, id: string): Promise<boolean> {
    const job = this.jobs.get(tenantId, id);
    if (!job) return false;
    const unfinished = job.status === "queued" || job.status === "running";
    const snapshot = this.view(job);
    const outputs = this.files.byJob(job.id);
    // Delete the record first: a running job's result then has nowhere to land.
    this.jobs.delete(job.id);
    for (const f of outputs) this.files.delete(f.id);
    await this.scheduler.cancel(job);
    await Promise.all(outputs.map((f) => this.d.store.delete(f.storage_key)));
    if (unfinished) {
      this.d.metrics.jobs.inc({ operation: job.operation, outcome: "canceled" });
      if (job.webhook_url) {
        const canceled = { ...snapshot, status: "canceled" as const, completed_at: rfc3339(this.now()) };
        this.d.webhooks.enqueue(tenantId, job.id, job.webhook_url, "job.canceled", canceled);
      }
      this.ended.emit(job.id);
    }
    return true;
  }

  async waitFor(tenantId: string, id: string, ms: number): Promise<JobObject | null> {
    const job = this.jobs.get(tenantId, id);
    if (!job || (job.status !== "queued" && job.status !== "running") || ms <= 0) return job ? this.view(job) : null;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.ended.off(id, done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.ended.on(id, done);
    });
    return this.jobNow(tenantId, id);
  }

  // --- lifecycle -----------------------------------------------------------------------------

  /** Deletes what has expired (see retention.ts). */
  sweep(): Promise<{ jobs: number; files: number }> {
    sql(this.d.db, "DELETE FROM idempotency WHERE created_at <= ?").run(this.now() - IDEMPOTENCY_TTL_MS);
    return sweepExpired({ jobs: this.jobs, files: this.files, store: this.d.store }, this.now());
  }

  start(): void {
    this.scheduler.start();
    this.sweeper = setInterval(() => {
      this.sweep().catch((err: unknown) => this.d.log.error({ err }, "Retention sweep failed"));
    }, this.d.config.FOLIO_SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    await this.scheduler.stop();
  }

  async ready(): Promise<boolean> {
    try {
      sql(this.d.db, "SELECT 1").get();
      return await this.d.store.ready();
    } catch {
      return false;
    }
  }
}
