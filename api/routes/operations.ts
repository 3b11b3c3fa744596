/**
 * POST /v1/pdf/{operation}: what the operations do with a request (API.md "Operations"; the
 * routes themselves are declared in operation-routes.ts). Inputs arrive inline as
 * multipart `file` parts or as uploaded file ids; the answer is 202 with the Job and a Location,
 * or, with `Prefer: wait=N` (RFC 7240) and a job that ends in time, 200 with the finished Job.
 */
import { createHash } from "node:crypto";
import type { Request, Response } from "express";
import type { Config } from "../../core/config.ts";
import { highestExplicitPage, parsePageRanges } from "../../core/pages.ts";
import type { FileObject, JobObject } from "../../core/schemas/api.ts";
import { Operation } from "../../core/schemas/options.ts";
import type { ObjectStore } from "../../core/storage/store.ts";
import type { JobBackend, NewJob, NewJobInput, SubmitResult } from "../jobs/backend.ts";
import { auth } from "../http/auth.ts";
import { safeFilename } from "../http/filenames.ts";
import { refuseWhenOverQuota } from "../http/quota.ts";
import { ApiError, validationFailed, type FieldError } from "../http/problem.ts";
import type { UploadedPart } from "../http/uploads.ts";
import { receiveUploads } from "./files.ts";
import { fieldsToBody, parseOperationBody, type CommonFields } from "./request-body.ts";

export interface OperationsDeps {
  backend: JobBackend;
  store: ObjectStore;
  config: Config;
  /** null when the URL may receive webhooks, else the reason it may not. */
  checkWebhookUrl: (url: string) => Promise<string | null>;
}

/** `Prefer: wait=N` in seconds, at most 60 (a larger N is honoured as 60). */
export function preferWait(header: string | undefined): number | null {
  const m = /(?:^|[,;\s])wait\s*=\s*"?(\d{1,6})"?/i.exec(header ?? "");
  return m ? Math.min(60, Number(m[1])) : null;
}

/** What makes two requests "the same" for Idempotency-Key: operation, body, and inline file contents. */
function requestHash(op: Operation, body: unknown, parts: UploadedPart[]): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, x]) => [k, canonical(x)]),
          )
        : v;
  return createHash("sha256")
    .update(JSON.stringify([op, canonical(body), parts.map((p) => [p.sha256, p.filename])]))
    .digest("hex");
}

/** The request's body and inline files, whichever way they came. */
async function readRequest(
  req: Request,
  res: Response,
  deps: OperationsDeps,
): Promise<{ body: unknown; parts: UploadedPart[]; fieldErrs: FieldError[] }> {
  if (req.is("multipart/form-data")) {
    const got = await receiveUploads(req, res, deps);
    const converted = fieldsToBody(got.fields);
    return { body: converted.body, parts: got.parts, fieldErrs: converted.errors };
  }
  if (req.is("application/json")) return { body: req.body as unknown, parts: [], fieldErrs: [] };
  throw new ApiError("unsupported_media_type", "Send application/json (with uploaded file ids) or multipart/form-data (with the files).");
}

/** Inline uploads (with per-input pages from an `inputs` field) or the body's file ids. */
function jobInputs(uploaded: FileObject[], bodyInputs: NonNullable<CommonFields["inputs"]>): NewJobInput[] {
  if (uploaded.length && bodyInputs.some((i) => i.file_id)) {
    throw validationFailed([{ path: "inputs", message: "send either file parts or file ids, not both" }]);
  }
  const withPages = (file_id: string, pages: string | undefined): NewJobInput => ({ file_id, ...(pages ? { page_spec: pages } : {}) });
  return uploaded.length
    ? uploaded.map((f, i) => withPages(f.id, bodyInputs[i]?.pages))
    : bodyInputs.map((i) => withPages(i.file_id, i.pages));
}

/** Too few inputs is invalid; too many merge inputs is the job's limit_exceeded (API.md "Limits"). */
function checkInputCount(operation: Operation, count: number, options: Record<string, unknown>): void {
  if (operation === "convert" && options.url !== undefined) {
    // A web page to convert comes as `url`, and then no file comes with it.
    if (count === 0) return;
    throw validationFailed([{ path: "url", message: "give a url or an input file, not both" }]);
  }
  if (operation === "edit") {
    // The PDF, then up to 9 images that stamp and watermark steps name by index.
    if (count >= 1 && count <= 10) return;
    throw validationFailed([{ path: "inputs", message: `edit takes a PDF and at most 9 images; got ${count} inputs` }]);
  }
  // convert and ocr take several inputs only when all are images (checked with their types below).
  if ((operation === "convert" || operation === "ocr") && count >= 1) return;
  if (count >= (operation === "merge" ? 2 : 1) && (operation === "merge" || count === 1)) return;
  const want = operation === "merge" ? "at least 2 inputs" : "exactly 1 input";
  throw validationFailed([{ path: "inputs", message: `${operation} takes ${want}; got ${count}` }]);
}

