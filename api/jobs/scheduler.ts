/**
 * Runs the embedded backend's jobs: claims queued jobs while runner workers are idle, hands each
 * to the worker pool, and records the outcome exactly once — outputs stored, inputs purged,
 * webhook queued, waiters told. node:sqlite is synchronous, so each claim (queued → running) and
 * each finish (running → ended) is atomic within this single process.
 */
import type { EventEmitter } from "node:events";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import type { Config } from "../../core/config.ts";
import { newId } from "../../core/ids.ts";
import type { Logger } from "../../core/logger.ts";
import type { JobObject } from "../../core/schemas/api.ts";
import type { RunnerResult, RunnerSpec } from "../../core/schemas/job.ts";
import { unseal } from "../../core/seal.ts";
import type { FsObjectStore } from "../../core/storage/fs-store.ts";
import type { WebhookEventType } from "../../core/webhooks/events.ts";
import type { Metrics } from "../metrics.ts";
import { sql, transaction, type Db } from "../store/db.ts";
import type { FileRow, FileStore } from "../store/files.ts";
import type { JobRow, JobStore, WebhookState } from "../store/jobs.ts";
import { WorkerLost, type WorkerPool } from "./worker-pool.ts";

/** Where finished jobs are announced (the durable webhook queue). */
export interface WebhookSink {
  enqueue(tenantId: string, jobId: string, url: string, type: WebhookEventType, job: JobObject): void;
  stateForJob(jobId: string): WebhookState | null;
}

/** A job interrupted by restarts this many times fails instead of running again. */
const MAX_ATTEMPTS = 2;

/** What the embedded backend is built from (LocalBackend takes these; the scheduler shares them). */
export interface EmbeddedDeps {
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
}

export interface SchedulerDeps extends EmbeddedDeps {
  jobs: JobStore;
  files: FileStore;
  now: () => number;
  /** The API's Job object for a record (for webhook payloads). */
  view: (job: JobRow) => JobObject;
  /** Emits a job's id when it has ended (Prefer: wait listens). */
  ended: EventEmitter;
}

export class JobScheduler {
  private readonly d: SchedulerDeps;
  private readonly jobs: JobStore;
  private readonly files: FileStore;
  private readonly now: () => number;
  private readonly inFlight = new Set<Promise<void>>();
  private stopping = false;

  constructor(deps: SchedulerDeps) {
    this.d = deps;
    this.jobs = deps.jobs;
    this.files = deps.files;
    this.now = deps.now;
  }

  /** Claims queued jobs while workers are idle; each claim is atomic (queued → running). */
  pump(): void {
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
    const limits = {
      max_pages: this.d.config.FOLIO_MAX_PAGES,
      max_file_bytes: this.d.config.FOLIO_MAX_FILE_BYTES,
      max_merge_files: this.d.config.FOLIO_MAX_MERGE_FILES,
    };
    return {
      job_id: job.id,
      operation: job.operation,
      inputs: job.inputs.map((i) => ({
        path: this.d.store.localPath(i.storage_key),
        filename: i.filename,
        ...(i.page_spec ? { pages: i.page_spec } : {}),
      })),
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
      this.d.metrics.jobDuration.observe(
        { operation: job.operation, outcome: this.jobs.byId(job.id)?.status ?? "canceled" },
        (this.now() - started) / 1000,
      );
    }
  }

  private async succeed(job: JobRow, result: RunnerResult): Promise<void> {
    const now = this.now();
    const rows: FileRow[] = result.outputs.map((o) => {
      const id = newId("file");
      return {
        id,
        tenant_id: job.tenant_id,
        role: "output",
        job_id: job.id,
        filename: o.filename,
        content_type: o.content_type,
        size: o.size,
        sha256: o.sha256,
        pages: o.pages,
        storage_key: `${job.tenant_id}/${id}`,
        created_at: now,
        expires_at: now + job.retention_ms,
      };
    });
    for (const [i, o] of result.outputs.entries()) await this.d.store.putFile(rows[i]!.storage_key, o.path);
    const finished = transaction(this.d.db, () => {
      if (!this.jobs.finish(job.id, "succeeded", now, { result: { figures: result.figures } })) return false;
      for (const r of rows) this.files.insert(r);
      this.enqueueWebhook(job.id, "job.succeeded");
      return true;
    });
    if (!finished) {
      // Canceled meanwhile: the outputs have no job to belong to.
      await Promise.all(rows.map((r) => this.d.store.delete(r.storage_key)));
      return;
    }
    await this.announce(job, "succeeded");
  }

