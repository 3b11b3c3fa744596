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
import { Declined, SqliteIdempotencyStore, type IdempotentRequest } from "../store/idempotency.ts";
import {
  replayResult,
  type FileContent,
  type JobBackend,
  type JobListQuery,
  type NewJob,
  type ReplayResult,
  type SubmitResult,
} from "./backend.ts";
import { sweepExpired } from "./retention.ts";
import { JobScheduler, type EmbeddedDeps } from "./scheduler.ts";

export type { WebhookSink } from "./scheduler.ts";
/** Options that are secrets (protect's passwords, edit's password to open the input): sealed, never in the record. */
const SECRET_FIELDS = ["user_password", "owner_password", "password"];
export { IDEMPOTENCY_TTL_MS } from "./backend.ts";

export interface LocalBackendDeps extends EmbeddedDeps {
  now?: () => number;
}

export class LocalBackend implements JobBackend {
  private readonly d: LocalBackendDeps;
  private readonly jobs: JobStore;
  private readonly files: FileStore;
  /** Idempotency keys (api/store/idempotency.ts). */
  readonly idempotency: SqliteIdempotencyStore;
  private readonly ended = new EventEmitter();
  private readonly now: () => number;
  private readonly scheduler: JobScheduler;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(deps: LocalBackendDeps) {
    this.d = deps;
    this.jobs = new JobStore(deps.db);
    this.files = new FileStore(deps.db);
    this.now = deps.now ?? Date.now;
    this.idempotency = new SqliteIdempotencyStore(deps.db, this.now);
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

  async replay(req: IdempotentRequest): Promise<ReplayResult | null> {
    return replayResult(await this.idempotency.replay(req), (id) => this.getJob(req.tenantId, id));
  }

  async submit(nj: NewJob, idem: { key: string; hash: string } | null): Promise<SubmitResult> {
    try {
      if (!idem) return transaction(this.d.db, () => this.#create(nj, newId("job")));
      const req = { tenantId: nj.tenantId, ...idem };
      // #create is synchronous: it runs inside the transaction that records the key.
      const taken = await this.idempotency.take(req, ({ jobId }) => Promise.resolve(this.#create(nj, jobId)));
      if (taken.kind === "created") return taken.value;
      return (await replayResult(taken, (id) => this.getJob(nj.tenantId, id)))!;
    } catch (err) {
      if (err instanceof Declined) return err.answer as SubmitResult;
      throw err;
    }
  }

  /**
   * The job's records, inside the caller's transaction (no await: atomic in this process). Throws
   * Declined when the tenant is at its cap or an input is not one of its uploads.
   */
  #create(nj: NewJob, jobId: string): SubmitResult {
    const now = this.now();
    // Counted in the same transaction as the insert: the cap holds under any concurrency.
    if (this.jobs.countUnfinished(nj.tenantId) >= nj.maxUnfinished) throw new Declined({ kind: "too_many_jobs" });
    const inputs = [];
    for (const [index, i] of nj.inputs.entries()) {
      const f = this.files.get(nj.tenantId, i.file_id, now);
      if (!f || f.role !== "upload") throw new Declined({ kind: "unknown_file", index });
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
      id: jobId,
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
    queueMicrotask(() => this.scheduler.pump());
    return { kind: "created", job: this.view(job) };
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
  async sweep(): Promise<{ jobs: number; files: number }> {
    await this.idempotency.purge(this.now());
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
