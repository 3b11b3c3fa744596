/** /v1/files: upload (multipart, streamed), read, download and delete (API.md "Files"). */
import { Router, type Request, type Response } from "express";
import type { Config } from "../../core/config.ts";
import type { ObjectStore } from "../../core/storage/store.ts";
import type { JobBackend } from "../jobs/backend.ts";
import { auth } from "../http/auth.ts";
import { contentDisposition } from "../http/filenames.ts";
import { pdfPages } from "../http/pdf-pages.ts";
import { ApiError } from "../http/problem.ts";
import { checkUploadFits, quotaLeft } from "../http/quota.ts";
import { readMultipart, type UploadedPart } from "../http/uploads.ts";
import { sandboxPolicy } from "../../core/sandbox.ts";

/** Streams and stores the `file` parts of a multipart request, with page counts for PDFs. */
export async function receiveUploads(
  req: Request,
  res: Response,
  deps: FilesDeps,
): Promise<{ parts: UploadedPart[]; fields: Map<string, string> }> {
  const { backend, store, config } = deps;
  const { tenant, limits } = auth(res);
  if (!req.is("multipart/form-data")) throw new ApiError("unsupported_media_type", 'Send files as multipart/form-data parts named "file".');
  const left = await quotaLeft(backend, tenant.id, limits);
  const { files, fields } = await readMultipart(req, store, () => backend.newUploadKey(tenant.id), {
    maxFileBytes: limits.maxFileBytes,
    maxRequestBytes: limits.maxRequestBytes,
    // Merge counts its inputs itself (limit_exceeded, API.md "Limits"); this only bounds parsing.
    maxFiles: 200,
    quotaBytes: left,
  });
  try {
    // Another upload of this tenant may have finished meanwhile; the quota holds over both.
    await checkUploadFits(
      backend,
      tenant.id,
      limits,
      files.reduce((n, f) => n + f.size, 0),
    );
  } catch (err) {
    await backend.deleteUploadedObjects(files.map((f) => f.storageKey));
    throw err;
  }
  for (const f of files) {
    const p = f.kind === "pdf" ? store.localPath?.(f.storageKey) : undefined;
    f.pages = p ? await pdfPages(config.FOLIO_QPDF, p, undefined, sandboxPolicy(config)) : null;
  }
  return { parts: files, fields };
}

export interface FilesDeps {
  backend: JobBackend;
  store: ObjectStore;
  config: Config;
}

export function filesRouter(deps: FilesDeps): Router {
  const { backend } = deps;
  const r = Router();

  r.post("/files", async (req, res) => {
    const { tenant } = auth(res);
    const { parts, fields } = await receiveUploads(req, res, deps);
    if (parts.length === 0) {
      throw new ApiError("validation_failed", 'Send at least one part named "file".', { errors: [{ path: "file", message: "required" }] });
    }
    if (fields.size > 0) {
      await backend.deleteUploadedObjects(parts.map((p) => p.storageKey));
      const errors = [...fields.keys()].map((k) => ({ path: k, message: "unexpected field" }));
      throw new ApiError("validation_failed", 'Uploads take only "file" parts.', { errors });
    }
    const data = await backend.addUploads(tenant.id, parts);
    res.status(201).json({ data });
  });

  r.get("/files/:id", async (req, res) => {
    const file = await backend.getFile(auth(res).tenant.id, req.params.id);
    if (!file) throw new ApiError("not_found", "No such file.");
    res.json(file);
  });

  r.get("/files/:id/content", async (req, res) => {
    const found = await backend.openFile(auth(res).tenant.id, req.params.id);
    if (!found) throw new ApiError("not_found", "No such file.");
    const { file, body } = found;
    const etag = `"${file.sha256}"`;
    res.setHeader("ETag", etag);
    res.setHeader("Cache-Control", "private, no-store");
    if (req.get("If-None-Match") === etag) {
      body.destroy();
      res.status(304).end();
      return;
    }
    res.setHeader("Content-Type", file.content_type);
    res.setHeader("Content-Length", String(file.size));
    res.setHeader("Content-Disposition", contentDisposition(file.filename));
    res.setHeader("X-Content-Type-Options", "nosniff");
    body.on("error", () => res.destroy());
    body.pipe(res);
  });

  r.delete("/files/:id", async (req, res) => {
    if (!(await backend.deleteFile(auth(res).tenant.id, req.params.id))) throw new ApiError("not_found", "No such file.");
    res.status(204).end();
  });

  return r;
}
