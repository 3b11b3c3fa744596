/**
 * The API's Job object (API.md "Jobs") as a pure function of a PdfJob, for the Kubernetes
 * backend; the embedded store derives the same shape from its records (api/store/jobs.ts).
 *
 * - The job id is the PdfJob's name decoded (pdfJobName/jobIdFromPdfJobName).
 * - Output file ids are the last segment of the output's key (the runner stores output `i` at
 *   `{tenant}/{jobId}/{outputFileId(tenant, jobId, i)}`), so they are stable and need no registry;
 *   outputs are created when the job completes and expire with it.
 * - A PdfJob being deleted is gone as far as the API is concerned (the backend answers 404 for
 *   it); this function still describes it, e.g. for the `job.canceled` webhook.
 */
import type { JobObject, JobStatus } from "./schemas/api.ts";
import { jobIdFromPdfJobName, LABELS, type PdfJob, type PdfJobPhase, type PdfJobStatus } from "./schemas/pdfjob.ts";
import { fileIdFromKey } from "./schemas/storage-keys.ts";
import { rfc3339 } from "./time.ts";

const API_STATUS: Readonly<Record<PdfJobPhase, JobStatus>> = {
  Pending: "queued",
  Running: "running",
  Succeeded: "succeeded",
  Failed: "failed",
  Canceled: "canceled",
};

/** An RFC 3339 time as the API shows it (UTC, whole seconds); null when absent or unparsable. */
function apiTime(t: string | undefined): string | null {
  if (t === undefined) return null;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : rfc3339(ms);
}

/** The job id a PdfJob stands for: its name decoded, else its job-id label, else the name itself. */
export function jobIdOf(pj: Pick<PdfJob, "metadata">): string {
  return jobIdFromPdfJobName(pj.metadata.name) ?? pj.metadata.labels?.[LABELS.jobId] ?? pj.metadata.name;
}

function resultOf(pj: PdfJob, status: PdfJobStatus): JobObject["result"] {
  if (status.phase !== "Succeeded") return null;
  const createdAt = apiTime(status.completionTime) ?? apiTime(pj.metadata.creationTimestamp) ?? rfc3339(0);
  const files = (status.outputs ?? []).map((o) => {
    const id = fileIdFromKey(o.key);
    return {
      id,
      object: "file" as const,
      filename: o.filename,
      content_type: o.contentType,
      size: o.size,
      sha256: o.sha256,
      pages: o.pages ?? null,
      created_at: createdAt,
      expires_at: apiTime(status.expireTime),
      download_url: `/v1/files/${id}/content`,
    };
  });
  return { files, ...(status.figures ?? {}) };
}

function webhookOf(pj: PdfJob, status: PdfJobStatus): JobObject["webhook"] {
  const url = pj.spec.webhook?.url;
  if (!url) return null;
  const w = status.webhook;
  return {
    url,
    status: w?.status ?? "pending",
    attempts: w?.attempts ?? 0,
    last_attempt_at: apiTime(w?.lastAttemptTime),
    last_error: w?.lastError ?? null,
  };
}

/** The API's Job object of a PdfJob (API.md "Jobs"); see the module comment. */
export function pdfJobToApiJob(pj: PdfJob): JobObject {
  const status = pj.status ?? {};
  const phase = status.phase ?? "Pending";
  return {
    id: jobIdOf(pj),
    object: "job",
    operation: pj.spec.operation,
    status: API_STATUS[phase],
    created_at: apiTime(pj.metadata.creationTimestamp) ?? rfc3339(0),
    started_at: apiTime(status.startTime),
    completed_at: apiTime(status.completionTime),
    expires_at: apiTime(status.expireTime),
    inputs: pj.spec.inputs.map((i) => ({
      file_id: i.fileId,
      filename: i.filename,
      content_type: i.contentType,
      size: i.size,
      sha256: i.sha256,
      pages: i.pageCount ?? null,
    })),
    options: pj.spec.options,
    result: resultOf(pj, status),
    error:
      phase === "Failed" ? (status.error ?? { code: "internal_error", message: "The job failed because of an internal error." }) : null,
    webhook: webhookOf(pj, status),
    metadata: pj.spec.metadata ?? {},
  };
}
