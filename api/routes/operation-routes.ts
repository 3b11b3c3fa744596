/**
 * The operations as routes of the table (API.md "Operations"): one POST /v1/pdf/{operation} per
 * operation, with its options schema, the headers it reads and what it answers. What a submission
 * does is operations.ts.
 */
import { z } from "zod";
import { JobObject } from "../../core/schemas/api.ts";
import { OPERATIONS, OPTIONS_SCHEMAS, type Operation } from "../../core/schemas/options.ts";
import { FILE_PARTS } from "./files.ts";
import { submitHandler } from "./operations.ts";
import { route, type Route } from "./route.ts";

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

/** The headers an operation reads; the router refuses a malformed Idempotency-Key with 422. */
const OperationHeaders = z.object({
  "Idempotency-Key": z
    .string()
    .regex(/^[\x21-\x7e]{1,255}$/, "must be 1–255 visible ASCII characters")
    .optional()
    .meta({
      maxLength: 255,
      description:
        "Looked up before anything else: same key + same body within 24 h → the same job as it is now (Idempotent-Replayed: true), even after it ended or at the unfinished-jobs cap; a different body → 409 idempotency_conflict; the key's job deleted since → 404 not_found (never a second job).",
    }),
  // Read leniently (operations.ts preferWait): a preference the server does not understand is ignored (RFC 7240).
  Prefer: z
    .string()
    .optional()
    .meta({ examples: ["wait=30"], description: "wait=N (N ≤ 60): hold the response until the job ends or N seconds pass (RFC 7240)." }),
});

function operationRoute(op: Operation): Route {
  return route({
    method: "post",
    path: `/v1/pdf/${op}`,
    operationId: `${op}Pdf`,
    summary: OPERATION_DOCS[op],
    tag: "Operations",
    // One label for all operations, as dashboards and alerts select it (helm/folio/files).
    metricsRoute: "/v1/pdf/:operation",
    headers: OperationHeaders,
    body: {
      // Validated by the handler, after an Idempotency-Key replay (operations.ts, request-body.ts).
      json: { schema: OPTIONS_SCHEMAS[op], component: `${op[0]!.toUpperCase()}${op.slice(1)}Request`, withCommonFields: true },
      multipart: {
        type: "object",
        properties: {
          file: FILE_PARTS,
          options: { type: "string", description: "The options as JSON (or send them as plain fields)." },
        },
      },
    },
    responses: {
      "202": { description: "Accepted; the job is queued or running. Location: /v1/jobs/{id}.", schema: JobObject },
      "200": { description: "With Prefer: wait, the job ended in time.", schema: JobObject },
    },
    errors: [
      "validation_failed",
      "unsupported_media_type",
      "payload_too_large",
      "storage_quota_exceeded",
      "too_many_jobs",
      "idempotency_conflict",
      "not_found",
    ],
    handler: (deps) => submitHandler(deps, op),
  });
}

export const operationRoutes: Route[] = OPERATIONS.map(operationRoute);
