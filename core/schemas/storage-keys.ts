/**
 * Where a job's files live in the object store, and the ids derived from their places
 * (ARCHITECTURE.md "Storage"): one prefix per job, deterministic output ids, so that a retried
 * runner pod overwrites instead of orphaning and an id needs no registry.
 */
import { derivedChars, derivedId, ID_PATTERN } from "../ids.ts";
import type { RunnerPodSpec } from "./runner-pod.ts";

/** Where a job's outputs (and anything else its runner writes) live: one prefix per job. */
export function jobStoragePrefix(tenant: string, jobId: string): string {
  return `${tenant}/${jobId}/`;
}

/**
 * The tag every output file id of a job starts with (12 base62 characters, ≈71 bits, of the job
 * id), also the PdfJob's folio.dev/output-tag label: an API replica whose cache does not know an
 * output id finds its PdfJob with one label-selected list (docs/adr/0008).
 */
export function outputTag(jobId: string): string {
  return derivedChars(["folio-output-tag", jobId], 12);
}

/** The output tag an output file id carries (its first 12 characters after `file_`). */
export const outputTagOf = (fileId: string): string => fileId.slice(5, 17);

/**
 * The file id of a job's output `index`: deterministic, so that a retried pod overwrites the
 * objects of the failed attempt instead of orphaning them, and the id needs no registry. The job's
 * output tag, then 12 characters of (tenant, job, index).
 */
export function outputFileId(tenant: string, jobId: string, index: number): string {
  return `file_${outputTag(jobId)}${derivedChars(["folio-output", tenant, jobId, String(index)], 12)}`;
}

/**
 * The file id of an output stored at `key`: its last path segment (outputs are stored at
 * `{tenant}/{jobId}/{file id}`); for a key of another shape, an id derived from the key.
 */
export function fileIdFromKey(key: string): string {
  const last = key.slice(key.lastIndexOf("/") + 1);
  return ID_PATTERN("file").test(last) ? last : derivedId("file", ["folio-key", key]);
}

/** Where the runner stores output `index`. */
export function outputKey(spec: Pick<RunnerPodSpec, "output_prefix" | "tenant" | "job_id">, index: number): string {
  return spec.output_prefix + outputFileId(spec.tenant, spec.job_id, index);
}

/** Where the runner stores its full result when the report would not fit the termination message. */
export function resultKey(spec: Pick<RunnerPodSpec, "output_prefix">): string {
  return `${spec.output_prefix}result.json`;
}