/** What an input may be for an operation, where that is more than "a PDF" (null: it may be this). */
function inputProblem(operation: Operation, index: number, contentType: string, count: number): string | null {
  const isPdf = contentType === "application/pdf";
  if ((operation === "convert" || operation === "ocr") && count > 1 && !contentType.startsWith("image/"))
    return `${operation} takes several inputs only when all are images; this is ${contentType}`;
  if (operation === "ocr") return isPdf || contentType.startsWith("image/") ? null : `ocr takes a PDF or images; this is ${contentType}`;
  if (operation === "edit" && index > 0)
    return contentType.startsWith("image/") ? null : `edit takes images after the PDF (for stamps); this is ${contentType}`;
  if (operation !== "convert" && !isPdf) return `${operation} takes PDFs; this is ${contentType}`;
  return null;
}

function commonJobFields(common: CommonFields): Pick<NewJob, "outputFilename" | "webhookUrl" | "metadata"> {
  // Cleaned like upload names (api/http/filenames.ts): no bidi or other format characters.
  const outputFilename = common.output_filename === undefined ? null : safeFilename(common.output_filename);
  if (outputFilename === "")
    throw validationFailed([{ path: "output_filename", message: "nothing is left of it once format characters are removed" }]);
  return { outputFilename, webhookUrl: common.webhook_url ?? null, metadata: common.metadata ?? {} };
}

/** Everything about the inputs that can be known at submission (API.md: ranges → 422 when known). */
async function checkInputs(
  backend: JobBackend,
  tenantId: string,
  operation: Operation,
  options: Record<string, unknown>,
  inputs: NewJobInput[],
): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  const beyond = (spec: string, pages: number | null): boolean => {
    const ranges = parsePageRanges(spec);
    return typeof ranges !== "string" && pages !== null && highestExplicitPage(ranges) > pages;
  };
  for (const [i, input] of inputs.entries()) {
    const file = await backend.getFile(tenantId, input.file_id);
    if (!file) {
      errors.push({ path: `inputs.${i}.file_id`, message: "no such file" });
      continue;
    }
    const isPdf = file.content_type === "application/pdf";
    const problem = inputProblem(operation, i, file.content_type, inputs.length);
    if (problem) errors.push({ path: `inputs.${i}`, message: problem });
    if (operation === "convert" && options.to !== "pdf" && !isPdf)
      errors.push({ path: "to", message: `converting to ${String(options.to)} takes a PDF` });
    if (input.page_spec && beyond(input.page_spec, file.pages))
      errors.push({ path: `inputs.${i}.pages`, message: `the document has ${file.pages} pages` });
    if (operation === "split" && options.mode === "ranges" && beyond(String(options.ranges), file.pages)) {
      errors.push({ path: "ranges", message: `the document has ${file.pages} pages` });
    }
  }
  return errors;
}

/** 202 with the job, or with Prefer: wait, 200 once it has ended in time (RFC 7240). */
async function respond(req: Request, res: Response, backend: JobBackend, tenantId: string, submitted: JobObject): Promise<void> {
  let job = submitted;
  const wait = preferWait(req.get("Prefer"));
  if (wait !== null) {
    job = (await backend.waitFor(tenantId, job.id, wait * 1000)) ?? job;
    res.setHeader("Preference-Applied", `wait=${wait}`);
  }
  res.setHeader("Location", `/v1/jobs/${job.id}`);
  const finished = job.status !== "queued" && job.status !== "running";
  res.status(finished ? 200 : 202).json(job);
}

interface Submission {
  res: Response;
  deps: OperationsDeps;
  operation: Operation;
  body: unknown;
  parts: UploadedPart[];
  fieldErrs: FieldError[];
  idem: { key: string; hash: string } | null;
  /** Told the ids of the inline uploads once they are registered (to discard them on failure). */
  uploaded: (ids: string[]) => void;
}

