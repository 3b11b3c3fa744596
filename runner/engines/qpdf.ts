/**
 * qpdf, the engine behind merge, split, protect, lossless compression and inspection.
 *
 * We call the qpdf executable directly rather than through node-qpdf2 (docs/adr/0001): qpdf's exit
 * code 3 means "succeeded with warnings" and is success here; secrets go through `--job-json-file`
 * (a 0600 file in the job's private work directory) so that they never appear on a command line.
 */
import { randomBytes } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
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

export interface PdfFacts {
  pages: number;
  /** Encrypted, but opens without a password (owner password only). */
  encrypted: boolean;
}

/**
 * Opens a PDF the way every operation will and reports its page count. A password-protected
 * file is `encrypted_input`; anything qpdf cannot open (even after its own repair) is `invalid_pdf`.
 */
export async function inspectPdf(ctx: QpdfContext, file: string): Promise<PdfFacts> {
  const res = await exec(ctx.qpdf, ["--no-warn", "--show-npages", file], { signal: ctx.signal });
  if (res.code !== QPDF_EXIT.OK && res.code !== QPDF_EXIT.WARNINGS) {
    if (/invalid password/i.test(res.stderr)) {
      throw new JobError("encrypted_input", "The PDF is password-protected; remove the password first.");
    }
    throw new JobError("invalid_pdf", "The file is not a readable PDF, even after repair.");
  }
  const pages = Number.parseInt(res.stdout.trim(), 10);
  if (!Number.isFinite(pages) || pages < 1) {
    throw new JobError("invalid_pdf", "The PDF has no pages.");
  }
  const enc = await exec(ctx.qpdf, ["--requires-password", file], { signal: ctx.signal });
  // --requires-password: 0 = needs one (ruled out above), 2 = not encrypted, 3 = encrypted, opens without.
  return { pages, encrypted: enc.code === 3 };
}

/** Page count of a PDF that Folio itself wrote. */
export async function countPages(ctx: QpdfContext, file: string): Promise<number> {
  const res = await qpdf(ctx, ["--show-npages", file]);
  return Number.parseInt(res.stdout.trim(), 10);
}
