/**
 * Retention (API.md "Retention"): job records and their outputs are deleted once `expires_at`
 * has passed, and uploads no job used expire after their own time. Deletion is real: the bytes
 * leave storage before the records go.
 */
import type { ObjectStore } from "../../core/storage/store.ts";
import type { FileStore } from "../store/files.ts";
import type { JobStore } from "../store/jobs.ts";

export async function sweepExpired(
  d: { jobs: JobStore; files: FileStore; store: ObjectStore },
  now: number,
): Promise<{ jobs: number; files: number }> {
  let jobs = 0;
  let files = 0;
  for (const job of d.jobs.expired(now)) {
    for (const f of d.files.byJob(job.id)) {
      await d.store.delete(f.storage_key);
      d.files.delete(f.id);
      files++;
    }
    d.jobs.delete(job.id);
    jobs++;
  }
  for (const f of d.files.expired(now)) {
    await d.store.delete(f.storage_key);
    d.files.delete(f.id);
    files++;
  }
  return { jobs, files };
}
