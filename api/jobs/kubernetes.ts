/**
 * The Kubernetes job backend (ARCHITECTURE.md): the same public API as embedded mode, with
 * PdfJob resources as the job store and S3 for the bytes. The controller runs the jobs; this side
 * only creates, reads and deletes PdfJobs, and `core/` (pdfjob-view.ts, schemas/pdfjob.ts) is the
 * whole of what the two agree on.
 *
 * What lives where:
 * - jobs: PdfJobs named pdfJobName(job id), labelled with the tenant, read straight from the
 *   apiserver (consistent reads: a client sees its job the moment it was created);
 * - upload records and idempotency keys: the API's SQLite, as in embedded mode; an upload a job
 *   uses is claimed by it and goes when the job ends (the controller deletes the bytes);
 * - outputs: in the PdfJob's status; their file ids are derived from their keys, so a download
 *   finds its job among the tenant's PdfJobs. A deleted output is listed in an annotation;
 * - protect passwords and the tenant's webhook signing secrets (snapshotted at creation): a Secret
 *   created right after the PdfJob and owned by it from the start (spec.secretRef).
 *
 * A PdfJob being deleted (deletionTimestamp set) is gone as far as the API is concerned.
 */
import { newId, ID_PATTERN } from "../../core/ids.ts";
import type { Logger } from "../../core/logger.ts";
import { jobIdOf, pdfJobToApiJob } from "../../core/pdfjob-view.ts";
import type { FileObject, JobObject } from "../../core/schemas/api.ts";
import {
  fileIdFromKey,
  LABELS,
  MANAGED_BY,
  PDFJOB_FINALIZER,
  pdfJobName,
  SECRET_OPTION_KEYS,
  TERMINAL_PHASES,
  WEBHOOK_SECRETS_KEY,
  type PdfJob,
  type PdfJobInput,
  type PdfJobSpec,
} from "../../core/schemas/pdfjob.ts";
import { redactOptions } from "../../core/schemas/options.ts";
import type { ObjectStore } from "../../core/storage/store.ts";
import type { UploadedPart } from "../http/uploads.ts";
import { sql, type Db } from "../store/db.ts";
import { fileObject, FileStore, type FileRow } from "../store/files.ts";
import type { TenantStore } from "../store/tenants.ts";
import type { IdempotencyAnswer, IdempotentRequest } from "../store/idempotency.ts";
import {
  IDEMPOTENCY_TTL_MS,
  replayResult,
  type FileContent,
  type JobBackend,
  type JobListQuery,
  type NewJob,
  type ReplayResult,
  type SubmitResult,
} from "./backend.ts";
import type { PdfJobApi } from "./pdfjob-client.ts";

/** Output file ids the client deleted (comma-separated), on the PdfJob. */
export const DELETED_OUTPUTS_ANNOTATION = "folio.dev/deleted-outputs";
/** When the API created the job, in epoch milliseconds (creationTimestamp has whole seconds). */
export const CREATED_MS_ANNOTATION = "folio.dev/created-ms";
/** An idempotency key whose first request is younger than this may still be creating its job. */
const IDEMPOTENCY_CREATING_MS = 60_000;

export interface KubernetesBackendDeps {
  db: Db;
  store: ObjectStore;
  kube: PdfJobApi;
  tenants: TenantStore;
  log: Logger;
  uploadTtlMs: number;
  /** The PdfJob's deadline (activeDeadlineSeconds of its Job). */
  deadlineSeconds: number;
  sweepIntervalMs: number;
  now?: () => number;
  /** How often waitFor re-reads a job. */
  pollMs?: number;
}

const ended = (pj: PdfJob): boolean => TERMINAL_PHASES.includes(pj.status?.phase ?? "Pending");
const tenantSelector = (tenantId: string): string => `${LABELS.tenant}=${tenantId}`;

export class KubernetesBackend implements JobBackend {
  readonly #d: KubernetesBackendDeps;
  readonly #files: FileStore;
  readonly #now: () => number;
  #sweeper: NodeJS.Timeout | null = null;

  constructor(deps: KubernetesBackendDeps) {
    this.#d = deps;
    this.#files = new FileStore(deps.db);
    this.#now = deps.now ?? Date.now;
  }

  // --- files ---------------------------------------------------------------------------------

