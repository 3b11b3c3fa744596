/**
 * The embedded job backend: jobs and files in SQLite, bytes on the local disk, operations run by
 * the runner worker pool. node:sqlite is synchronous, so every check-then-write below that has no
 * `await` in between is atomic within this single process (idempotency, the queued → running
 * claim, finishing a job exactly once).
 */
import { EventEmitter } from "node:events";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import type { Config } from "../../core/config.ts";
import { newId } from "../../core/ids.ts";
import type { Logger } from "../../core/logger.ts";
import type { FileObject, JobObject, JobStatus } from "../../core/schemas/api.ts";
import type { RunnerSpec } from "../../core/schemas/job.ts";
import { redactOptions, type Operation } from "../../core/schemas/options.ts";
import { seal, unseal } from "../../core/seal.ts";
import type { FsObjectStore } from "../../core/storage/fs-store.ts";
import type { UploadedPart } from "../http/uploads.ts";
import type { Metrics } from "../metrics.ts";
import { sql, transaction, type Db } from "../store/db.ts";
import { fileObject, FileStore, type FileRow } from "../store/files.ts";
import { jobObject, JobStore, type JobRow, type WebhookState } from "../store/jobs.ts";
import type { FileContent, JobBackend, NewJob, SubmitResult } from "./backend.ts";
import { WorkerLost, type WorkerPool } from "./worker-pool.ts";

export type WebhookEvent = "job.succeeded" | "job.failed" | "job.canceled";

/** Where finished jobs are announced (the durable webhook queue). */
export interface WebhookSink {
  enqueue(tenantId: string, jobId: string, url: string, type: WebhookEvent, job: JobObject): void;
  stateForJob(jobId: string): WebhookState | null;
}

/** A job interrupted by restarts this many times fails instead of running again. */
const MAX_ATTEMPTS = 2;
const SECRET_FIELDS = ["user_password", "owner_password"];

export interface LocalBackendDeps {
  db: Db;
  store: FsObjectStore;
  pool: WorkerPool;
  config: Config;
  log: Logger;
  metrics: Metrics;
  webhooks: WebhookSink;
  /** Key sealing protect passwords of queued jobs (32 bytes). */
  sealKey: Buffer;
  workDir: string;
  now?: () => number;
}

export class LocalBackend implements JobBackend {
  private readonly d: LocalBackendDeps;
  private readonly jobs: JobStore;
  private readonly files: FileStore;
  private readonly ended = new EventEmitter();
  private readonly now: () => number;
  private sweeper: NodeJS.Timeout | null = null;
  private inFlight = new Set<Promise<void>>();
  private stopping = false;

  constructor(deps: LocalBackendDeps) {
    this.d = deps;
    this.jobs = new JobStore(deps.db);
    this.files = new FileStore(deps.db);
    this.now = deps.now ?? Date.now;
    this.ended.setMaxListeners(0);
  }

  // --- files ---------------------------------------------------------------------------------

  newUploadKey(tenantId: string): string {
    return `${tenantId}/${newId("file")}`;
  }

  async deleteUploadedObjects(keys: string[]): Promise<void> {
    await Promise.all(keys.map((k) => this.d.store.delete(k)));
  }

  addUploads(tenantId: string, parts: UploadedPart[]): Promise<FileObject[]> {
    const now = this.now();
    const out: FileObject[] = [];
    for (const p of parts) {
      const row: FileRow = {
        id: p.storageKey.split("/").pop()!,
        tenant_id: tenantId,
        role: "upload",
        job_id: null,
        filename: p.filename,
        content_type: p.contentType,
        size: p.size,
        sha256: p.sha256,
        pages: p.pages ?? null,
        storage_key: p.storageKey,
        created_at: now,
        expires_at: now + this.d.config.FOLIO_UPLOAD_TTL_SECONDS * 1000,
      };
      this.files.insert(row);
      out.push(fileObject(row));
    }
    return Promise.resolve(out);
  }

  getFile(tenantId: string, id: string): FileObject | null {
    const f = this.files.get(tenantId, id, this.now());
    return f ? fileObject(f) : null;
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
    return jobObject(job, job.status === "succeeded" ? this.files.byJob(job.id) : [], job.webhook_url ? this.d.webhooks.stateForJob(job.id) : null);
  }