  private fail(job: JobRow, error: { code: string; message: string }): void {
    const ended = transaction(this.d.db, () => {
      if (!this.jobs.finish(job.id, "failed", this.now(), { error })) return false;
      this.enqueueWebhook(job.id, "job.failed");
      return true;
    });
    if (ended) void this.announce(job, error.code);
  }

  /**
   * The job's webhook, queued in the transaction that ends the job: a crash (SIGKILL) right after
   * the end was recorded can no longer lose the webhook (found by test/api/chaos.test.ts).
   */
  private enqueueWebhook(jobId: string, event: WebhookEventType): void {
    const fresh = this.jobs.byId(jobId);
    if (fresh?.webhook_url) this.d.webhooks.enqueue(fresh.tenant_id, fresh.id, fresh.webhook_url, event, this.d.view(fresh));
  }

  private async announce(job: JobRow, outcome: string): Promise<void> {
    this.jobs.deleteSecret(job.id);
    this.d.metrics.jobs.inc({ operation: job.operation, outcome });
    await this.purgeInputs(job);
    this.d.ended.emit(job.id);
  }

  /** Inputs are deleted as soon as their job ends (API.md "Retention"), unless another unfinished job uses them. */
  async purgeInputs(job: JobRow): Promise<void> {
    for (const i of job.inputs) {
      const users = sql(
        this.d.db,
        "SELECT COUNT(*) AS n FROM jobs WHERE id != ? AND status IN ('queued', 'running') AND inputs LIKE ?",
      ).get(job.id, `%"${i.file_id}"%`) as { n: number };
      if (users.n > 0) continue;
      this.files.delete(i.file_id);
      await this.d.store.delete(i.storage_key);
    }
  }

  /** Kills the worker of a running job that is being deleted, and purges its inputs. */
  async cancel(job: JobRow): Promise<void> {
    if (job.status === "running") this.d.pool.cancel(job.id);
    await this.purgeInputs(job);
  }

  /**
   * Recovers from a restart, then starts claiming: jobs left `running` ran in workers that are
   * gone; they are queued again, or failed once they have been interrupted MAX_ATTEMPTS times.
   * No result was recorded for them, so none has run to completion.
   */
  start(): void {
    this.stopping = false;
    for (const job of this.jobs.byStatus("running")) {
      if (job.attempts >= MAX_ATTEMPTS)
        this.fail(job, { code: "internal_error", message: "The job was interrupted by restarts and did not complete." });
      else this.jobs.requeue(job.id);
    }
    void this.purgeLeftInputs();
    this.pump();
  }

  /**
   * Inputs of a job that ended just before a crash, when their purge had not run: an upload with
   * no expiry (it was attached to a job) that no unfinished job uses. Their records go in one
   * synchronous transaction, before any request can attach them again; then their bytes.
   */
  private async purgeLeftInputs(): Promise<void> {
    const left = transaction(this.d.db, () => {
      const rows = sql(this.d.db, "SELECT id, storage_key FROM files WHERE role = 'upload' AND expires_at IS NULL").all() as {
        id: string;
        storage_key: string;
      }[];
      const unused = rows.filter(
        (f) =>
          (
            sql(this.d.db, "SELECT COUNT(*) AS n FROM jobs WHERE status IN ('queued', 'running') AND inputs LIKE ?").get(`%"${f.id}"%`) as {
              n: number;
            }
          ).n === 0,
      );
      for (const f of unused) this.files.delete(f.id);
      return unused;
    });
    for (const f of left) await this.d.store.delete(f.storage_key);
    if (left.length > 0) this.d.log.info({ files: left.length }, "Purged the inputs of jobs that ended before a restart");
  }

  /** Stops claiming, closes the workers and waits for the jobs in flight to settle. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.d.pool.close();
    await Promise.allSettled([...this.inFlight]);
  }
}
