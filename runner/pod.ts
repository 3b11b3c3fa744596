/**
 * `folio runner --pod`: what a Kubernetes runner pod runs (controller/job-template.ts).
 *
 *   1. the RunnerPodSpec from FOLIO_RUNNER_SPEC (JSON; validated with core/schemas/runner-pod.ts);
 *   2. the protect passwords from FOLIO_OPTION_USER_PASSWORD / FOLIO_OPTION_OWNER_PASSWORD
 *      (secretKeyRefs to the PdfJob's Secret) merged into the options — never in the spec, never
 *      logged, never in a report;
 *   3. the inputs downloaded from the object store into a private (0700) directory under
 *      FOLIO_TMP_DIR, streamed, with the file-size limit enforced while downloading;
 *   4. runSpec, the same as every other runner mode;
 *   5. output `i` uploaded to `outputKey(spec, i)`;
 *   6. the report — a RunnerPodResult or {"error": {code, message}} — written to the file named
 *      by FOLIO_TERMINATION_MESSAGE_PATH. The kubelet keeps at most 4 KiB of it: a larger result
 *      (a split into many parts) is stored at `resultKey(spec)` and the message is
 *      {"result_key": …}. The same JSON goes to stdout.
 *
 * The exit code is the job error's (core/errors.ts EXIT): 3 bad input, 4 timeout, 2 an invalid
 * spec, 1 anything internal (a storage failure included: the Job may retry it).
 *
 * About `$`: the controller doubles every `$` of the spec (literalEnvValue) so that the kubelet's
 * `$(VAR)` expansion leaves it alone — and that expansion turns each `$$` back into `$`. What the
 * container sees is therefore the original JSON, and it is parsed as is: un-doubling it again
 * would corrupt a spec that really contains `$$` (a filename, say).
 */
import { createWriteStream } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Config } from "../core/config.ts";
import { EXIT, JobError, toJobError } from "../core/errors.ts";
import type { Logger } from "../core/logger.ts";
import type { RunnerResult } from "../core/schemas/job.ts";
import { SECRET_OPTION_KEYS } from "../core/schemas/pdfjob.ts";
import {
  RUNNER_SPEC_ENV,
  RunnerPodSpec,
  SECRET_OPTION_ENV,
  TERMINATION_MESSAGE_MAX_BYTES,
  TERMINATION_MESSAGE_PATH_ENV,
  type RunnerPodResult,
} from "../core/schemas/runner-pod.ts";
import { outputKey, resultKey } from "../core/schemas/storage-keys.ts";
import { ObjectNotFound } from "../core/storage/store.ts";
import type { PodStorage } from "./pod-storage.ts";
import { UsageError } from "./cli.ts";
import { RUNNER_ACCESS_ENV } from "./pod-storage.ts";
import type { SofficeProvider } from "./engines/soffice-job.ts";
import { defaultLimits, runSpec } from "./run.ts";

/** The environment variables the pod contract uses (main.ts reads them; see SECRET_OPTION_ENV). */
export const POD_ENV_NAMES: readonly string[] = [
  RUNNER_SPEC_ENV,
  TERMINATION_MESSAGE_PATH_ENV,
  RUNNER_ACCESS_ENV,
  ...Object.values(SECRET_OPTION_ENV),
];

export type PodEnv = Readonly<Record<string, string | undefined>>;

export interface PodDeps {
  config: Config;
  log: Logger;
  soffice: SofficeProvider;
  /** Made on first use (not at all for a spec that does not parse): presigned, or an ObjectStore. */
  store: () => PodStorage;
}

export interface PodOutcome {
  /** The termination message: the report, or a pointer to it. */
  message: string;
  exitCode: number;
}

type Report = RunnerPodResult | { error: { code: string; message: string } };

function zodMessage(error: { issues: { path: PropertyKey[]; message: string }[] }): string {
  return error.issues.map((i) => (i.path.length ? `${i.path.map(String).join(".")}: ${i.message}` : i.message)).join("; ");
}

/** Parses the spec the pod was given. */
export function readPodSpec(env: PodEnv): RunnerPodSpec {
  const text = env[RUNNER_SPEC_ENV];
  if (!text) throw new UsageError(`${RUNNER_SPEC_ENV} is not set`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new UsageError(`${RUNNER_SPEC_ENV} is not valid JSON`);
  }
  const parsed = RunnerPodSpec.safeParse(raw);
  if (!parsed.success) throw new JobError("validation_failed", `Invalid runner pod spec: ${zodMessage(parsed.error)}`);
  return parsed.data;
}

/** The spec's options with the secret options from the environment (which win over the spec). */
export function optionsWithSecrets(spec: RunnerPodSpec, env: PodEnv): Record<string, unknown> {
  const options: Record<string, unknown> = { ...spec.options };
  for (const key of SECRET_OPTION_KEYS) {
    const value = env[SECRET_OPTION_ENV[key]];
    if (value !== undefined && value !== "") options[key] = value;
  }
  return options;
}

/** Counts bytes through a stream and fails with limit_exceeded beyond `max`. */
function byteLimit(max: number, filename: string): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen > max) done(new JobError("limit_exceeded", `Input "${filename}" is larger than ${max} bytes.`));
      else done(null, chunk);
    },
  });
}

