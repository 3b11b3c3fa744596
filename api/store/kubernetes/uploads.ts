/**
 * Kubernetes mode's upload records: the S3 object's own metadata (core/storage/upload-record.ts).
 * Recording costs one server-side copy per upload, reading one HEAD; nothing reaches the
 * apiserver, and no API replica holds a record another could not read.
 */
import type { FileObject } from "../../../core/schemas/api.ts";
import { rfc3339 } from "../../../core/time.ts";
import { readUploadRecord, uploadKey, uploadMetadata, type UploadRecord } from "../../../core/storage/upload-record.ts";
import type { ObjectHead } from "../../../core/storage/s3-store.ts";
import { ID_PATTERN } from "../../../core/ids.ts";
import type { UploadedPart } from "../../http/uploads.ts";

/** What the records need of the object store (S3ObjectStore). */
export interface MetadataStore {
  head(key: string): Promise<ObjectHead | null>;
  setMetadata(key: string, metadata: Record<string, string>, contentType?: string): Promise<boolean>;
  delete(key: string): Promise<void>;
}

/** The API's File object of an upload record. */
export function fileObjectOf(r: UploadRecord): FileObject {
  return {
    id: r.id,
    object: "file",
    filename: r.filename,
    content_type: r.contentType,
    size: r.size,
    sha256: r.sha256,
    pages: r.pages,
    created_at: rfc3339(r.createdAt),
    expires_at: rfc3339(r.expiresAt),
  };
}

export class S3Uploads {
  readonly #store: MetadataStore;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(store: MetadataStore, ttlMs: number, now: () => number = Date.now) {
    this.#store = store;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** Records stored parts as the tenant's uploads, expiring after the upload TTL. */
  async add(tenant: string, parts: readonly UploadedPart[]): Promise<FileObject[]> {
    const now = this.#now();
    return Promise.all(
      parts.map(async (p) => {
        const id = p.storageKey.slice(p.storageKey.lastIndexOf("/") + 1);
        const record = {
          tenant,
          filename: p.filename,
          sha256: p.sha256,
          pages: p.pages ?? null,
          createdAt: now,
          expiresAt: now + this.#ttlMs,
        };
        if (
          p.storageKey !== uploadKey(tenant, id) ||
          !(await this.#store.setMetadata(p.storageKey, uploadMetadata(record), p.contentType))
        ) {
          throw new Error(`upload ${p.storageKey} is not stored under its tenant`);
        }
        return fileObjectOf({ ...record, id, contentType: p.contentType, size: p.size });
      }),
    );
  }

  /** The tenant's upload `id`, unexpired; null for anything else. */
  async get(tenant: string, id: string): Promise<UploadRecord | null> {
    if (!ID_PATTERN("file").test(id)) return null;
    const key = uploadKey(tenant, id);
    const head = await this.#store.head(key);
    const record = head ? readUploadRecord(key, head) : null;
    return record && record.tenant === tenant && record.expiresAt > this.#now() ? record : null;
  }

  async delete(tenant: string, id: string): Promise<boolean> {
    if (!(await this.get(tenant, id))) return false;
    await this.#store.delete(uploadKey(tenant, id));
    return true;
  }
}
