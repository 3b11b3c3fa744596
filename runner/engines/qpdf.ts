/**
 * qpdf, the engine behind merge, split, protect, lossless compression and inspection.
 *
 * We call the qpdf executable directly rather than through node-qpdf2 (docs/adr/0001): qpdf's exit
 * code 3 means "succeeded with warnings" and is success here; secrets go through `--job-json-file`
 * (a 0600 file in the job's private work directory) so that they never appear on a command line.
 */
import { randomBytes } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { JobError } from "../../core/errors.ts";
import { exec, type ExecResult } from "./exec.ts";

/** qpdf's documented exit codes (qpdf manual, "Exit Status"). */
export const QPDF_EXIT = { OK: 0, ERROR: 2, WARNINGS: 3 } as const;

export interface QpdfContext {
  qpdf: string;
  /** The job's private scratch directory. */
  work: string;
  signal?: AbortSignal;
}

/** A qpdf run that failed; `stderr` is for logs only and never reaches a client. */
export class QpdfError extends Error {
  override readonly name = "QpdfError";
  readonly code: number;
  readonly stderr: string;

  constructor(code: number, stderr: string) {
    super(`qpdf exited with ${code}: ${stderr.trim().split("\n").slice(-3).join(" | ")}`);
    this.code = code;
    this.stderr = stderr;
  }
}

function check(res: ExecResult): ExecResult {
  if (res.code === QPDF_EXIT.OK || res.code === QPDF_EXIT.WARNINGS) return res;
  throw new QpdfError(res.code, res.stderr);
}

/** Runs qpdf with arguments that carry no secrets. Warnings (exit 3) count as success. */
export async function qpdf(ctx: QpdfContext, args: readonly string[]): Promise<ExecResult> {
  return check(await exec(ctx.qpdf, ["--no-warn", ...args], { signal: ctx.signal }));
}

/**
 * Runs a qpdf job given as JSON (qpdf manual, "QPDF JSON job"), for anything carrying a password.
 * The file is created 0600 in the job's work directory and removed as soon as qpdf exits.
 */
export async function qpdfJob(ctx: QpdfContext, job: Record<string, unknown>): Promise<ExecResult> {
  const file = path.join(ctx.work, `qpdf-job-${randomBytes(8).toString("hex")}.json`);
  await writeFile(file, JSON.stringify(job), { mode: 0o600, flag: "wx" });
  try {
    return check(await exec(ctx.qpdf, ["--no-warn", `--job-json-file=${file}`], { signal: ctx.signal }));
  } finally {
    await rm(file, { force: true });
  }
}

/** Page count of a PDF that Folio itself wrote. */
export async function countPages(ctx: QpdfContext, file: string): Promise<number> {
  const res = await qpdf(ctx, ["--show-npages", file]);
  return Number.parseInt(res.stdout.trim(), 10);
}

/**
 * Runs `qpdf --json=2 ARGS… INPUT` (qpdf manual, "qpdf JSON") and parses the JSON; for reading a
 * document's structure (outlines, pages), never for anything carrying a secret. qpdf writes the
 * JSON to a file in the work directory rather than to a pipe: it emits tens of thousands of tiny
 * writes, and waking Node for each costs more than a third of the run on large outlines.
 */
export async function qpdfJson(ctx: QpdfContext, args: readonly string[], input: string): Promise<unknown> {
  const file = path.join(ctx.work, `qpdf-json-${randomBytes(8).toString("hex")}.json`);
  try {
    await qpdf(ctx, ["--json=2", ...args, input, file]);
    const text = await readFile(file, "utf8");
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new QpdfError(QPDF_EXIT.ERROR, `qpdf wrote ${text.length} characters that are not JSON (${String(err)})`);
    }
  } finally {
    await rm(file, { force: true });
  }
}

/**
 * A qpdf failure caused by one of the inputs, as the client's error. qpdf names the file it was
 * reading when it gives up ("qpdf: /in/a.pdf (object 3 0): Loop detected in /Pages structure"):
 * damage that --show-npages tolerated but copying pages does not. A failure that names an input
 * is invalid_pdf for that input; anything else is returned unchanged (an internal error).
 */
export function blameInput(err: unknown, inputs: readonly { path: string; filename: string }[]): unknown {
  if (!(err instanceof QpdfError)) return err;
  const culprit = inputs.find((i) => err.stderr.includes(`qpdf: ${path.resolve(i.path)}`));
  if (!culprit) return err;
  return new JobError("invalid_pdf", `Input "${culprit.filename}" is damaged in a way that cannot be repaired.`, { cause: err });
}
