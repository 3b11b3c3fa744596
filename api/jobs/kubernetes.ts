/**
 * The Kubernetes job backend (ARCHITECTURE.md): the same public API as embedded mode, with
 * PdfJob resources as the job store and S3 for the bytes. The controller runs the jobs; this side
 * creates, reads and deletes PdfJobs, and `core/` (pdfjob-view.ts, schemas/pdfjob.ts, schemas/storage-keys.ts) is the whole
 * of what the two agree on. The API process keeps no state of its own (docs/adr/0008), so any
 * number of replicas serve behind a Service and any of them can die at any time:
 *
 * - jobs: PdfJobs, read from this replica's informer cache (api/store/kubernetes/pdfjob-cache.ts):
 *   reads cost the apiserver nothing; an id the cache does not know costs one small list (it may
 *   have been created through another replica a moment ago);
 * - the unfinished-jobs cap: judged by the creating replica's cache at the moment it first shows
 *   the new PdfJob (exact across replicas; see pdfjob-cache.ts); over it, the PdfJob is taken back;
 * - idempotency keys: the PdfJob's name (api/store/kubernetes/idempotency.ts);
 * - uploads: S3 objects whose metadata is their record (api/store/kubernetes/uploads.ts); the
 *   controller deletes a job's inputs when it ends and sweeps expired uploads;
 * - outputs: in the PdfJob's status; their file ids are derived from their keys and indexed by
 *   the cache. A deleted output is listed in an annotation;
 * - protect passwords and the tenant's webhook signing secrets (snapshotted at creation): a Secret
 *   created right after the PdfJob and owned by it from the start (spec.secretRef).
 *
 * A PdfJob being deleted, or taken back (annotated rejected), is gone as far as the API is concerned.
 */
import { newId, ID_PATTERN } from "../../core/ids.ts";
import type { Logger } from "../../core/logger.ts";
import { jobIdOf, pdfJobToApiJob } from "../../core/pdfjob-view.ts";
import type { FileObject, JobObject } from "../../core/schemas/api.ts";
import {
  LABELS,
  MANAGED_BY,
  PDFJOB_ANNOTATIONS,
  PDFJOB_FINALIZER,
  pdfJobName,
  SECRET_OPTION_KEYS,
  WEBHOOK_SECRETS_KEY,
  type PdfJob,
  type PdfJobInput,
  type PdfJobSpec,
} from "../../core/schemas/pdfjob.ts";
import { fileIdFromKey, outputTag, outputTagOf } from "../../core/schemas/storage-keys.ts";
import { redactOptions } from "../../core/schemas/options.ts";
import type { ListedObject } from "../../core/storage/s3-store.ts";
import type { ObjectStore } from "../../core/storage/store.ts";
import { parseUploadKey } from "../../core/storage/upload-record.ts";
import type { UploadedPart } from "../http/uploads.ts";
import { Declined, type IdempotentRequest } from "../store/idempotency.ts";
import type { KubernetesIdempotencyStore, PdfJobClaim } from "../store/kubernetes/idempotency.ts";
import { awaitsSecret, ended, live, type PdfJobCache } from "../store/kubernetes/pdfjob-cache.ts";
import { fileObjectOf, S3Uploads, type MetadataStore } from "../store/kubernetes/uploads.ts";
import {
  replayResult,
  type FileContent,
  type JobBackend,
  type JobListQuery,
  type NewJob,
  type ReplayResult,
  type SubmitResult,
} from "./backend.ts";
import { isStatus, type PdfJobClient } from "./pdfjob-client.ts";

/** The tenant's webhook signing secrets now (the current one, and the previous during a rotation). */
export type SigningSecrets = (tenantId: string, now: number) => string[];

export interface KubernetesBackendDeps {
  store: ObjectStore & MetadataStore & { list(prefix: string, delimiter?: string): AsyncIterable<{ objects: ListedObject[] }> };
  kube: PdfJobClient;
  cache: PdfJobCache;
  idempotency: KubernetesIdempotencyStore;
  signingSecrets: SigningSecrets;
  log: Logger;
  uploadTtlMs: number;
  /** The PdfJob's deadline (activeDeadlineSeconds of its Job). */
  deadlineSeconds: number;
  /** How long a creation waits for this replica's cache to show the new PdfJob (default 10 s). */
  admissionTimeoutMs?: number;
  now?: () => number;
}

