/**
 * POST /v1/pdf/{operation}: the five operations (API.md "Operations"). Inputs arrive inline as
 * multipart `file` parts or as uploaded file ids; the answer is 202 with the Job and a Location,
 * or, with `Prefer: wait=N` (RFC 7240) and a job that ends in time, 200 with the finished Job.
 */
import { createHash } from "node:crypto";
import { Router, type Request, type Response } from "express";
import type { Config } from "../../core/config.ts";
import { highestExplicitPage, parsePageRanges } from "../../core/pages.ts";
import { Operation } from "../../core/schemas/options.ts";
import type { ObjectStore } from "../../core/storage/store.ts";
import type { JobBackend, NewJobInput } from "../jobs/backend.ts";
import { auth } from "../http/auth.ts";
import { ApiError, validationFailed, type FieldError } from "../http/problem.ts";
import type { UploadedPart } from "../http/uploads.ts";
import { receiveUploads } from "./files.ts";
import { fieldsToBody, parseOperationBody } from "./request-body.ts";

export interface OperationsDeps {
  backend: JobBackend;
  store: ObjectStore;
  config: Config;
  /** null when the URL may receive webhooks, else the reason it may not. */
  checkWebhookUrl: (url: string) => Promise<string | null>;
}

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** How many inputs each operation takes. */
function inputBounds(op: Operation, maxMergeFiles: number): [number, number] {
  return op === "merge" ? [2, maxMergeFiles] : [1, 1];
}

/** `Prefer: wait=N` in seconds, at most 60 (a larger N is honoured as 60). */
export function preferWait(header: string | undefined): number | null {
  const m = /(?:^|[,;\s])wait\s*=\s*"?(\d{1,6})"?/i.exec(header ?? "");
  return m ? Math.min(60, Number(m[1])) : null;
}

/** What makes two requests "the same" for Idempotency-Key: operation, body, and inline file contents. */
function requestHash(op: Operation, body: unknown, parts: UploadedPart[]): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(canonical) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)).map(([k, x]) => [k, canonical(x)])) : v;
  return createHash("sha256")
    .update(JSON.stringify([op, canonical(body), parts.map((p) => [p.sha256, p.filename])]))
    .digest("hex");
}

