/**
 * Runs one job spec: validate the spec and options, sniff and inspect every input before any
 * engine touches it, run the operation under the job's deadline, then describe the outputs
 * (size, pages, sha256). Every failure leaves as a JobError with a stable code.
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Config } from "../core/config.ts";
import { JobError, toJobError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import { RunnerSpec, type OutputFile, type RunnerLimits, type RunnerResult } from "../core/schemas/job.ts";
import { OPTIONS_SCHEMAS } from "../core/schemas/options.ts";
import { sandboxPolicy, withSandbox } from "../core/sandbox.ts";
import { IMAGE_KINDS } from "../core/sniff.ts";
import { ExecAborted } from "./engines/exec.ts";
import { createBrowsers, type BrowserProvider } from "./engines/browsers.ts";
import type { SofficeProvider } from "./engines/libreoffice.ts";
import { checkBytes, checkPages, outputCaps, type OutputCaps } from "./ops/output-budget.ts";
import { sniffFile } from "./engines/office-zip.ts";
import { countPages } from "./engines/qpdf.ts";
import { openEarly, openOrRepair, type EarlyOpened, type Opened } from "./engines/repair.ts";
import { rasterInfo } from "./engines/raster.ts";
import { OPS } from "./ops/index.ts";
import type { InspectedInput, OpContext, OpOutputFile, OpResult } from "./ops/types.ts";

export interface RunDeps {
  config: Config;
  log: Logger;
  soffice: SofficeProvider;
  /** Browsers for HTML → PDF; without them, a job that needs one starts its own. */
  browsers?: BrowserProvider;
}

export function defaultLimits(config: Config): RunnerLimits {
  return {
    max_pages: config.FOLIO_MAX_PAGES,
    max_file_bytes: config.FOLIO_MAX_FILE_BYTES,
    max_merge_files: config.FOLIO_MAX_MERGE_FILES,
    max_image_pixels: config.FOLIO_MAX_IMAGE_PIXELS,
    timeout_ms: config.FOLIO_JOB_TIMEOUT_MS,
    max_output_pages: config.FOLIO_MAX_OUTPUT_PAGES,
    max_output_bytes: config.FOLIO_MAX_OUTPUT_BYTES,
    max_decompressed_bytes: config.FOLIO_MAX_DECOMPRESSED_BYTES,
    max_decompression_ratio: config.FOLIO_MAX_DECOMPRESSION_RATIO,
  };
}

function zodMessage(error: { issues: { path: PropertyKey[]; message: string }[] }): string {
  return error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
}

/** Opens a PDF input (engines/repair.ts), early or not; throws limit_exceeded past the page limit. */
async function openPdf(
  qctx: { qpdf: string; work: string; signal: AbortSignal },
  file: string,
  where: { filename: string; size: number; index: number },
  limits: RunnerLimits,
  passwordFile: string | undefined,
  early: boolean,
): Promise<Opened | EarlyOpened> {
  let opened: Opened | EarlyOpened;
  if (early) {
    const e = await openEarly(qctx, file, where, limits, passwordFile);
    // A /Count over the limit is only believed once the walk confirms it.
    opened = e.pages > limits.max_pages && !(await e.stands) ? await e.reopen() : e;
  } else opened = await openOrRepair(qctx, file, where, limits, passwordFile);
  if (opened.pages > limits.max_pages) {
    throw new JobError("limit_exceeded", `Input "${where.filename}" has ${opened.pages} pages; the limit is ${limits.max_pages}.`);
  }
  return opened;
}

/**
 * Sniffs and inspects one input. With `early` (an operation that opens its inputs early, see
 * engines/repair.ts openEarly), a PDF's page tree may still be being walked when this returns:
 * `stands` then says whether what was returned holds, and the caller must not keep any output
 * made from it until it resolves true.
 */
async function inspectInput(
  input: RunnerSpec["inputs"][number],
  index: number,
  accepts: "pdf" | "any",
  limits: RunnerLimits,
  qctx: { qpdf: string; work: string; signal: AbortSignal },
  passwordFile?: string,
  early = false,
): Promise<InspectedInput & { stands?: Promise<boolean> }> {
  const st = await stat(input.path).catch(() => null);
  if (!st?.isFile()) throw new JobError("invalid_pdf", `Input "${input.filename}" could not be read.`);
  if (st.size > limits.max_file_bytes) {
    throw new JobError("limit_exceeded", `Input "${input.filename}" is larger than ${limits.max_file_bytes} bytes.`);
  }
  const kind = sniffFile(input.path, st.size, input.filename, limits.max_file_bytes);
  if (kind === null || (accepts === "pdf" && kind !== "pdf")) {
    const what = accepts === "pdf" ? "a PDF" : "a PDF, an image, a web page or a supported Office document";
    throw new JobError(accepts === "pdf" ? "invalid_pdf" : "unsupported_input", `Input "${input.filename}" is not ${what}.`);
  }
  const base = { path: input.path, filename: input.filename, pageSpec: input.pages, kind, size: st.size };
  // An image's size is read from its header and checked before anything decodes it.
  if (IMAGE_KINDS.includes(kind))
    return { ...base, pages: (await rasterInfo(input.path, input.filename, limits.max_image_pixels)).pages, encrypted: false };
  if (kind !== "pdf") return { ...base, pages: null, encrypted: false };
  // A damaged PDF that qpdf can reconstruct is reconstructed once, here, and every operation
  // reads the reconstruction (engines/repair.ts).
  const opened = await openPdf(qctx, input.path, { filename: input.filename, size: st.size, index }, limits, passwordFile, early);
  return {
    ...base,
    path: opened.path,
    pages: opened.pages,
    encrypted: opened.encrypted,
    ...(opened.repaired ? { repaired: true } : {}),
    ...("stands" in opened ? { stands: opened.stands } : {}),
  };
}

