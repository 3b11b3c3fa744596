/**
 * What the HTTP routes need from a job backend. Embedded mode implements it over SQLite, the
 * local disk and the runner worker pool (local.ts); Kubernetes mode over PdfJob resources and S3.
 */
import type { Readable } from "node:stream";
import type { FileObject, JobObject, JobStatus } from "../../core/schemas/api.ts";
import type { Operation } from "../../core/schemas/options.ts";
import type { UploadedPart } from "../http/uploads.ts";
import type { IdempotencyAnswer, IdempotentRequest } from "../store/idempotency.ts";

export { IDEMPOTENCY_TTL_MS } from "../store/idempotency.ts";

export interface NewJobInput {
  file_id: string;
  page_spec?: string;
}

export interface NewJob {
  tenantId: string;
  operation: Operation;
  inputs: NewJobInput[];
  /** Validated options, secrets included; the backend keeps secrets out of job records. */
  options: Record<string, unknown>;
  outputFilename: string | null;
  webhookUrl: string | null;
  metadata: Record<string, string>;
  retentionMs: number;
  /** The tenant's cap of unfinished jobs (API.md "Limits"): checked atomically with the creation. */
  maxUnfinished: number;
}

export type SubmitResult =
  | { kind: "created"; job: JobObject }
  | { kind: "replayed"; job: JobObject }
  | { kind: "idempotency_conflict" }
  | { kind: "unknown_file"; index: number }
  | { kind: "too_many_jobs" }
  /** The key's job was deleted since (by the client, or when its retention ended). */
  | { kind: "replayed_gone"; jobId: string };

/** What a used Idempotency-Key answers. */
export type ReplayResult = Extract<SubmitResult, { kind: "replayed" | "replayed_gone" | "idempotency_conflict" }>;

/** A key's answer as a submission result (null: the key is free); `job` reads the key's job as it is now. */
export async function replayResult(
  answer: IdempotencyAnswer,
  job: (id: string) => Promise<JobObject | null>,
): Promise<ReplayResult | null> {
  if (answer.kind === "free") return null;
  if (answer.kind === "conflict") return { kind: "idempotency_conflict" };
  const now = await job(answer.jobId);
  return now ? { kind: "replayed", job: now } : { kind: "replayed_gone", jobId: answer.jobId };
}

export interface JobListQuery {
  status?: JobStatus;
  operation?: Operation;
  limit: number;
  startingAfter?: string;
}

export interface FileContent {
  file: FileObject;
  body: Readable;
}

export interface JobBackend {
  /** Registers uploaded parts as the tenant's files (role upload, expiring if unused). */
  addUploads(tenantId: string, parts: UploadedPart[]): Promise<FileObject[]>;
  getFile(tenantId: string, id: string): Promise<FileObject | null>;
  openFile(tenantId: string, id: string): Promise<FileContent | null>;
  deleteFile(tenantId: string, id: string): Promise<boolean>;
  /** A storage key for a new upload of this tenant. */
  newUploadKey(tenantId: string): string;
  deleteUploadedObjects(keys: string[]): Promise<void>;

  /**
   * What an Idempotency-Key says about a request, looked up before anything else of it is checked
   * (api/store/idempotency.ts): free, the job of an identical request (as it is now), or conflict.
   * `fresh`: first catch up with every write made before now (a store read through a cache).
   */
  replay(req: IdempotentRequest, opts?: { fresh?: boolean }): Promise<ReplayResult | null>;
  /** Creates the job — unless the tenant is at its cap, or the key (when given) already has one. */
  submit(job: NewJob, idempotency: { key: string; hash: string } | null): Promise<SubmitResult>;
  getJob(tenantId: string, id: string): Promise<JobObject | null>;
  listJobs(tenantId: string, q: JobListQuery): Promise<{ data: JobObject[]; has_more: boolean }>;
  /** Cancels an unfinished job and purges its inputs, outputs and record. */
  deleteJob(tenantId: string, id: string): Promise<boolean>;
  /** Resolves when the job has ended or `ms` have passed, with the job as it is then. */
  waitFor(tenantId: string, id: string, ms: number): Promise<JobObject | null>;
  countUnfinished(tenantId: string): Promise<number>;
  /** Bytes the tenant has stored now: uploads plus outputs not yet expired (the storage quota). */
  storedBytes(tenantId: string): Promise<number>;

  ready(): Promise<boolean>;
  start(): void;
  stop(): Promise<void>;
}
