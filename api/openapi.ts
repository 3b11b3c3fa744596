/**
 * The OpenAPI 3.1 document, generated from the zod schemas the server validates with (zod's JSON
 * Schema output is draft 2020-12, which OpenAPI 3.1 uses as is). Request bodies are each
 * operation's options merged with the common fields, as the server parses them.
 */
import { z } from "zod";
import { CONTENT_TYPES } from "../core/sniff.ts";
import { API_ERRORS, JOB_ERRORS } from "../core/errors.ts";
import {
  AccessRequestAccepted,
  AccessRequestBody,
  CommonRequestFields,
  FileObject,
  JobList,
  JobObject,
  Problem,
} from "../core/schemas/api.ts";
import { OPERATIONS, OPTIONS_SCHEMAS, type Operation } from "../core/schemas/options.ts";

type Json = Record<string, unknown>;

const REF = (id: string): Json => ({ $ref: `#/components/schemas/${id}` });

/**
 * A schema as JSON Schema, with its named sub-schemas (zod `.meta({id})`) hoisted into
 * `defs` and referenced as components; a root that is itself named is returned inline.
 */
function schemaOf(s: z.ZodType, io: "input" | "output", defs: Json): Json {
  const raw = JSON.stringify(z.toJSONSchema(s, { target: "draft-2020-12", io, unrepresentable: "any" }));
  const out = JSON.parse(raw.replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
  delete out.$schema;
  const own = (out.$defs ?? {}) as Json;
  delete out.$defs;
  let root = out;
  const ref = typeof out.$ref === "string" ? out.$ref.replace("#/components/schemas/", "") : null;
  if (ref && own[ref]) {
    root = { ...(own[ref] as Json), ...Object.fromEntries(Object.entries(out).filter(([k]) => k !== "$ref")) };
    delete own[ref];
  }
  Object.assign(defs, own);
  return root;
}

/** Common fields merged into an options schema (object, or each branch of a oneOf/anyOf). */
function withCommon(options: Json, common: Json): Json {
  const merge = (o: Json): Json => ({
    ...o,
    properties: { ...(common.properties as Json), ...(o.properties as Json) },
    required: [...((o.required as string[]) ?? [])],
    additionalProperties: false,
  });
  const branches = (options.oneOf ?? options.anyOf) as Json[] | undefined;
  if (branches) return { ...options, [options.oneOf ? "oneOf" : "anyOf"]: branches.map(merge) };
  return merge(options);
}

const OPERATION_DOCS: Record<Operation, string> = {
  compress: "Compress a PDF. Lossy levels recompress images only; the output is never larger than the input.",
  merge: "Merge 2–50 PDFs, each optionally limited to page ranges, keeping or rebuilding bookmarks.",
  split: "Split a PDF by ranges, every N pages, or into single pages; outputs the parts and one zip of them all.",
  convert: "Convert Office documents (DOCX, DOC, ODT, RTF, XLSX, XLS, ODS, PPTX, PPT, ODP) to PDF.",
  ocr: "Make a scanned PDF, or PNG/JPEG/TIFF images, searchable: an invisible text layer over the page images (OCRmyPDF and Tesseract), with languages, deskew, page rotation, skip_text and optional PDF/A-2b.",
  edit: "Edit a PDF with ordered steps: rotate, delete, select (reorder/extract), watermark and stamp (text or an image input), page numbers, header/footer with {n} and {total}, flatten, metadata, unlock (with `password`), repair. One qpdf run for all steps. Further inputs are PNG/JPEG/TIFF images that stamps name by index.",
  protect:
    "Encrypt a PDF with AES-256 (default) or AES-128, a user password and permissions. Passwords are never stored in job records, logs or metrics.",
};

function problemResponses(codes: (keyof typeof API_ERRORS)[]): Json {
  const out: Json = {};
  for (const code of codes) {
    const status = String(API_ERRORS[code].status);
    const prior = out[status] as Json | undefined;
    const description = prior ? `${prior.description as string}; ${code}` : `${API_ERRORS[code].title} (${code})`;
    out[status] = { description, content: { "application/problem+json": { schema: REF("Problem") } } };
  }
  return out;
}

/** What a download can be: any type an upload is sniffed as, and the zip of a split's parts. */
const DOWNLOAD_TYPES = [...new Set([...Object.values(CONTENT_TYPES), "application/zip"])];

const AUTHED: (keyof typeof API_ERRORS)[] = [
  "unauthorized",
  "plan_required",
  "tenant_suspended",
  "https_required",
  "rate_limited",
  "internal_error",
];

export function buildOpenApi(version: string): Json {
  const schemas: Json = {};
  const common = schemaOf(CommonRequestFields, "input", schemas);
  Object.assign(schemas, {
    File: schemaOf(FileObject, "output", schemas),
    Job: schemaOf(JobObject, "output", schemas),
    JobList: schemaOf(JobList, "output", schemas),
    Problem: schemaOf(Problem, "output", schemas),
    AccessRequest: schemaOf(AccessRequestBody, "input", schemas),
    AccessRequestAccepted: schemaOf(AccessRequestAccepted, "output", schemas),
  });
  const paths: Json = {};
  for (const op of OPERATIONS) {
    const name = `${op[0]!.toUpperCase()}${op.slice(1)}Request`;
    schemas[name] = withCommon(schemaOf(OPTIONS_SCHEMAS[op], "input", schemas), common);
    paths[`/v1/pdf/${op}`] = {
      post: {
        operationId: `${op}Pdf`,
        summary: OPERATION_DOCS[op],
        tags: ["Operations"],
        parameters: [
          {
            name: "Idempotency-Key",
            in: "header",
            schema: { type: "string", maxLength: 255 },
            description:
              "Looked up before anything else: same key + same body within 24 h → the same job as it is now (Idempotent-Replayed: true), even after it ended or at the unfinished-jobs cap; a different body → 409 idempotency_conflict; the key's job deleted since → 404 not_found (never a second job).",
          },
          {
            name: "Prefer",
            in: "header",
            schema: { type: "string", examples: ["wait=30"] },
            description: "wait=N (N ≤ 60): hold the response until the job ends or N seconds pass (RFC 7240).",
          },
        ],
        requestBody: {
          required: true,
          content: {
            "application/json": { schema: REF(name) },
            "multipart/form-data": {
              schema: {
                type: "object",
                properties: {
                  file: { type: "array", items: { type: "string", contentMediaType: "application/octet-stream" } },
                  options: { type: "string", description: "The options as JSON (or send them as plain fields)." },
                },
              },
            },
          },
        },
        responses: {
          "202": {
            description: "Accepted; the job is queued or running. Location: /v1/jobs/{id}.",
            content: { "application/json": { schema: REF("Job") } },
          },
          "200": { description: "With Prefer: wait, the job ended in time.", content: { "application/json": { schema: REF("Job") } } },
          ...problemResponses([
            ...AUTHED,
            "validation_failed",
            "unsupported_media_type",
            "payload_too_large",
            "storage_quota_exceeded",
            "too_many_jobs",
            "idempotency_conflict",
            "not_found",
          ]),
        },
      },
    };
  }
  const idParam = (what: string): Json => ({
    name: "id",
    in: "path",
    required: true,
    schema: { type: "string" },
    description: `The ${what} id.`,
  });
  Object.assign(paths, {
    "/v1/files": {
      post: {
        operationId: "uploadFiles",
        summary: "Upload one or more files (multipart parts named `file`). Unused uploads expire after 1 h.",
        tags: ["Files"],
        requestBody: {
          required: true,
          content: {
            "multipart/form-data": {
              schema: {
                type: "object",
                properties: { file: { type: "array", items: { type: "string", contentMediaType: "application/octet-stream" } } },
              },
            },
          },
        },
        responses: {
          "201": {
            description: "Stored.",
            content: { "application/json": { schema: { type: "object", properties: { data: { type: "array", items: REF("File") } } } } },
          },
          ...problemResponses([...AUTHED, "validation_failed", "unsupported_media_type", "payload_too_large", "storage_quota_exceeded"]),
        },
      },
    },
    "/v1/files/{id}": {
      get: {
        operationId: "getFile",
        tags: ["Files"],
        summary: "A file.",
        parameters: [idParam("file")],
        responses: {
          "200": { description: "The file.", content: { "application/json": { schema: REF("File") } } },
          ...problemResponses([...AUTHED, "not_found"]),
        },
      },
      delete: {
        operationId: "deleteFile",
        tags: ["Files"],
        summary: "Delete a file and its bytes at once.",
        parameters: [idParam("file")],
        responses: { "204": { description: "Deleted." }, ...problemResponses([...AUTHED, "not_found"]) },
      },
    },
    "/v1/files/{id}/content": {
      get: {
        operationId: "downloadFile",
        tags: ["Files"],
        summary: "The file's bytes (ETag = sha256).",
        parameters: [idParam("file")],
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
          ...problemResponses([...AUTHED, "not_found"]),
        },
      },
    },
    "/v1/jobs": {
      get: {
        operationId: "listJobs",
        tags: ["Jobs"],
        summary: "Your jobs, newest first.",
        parameters: [
          { name: "status", in: "query", schema: { type: "string", enum: ["queued", "running", "succeeded", "failed", "canceled"] } },
          { name: "operation", in: "query", schema: { type: "string", enum: [...OPERATIONS] } },
          { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 100, default: 10 } },
          { name: "starting_after", in: "query", schema: { type: "string" }, description: "The last job id of the previous page." },
        ],
        responses: {
          "200": { description: "A page of jobs.", content: { "application/json": { schema: REF("JobList") } } },
          ...problemResponses([...AUTHED, "validation_failed"]),
        },
      },
    },
    "/v1/jobs/{id}": {
      get: {
        operationId: "getJob",
        tags: ["Jobs"],
        summary: "A job.",
        parameters: [idParam("job")],
        responses: {
          "200": { description: "The job.", content: { "application/json": { schema: REF("Job") } } },
          ...problemResponses([...AUTHED, "not_found"]),
        },
      },
      delete: {
        operationId: "deleteJob",
        tags: ["Jobs"],
        summary: "Cancel a queued or running job, then delete its inputs, outputs and record at once.",
        parameters: [idParam("job")],
        responses: { "204": { description: "Deleted." }, ...problemResponses([...AUTHED, "not_found"]) },
      },
    },
    "/v1/access_requests": {
      post: {
        operationId: "requestAccess",
        tags: ["Access"],
        summary: "Ask for access (no key needed; rate-limited per client address).",
        security: [],
        requestBody: { required: true, content: { "application/json": { schema: REF("AccessRequest") } } },
        responses: {
          "202": { description: "Received.", content: { "application/json": { schema: REF("AccessRequestAccepted") } } },
          ...problemResponses(["https_required", "validation_failed", "unsupported_media_type", "rate_limited", "internal_error"]),
        },
      },
    },
  });
  return {
    openapi: "3.1.0",
    info: {
      title: "Folio API",
      version,
      description:
        "PDF automation: compress, merge, split, convert and protect. HTTPS only; `Authorization: Bearer folio_sk_…` on the business plan. " +
        "Errors are RFC 9457 problem details. Every response carries X-Request-Id and the IETF RateLimit headers.",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    tags: [{ name: "Operations" }, { name: "Files" }, { name: "Jobs" }, { name: "Access" }],
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "folio_sk_<key_id>_<secret>" } },
      schemas,
    },
    "x-problem-codes": Object.fromEntries(Object.entries(API_ERRORS).map(([code, v]) => [code, { status: v.status, title: v.title }])),
    "x-job-error-codes": Object.fromEntries(
      Object.entries(JOB_ERRORS)
        .filter(([code]) => code !== "validation_failed")
        .map(([code, v]) => [code, v.title]),
    ),
  };
}
