/**
 * Kubernetes mode's upload records (docs/adr/0008): no database — an upload's record is its S3
 * object's own metadata, written by the API once the bytes are stored (a server-side copy onto
 * itself), read with a HEAD, and swept by the controller when it expires (controller/upload-sweep.ts).
 *
 * Keys: an upload lives at `{tenant}/{file id}` (outputs one level deeper, `{tenant}/{job id}/…`).
 * Metadata values are ASCII (they travel as x-amz-meta-* headers): the filename is percent-encoded.
 * An object without a complete record (the API stopped between storing and recording) is no file
 * for the API and expires by its age.
 */
import { ID_PATTERN } from "../ids.ts";

const M = {
  tenant: "folio-tenant",
  filename: "folio-filename",
  sha256: "folio-sha256",
  pages: "folio-pages",
  created: "folio-created",
  expires: "folio-expires",
} as const;

export interface UploadRecord {
  id: string;
  tenant: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
  pages: number | null;
  /** Epoch milliseconds. */
  createdAt: number;
  expiresAt: number;
}

const UPLOAD_KEY = /^([^/]+)\/(file_[0-9A-Za-z]{24})$/;

/** The storage key of a tenant's upload. */
export const uploadKey = (tenant: string, fileId: string): string => `${tenant}/${fileId}`;

/** The tenant and file id of an upload's key; null for any other key (outputs, results). */
export function parseUploadKey(key: string): { tenant: string; fileId: string } | null {
  const m = UPLOAD_KEY.exec(key);
  return m && ID_PATTERN("file").test(m[2]!) ? { tenant: m[1]!, fileId: m[2]! } : null;
}

/** The object metadata recording an upload. */
export function uploadMetadata(r: Omit<UploadRecord, "id" | "contentType" | "size">): Record<string, string> {
  return {
    [M.tenant]: r.tenant,
    [M.filename]: encodeURIComponent(r.filename),
    [M.sha256]: r.sha256,
    [M.pages]: r.pages === null ? "" : String(r.pages),
    [M.created]: String(r.createdAt),
    [M.expires]: String(r.expiresAt),
  };
}

/** The record an object's metadata holds; null when it is incomplete or not an upload's. */
export function readUploadRecord(
  key: string,
  head: { size: number; contentType: string; metadata: Record<string, string> },
): UploadRecord | null {
  const parsed = parseUploadKey(key);
  const m = head.metadata;
  const sha256 = m[M.sha256] ?? "";
  if (!parsed || m[M.tenant] !== parsed.tenant || !/^[0-9a-f]{64}$/.test(sha256)) return null;
  const createdAt = Number(m[M.created]);
  const expiresAt = Number(m[M.expires]);
  if (!Number.isFinite(createdAt) || !Number.isFinite(expiresAt)) return null;
  let filename: string;
  try {
    filename = decodeURIComponent(m[M.filename] ?? "");
  } catch {
    return null;
  }
  const pages = m[M.pages] ? Number(m[M.pages]) : null;
  return {
    id: parsed.fileId,
    tenant: parsed.tenant,
    filename,
    contentType: head.contentType,
    size: head.size,
    sha256,
    pages: pages !== null && Number.isInteger(pages) ? pages : null,
    createdAt,
    expiresAt,
  };
}

/** When an upload expires: its recorded expiry, or — without a complete record — its age past the TTL. */
export function uploadExpiresAt(record: UploadRecord | null, lastModified: number, ttlMs: number): number {
  return record ? record.expiresAt : lastModified + ttlMs;
}