/** Validates the request, registers its inline uploads and submits the job. */
async function validateAndSubmit(s: Submission): Promise<SubmitResult> {
  const { backend } = s.deps;
  const { tenant, limits } = auth(s.res);
  await refuseWhenOverQuota(backend, tenant.id, limits);
  const parsed = parseOperationBody(s.operation, s.body);
  if (!parsed.ok || s.fieldErrs.length) throw validationFailed([...s.fieldErrs, ...(parsed.ok ? [] : parsed.errors)]);
  const { common, options } = parsed;
  const uploaded = s.parts.length ? await backend.addUploads(tenant.id, s.parts) : [];
  s.uploaded(uploaded.map((f) => f.id));
  const inputs = jobInputs(uploaded, common.inputs ?? []);
  checkInputCount(s.operation, inputs.length, options);
  const errors = await checkInputs(backend, tenant.id, s.operation, options, inputs);
  if (common.webhook_url) {
    const reason = await s.deps.checkWebhookUrl(common.webhook_url);
    if (reason) errors.push({ path: "webhook_url", message: reason });
  }
  if (errors.length) throw validationFailed(errors);
  const job = { tenantId: tenant.id, operation: s.operation, inputs, options, retentionMs: limits.retentionMs, ...commonJobFields(common) };
  return backend.submit({ ...job, maxUnfinished: limits.maxUnfinishedJobs }, s.idem);
}

/** The answer to a submission that made no new job (a replay, a conflict, a refusal); null for a created job. */
function refusal(result: SubmitResult, maxUnfinished: number): ApiError | null {
  switch (result.kind) {
    case "idempotency_conflict":
      return new ApiError("idempotency_conflict", "This Idempotency-Key was used with a different request in the last 24 hours.");
    case "unknown_file":
      return validationFailed([{ path: `inputs.${result.index}.file_id`, message: "no such file" }]);
    case "too_many_jobs":
      return new ApiError("too_many_jobs", `At most ${maxUnfinished} unfinished jobs; wait for some to end.`);
    case "replayed_gone":
      return new ApiError(
        "not_found",
        `The job this Idempotency-Key created (${result.jobId}) no longer exists: it was deleted, or its retention ended. Use a new key to run the request again.`,
      );
    default:
      return null;
  }
}

/** Answers a POST /v1/pdf/{operation} whose operation does not exist (after authentication, as before the table). */
export function unknownOperation(req: Request): never {
  throw new ApiError("not_found", `No operation "${String(req.params.operation)}"; use ${Operation.options.join(", ")}.`);
}

/** The handler of POST /v1/pdf/{operation}, given the request's validated headers. */
export function submitHandler(
  deps: OperationsDeps,
  operation: Operation,
): (req: Request, res: Response, input: { headers: { "Idempotency-Key"?: string | undefined } }) => Promise<void> {
  const { backend } = deps;
  return async (req, res, { headers }) => {
    const { tenant, limits } = auth(res);
    // Checked by the router against its declared schema (operation-routes.ts).
    const idemKey = headers["Idempotency-Key"];
    // Refuse before reading a large body when the tenant is at its cap (the exact check is the
    // submission's). A request with a key is read anyway: a retry is answered by its key.
    if (idemKey === undefined && (await backend.countUnfinished(tenant.id)) >= limits.maxUnfinishedJobs) {
      throw refusal({ kind: "too_many_jobs" }, limits.maxUnfinishedJobs)!;
    }

    const { body, parts, fieldErrs } = await readRequest(req, res, deps);
    let uploadedIds: string[] = [];
    // On any failure, the inline uploads of this request go away: registered files and bytes.
    const discard = async (): Promise<void> => {
      if (uploadedIds.length) await Promise.all(uploadedIds.map((id) => backend.deleteFile(tenant.id, id)));
      else await backend.deleteUploadedObjects(parts.map((p) => p.storageKey));
    };
    try {
      const idem = idemKey ? { key: idemKey, hash: requestHash(operation, body, parts) } : null;
      // The key first (API.md "Operations"): a retry gets its job whatever happened since — the
      // job ended and consumed its inputs, the tenant reached its cap.
      let submitted: SubmitResult | null = idem ? await backend.replay({ tenantId: tenant.id, ...idem }) : null;
      try {
        submitted ??= await validateAndSubmit({
          res,
          deps,
          operation,
          body,
          parts,
          fieldErrs,
          idem,
          uploaded: (ids) => (uploadedIds = ids),
        });
      } catch (err) {
        // A store read through a cache (Kubernetes mode) may not yet show a key used through
        // another replica a moment ago: before refusing a keyed request, look again, caught up.
        const late = idem && err instanceof ApiError ? await backend.replay({ tenantId: tenant.id, ...idem }, { fresh: true }) : null;
        if (!late) throw err;
        submitted = late;
      }
      const refused = refusal(submitted, limits.maxUnfinishedJobs);
      if (refused) throw refused;
      if (submitted.kind === "replayed") {
        // The first request's job stands; this request's copies of the files are not needed.
        await discard();
        res.setHeader("Idempotent-Replayed", "true");
      }
      uploadedIds = [];
      await respond(req, res, backend, tenant.id, (submitted as Extract<SubmitResult, { job: JobObject }>).job);
    } catch (err) {
      await discard();
      throw err;
    }
  };
}
