/**
 * What one Office → PDF conversion needs whichever soffice runs it (a warm instance or a cold
 * one-shot): a private staging directory with the input under a safe name, and a verification of
 * the output — soffice exits 0 (and the IPC answers ProcessingDone) even when the document could
 * not be loaded, so the only proof of success is a PDF on disk.
 */
import { randomBytes } from "node:crypto";
import { copyFile, link, mkdir, open, stat } from "node:fs/promises";
import path from "node:path";
import { JobError } from "../../core/errors.ts";

export interface SofficeConvertOptions {
  /** The job's private scratch directory. */
  work: string;
  signal: AbortSignal;
  /**
   * The file extension LibreOffice should see (e.g. "docx"); by default the input's own. Type
   * detection is by content, but the extension is a hint that decides ties (OLE2, RTF, text).
   */
  ext?: string;
}

/** Something that converts an Office document to PDF: a warm pool or a cold one-shot soffice. */
export interface SofficeProvider {
  /** "warm" for a pool of running offices, "cold" for one soffice started per conversion. */
  readonly engine: "warm" | "cold";
  /**
   * Converts `input` to PDF and returns the path of the PDF (inside opts.work). Throws JobError:
   * conversion_failed when LibreOffice produced no valid PDF, timeout when it ran out of time.
   */
  toPdf(input: string, opts: SofficeConvertOptions): Promise<string>;
  close(): Promise<void>;
}

export interface StagedJob {
  /** The input as LibreOffice opens it: `<dir>/in/document.<ext>`. */
  input: string;
  /** Where LibreOffice writes the PDF. */
  outDir: string;
  /** The PDF LibreOffice names after the input. */
  expected: string;
}

/**
 * Puts the input under a fixed, safe name in a fresh directory of the job's work space: client
 * filenames never reach a command line, and two conversions never share an output directory.
 * A hard link costs nothing; a copy is the fallback across file systems.
 */
export async function stageInput(input: string, opts: SofficeConvertOptions): Promise<StagedJob> {
  const dir = path.join(opts.work, `soffice-${randomBytes(6).toString("hex")}`);
  const inDir = path.join(dir, "in");
  const outDir = path.join(dir, "out");
  await mkdir(inDir, { recursive: true, mode: 0o700 });
  await mkdir(outDir, { mode: 0o700 });
  const ext = (opts.ext ?? path.extname(input).slice(1)).replace(/[^A-Za-z0-9]/g, "").slice(0, 8) || "bin";
  const staged = path.join(inDir, `document.${ext}`);
  await link(input, staged).catch(() => copyFile(input, staged));
  return { input: staged, outDir, expected: path.join(outDir, "document.pdf") };
}

/** Checks that LibreOffice left a non-empty file starting with the PDF header (ISO 32000-1 §7.5.2). */
export async function verifyPdfOutput(file: string): Promise<void> {
  const st = await stat(file).catch(() => null);
  if (!st?.isFile() || st.size === 0) {
    throw new JobError("conversion_failed", "LibreOffice could not convert the document (it could not be loaded or exported).");
  }
  const fh = await open(file, "r");
  try {
    const head = Buffer.alloc(5);
    await fh.read(head, 0, 5, 0);
    if (head.toString("latin1") !== "%PDF-") {
      throw new JobError("conversion_failed", "LibreOffice did not produce a PDF for this document.");
    }
  } finally {
    await fh.close();
  }
}

/** The timeout error for a conversion that ran out of time. */
export function conversionTimeout(ms: number): JobError {
  return new JobError("timeout", `The conversion did not finish within ${Math.max(1, Math.round(ms / 1000))} s.`);
}
