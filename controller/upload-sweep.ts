/**
 * The upload sweep (Kubernetes mode, docs/adr/0008): uploads are S3 objects whose metadata is
 * their record (core/storage/upload-record.ts), so no API replica keeps a list of them; the
 * leading controller walks the bucket every FOLIO_SWEEP_INTERVAL_MS and deletes the uploads that
 * have expired and that no unfinished PdfJob uses. A job's inputs are deleted when it ends
 * (decide.ts); this only takes what no job ever used.
 *
 * Listing is by tenant prefix with a "/" delimiter, so a job's outputs (`{tenant}/{job}/…`) are
 * never listed object by object; an upload is HEADed only once its age says it may have expired.
 */
import { TERMINAL_PHASES, type PdfJob } from "../core/schemas/pdfjob.ts";
import type { ListedObject, ObjectHead } from "../core/storage/s3-store.ts";
import type { ObjectStore } from "../core/storage/store.ts";
import { parseUploadKey, readUploadRecord, uploadExpiresAt } from "../core/storage/upload-record.ts";
import type { Logger } from "../core/logger.ts";

/** What the sweep needs of the object store (S3ObjectStore). */
export interface SweepStore {
  list(prefix: string, delimiter?: string): AsyncIterable<{ objects: ListedObject[]; prefixes: string[] }>;
  head(key: string): Promise<ObjectHead | null>;
  delete(key: string): Promise<void>;
}

export interface SweepOptions {
  store: SweepStore;
  /** Input keys of the unfinished PdfJobs (never deleted from under them). */
  inUse: () => ReadonlySet<string>;
  /** FOLIO_UPLOAD_TTL_SECONDS in ms: an upload without a complete record expires this long after it was written. */
  ttlMs: number;
  now?: () => number;
}

export interface SweepResult {
  deleted: number;
  kept: number;
}

/** One pass over the bucket. */
export async function sweepUploads(o: SweepOptions): Promise<SweepResult> {
  const now = (o.now ?? Date.now)();
  const inUse = o.inUse();
  const result: SweepResult = { deleted: 0, kept: 0 };
  for await (const top of o.store.list("", "/")) {
    for (const tenantPrefix of top.prefixes) {
      for await (const page of o.store.list(tenantPrefix, "/")) {
        for (const obj of page.objects) await sweepOne(o, obj, now, inUse, result);
      }
    }
  }
  return result;
}

/** Deletes one listed object if it is an expired upload no job uses. */
async function sweepOne(o: SweepOptions, obj: ListedObject, now: number, inUse: ReadonlySet<string>, result: SweepResult): Promise<void> {
  if (!parseUploadKey(obj.key)) return;
  // Young enough that neither its record nor its age can have expired: no HEAD.
  if (obj.lastModified + o.ttlMs > now || inUse.has(obj.key)) {
    result.kept++;
    return;
  }
  const head = await o.store.head(obj.key);
  if (!head) return;
  if (uploadExpiresAt(readUploadRecord(obj.key, head), head.lastModified, o.ttlMs) > now) {
    result.kept++;
    return;
  }
  await o.store.delete(obj.key);
  result.deleted++;
}

/** The input keys of the unfinished PdfJobs: the upload sweep leaves them alone. */
export function unfinishedInputs(pdfJobs: readonly PdfJob[]): Set<string> {
  const keys = new Set<string>();
  for (const pj of pdfJobs) {
    if (pj.status?.phase && TERMINAL_PHASES.includes(pj.status.phase)) continue;
    for (const i of Array.isArray(pj.spec.inputs) ? pj.spec.inputs : []) if (typeof i.key === "string") keys.add(i.key);
  }
  return keys;
}

/** Sweeps expired uploads every `intervalMs` once `ready` (synced and leading); a store that cannot list is not swept. */
export function startUploadSweep(
  store: ObjectStore,
  o: { intervalMs: number; ttlMs: number },
  inUse: () => ReadonlySet<string>,
  ready: Promise<unknown>,
  log?: Logger,
): { stop(): void } {
  if (!("list" in store) || !("head" in store)) return { stop: () => undefined };
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const pass = async (): Promise<void> => {
    try {
      const r = await sweepUploads({ store: store as unknown as SweepStore, inUse, ttlMs: o.ttlMs });
      if (r.deleted) log?.info({ deleted: r.deleted, kept: r.kept }, "upload sweep: expired uploads deleted");
    } catch (err) {
      log?.warn({ err }, "upload sweep failed");
    }
    if (!stopped) timer = setTimeout(() => void pass(), o.intervalMs).unref();
  };
  void ready.then(() => {
    if (!stopped) timer = setTimeout(() => void pass(), o.intervalMs).unref();
  });
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