async function download(
  store: PodStorage,
  input: RunnerPodSpec["inputs"][number],
  file: string,
  maxBytes: number,
  signal: AbortSignal,
): Promise<void> {
  let body: Readable;
  try {
    body = await store.get(input.key, { signal });
  } catch (err) {
    if (err instanceof ObjectNotFound) throw new JobError("invalid_pdf", `Input "${input.filename}" could not be read.`, { cause: err });
    throw err;
  }
  await pipeline(body, byteLimit(maxBytes, input.filename), createWriteStream(file, { mode: 0o600, flags: "wx" }), { signal });
}

/** Fetches the inputs, runs the spec, stores the outputs; throws JobError (or a storage error). */
async function runPodSpec(spec: RunnerPodSpec, env: PodEnv, deps: PodDeps, work: string): Promise<RunnerPodResult> {
  const limits = { ...defaultLimits(deps.config), ...spec.limits };
  const started = Date.now();
  const deadline = AbortSignal.timeout(limits.timeout_ms);
  const timedOut = (what: string): JobError =>
    new JobError("timeout", `The job did not finish within ${Math.round(limits.timeout_ms / 1000)} s (${what}).`);
  const store = deps.store();

  const inDir = path.join(work, "in");
  await mkdir(inDir, { mode: 0o700 });
  const inputs = spec.inputs.map((input, i) => ({ ...input, path: path.join(inDir, String(i)) }));
  // Two downloads at a time: merges may have 50 inputs.
  let next = 0;
  const fetchNext = async (): Promise<void> => {
    for (let i = next++; i < inputs.length; i = next++) await download(store, inputs[i]!, inputs[i]!.path, limits.max_file_bytes, deadline);
  };
  try {
    await Promise.all([fetchNext(), fetchNext()]);
  } catch (err) {
    if (deadline.aborted) throw timedOut("downloading the inputs");
    throw err;
  }

  // The rest of the deadline is the operation's.
  const remaining = Math.max(1, limits.timeout_ms - (Date.now() - started));
  const result: RunnerResult = await runSpec(
    {
      job_id: spec.job_id,
      operation: spec.operation,
      inputs: inputs.map((i) => ({ path: i.path, filename: i.filename, ...(i.pages ? { pages: i.pages } : {}) })),
      options: optionsWithSecrets(spec, env),
      output_dir: path.join(work, "out"),
      ...(spec.output_filename ? { output_filename: spec.output_filename } : {}),
      limits: { ...spec.limits, timeout_ms: remaining },
    },
    deps,
  );

  const outputs: RunnerPodResult["outputs"] = [];
  for (const [i, o] of result.outputs.entries()) {
    if (deadline.aborted) throw timedOut("storing the outputs");
    const key = outputKey(spec, i);
    await store.putFile(key, o.path);
    outputs.push({ key, filename: o.filename, content_type: o.content_type, size: o.size, sha256: o.sha256, pages: o.pages });
  }
  return { operation: result.operation, outputs, figures: result.figures, duration_ms: Date.now() - started };
}

function failure(err: unknown, log: Logger): { report: Report; exitCode: number } {
  if (err instanceof UsageError) return { report: { error: { code: "validation_failed", message: err.message } }, exitCode: EXIT.USAGE };
  const jobError = toJobError(err);
  // Internal errors are logged with their cause's message (storage errors carry no credentials);
  // the report only says what the client may see.
  if (jobError.code === "internal_error") {
    const cause = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    log.error({ cause }, "Runner pod failed");
  }
  return { report: { error: jobError.toJSON() }, exitCode: jobError.exitCode };
}

/** Keeps an error report within the termination message's size (messages are short; be sure). */
function fitError(report: { error: { code: string; message: string } }): string {
  let text = JSON.stringify(report);
  while (Buffer.byteLength(text) > TERMINATION_MESSAGE_MAX_BYTES) {
    report.error.message = report.error.message.slice(0, Math.floor(report.error.message.length * 0.75)) + "…";
    text = JSON.stringify(report);
  }
  return text;
}

/** Runs the pod: returns the termination message and the exit code; writes nothing itself. */
export async function runPod(env: PodEnv, deps: PodDeps): Promise<PodOutcome> {
  let spec: RunnerPodSpec | undefined;
  let work: string | undefined;
  let report: Report;
  let exitCode = 0;
  try {
    spec = readPodSpec(env);
    deps.log.info({ job_id: spec.job_id, operation: spec.operation, inputs: spec.inputs.length }, "Runner pod started");
    await mkdir(deps.config.FOLIO_TMP_DIR, { recursive: true });
    work = await mkdtemp(path.join(deps.config.FOLIO_TMP_DIR, "folio-pod-"));
    report = await runPodSpec(spec, env, deps, work);
  } catch (err) {
    ({ report, exitCode } = failure(err, deps.log));
  } finally {
    if (work) await rm(work, { recursive: true, force: true });
  }

  if ("error" in report) return { message: fitError(report), exitCode };
  const text = JSON.stringify(report);
  if (Buffer.byteLength(text) <= TERMINATION_MESSAGE_MAX_BYTES) return { message: text, exitCode };
  // Too large for the kubelet: the full result goes to the store, the message points to it.
  try {
    const key = resultKey(spec!);
    await deps.store().putBytes(key, Buffer.from(text));
    return { message: JSON.stringify({ result_key: key }), exitCode };
  } catch (err) {
    const f = failure(err, deps.log);
    return { message: fitError(f.report as { error: { code: string; message: string } }), exitCode: f.exitCode };
  }
}

/** Writes the termination message where the pod contract says (when it names a file). */
export async function writeTerminationMessage(env: PodEnv, message: string): Promise<void> {
  const file = env[TERMINATION_MESSAGE_PATH_ENV];
  if (file) await writeFile(file, message);
}