export function operationsRouter(deps: OperationsDeps): Router {
  const { backend, config } = deps;
  const r = Router();

  r.post("/pdf/:operation", async (req: Request, res: Response) => {
    const op = Operation.safeParse(req.params.operation);
    if (!op.success) throw new ApiError("not_found", `No operation "${String(req.params.operation)}"; use compress, merge, split, convert or protect.`);
    const operation = op.data;
    const { tenant, limits } = auth(res);
    const idemKey = req.get("Idempotency-Key");
    if (idemKey !== undefined && !IDEMPOTENCY_KEY.test(idemKey)) {
      throw validationFailed([{ path: "Idempotency-Key", message: "must be 1–255 visible ASCII characters" }]);
    }
    // Refuse before reading a large body when the tenant is at its cap (checked again at submit).
    if (backend.countUnfinished(tenant.id) >= limits.maxUnfinishedJobs) {
      throw new ApiError("too_many_jobs", `At most ${limits.maxUnfinishedJobs} unfinished jobs; wait for some to end.`);
    }

    let body: unknown;
    let parts: UploadedPart[] = [];
    const fieldErrs: FieldError[] = [];
    if (req.is("multipart/form-data")) {
      const got = await receiveUploads(req, res, deps);
      parts = got.parts;
      const converted = fieldsToBody(got.fields);
      fieldErrs.push(...converted.errors);
      body = converted.body;
    } else if (req.is("application/json")) {
      body = req.body as unknown;
    } else {
      throw new ApiError("unsupported_media_type", "Send application/json (with uploaded file ids) or multipart/form-data (with the files).");
    }
    let uploadedIds: string[] = [];
    // On any failure, the inline uploads of this request go away: registered files and bytes.
    const discard = async (): Promise<void> => {
      if (uploadedIds.length) await Promise.all(uploadedIds.map((id) => backend.deleteFile(tenant.id, id)));
      else await backend.deleteUploadedObjects(parts.map((p) => p.storageKey));
    };
    try {
      const parsed = parseOperationBody(operation, body);
      if (!parsed.ok || fieldErrs.length) throw validationFailed([...fieldErrs, ...(parsed.ok ? [] : parsed.errors)]);
      const { common, options } = parsed;

      // Inline parts become the tenant's files; per-input pages may come in an `inputs` field.
      const uploaded = parts.length ? await backend.addUploads(tenant.id, parts) : [];
      uploadedIds = uploaded.map((f) => f.id);
      const bodyInputs = common.inputs ?? [];
      if (uploaded.length && bodyInputs.some((i) => i.file_id)) {
        throw validationFailed([{ path: "inputs", message: "send either file parts or file ids, not both" }]);
      }
      const inputs: NewJobInput[] = uploaded.length
        ? uploaded.map((f, i) => ({ file_id: f.id, ...(bodyInputs[i]?.pages ? { page_spec: bodyInputs[i].pages } : {}) }))
        : bodyInputs.map((i) => ({ file_id: i.file_id, ...(i.pages ? { page_spec: i.pages } : {}) }));
      const [min, max] = inputBounds(operation, limits.maxMergeFiles);
      if (inputs.length < min || inputs.length > max) {
        const want = min === max ? `exactly ${min} input` : `${min} to ${max} inputs`;
        throw validationFailed([{ path: "inputs", message: `${operation} takes ${want}; got ${inputs.length}` }]);
      }
      const errors: FieldError[] = [];
      for (const [i, input] of inputs.entries()) {
        const file = backend.getFile(tenant.id, input.file_id);
        if (!file) {
          errors.push({ path: `inputs.${i}.file_id`, message: "no such file" });
          continue;
        }
        if (operation !== "convert" && file.content_type !== "application/pdf") errors.push({ path: `inputs.${i}`, message: `${operation} takes PDFs; this is ${file.content_type}` });
        if (operation === "convert" && options.to !== "pdf" && file.content_type !== "application/pdf") errors.push({ path: "to", message: `converting to ${String(options.to)} takes a PDF` });
        const ranges = input.page_spec ? parsePageRanges(input.page_spec) : null;
        if (ranges && typeof ranges !== "string" && file.pages && highestExplicitPage(ranges) > file.pages) {
          errors.push({ path: `inputs.${i}.pages`, message: `the document has ${file.pages} pages` });
        }
        if (file.pages && file.pages > limits.maxPages) errors.push({ path: `inputs.${i}`, message: `more than ${limits.maxPages} pages` });
      }
      if (operation === "split" && options.mode === "ranges") {
        const file = backend.getFile(tenant.id, inputs[0]!.file_id);
        const ranges = parsePageRanges(String(options.ranges));
        if (file?.pages && typeof ranges !== "string" && highestExplicitPage(ranges) > file.pages) errors.push({ path: "ranges", message: `the document has ${file.pages} pages` });
      }
      if (common.webhook_url) {
        const reason = await deps.checkWebhookUrl(common.webhook_url);
        if (reason) errors.push({ path: "webhook_url", message: reason });
      }
      if (errors.length) throw validationFailed(errors);
      if (backend.countUnfinished(tenant.id) >= limits.maxUnfinishedJobs) {
        throw new ApiError("too_many_jobs", `At most ${limits.maxUnfinishedJobs} unfinished jobs; wait for some to end.`);
      }

      const submitted = backend.submit(
        {
          tenantId: tenant.id,
          operation,
          inputs,
          options,
          outputFilename: common.output_filename ?? null,
          webhookUrl: common.webhook_url ?? null,
          metadata: common.metadata ?? {},
          retentionMs: limits.retentionMs,
        },
        idemKey ? { key: idemKey, hash: requestHash(operation, body, parts) } : null,
      );
      if (submitted.kind === "idempotency_conflict") {
        throw new ApiError("idempotency_conflict", "This Idempotency-Key was used with a different request in the last 24 hours.");
      }
      if (submitted.kind === "unknown_file") throw validationFailed([{ path: `inputs.${submitted.index}.file_id`, message: "no such file" }]);
      if (submitted.kind === "replayed") {
        await discard();
        res.setHeader("Idempotent-Replayed", "true");
      }
      uploadedIds = [];
      let job = submitted.job;
      const wait = preferWait(req.get("Prefer"));
      if (wait !== null) {
        job = (await backend.waitFor(tenant.id, job.id, wait * 1000)) ?? job;
        res.setHeader("Preference-Applied", `wait=${wait}`);
      }
      res.setHeader("Location", `/v1/jobs/${job.id}`);
      const finished = job.status !== "queued" && job.status !== "running";
      res.status(finished ? 200 : 202).json(job);
    } catch (err) {
      await discard();
      throw err;
    }
  });

  return r;
}