export class KubernetesBackend implements JobBackend {
  readonly #d: KubernetesBackendDeps;
  readonly #uploads: S3Uploads;
  readonly #now: () => number;

  constructor(deps: KubernetesBackendDeps) {
    this.#d = deps;
    this.#now = deps.now ?? Date.now;
    this.#uploads = new S3Uploads(deps.store, deps.uploadTtlMs, this.#now);
  }

  get #ns(): string {
    return this.#d.kube.namespace;
  }

  // --- files ---------------------------------------------------------------------------------

  newUploadKey(tenantId: string): string {
    return `${tenantId}/${newId("file")}`;
  }

  async deleteUploadedObjects(keys: string[]): Promise<void> {
    await Promise.all(keys.map((k) => this.#d.store.delete(k)));
  }

  addUploads(tenantId: string, parts: UploadedPart[]): Promise<FileObject[]> {
    return this.#uploads.add(tenantId, parts);
  }

  async getFile(tenantId: string, id: string): Promise<FileObject | null> {
    const found = await this.#file(tenantId, id);
    return found?.file ?? null;
  }

  async openFile(tenantId: string, id: string): Promise<FileContent | null> {
    const found = await this.#file(tenantId, id);
    return found ? { file: found.file, body: await this.#d.store.get(found.key) } : null;
  }

  /** An output from the cache, else an upload from S3, else — the cache may lag — an output read through. */
  async #file(tenantId: string, id: string): Promise<{ file: FileObject; key: string } | null> {
    if (!ID_PATTERN("file").test(id)) return null;
    const cached = this.#output(tenantId, id);
    if (cached) return cached;
    const upload = await this.#uploads.get(tenantId, id);
    if (upload) return { file: fileObjectOf(upload), key: `${tenantId}/${id}` };
    return this.#outputReadThrough(tenantId, id);
  }

  /** An output the cache does not know yet: its PdfJob by the output tag label (one list). */
  async #outputReadThrough(tenantId: string, id: string): Promise<{ pj: PdfJob; key: string; file: FileObject } | null> {
    const selector = `${LABELS.tenant}=${tenantId},${LABELS.outputTag}=${outputTagOf(id)}`;
    for (const pj of await this.#d.kube.listByLabel(selector)) {
      const found = live(pj) ? this.#outputOf(pj, tenantId, id) : null;
      if (found) return found;
    }
    return null;
  }

  async deleteFile(tenantId: string, id: string): Promise<boolean> {
    if (await this.#uploads.delete(tenantId, id)) return true;
    // The record first (guarded by resourceVersion, so concurrent deletes of one job's outputs
    // all land), then the bytes: a failure in between leaves bytes nobody lists, never a listed
    // file without bytes. The controller deletes the job's whole prefix at expiry anyway.
    let output = this.#output(tenantId, id) ?? (await this.#outputReadThrough(tenantId, id));
    while (output) {
      const prior = output.pj.metadata.annotations?.[PDFJOB_ANNOTATIONS.deletedOutputs];
      if (await this.#d.kube.annotate(output.pj, { [PDFJOB_ANNOTATIONS.deletedOutputs]: prior ? `${prior},${id}` : id })) {
        await this.#d.store.delete(output.key);
        return true;
      }
      // Changed since the cache saw it: read it as it is now.
      const now = await this.#d.kube.get(output.pj.metadata.name);
      output = now ? this.#outputOf(now, tenantId, id) : null;
    }
    return false;
  }

  /** An output of one of the tenant's live, succeeded jobs, from the cache. */
  #output(tenantId: string, id: string): { pj: PdfJob; key: string; file: FileObject } | null {
    const pj = this.#d.cache.byOutput(id);
    return pj ? this.#outputOf(pj, tenantId, id) : null;
  }

  #outputOf(pj: PdfJob, tenantId: string, id: string): { pj: PdfJob; key: string; file: FileObject } | null {
    if (pj.metadata.deletionTimestamp || pj.spec.tenant !== tenantId || pj.status?.phase !== "Succeeded") return null;
    const output = pj.status.outputs?.find((o) => fileIdFromKey(o.key) === id);
    const file = this.#view(pj).result?.files.find((f) => f.id === id);
    if (!output || !file || (file.expires_at && Date.parse(file.expires_at) <= this.#now())) return null;
    const { download_url: _u, ...rest } = file;
    return { pj, key: output.key, file: rest };
  }

  // --- jobs ----------------------------------------------------------------------------------

  /** The API's view of a PdfJob: pdfJobToApiJob, minus the outputs the client deleted. */
  #view(pj: PdfJob): JobObject {
    const job = pdfJobToApiJob(pj);
    const deleted = pj.metadata.annotations?.[PDFJOB_ANNOTATIONS.deletedOutputs]?.split(",") ?? [];
    if (!job.result || deleted.length === 0) return job;
    return { ...job, result: { ...job.result, files: job.result.files.filter((f) => !deleted.includes(f.id)) } };
  }

  /**
   * The tenant's live PdfJob for a job id: from the cache, else read through (one list by the
   * job-id label) — the job may have been created through another replica a moment ago.
   */
  async #pdfJob(tenantId: string, jobId: string): Promise<PdfJob | null> {
    if (!ID_PATTERN("job").test(jobId)) return null;
    const pj =
      this.#d.cache.byJobId(jobId) ?? (await this.#d.kube.listByLabel(`${LABELS.tenant}=${tenantId},${LABELS.jobId}=${jobId}`)).find(live);
    return pj && pj.spec.tenant === tenantId ? pj : null;
  }

  /**
   * A retry's answer before its body is read. A job whose creating replica stopped before it wrote
   * the job's Secret (see `#completeSecret`) is not answered here: the retry then goes on to
   * `submit`, which has the request and writes the Secret.
   */
  async replay(req: IdempotentRequest, opts: { fresh?: boolean } = {}): Promise<ReplayResult | null> {
    const answer = opts.fresh ? await this.#d.idempotency.replayReadThrough(req) : await this.#d.idempotency.replay(req);
    if (answer.kind === "replay") {
      const pj = await this.#pdfJob(req.tenantId, answer.jobId);
      if (pj && awaitsSecret(pj) && !(await this.#d.kube.secretExists(pj.spec.secretRef!.name))) return null;
    }
    return replayResult(answer, (id) => this.getJob(req.tenantId, id));
  }

  /**
   * A retry of a request whose job exists: the first request's replica may have stopped (a
   * SIGKILL, a rolling restart) between creating the PdfJob and its Secret. The retry carries the
   * same request (same hash), so it writes the Secret the job waits for (409: it was there). The
   * controller starts no such job without its Secret, and fails it if none comes
   * (controller/decide.ts SECRET_WAIT_MS).
   */
  async #completeSecret(nj: NewJob, jobId: string): Promise<void> {
    const pj = await this.#pdfJob(nj.tenantId, jobId);
    const data = pj && awaitsSecret(pj) ? this.#secretData(nj) : null;
    if (!pj || !data) return;
    try {
      await this.#d.kube.createOwnedSecret(pj, this.#labels(nj, jobId), data);
    } catch (err) {
      if (!isStatus(err, 409)) throw err;
    }
  }

  async submit(nj: NewJob, idem: { key: string; hash: string } | null): Promise<SubmitResult> {
    try {
      if (!idem) {
        const jobId = newId("job");
        return await this.#create(nj, { jobId, name: pdfJobName(jobId), annotations: {} });
      }
      const taken = await this.#d.idempotency.take({ tenantId: nj.tenantId, ...idem }, (claim) => this.#create(nj, claim));
      if (taken.kind === "created") return taken.value;
      if (taken.kind === "replay") await this.#completeSecret(nj, taken.jobId);
      return (await replayResult(taken, (id) => this.getJob(nj.tenantId, id)))!;
    } catch (err) {
      if (err instanceof Declined) return err.answer as SubmitResult;
      throw err;
    }
  }

  /**
   * Creates the PdfJob (and its Secret) under `claim`, admitted under the tenant's cap by this
   * replica's cache; throws Declined (too_many_jobs, unknown_file) when it makes no job.
   */
  async #create(nj: NewJob, claim: PdfJobClaim): Promise<SubmitResult> {
    // Cheap refusals first: no write for a tenant already at its cap or an unknown input.
    if (this.#d.cache.unfinished(nj.tenantId) >= nj.maxUnfinished) throw new Declined({ kind: "too_many_jobs" });
    const inputs = await this.#inputs(nj);
    const expected = this.#d.cache.expectCreation(claim.name, nj.tenantId, nj.maxUnfinished, this.#d.admissionTimeoutMs ?? 10_000);
    let pj: PdfJob;
    try {
      pj = await this.#d.kube.create(this.#metadata(nj, claim), this.#spec(nj, claim, inputs));
    } catch (err) {
      expected.cancel();
      throw err;
    }
    const admission = await expected.admission;
    if (admission !== "admitted") {
      await this.#d.kube.reject(claim.name, admission === "rejected" ? "too_many_jobs" : "unseen");
      if (admission === "rejected") throw new Declined({ kind: "too_many_jobs" });
      throw new Error(`PdfJob ${claim.name} did not reach this replica's cache in time`);
    }
    const secrets = this.#secretData(nj);
    if (secrets) {
      try {
        await this.#d.kube.createOwnedSecret(pj, this.#labels(nj, claim.jobId), secrets);
      } catch (err) {
        // A job without its passwords or signing secrets must not run: take it back.
        await this.#d.kube.reject(claim.name, "secret_failed").catch(() => undefined);
        throw err;
      }
    }
    return { kind: "created", job: this.#view(this.#d.cache.byName(claim.name, this.#ns) ?? pj) };
  }

  /** The job's inputs from the tenant's uploads; Declined (unknown_file) for the first that is not one. */
  async #inputs(nj: NewJob): Promise<PdfJobInput[]> {
    return Promise.all(
      nj.inputs.map(async (i, index) => {
        const f = await this.#uploads.get(nj.tenantId, i.file_id);
        if (!f) throw new Declined({ kind: "unknown_file", index });
        return {
          key: `${nj.tenantId}/${f.id}`,
          fileId: f.id,
          filename: f.filename,
          contentType: f.contentType,
          size: f.size,
          sha256: f.sha256,
          ...(f.pages === null ? {} : { pageCount: f.pages }),
          ...(i.page_spec ? { pages: i.page_spec } : {}),
        };
      }),
    );
  }

  #labels(nj: NewJob, jobId: string): Record<string, string> {
    return {
      [LABELS.tenant]: nj.tenantId,
      [LABELS.jobId]: jobId,
      [LABELS.outputTag]: outputTag(jobId),
      [LABELS.managedBy]: MANAGED_BY,
    };
  }

  #metadata(nj: NewJob, claim: PdfJobClaim): PdfJob["metadata"] {
    return {
      name: claim.name,
      labels: this.#labels(nj, claim.jobId),
      annotations: { [PDFJOB_ANNOTATIONS.createdMs]: String(this.#now()), ...claim.annotations },
      finalizers: [PDFJOB_FINALIZER],
    };
  }

  #spec(nj: NewJob, claim: PdfJobClaim, inputs: PdfJobInput[]): PdfJobSpec {
    const hasSecret = this.#secretData(nj) !== null;
    return {
      tenant: nj.tenantId,
      operation: nj.operation,
      inputs,
      options: redactOptions(nj.operation, nj.options),
      ...(hasSecret ? { secretRef: { name: claim.name } } : {}),
      ...(nj.webhookUrl ? { webhook: { url: nj.webhookUrl } } : {}),
      deadlineSeconds: this.#d.deadlineSeconds,
      retentionSeconds: Math.max(1, Math.round(nj.retentionMs / 1000)),
      ...(nj.outputFilename ? { outputFilename: nj.outputFilename } : {}),
      ...(Object.keys(nj.metadata).length ? { metadata: nj.metadata } : {}),
    };
  }

  /** What the job's Secret holds: the protect passwords and the webhook signing secrets, if any. */
  #secretData(nj: NewJob): Record<string, string> | null {
    const data: Record<string, string> = {};
    for (const k of SECRET_OPTION_KEYS) {
      const v = nj.options[k];
      if (typeof v === "string") data[k] = v;
    }
    if (nj.webhookUrl) {
      const secrets = this.#d.signingSecrets(nj.tenantId, this.#now());
      if (secrets.length) data[WEBHOOK_SECRETS_KEY] = secrets.join("\n");
    }
    return Object.keys(data).length ? data : null;
  }

  async getJob(tenantId: string, id: string): Promise<JobObject | null> {
    const pj = await this.#pdfJob(tenantId, id);
    return pj ? this.#view(pj) : null;
  }

  listJobs(tenantId: string, q: JobListQuery): Promise<{ data: JobObject[]; has_more: boolean }> {
    // Newest first, to the millisecond, ties broken by id (the embedded store's order).
    const created = (pj: PdfJob): number =>
      Number(pj.metadata.annotations?.[PDFJOB_ANNOTATIONS.createdMs]) || Date.parse(pj.metadata.creationTimestamp ?? "") || 0;
    const sorted = this.#d.cache.byTenant(tenantId).sort((a, b) => created(b) - created(a) || jobIdOf(b).localeCompare(jobIdOf(a)));
    let from = 0;
    if (q.startingAfter) {
      const at = sorted.findIndex((pj) => jobIdOf(pj) === q.startingAfter);
      if (at < 0) return Promise.resolve({ data: [], has_more: false });
      from = at + 1;
    }
    const data: JobObject[] = [];
    let hasMore = false;
    for (const pj of sorted.slice(from)) {
      const job = this.#view(pj);
      if ((q.status && job.status !== q.status) || (q.operation && job.operation !== q.operation)) continue;
      if (data.length === q.limit) {
        hasMore = true;
        break;
      }
      data.push(job);
    }
    return Promise.resolve({ data, has_more: hasMore });
  }

  /**
   * The storage quota's measure: unexpired uploads and the inputs of unfinished jobs (one S3
   * listing of the tenant's prefix; the controller deletes inputs when a job ends), and the
   * outputs of live jobs from the cache, minus those the client deleted.
   */
  async storedBytes(tenantId: string): Promise<number> {
    const now = this.#now();
    const jobs = this.#d.cache.byTenant(tenantId);
    const inUse = new Set(jobs.filter((pj) => !ended(pj)).flatMap((pj) => pj.spec.inputs.map((i) => i.key)));
    let bytes = 0;
    for await (const page of this.#d.store.list(`${tenantId}/`, "/")) {
      for (const o of page.objects) {
        if (parseUploadKey(o.key) && (inUse.has(o.key) || o.lastModified + this.#d.uploadTtlMs > now)) bytes += o.size;
      }
    }
    for (const pj of jobs) {
      for (const f of this.#view(pj).result?.files ?? []) if (!f.expires_at || Date.parse(f.expires_at) > now) bytes += f.size;
    }
    return bytes;
  }

  countUnfinished(tenantId: string): Promise<number> {
    return Promise.resolve(this.#d.cache.unfinished(tenantId));
  }

  /** Deletes the PdfJob; the controller cancels its Job, sends `job.canceled`, and deletes the bytes. */
  async deleteJob(tenantId: string, id: string): Promise<boolean> {
    const pj = await this.#pdfJob(tenantId, id);
    return pj ? this.#d.kube.delete(pj.metadata.name) : false;
  }

  /** Woken by the watch event that ends the job (or after `ms`). */
  async waitFor(tenantId: string, id: string, ms: number): Promise<JobObject | null> {
    const pj = await this.#pdfJob(tenantId, id);
    if (!pj) return null;
    if (!ended(pj)) await this.#d.cache.waitForEnd(pj.metadata.name, this.#ns, ms);
    return this.getJob(tenantId, id);
  }

  // --- lifecycle -----------------------------------------------------------------------------

  /** Nothing runs here: the controller sweeps expired uploads and ends jobs. */
  start(): void {}

  stop(): Promise<void> {
    return Promise.resolve();
  }

  async ready(): Promise<boolean> {
    try {
      return this.#d.cache.hasSynced && (await this.#d.store.ready());
    } catch {
      return false;
    }
  }
}
