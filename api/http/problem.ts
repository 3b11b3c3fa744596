/**
 * RFC 9457 problem details: every error response, from one catalogue (core/errors.ts). Internal
 * errors are logged with their cause and answered with a safe sentence; no stack trace or path
 * on this machine ever reaches a client.
 */
import type { NextFunction, Request, Response } from "express";
import type { z } from "zod";
import { API_ERRORS, type ApiErrorCode } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";

export interface FieldError {
  path: string;
  message: string;
}

export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly code: ApiErrorCode;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;

  constructor(
    code: ApiErrorCode,
    detail: string,
    extra: { errors?: FieldError[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(detail, { cause: extra.cause });
    this.code = code;
    this.errors = extra.errors;
    this.headers = extra.headers ?? {};
  }

  get status(): number {
    return API_ERRORS[this.code].status;
  }
}

/** zod issues as API.md's `errors: [{path, message}]`, paths in dotted form ("inputs.0.file_id"). */
export function fieldErrors(error: z.ZodError, prefix: (string | number)[] = []): FieldError[] {
  const at = (path: PropertyKey[]): string => [...prefix, ...path].map(String).join(".") || "(body)";
  return error.issues.flatMap((i) =>
    // zod reports unknown keys once, at their parent; name each key where it stands instead.
    i.code === "unrecognized_keys"
      ? i.keys.map((k) => ({ path: at([...i.path, k]), message: "unknown field" }))
      : [{ path: at(i.path), message: i.message }],
  );
}

export function validationFailed(errors: FieldError[], detail = "The request is not valid; see errors."): ApiError {
  return new ApiError("validation_failed", detail, { errors });
}

export function sendProblem(res: Response, err: ApiError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const requestId = String(res.getHeader("X-Request-Id") ?? "");
  for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
  if (err.code === "unauthorized") res.setHeader("WWW-Authenticate", 'Bearer realm="folio"');
  res
    .status(err.status)
    .type("application/problem+json; charset=utf-8")
    .send(
      JSON.stringify({
        type: `https://folio.dev/problems/${err.code}`,
        title: API_ERRORS[err.code].title,
        status: err.status,
        detail: err.message,
        code: err.code,
        request_id: requestId,
        ...(err.errors ? { errors: err.errors } : {}),
      }),
    );
}

/** Express error handler: ApiErrors as they are, body-parser errors mapped, anything else 500. */
export function problemHandler(log: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    if (err instanceof ApiError) return sendProblem(res, err);
    const e = err as { type?: string; status?: number };
    if (e.type === "entity.too.large") return sendProblem(res, new ApiError("payload_too_large", "The request body is too large."));
    if (e.type === "entity.parse.failed")
      return sendProblem(res, validationFailed([{ path: "(body)", message: "not valid JSON" }], "The body is not valid JSON."));
    if (e.type === "encoding.unsupported" || e.type === "charset.unsupported") {
      return sendProblem(res, new ApiError("unsupported_media_type", "The body's encoding is not supported."));
    }
    if (e.type === "request.aborted") {
      // The client went away mid-body: nobody is left to answer, and nothing went wrong here.
      log.info({ method: req.method }, "Client aborted the request body");
      return sendProblem(res, validationFailed([{ path: "(body)", message: "incomplete body" }], "The request body ended early."));
    }
    // body-parser marks errors caused by the request itself (e.g. a Content-Encoding whose bytes
    // do not decode) with a 4xx status and `expose`: they are the client's, never a 500.
    if (typeof e.status === "number" && e.status >= 400 && e.status < 500 && (err as { expose?: boolean }).expose) {
      return sendProblem(
        res,
        validationFailed(
          [{ path: "(body)", message: "could not be read" }],
          "The request body could not be read (a Content-Encoding that does not decode?).",
        ),
      );
    }
    log.error(
      { err, method: req.method, route: (req.route as { path: string } | undefined)?.path },
      "Request failed with an internal error",
    );
    sendProblem(res, new ApiError("internal_error", "Something went wrong on our side; the request id helps us find it."));
  };
}