  newUploadKey(tenantId: string): string {
    return `${tenantId}/${newId("file")}`;
  }

  async deleteUploadedObjects(keys: string[]): Promise<void> {
    await Promise.all(keys.map((k) => this.#d.store.delete(k)));
  }

  addUploads(tenantId: string, parts: UploadedPart[]): Promise<FileObject[]> {
    return Promise.resolve(this.#files.addUploads(tenantId, parts, this.#now(), this.#d.uploadTtlMs));
  }

  async getFile(tenantId: string, id: string): Promise<FileObject | null> {
    const upload = await this.#upload(tenantId, id);
    if (upload) return fileObject(upload);
    return (await this.#output(tenantId, id))?.file ?? null;
  }

  async openFile(tenantId: string, id: string): Promise<FileContent | null> {
    const upload = await this.#upload(tenantId, id);
    if (upload) return { file: fileObject(upload), body: await this.#d.store.get(upload.storage_key) };
    const output = await this.#output(tenantId, id);
    return output ? { file: output.file, body: await this.#d.store.get(output.key) } : null;
  }

  async deleteFile(tenantId: string, id: string): Promise<boolean> {
    const upload = await this.#upload(tenantId, id);
    if (upload) {
      this.#files.delete(upload.id);
      await this.#d.store.delete(upload.storage_key);
      return true;
    }
    // The record first (guarded by resourceVersion, so concurrent deletes of one job's outputs
    // all land), then the bytes: a failure in between leaves bytes nobody lists, never a listed
    // file without bytes. The controller deletes the job's whole prefix at expiry anyway.
    for (;;) {
      const output = await this.#output(tenantId, id);
      if (!output) return false;
      const prior = output.pj.metadata.annotations?.[DELETED_OUTPUTS_ANNOTATION];
      if (await this.#d.kube.annotate(output.pj, { [DELETED_OUTPUTS_ANNOTATION]: prior ? `${prior},${id}` : id })) {
        await this.#d.store.delete(output.key);
        return true;
      }
    }
  }

  /** A tenant's upload record; one claimed by a job that has ended (or gone) is dropped here. */
  async #upload(tenantId: string, id: string): Promise<FileRow | null> {
    const row = this.#files.get(tenantId, id, this.#now());
    if (!row || row.role !== "upload") return null;
    if (row.job_id === null) return row;
    const pj = await this.#pdfJob(tenantId, row.job_id);
    if (pj && !ended(pj)) return row;
    this.#files.delete(row.id);
    return null;
  }

  /** An output of one of the tenant's live, succeeded jobs. */
  async #output(tenantId: string, id: string): Promise<{ pj: PdfJob; key: string; file: FileObject } | null> {
    if (!ID_PATTERN("file").test(id)) return null;
    for (const pj of await this.#d.kube.list(tenantSelector(tenantId))) {
      if (pj.metadata.deletionTimestamp || pj.spec.tenant !== tenantId || pj.status?.phase !== "Succeeded") continue;
      const output = pj.status.outputs?.find((o) => fileIdFromKey(o.key) === id);
      if (!output) continue;
      const file = this.#view(pj).result?.files.find((f) => f.id === id);
      if (!file || (file.expires_at && Date.parse(file.expires_at) <= this.#now())) return null;
      const { download_url: _u, ...rest } = file;
      return { pj, key: output.key, file: rest };
    }
    return null;
  }

  // --- jobs ----------------------------------------------------------------------------------

  /** The API's view of a PdfJob: pdfJobToApiJob, minus the outputs the client deleted. */
  #view(pj: PdfJob): JobObject {
    const job = pdfJobToApiJob(pj);
    const deleted = pj.metadata.annotations?.[DELETED_OUTPUTS_ANNOTATION]?.split(",") ?? [];
    if (!job.result || deleted.length === 0) return job;
    return { ...job, result: { ...job.result, files: job.result.files.filter((f) => !deleted.includes(f.id)) } };
  }

  /** The tenant's PdfJob for a job id; null when absent, another tenant's, or being deleted. */
  async #pdfJob(tenantId: string, jobId: string): Promise<PdfJob | null> {
    if (!ID_PATTERN("job").test(jobId)) return null;
    const pj = await this.#d.kube.get(pdfJobName(jobId));
    if (!pj || pj.metadata.deletionTimestamp || pj.spec.tenant !== tenantId) return null;
    return pj;
  }

  async replay(req: IdempotentRequest): Promise<ReplayResult | null> {
    const prior = sql(this.#d.db, "SELECT request_hash, job_id FROM idempotency WHERE tenant_id = ? AND key = ? AND created_at > ?").get(
      req.tenantId,
      req.key,
      this.#now() - IDEMPOTENCY_TTL_MS,
    ) as { request_hash: string; job_id: string } | undefined;
    const answer: IdempotencyAnswer = !prior
      ? { kind: "free" }
      : prior.request_hash === req.hash
        ? { kind: "replay", jobId: prior.job_id }
        : { kind: "conflict" };
    return replayResult(answer, (id) => this.getJob(req.tenantId, id));
  }

  async submit(nj: NewJob, idem: { key: string; hash: string } | null): Promise<SubmitResult> {
    const jobId = newId("job");
    if ((await this.countUnfinished(nj.tenantId)) >= nj.maxUnfinished) return { kind: "too_many_jobs" };
    if (idem) {
      const prior = await this.#takeIdempotencyKey(nj.tenantId, idem, jobId);
      if (prior === "conflict") return { kind: "idempotency_conflict" };
      if (prior) return { kind: "replayed", job: this.#view(prior) };
    }
    let pj: PdfJob;
    let inputs: PdfJobInput[];
    try {
      const found = await this.#inputs(nj);
      if (typeof found === "number") return this.#abandon(nj.tenantId, idem, jobId, { kind: "unknown_file", index: found });
      inputs = found;
      pj = await this.#create(nj, jobId, inputs);
    } catch (err) {
      this.#abandon(nj.tenantId, idem, jobId, null);
      throw err;
    }
    // The job exists from here on: its idempotency key stays taken whatever happens next.
    this.#files.claim(
      inputs.map((i) => i.fileId),
      jobId,
    );
    return { kind: "created", job: this.#view(pj) };
  }

  /** The job's inputs from the tenant's uploads; the index of the first unknown one instead. */
  async #inputs(nj: NewJob): Promise<PdfJobInput[] | number> {
    const inputs: PdfJobInput[] = [];
    for (const [index, i] of nj.inputs.entries()) {
      const f = await this.#upload(nj.tenantId, i.file_id);
      if (!f) return index;
      inputs.push({
        key: f.storage_key,
        fileId: f.id,
        filename: f.filename,
        contentType: f.content_type,
        size: f.size,
        sha256: f.sha256,
        ...(f.pages === null ? {} : { pageCount: f.pages }),
        ...(i.page_spec ? { pages: i.page_spec } : {}),
      });
    }
    return inputs;
  }

  /**
   * Takes the idempotency key for `jobId`; answers the job of an earlier request with the same
   * key (waiting while that request may still be creating it), or "conflict" for another request.
   * Every write is a single conditional statement, so of any number of concurrent identical
   * requests exactly one creates the job.
   */
  async #takeIdempotencyKey(tenantId: string, idem: { key: string; hash: string }, jobId: string): Promise<PdfJob | "conflict" | null> {
    for (;;) {
      const now = this.#now();
      sql(this.#d.db, "DELETE FROM idempotency WHERE tenant_id = ? AND key = ? AND created_at <= ?").run(
        tenantId,
        idem.key,
        now - IDEMPOTENCY_TTL_MS,
      );
      const taken = sql(
        this.#d.db,
        "INSERT OR IGNORE INTO idempotency (tenant_id, key, request_hash, job_id, created_at) VALUES (?, ?, ?, ?, ?)",
      ).run(tenantId, idem.key, idem.hash, jobId, now);
      if (taken.changes === 1) return null;
      const prior = sql(this.#d.db, "SELECT request_hash, job_id, created_at FROM idempotency WHERE tenant_id = ? AND key = ?").get(
        tenantId,
        idem.key,
      ) as { request_hash: string; job_id: string; created_at: number } | undefined;
      if (!prior) continue; // freed in between: take it
      if (prior.request_hash !== idem.hash) return "conflict";
      const pj = await this.#pdfJob(tenantId, prior.job_id);
      if (pj) return pj;
      if (now - prior.created_at < IDEMPOTENCY_CREATING_MS) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      // The first request's job is gone (deleted, or never made): take the key over, unless
      // another request did so first.
      const over = sql(this.#d.db, "UPDATE idempotency SET job_id = ?, created_at = ? WHERE tenant_id = ? AND key = ? AND job_id = ?").run(
        jobId,
        now,
        tenantId,
        idem.key,
        prior.job_id,
      );
      if (over.changes === 1) return null;
    }
  }

  /** Frees the idempotency key this request took (for `jobId`) but did not use. */
  #abandon<T>(tenantId: string, idem: { key: string } | null, jobId: string, result: T): T {
    if (idem) sql(this.#d.db, "DELETE FROM idempotency WHERE tenant_id = ? AND key = ? AND job_id = ?").run(tenantId, idem.key, jobId);
    return result;
  }

  /** The PdfJob, then (when the job has secrets) the Secret it owns. */
  async #create(nj: NewJob, jobId: string, inputs: PdfJobInput[]): Promise<PdfJob> {
    const name = pdfJobName(jobId);
    const labels = { [LABELS.tenant]: nj.tenantId, [LABELS.jobId]: jobId, [LABELS.managedBy]: MANAGED_BY };
    const secrets = this.#secretData(nj);
    const spec: PdfJobSpec = {
      tenant: nj.tenantId,
      operation: nj.operation,
      inputs,
      options: redactOptions(nj.operation, nj.options),
      ...(secrets ? { secretRef: { name } } : {}),
      ...(nj.webhookUrl ? { webhook: { url: nj.webhookUrl } } : {}),
      deadlineSeconds: this.#d.deadlineSeconds,
      retentionSeconds: Math.max(1, Math.round(nj.retentionMs / 1000)),
      ...(nj.outputFilename ? { outputFilename: nj.outputFilename } : {}),
      ...(Object.keys(nj.metadata).length ? { metadata: nj.metadata } : {}),
    };
    const annotations = { [CREATED_MS_ANNOTATION]: String(this.#now()) };
    const pj = await this.#d.kube.create({ name, labels, annotations, finalizers: [PDFJOB_FINALIZER] }, spec);
    if (secrets) {
      try {
        await this.#d.kube.createOwnedSecret(pj, labels, secrets);
      } catch (err) {
        // A job without its passwords or signing secrets must not run: take it back.
        await this.#d.kube.delete(name).catch(() => undefined);
        throw err;
      }
    }
    return pj;
  }

  /** What the job's Secret holds: the protect passwords and the webhook signing secrets, if any. */
  #secretData(nj: NewJob): Record<string, string> | null {
    const data: Record<string, string> = {};
    for (const k of SECRET_OPTION_KEYS) {
      const v = nj.options[k];
      if (typeof v === "string") data[k] = v;
    }
    if (nj.webhookUrl) {
      const tenant = this.#d.tenants.byId(nj.tenantId);
      if (tenant) data[WEBHOOK_SECRETS_KEY] = this.#d.tenants.signingSecrets(tenant, this.#now()).join("\n");
    }
    return Object.keys(data).length ? data : null;
  }

  async getJob(tenantId: string, id: string): Promise<JobObject | null> {
    const pj = await this.#pdfJob(tenantId, id);
    return pj ? this.#view(pj) : null;
  }

  /** The tenant's live PdfJobs. */
  async #tenantJobs(tenantId: string): Promise<PdfJob[]> {
    return (await this.#d.kube.list(tenantSelector(tenantId))).filter(
      (pj) => !pj.metadata.deletionTimestamp && pj.spec.tenant === tenantId,
    );
  }

  async listJobs(tenantId: string, q: JobListQuery): Promise<{ data: JobObject[]; has_more: boolean }> {
    // Newest first, to the millisecond, ties broken by id (the embedded store's order).
    const created = (pj: PdfJob): number =>
      Number(pj.metadata.annotations?.[CREATED_MS_ANNOTATION]) || Date.parse(pj.metadata.creationTimestamp ?? "") || 0;
    const sorted = (await this.#tenantJobs(tenantId)).sort((a, b) => created(b) - created(a) || jobIdOf(b).localeCompare(jobIdOf(a)));
    let jobs = sorted.map((pj) => this.#view(pj));
    if (q.startingAfter) {
      const at = jobs.findIndex((j) => j.id === q.startingAfter);
      jobs = at < 0 ? [] : jobs.slice(at + 1);
    }
    const matching = jobs.filter((j) => (!q.status || j.status === q.status) && (!q.operation || j.operation === q.operation));
    return { data: matching.slice(0, q.limit), has_more: matching.length > q.limit };
  }

  /**
   * The storage quota's measure: unused uploads, inputs of unfinished jobs (the controller deletes
   * them when the job ends), and the outputs of live jobs, minus those the client deleted.
   */
  async storedBytes(tenantId: string): Promise<number> {
    const now = this.#now();
    const jobs = await this.#tenantJobs(tenantId);
    const unfinished = new Set(jobs.filter((pj) => !ended(pj)).map(jobIdOf));
    const uploads = sql(
      this.#d.db,
      "SELECT job_id, COALESCE(SUM(size), 0) AS n FROM files WHERE tenant_id = ? AND role = 'upload' AND (expires_at IS NULL OR expires_at > ?) GROUP BY job_id",
    ).all(tenantId, now) as { job_id: string | null; n: number }[];
    let bytes = 0;
    for (const u of uploads) if (u.job_id === null || unfinished.has(u.job_id)) bytes += Number(u.n);
    for (const pj of jobs) {
      for (const f of this.#view(pj).result?.files ?? []) if (!f.expires_at || Date.parse(f.expires_at) > now) bytes += f.size;
    }
    return bytes;
  }

  async countUnfinished(tenantId: string): Promise<number> {
    return (await this.#tenantJobs(tenantId)).filter((pj) => !ended(pj)).length;
  }

  /** Deletes the PdfJob; the controller cancels its Job, sends `job.canceled`, and deletes the bytes. */
  async deleteJob(tenantId: string, id: string): Promise<boolean> {
    const pj = await this.#pdfJob(tenantId, id);
    if (!pj) return false;
    if (!(await this.#d.kube.delete(pj.metadata.name))) return false;
    sql(this.#d.db, "DELETE FROM files WHERE job_id = ? AND tenant_id = ?").run(id, tenantId);
    return true;
  }

  async waitFor(tenantId: string, id: string, ms: number): Promise<JobObject | null> {
    const deadline = this.#now() + ms;
    for (;;) {
      const pj = await this.#pdfJob(tenantId, id);
      if (!pj || ended(pj) || this.#now() >= deadline) return pj ? this.#view(pj) : null;
      await new Promise((r) => setTimeout(r, Math.min(this.#d.pollMs ?? 250, deadline - this.#now())));
    }
  }

  // --- lifecycle -----------------------------------------------------------------------------

  /**
   * Deletes uploads no job used once they expire (records and bytes), the records of uploads
   * whose job has ended or gone (the controller deleted their bytes), and old idempotency keys.
   */
  async sweep(): Promise<number> {
    const now = this.#now();
    sql(this.#d.db, "DELETE FROM idempotency WHERE created_at <= ?").run(now - IDEMPOTENCY_TTL_MS);
    let n = 0;
    for (const f of this.#files.expired(now)) {
      await this.#d.store.delete(f.storage_key);
      this.#files.delete(f.id);
      n++;
    }
    const claimed = sql(
      this.#d.db,
      "SELECT DISTINCT tenant_id, job_id FROM files WHERE job_id IS NOT NULL AND role = 'upload' AND created_at <= ? LIMIT 200",
    ).all(now - 60_000) as {
      tenant_id: string;
      job_id: string;
    }[];
    for (const { tenant_id, job_id } of claimed) {
      const pj = await this.#pdfJob(tenant_id, job_id);
      if (pj && !ended(pj)) continue;
      n += Number(
        sql(this.#d.db, "DELETE FROM files WHERE job_id = ? AND tenant_id = ? AND role = 'upload'").run(job_id, tenant_id).changes,
      );
    }
    return n;
  }

  start(): void {
    this.#sweeper = setInterval(() => {
      this.sweep().catch((err: unknown) => this.#d.log.error({ err }, "Upload sweep failed"));
    }, this.#d.sweepIntervalMs);
    this.#sweeper.unref();
  }

  stop(): Promise<void> {
    if (this.#sweeper) clearInterval(this.#sweeper);
    return Promise.resolve();
  }

  async ready(): Promise<boolean> {
    try {
      sql(this.#d.db, "SELECT 1").get();
      return (await this.#d.kube.ready()) && (await this.#d.store.ready());
    } catch {
      return false;
    }
  }
}
