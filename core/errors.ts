/**
 * The error catalogue: every stable error code Folio ever returns, in one place (API.md "Errors"
 * and "Jobs"). The HTTP edge maps codes to RFC 9457 problem documents, the runner maps job error
 * codes to process exit codes, and metrics use the code as a bounded label. A test checks that
 * this catalogue, the OpenAPI document and the README agree.
 */

/** Codes of RFC 9457 problem responses from the HTTP API. */
export const API_ERRORS = {
  unauthorized: { status: 401, title: "Missing or invalid API key" },
  plan_required: { status: 403, title: "Your plan does not include API access" },
  /** Beyond API.md: an operator suspended the tenant (`folio tenants suspend`); its keys stay valid. */
  tenant_suspended: { status: 403, title: "The tenant is suspended" },
  https_required: { status: 403, title: "HTTPS is required" },
  not_found: { status: 404, title: "Not found" },
  validation_failed: { status: 422, title: "The request is not valid" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  /** A known path asked with a method it does not take; the answer carries `Allow` (RFC 9110 §15.5.6). */
  method_not_allowed: { status: 405, title: "Method not allowed" },
  payload_too_large: { status: 413, title: "Payload too large" },
  /**
   * The tenant's stored bytes (uploads and unexpired outputs) would pass its plan's quota. 413,
   * not 507: it is the client's account that is full, not the server (a 5xx tells generic clients
   * to retry, which cannot help here); the code tells it apart from a request that is too big.
   */
  storage_quota_exceeded: { status: 413, title: "Storage quota exceeded" },
  rate_limited: { status: 429, title: "Too many requests" },
  too_many_jobs: { status: 429, title: "Too many unfinished jobs" },
  idempotency_conflict: { status: 409, title: "Idempotency key reused with a different request" },
  internal_error: { status: 500, title: "Internal error" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ApiErrorCode = keyof typeof API_ERRORS;

/** Codes Folio added where API.md is silent (documented in the OpenAPI document and the README). */
export const API_ERROR_EXTENSIONS: readonly ApiErrorCode[] = ["tenant_suspended", "storage_quota_exceeded", "method_not_allowed"];

/**
 * Runner process exit codes. Kubernetes' podFailurePolicy maps BAD_INPUT to FailJob (retrying
 * cannot help), while INTERNAL may be retried within the Job's backoffLimit.
 */
export const EXIT = {
  OK: 0,
  INTERNAL: 1,
  USAGE: 2,
  BAD_INPUT: 3,
  TIMEOUT: 4,
} as const;

/** Codes a job can fail with (API.md "Jobs"), and how the runner exits for each. */
export const JOB_ERRORS = {
  invalid_pdf: { exit: EXIT.BAD_INPUT, title: "The input is not a valid PDF" },
  encrypted_input: { exit: EXIT.BAD_INPUT, title: "The input is password-protected" },
  invalid_page_range: { exit: EXIT.BAD_INPUT, title: "A page range is outside the document" },
  unsupported_input: { exit: EXIT.BAD_INPUT, title: "This input is not supported by the operation" },
  conversion_failed: { exit: EXIT.BAD_INPUT, title: "The document could not be converted" },
  limit_exceeded: { exit: EXIT.BAD_INPUT, title: "The input exceeds a limit" },
  timeout: { exit: EXIT.TIMEOUT, title: "The job ran out of time" },
  internal_error: { exit: EXIT.INTERNAL, title: "Internal error" },
  /**
   * Options or a spec that do not validate. Only the runner CLI reports this as a job error; the
   * API rejects such requests at submission with `422 validation_failed`.
   */
  validation_failed: { exit: EXIT.USAGE, title: "The options are not valid" },
} as const satisfies Record<string, { exit: number; title: string }>;

export type JobErrorCode = keyof typeof JOB_ERRORS;

export const JOB_ERROR_CODES = Object.keys(JOB_ERRORS) as [JobErrorCode, ...JobErrorCode[]];
export const API_ERROR_CODES = Object.keys(API_ERRORS) as [ApiErrorCode, ...ApiErrorCode[]];

/**
 * A job failed for a reason the client can act on. The message is safe to show to the client:
 * it never contains a path on this machine, a password or an engine's raw output.
 */
export class JobError extends Error {
  override readonly name = "JobError";
  readonly code: JobErrorCode;

  constructor(code: JobErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }

  get exitCode(): number {
    return JOB_ERRORS[this.code].exit;
  }

  toJSON(): { code: JobErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

/** Any thrown value as a JobError: known ones pass through, anything else is internal_error. */
export function toJobError(err: unknown): JobError {
  if (err instanceof JobError) return err;
  return new JobError("internal_error", "The job failed because of an internal error.", { cause: err });
}
