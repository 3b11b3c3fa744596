/** /v1/files: upload (multipart, streamed), read, download and delete (API.md "Files"). */
import type { Request, Response } from "express";
import { z } from "zod";
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
import { FileObject, UploadedFiles } from "../../core/schemas/api.ts";
import { CONTENT_TYPES } from "../../core/sniff.ts";
import { route, type Route } from "./route.ts";

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

const FileId = z.object({ id: z.string().meta({ description: "The file id." }) });

/** The multipart form of an upload: one or more `file` parts. */
export const FILE_PARTS = { type: "array", items: { type: "string", contentMediaType: "application/octet-stream" } };

/** What a download can be: any type an upload is sniffed as, and the zip of a split's parts. */
const DOWNLOAD_TYPES = [...new Set([...Object.values(CONTENT_TYPES), "application/zip"])];

export const fileRoutes: Route[] = [
  route({
    method: "post",
    path: "/v1/files",
    operationId: "uploadFiles",
    tag: "Files",
    summary: "Upload one or more files (multipart parts named `file`). Unused uploads expire after 1 h.",
    body: { multipart: { type: "object", properties: { file: FILE_PARTS } } },
    responses: { "201": { description: "Stored.", schema: UploadedFiles } },
    errors: ["validation_failed", "unsupported_media_type", "payload_too_large", "storage_quota_exceeded"],
    handler: (deps) => async (req, res) => {
      const { tenant } = auth(res);
      const { parts, fields } = await receiveUploads(req, res, deps);
      if (parts.length === 0) {
        throw new ApiError("validation_failed", 'Send at least one part named "file".', {
          errors: [{ path: "file", message: "required" }],
        });
      }
      if (fields.size > 0) {
        await deps.backend.deleteUploadedObjects(parts.map((p) => p.storageKey));
        const errors = [...fields.keys()].map((k) => ({ path: k, message: "unexpected field" }));
        throw new ApiError("validation_failed", 'Uploads take only "file" parts.', { errors });
      }
      const data = await deps.backend.addUploads(tenant.id, parts);
      res.status(201).json({ data });
    },
  }),
  route({
    method: "get",
    path: "/v1/files/{id}",
    operationId: "getFile",
    tag: "Files",
    summary: "A file.",
    params: FileId,
    responses: { "200": { description: "The file.", schema: FileObject } },
    errors: ["not_found"],
    handler:
      ({ backend }) =>
      async (_req, res, { params }) => {
        const file = await backend.getFile(auth(res).tenant.id, params.id);
        if (!file) throw new ApiError("not_found", "No such file.");
        res.json(file);
      },
  }),
  route({
    method: "delete",
    path: "/v1/files/{id}",
    operationId: "deleteFile",
    tag: "Files",
    summary: "Delete a file and its bytes at once.",
    params: FileId,
    responses: { "204": { description: "Deleted." } },
    errors: ["not_found"],
    handler:
      ({ backend }) =>
      async (_req, res, { params }) => {
        if (!(await backend.deleteFile(auth(res).tenant.id, params.id))) throw new ApiError("not_found", "No such file.");
        res.status(204).end();
      },
  }),
  route({
    method: "get",
    path: "/v1/files/{id}/content",
    operationId: "downloadFile",
    tag: "Files",
    summary: "The file's bytes (ETag = sha256).",
    params: FileId,
    responses: {
      "200": {
        description:
          "The bytes, with the file's own Content-Type (an upload's sniffed type, or an output's: PDF, DOCX, XLSX, a split's zip …), Content-Disposition (filename and RFC 8187 filename*) and ETag.",
        headers: {
          "Content-Disposition": { schema: { type: "string" }, description: "attachment; filename=\"…\"; filename*=UTF-8''…" },
          ETag: { schema: { type: "string" }, description: "The sha256 of the bytes, quoted." },
        },
        content: Object.fromEntries(DOWNLOAD_TYPES.map((t) => [t, { schema: { type: "string", contentMediaType: t } }])),
      },
      "304": { description: "If-None-Match matched the ETag." },
    },
    errors: ["not_found"],
    handler:
      ({ backend }) =>
      async (req, res, { params }) => {
        const found = await backend.openFile(auth(res).tenant.id, params.id);
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
      },
  }),
];
