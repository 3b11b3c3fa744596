/**
 * The public API's objects and request bodies (API.md), as zod schemas: the server validates with
 * them and the OpenAPI document is generated from them.
 */
import { z } from "zod";
import { API_ERROR_CODES, JOB_ERROR_CODES } from "../errors.ts";
import { Operation, PageRangeSpec } from "./options.ts";

const Time = z.iso.datetime().meta({ description: "RFC 3339 UTC time." });

export const FileObject = z
  .object({
    id: z.string().meta({ examples: ["file_4fJ2kq9XcT1mZ8rB0aLw7eYd"] }),
    object: z.literal("file"),
    filename: z.string(),
    content_type: z.string(),
    size: z.int().nonnegative(),
    sha256: z.string(),
    pages: z.int().nonnegative().nullable().meta({ description: "Page count, for PDFs." }),
    created_at: Time,
    expires_at: Time.nullable(),
  })
  .meta({ id: "File" });
export type FileObject = z.infer<typeof FileObject>;

export const ResultFile = FileObject.extend({
  download_url: z.string().meta({ description: "GET it with the same API key: /v1/files/{id}/content." }),
}).meta({ id: "ResultFile" });

export const JOB_STATUSES = ["queued", "running", "succeeded", "failed", "canceled"] as const;
export const JobStatus = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof JobStatus>;
export const WEBHOOK_STATUSES = ["pending", "delivered", "failing", "gave_up"] as const;

export const Metadata = z
  .record(z.string().max(40), z.string().max(500))
  .refine((m) => Object.keys(m).length <= 20, { message: "at most 20 metadata pairs" })
  .meta({ description: "Up to 20 string pairs (keys ≤ 40, values ≤ 500 characters), echoed back on the job." });

export const JobObject = z
  .object({
    id: z.string().meta({ examples: ["job_9aQm2LkT7cXv1B4nZp0RsWd8"] }),
    object: z.literal("job"),
    operation: Operation,
    status: JobStatus,
    created_at: Time,
    started_at: Time.nullable(),
    completed_at: Time.nullable(),
    expires_at: Time.nullable(),
    inputs: z.array(
      z.object({
        file_id: z.string(),
        filename: z.string(),
        content_type: z.string(),
        size: z.int(),
        sha256: z.string(),
        pages: z.int().nullable(),
      }),
    ),
    options: z.record(z.string(), z.unknown()).meta({ description: "The operation's options; passwords removed." }),
    result: z
      .object({ files: z.array(ResultFile) })
      .catchall(z.unknown())
      .nullable()
      .meta({ description: "Output files plus the operation's figures (compress: original_size, size, ratio, compressed)." }),
    error: z.object({ code: z.enum(JOB_ERROR_CODES), message: z.string() }).nullable(),
    webhook: z
      .object({
        url: z.string(),
        status: z.enum(WEBHOOK_STATUSES),
        attempts: z.int(),
        last_attempt_at: Time.nullable(),
        last_error: z.string().nullable(),
      })
      .nullable(),
    metadata: z.record(z.string(), z.string()),
  })
  .meta({ id: "Job" });
export type JobObject = z.infer<typeof JobObject>;

export const JobList = z.object({ data: z.array(JobObject), has_more: z.boolean() }).meta({ id: "JobList" });

export const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.int(),
    detail: z.string(),
    code: z.enum(API_ERROR_CODES),
    request_id: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: "Problem", description: "RFC 9457 problem details." });

/** Fields every operation request may carry besides the operation's options. */
export const CommonRequestFields = z
  .strictObject({
    inputs: z
      .array(
        z.strictObject({
          // The shape of every file id (core/ids.ts); the OpenAPI document shows it as a pattern.
          file_id: z.string().regex(/^file_[0-9A-Za-z]{24}$/, "must be a file id (file_ and 24 letters or digits)"),
          pages: PageRangeSpec.optional(),
        }),
      )
      .min(1)
      .optional()
      .meta({ description: "Uploaded files to use (JSON bodies). Multipart requests send `file` parts instead." }),
    webhook_url: z
      .url({ protocol: /^https$/ })
      .max(2048)
      .optional()
      // zod's protocol check does not reach the JSON Schema: say "https" there as a pattern.
      .meta({ description: "https URL notified when the job ends.", pattern: "^https://" }),
    metadata: Metadata.optional(),
    output_filename: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^/\\\u0000-\u001f\u007f]+$/, "must be a plain file name")
      .optional()
      .meta({ description: "Base name for the outputs (the extension is added)." }),
  })
  .meta({ id: "CommonRequestFields" });
export const COMMON_FIELDS = Object.keys(CommonRequestFields.shape);

export const JobListQuery = z.strictObject({
  status: JobStatus.optional(),
  operation: Operation.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(10),
  starting_after: z.string().max(64).optional().meta({ description: "The last job id of the previous page." }),
});

/** What an upload answers: the stored files, in the order of their parts. */
export const UploadedFiles = z.object({ data: z.array(FileObject) });

export const AccessRequestBody = z
  .strictObject({
    // RFC 5321 §4.5.3.1.1: a local part has at most 64 octets (zod's email() does not check it).
    email: z
      .email()
      .max(254)
      .refine((e) => Buffer.byteLength(e.slice(0, e.lastIndexOf("@"))) <= 64, "the part before @ has at most 64 characters"),
    company: z.string().min(1).max(200),
    use_case: z.enum(["batch_conversion", "document_pipeline", "saas_integration", "other"]),
    description: z.string().min(1).max(5000),
    expected_monthly_volume: z.int().min(0).max(1_000_000_000),
    file_types: z.array(z.string().min(1).max(20)).max(20),
    needs_dpa: z.boolean(),
  })
  .meta({ id: "AccessRequest" });
export type AccessRequestBody = z.infer<typeof AccessRequestBody>;

export const AccessRequestAccepted = z
  .object({ id: z.string(), object: z.literal("access_request"), status: z.literal("pending"), created_at: Time })
  .meta({ id: "AccessRequestAccepted" });