async function describe(file: OpOutputFile, qctx: { qpdf: string; work: string }): Promise<OutputFile> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of createReadStream(file.path)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  const pages = file.content_type === "application/pdf" ? (file.pages ?? (await countPages(qctx, file.path))) : null;
  return { filename: file.filename, path: file.path, content_type: file.content_type, size, sha256: hash.digest("hex"), pages };
}

/**
 * The last word on the output caps, for every operation: what the outputs hold once written (an
 * Office document may convert into more pages than the cap; merge and split were checked before).
 * Outputs over a cap are deleted, never reported.
 */
async function enforceOutputCaps(caps: OutputCaps, outputs: readonly OutputFile[]): Promise<void> {
  try {
    checkPages(
      caps,
      outputs.reduce((n, o) => n + (o.pages ?? 0), 0),
    );
    checkBytes(
      caps,
      outputs.reduce((n, o) => n + o.size, 0),
    );
  } catch (err) {
    await Promise.all(outputs.map((o) => rm(o.path, { force: true })));
    throw err;
  }
}

/** A filename safe to use as a base name: no directories, no extension, no control characters. */
export function baseNameOf(name: string): string {
  const leaf = name.split(/[\\/]/).pop() ?? "";
  const stem = leaf
    .replace(/\.[^.]{1,8}$/, "")
    .replace(/[\u0000-\u001f\u007f"]/g, "")
    .trim();
  return stem.slice(0, 200) || "document";
}

/** A password the client gave to open its input (edit), in a 0600 file for qpdf; undefined without one. */
async function writePasswordFile(options: unknown, work: string): Promise<string | undefined> {
  const password = (options as { password?: unknown }).password;
  if (typeof password !== "string") return undefined;
  const file = path.join(work, "input-password");
  await writeFile(file, password, { mode: 0o600, flag: "wx" });
  return file;
}

/** The web page a convert is asked to fetch (it then has no input file at all), or null. */
function urlOf(spec: RunnerSpec): string | null {
  return spec.operation === "convert" && typeof spec.options.url === "string" ? spec.options.url : null;
}

/** The base name of the outputs: the client's, else the first input's, else the url's host. */
function outputBase(spec: RunnerSpec, url: string | null): string {
  return baseNameOf(spec.output_filename ?? spec.inputs[0]?.filename ?? (url ? new URL(url).hostname.replace(/^www\./, "") : "document"));
}

/** Runs a spec (unvalidated JSON is fine) and returns the result; throws JobError. */
export async function runSpec(rawSpec: unknown, deps: RunDeps): Promise<RunnerResult> {
  const started = performance.now();
  const parsedSpec = RunnerSpec.safeParse(rawSpec);
  if (!parsedSpec.success) throw new JobError("validation_failed", `Invalid job spec: ${zodMessage(parsedSpec.error)}`);
  // Paths as the engines see them: the sandbox shows them at their absolute place, and an engine
  // does not run in the caller's directory (`folio run convert ../in.pdf` named no file there).
  const spec = {
    ...parsedSpec.data,
    inputs: parsedSpec.data.inputs.map((i) => ({ ...i, path: path.resolve(i.path) })),
    output_dir: path.resolve(parsedSpec.data.output_dir),
  };
  const def = OPS[spec.operation];
  const parsedOptions = OPTIONS_SCHEMAS[spec.operation].safeParse(spec.options);
  if (!parsedOptions.success) throw new JobError("validation_failed", `Invalid options: ${zodMessage(parsedOptions.error)}`);
  const limits = { ...defaultLimits(deps.config), ...spec.limits };
  const maxInputs = def.maxInputs === "max_merge_files" ? limits.max_merge_files : def.maxInputs;
  const url = urlOf(spec);
  const minInputs = url !== null ? 0 : def.minInputs;
  if (spec.inputs.length < minInputs) {
    throw new JobError("unsupported_input", `${spec.operation} needs at least ${minInputs} input${minInputs > 1 ? "s" : ""}.`);
  }
  if (spec.inputs.length > maxInputs) {
    const code = def.maxInputs === "max_merge_files" ? "limit_exceeded" : "unsupported_input";
    throw new JobError(code, `${spec.operation} takes at most ${maxInputs} input${maxInputs > 1 ? "s" : ""}.`);
  }

  const signal = AbortSignal.timeout(limits.timeout_ms);
  const work = path.join(deps.config.FOLIO_TMP_DIR, `folio-${spec.job_id ?? "run"}-${randomBytes(6).toString("hex")}`);
  await mkdir(work, { recursive: true, mode: 0o700 });
  await mkdir(spec.output_dir, { recursive: true });
  const qctx = { qpdf: deps.config.FOLIO_QPDF, work, signal };
  const log = deps.log.child({ job_id: spec.job_id, operation: spec.operation });
  // Every engine of this job sees its inputs, its work and output directories, and nothing else
  // of ours (core/sandbox.ts; FOLIO_SANDBOX).
  const sandbox = {
    ...sandboxPolicy(deps.config),
    readable: spec.inputs.map((i) => i.path),
    writable: [work, spec.output_dir],
  };
  return withSandbox(sandbox, async (): Promise<RunnerResult> => {
    const ownBrowsers = deps.browsers ? null : createBrowsers(deps.config, log, false);
    try {
      // Two inspections at a time: each is one qpdf process, and merges may have 50 inputs.
      // A password the client gave to open its input (edit) goes to qpdf in a 0600 file.
      const passwordFile = await writePasswordFile(parsedOptions.data, work);
      const inspectAll = async (early: boolean): Promise<(InspectedInput & { stands?: Promise<boolean> })[]> => {
        const inputs = new Array<InspectedInput & { stands?: Promise<boolean> }>(spec.inputs.length);
        let next = 0;
        const inspectNext = async (): Promise<void> => {
          for (let i = next++; i < spec.inputs.length; i = next++)
            inputs[i] = await inspectInput(spec.inputs[i]!, i, def.accepts, limits, qctx, passwordFile, early);
        };
        await Promise.all([inspectNext(), inspectNext()]);
        return inputs;
      };
      const [first, op] = await Promise.all([inspectAll(def.opensEarly === true), def.load()]);
      let inputs: InspectedInput[] = first;
      const run = (opInputs: InspectedInput[], opSignal: AbortSignal): Promise<OpResult> =>
        op.run({
          options: parsedOptions.data as never,
          inputs: opInputs,
          outDir: path.resolve(spec.output_dir),
          baseName: outputBase(spec, url),
          work,
          limits,
          config: deps.config,
          signal: opSignal,
          log,
          soffice: deps.soffice,
          browsers: deps.browsers ?? ownBrowsers!,
        } satisfies OpContext<never>);
      const pending = first.flatMap((i) => (i.stands ? [i.stands] : []));
      let result: OpResult;
      if (pending.length === 0) result = await run(inputs, signal);
      else {
        // Inputs opened early (engines/repair.ts openEarly): the operation runs while their page
        // trees are walked, and what it made is kept only if every walk agrees; otherwise it is
        // thrown away and the job starts again from the full inspection and repair. The operation
        // is let finish rather than stopped: stopping an engine ends the job's whole sandbox
        // (engines/job-sandbox.ts), and the next engine started could find it dying.
        const stands = Promise.all(pending).then((all) => all.every(Boolean));
        const attempt = await run(inputs, signal).then(
          (r) => ({ r }),
          (e: unknown) => ({ e }),
        );
        if (await stands) {
          if ("e" in attempt) throw attempt.e;
          result = attempt.r;
        } else {
          if ("r" in attempt) await Promise.all(attempt.r.files.map((f) => rm(f.path, { force: true })));
          log.debug("An input opened early needs the full inspection; running again");
          inputs = await inspectAll(false);
          result = await run(inputs, signal);
        }
      }
      const outputs: OutputFile[] = [];
      for (const f of result.files) outputs.push(await describe(f, qctx));
      await enforceOutputCaps(outputCaps(limits, inputs), outputs);
      const duration_ms = Math.round(performance.now() - started);
      log.info({ outputs: outputs.length, duration_ms }, "Ran job");
      return { operation: spec.operation, outputs, figures: result.figures, duration_ms };
    } catch (err) {
      if (signal.aborted && (err instanceof ExecAborted || !(err instanceof JobError))) {
        throw new JobError("timeout", `The job did not finish within ${Math.round(limits.timeout_ms / 1000)} s.`, { cause: err });
      }
      const jobError = toJobError(err);
      if (jobError.code === "internal_error") log.error({ err }, "Job failed with an internal error");
      throw jobError;
    } finally {
      await ownBrowsers?.close();
    }
  }).finally(async () => {
    // After withSandbox has ended the job's sandbox: an engine of a job that failed early (another
    // input's inspection) could otherwise still write here while the directory is removed.
    await rm(work, { recursive: true, force: true, maxRetries: 3 });
  });
}