  submit(nj: NewJob, idem: { key: string; hash: string } | null): SubmitResult {
    const now = this.now();
    return transaction(this.d.db, (): SubmitResult => {
      if (idem) {
        const prior = sql(this.d.db, "SELECT request_hash, job_id FROM idempotency WHERE tenant_id = ? AND key = ?").get(nj.tenantId, idem.key) as
          | { request_hash: string; job_id: string }
          | undefined;
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
        sql(this.d.db, "INSERT OR REPLACE INTO idempotency (tenant_id, key, request_hash, job_id, created_at) VALUES (?, ?, ?, ?, ?)")
          .run(nj.tenantId, idem.key, idem.hash, job.id, now);
      }
      queueMicrotask(() => this.pump());
      return { kind: "created", job: this.view(job) };
    });
  }

  getJob(tenantId: string, id: string): JobObject | null {
    const job = this.jobs.get(tenantId, id);
    return job ? this.view(job) : null;
  }

  listJobs(tenantId: string, q: { status?: JobStatus; operation?: Operation; limit: number; startingAfter?: string }): { data: JobObject[]; has_more: boolean } {
    const { rows, hasMore } = this.jobs.list(tenantId, q);
    return { data: rows.map((r) => this.view(r)), has_more: hasMore };
  }

  countUnfinished(tenantId: string): number {
    return this.jobs.countUnfinished(tenantId);
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
    if (job.status === "running") this.d.pool.cancel(job.id);
    await this.purgeInputs(job);
    await Promise.all(outputs.map((f) => this.d.store.delete(f.storage_key)));
    if (unfinished) {
      this.d.metrics.jobs.inc({ operation: job.operation, outcome: "canceled" });
      if (job.webhook_url) {
        const canceled = { ...snapshot, status: "canceled" as const, completed_at: new Date(this.now()).toISOString().replace(/\.\d{3}Z$/, "Z") };
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
    return this.getJob(tenantId, id);
  }

  // --- running -------------------------------------------------------------------------------

  /** Claims queued jobs while workers are idle; each claim is atomic (queued → running). */
  private pump(): void {
    if (this.stopping) return;
    this.d.metrics.queueDepth.set(this.queuedCount());
    let idle = this.d.pool.size - this.inFlight.size;
    if (idle <= 0) return;
    for (const job of this.jobs.queued(idle)) {
      if (!this.jobs.markRunning(job.id, this.now())) continue;
      const task = this.execute({ ...job, status: "running", started_at: this.now(), attempts: job.attempts + 1 }).finally(() => {
        this.inFlight.delete(task);
        this.pump();
      });
      this.inFlight.add(task);
      if (--idle <= 0) break;
    }
    this.d.metrics.queueDepth.set(this.queuedCount());
    this.d.metrics.running.set(this.inFlight.size);
  }

  private queuedCount(): number {
    return (sql(this.d.db, "SELECT COUNT(*) AS n FROM jobs WHERE status = 'queued'").get() as { n: number }).n;
  }

  private specFor(job: JobRow, outDir: string): RunnerSpec {
    const sealed = this.jobs.getSecret(job.id);
    const secrets = sealed ? (JSON.parse(unseal(this.d.sealKey, sealed)) as Record<string, unknown>) : {};
    const limits = { max_pages: this.d.config.FOLIO_MAX_PAGES, max_file_bytes: this.d.config.FOLIO_MAX_FILE_BYTES, max_merge_files: this.d.config.FOLIO_MAX_MERGE_FILES };
    return {
      job_id: job.id,
      operation: job.operation,
      inputs: job.inputs.map((i) => ({ path: this.d.store.localPath(i.storage_key), filename: i.filename, ...(i.page_spec ? { pages: i.page_spec } : {}) })),
      options: { ...job.options, ...secrets },
      output_dir: outDir,
      ...(job.output_filename ? { output_filename: job.output_filename } : {}),
      limits,
    };
  }

  private async execute(job: JobRow): Promise<void> {
    const started = this.now();
    this.d.metrics.jobWait.observe({ operation: job.operation }, (started - job.created_at) / 1000);
    const outDir = path.join(this.d.workDir, job.id);
    await mkdir(outDir, { recursive: true, mode: 0o700 });
    try {
      const answer = await this.d.pool.run(job.id, this.specFor(job, outDir));
      if ("result" in answer) await this.succeed(job, answer.result);
      else this.fail(job, answer.error);
    } catch (err) {
      if (err instanceof WorkerLost && !this.jobs.byId(job.id)) return; // deleted (canceled) while running
      if (err instanceof WorkerLost && this.stopping) return; // left running: requeued at next start
      this.d.log.error({ err, job_id: job.id }, "Job failed with an internal error");
      this.fail(job, { code: "internal_error", message: "The job failed because of an internal error." });
    } finally {
      await rm(outDir, { recursive: true, force: true });
      this.d.metrics.jobDuration.observe({ operation: job.operation, outcome: this.jobs.byId(job.id)?.status ?? "canceled" }, (this.now() - started) / 1000);
    }
  }

  private async succeed(job: JobRow, result: { outputs: { path: string; filename: string; content_type: string; size: number; sha256: string; pages: number | null }[]; figures: Record<string, unknown> }): Promise<void> {
    const now = this.now();
    const rows: FileRow[] = result.outputs.map((o) => {
      const id = newId("file");
      return { id, tenant_id: job.tenant_id, role: "output", job_id: job.id, filename: o.filename, content_type: o.content_type, size: o.size, sha256: o.sha256, pages: o.pages, storage_key: `${job.tenant_id}/${id}`, created_at: now, expires_at: now + job.retention_ms };
    });
    for (const [i, o] of result.outputs.entries()) await this.d.store.putFile(rows[i]!.storage_key, o.path);
    const finished = transaction(this.d.db, () => {
      if (!this.jobs.finish(job.id, "succeeded", now, { result: { figures: result.figures } })) return false;
      for (const r of rows) this.files.insert(r);
      return true;
    });
    if (!finished) {
      // Canceled meanwhile: the outputs have no job to belong to.
      await Promise.all(rows.map((r) => this.d.store.delete(r.storage_key)));
      return;
    }
    await this.ended_(job, "succeeded", "job.succeeded");
  }

  private fail(job: JobRow, error: { code: string; message: string }): void {
    if (!this.jobs.finish(job.id, "failed", this.now(), { error })) return;
    void this.ended_(job, error.code, "job.failed");
  }

  private async ended_(job: JobRow, outcome: string, event: WebhookEvent): Promise<void> {
    this.jobs.deleteSecret(job.id);
    this.d.metrics.jobs.inc({ operation: job.operation, outcome });
    await this.purgeInputs(job);
    const fresh = this.jobs.byId(job.id);
    if (fresh?.webhook_url) this.d.webhooks.enqueue(fresh.tenant_id, fresh.id, fresh.webhook_url, event, this.view(fresh));
    this.ended.emit(job.id);
  }

  /** Inputs are deleted as soon as their job ends (API.md "Retention"), unless another unfinished job uses them. */
  private async purgeInputs(job: JobRow): Promise<void> {
    for (const i of job.inputs) {
      const users = sql(this.d.db, "SELECT COUNT(*) AS n FROM jobs WHERE id != ? AND status IN ('queued', 'running') AND inputs LIKE ?")
        .get(job.id, `%"${i.file_id}"%`) as { n: number };
      if (users.n > 0) continue;
      this.files.delete(i.file_id);
      await this.d.store.delete(i.storage_key);
    }
  }

  // --- lifecycle -----------------------------------------------------------------------------

  /** Deletes what has expired: job records with their outputs, and unused uploads. */
  async sweep(): Promise<{ jobs: number; files: number }> {
    const now = this.now();
    let jobs = 0;
    let files = 0;
    for (const job of this.jobs.expired(now)) {
      for (const f of this.files.byJob(job.id)) {
        this.files.delete(f.id);
        await this.d.store.delete(f.storage_key);
        files++;
      }
      this.jobs.delete(job.id);
      jobs++;
    }
    for (const f of this.files.expired(now)) {
      this.files.delete(f.id);
      await this.d.store.delete(f.storage_key);
      files++;
    }
    return { jobs, files };
  }

  /**
   * Recovers from a restart: jobs left `running` ran in workers that are gone; they are queued
   * again, or failed once they have been interrupted MAX_ATTEMPTS times. No result was recorded
   * for them, so none has run to completion.
   */
  start(): void {
    this.stopping = false;
    for (const job of this.jobs.byStatus("running")) {
      if (job.attempts >= MAX_ATTEMPTS) this.fail(job, { code: "internal_error", message: "The job was interrupted by restarts and did not complete." });
      else this.jobs.requeue(job.id);
    }
    this.sweeper = setInterval(() => {
      this.sweep().catch((err: unknown) => this.d.log.error({ err }, "Retention sweep failed"));
    }, this.d.config.FOLIO_SWEEP_INTERVAL_MS);
    this.sweeper.unref();
    this.pump();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.sweeper) clearInterval(this.sweeper);
    await this.d.pool.close();
    await Promise.allSettled([...this.inFlight]);
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
