/** File records (uploads and job outputs) of the embedded store; the bytes live in the ObjectStore. */
import { rfc3339 } from "../../core/time.ts";
import type { FileObject } from "../../core/schemas/api.ts";
import type { UploadedPart } from "../http/uploads.ts";
import { sql, type Db } from "./db.ts";

export interface FileRow {
  id: string;
  tenant_id: string;
  role: "upload" | "output";
  job_id: string | null;
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  pages: number | null;
  storage_key: string;
  created_at: number;
  expires_at: number | null;
}

export function fileObject(f: FileRow): FileObject {
  return {
    id: f.id,
    object: "file",
    filename: f.filename,
    content_type: f.content_type,
    size: f.size,
    sha256: f.sha256,
    pages: f.pages,
    created_at: rfc3339(f.created_at),
    expires_at: rfc3339(f.expires_at),
  };
}

export class FileStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  insert(f: FileRow): void {
    sql(
      this.db,
      `INSERT INTO files (id, tenant_id, role, job_id, filename, content_type, size, sha256, pages, storage_key, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      f.id,
      f.tenant_id,
      f.role,
      f.job_id,
      f.filename,
      f.content_type,
      f.size,
      f.sha256,
      f.pages,
      f.storage_key,
      f.created_at,
      f.expires_at,
    );
  }

  /** A tenant's file; another tenant's id is simply not found. */
  get(tenantId: string, id: string, now = Date.now()): FileRow | undefined {
    return sql(this.db, "SELECT * FROM files WHERE id = ? AND tenant_id = ? AND (expires_at IS NULL OR expires_at > ?)").get(
      id,
      tenantId,
      now,
    ) as FileRow | undefined;
  }

  /** Registers uploaded parts as the tenant's files, expiring after `ttlMs` unless a job uses them. */
  addUploads(tenantId: string, parts: readonly UploadedPart[], now: number, ttlMs: number): FileObject[] {
    return parts.map((p) => {
      const row: FileRow = {
        id: p.storageKey.split("/").pop()!,
        tenant_id: tenantId,
        role: "upload",
        job_id: null,
        filename: p.filename,
        content_type: p.contentType,
        size: p.size,
        sha256: p.sha256,
        pages: p.pages ?? null,
        storage_key: p.storageKey,
        created_at: now,
        expires_at: now + ttlMs,
      };
      this.insert(row);
      return fileObject(row);
    });
  }

  /** Marks uploads as inputs of a job: they no longer expire on their own. */
  claim(ids: readonly string[], jobId: string): void {
    for (const id of ids) sql(this.db, "UPDATE files SET job_id = ?, expires_at = NULL WHERE id = ?").run(jobId, id);
  }

  byJob(jobId: string): FileRow[] {
    return sql(this.db, "SELECT * FROM files WHERE job_id = ? ORDER BY rowid").all(jobId) as unknown as FileRow[];
  }

  delete(id: string): void {
    sql(this.db, "DELETE FROM files WHERE id = ?").run(id);
  }

  setExpiry(jobId: string, expiresAt: number): void {
    sql(this.db, "UPDATE files SET expires_at = ? WHERE job_id = ?").run(expiresAt, jobId);
  }

  /** Files whose time is up (uploads never used, outputs past their job's retention). */
  expired(now: number, limit = 500): FileRow[] {
    return sql(this.db, "SELECT * FROM files WHERE expires_at IS NOT NULL AND expires_at <= ? LIMIT ?").all(
      now,
      limit,
    ) as unknown as FileRow[];
  }
}
