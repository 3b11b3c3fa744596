/**
 * OCRmyPDF (Debian's ocrmypdf, with Tesseract): a PDF of page images in, the same pages with an
 * invisible text layer out. Pages are OCRed in parallel (`--jobs`, the job's CPU share), each
 * Tesseract single-threaded (OMP_THREAD_LIMIT=1), so N pages use N cores and no more.
 *
 * Its exit codes (ocrmypdf.ExitCode) become the job's stable codes with a sentence a client can
 * act on — never Tesseract's own output, which Stirling-PDF's users get to read.
 */
import { availableParallelism } from "node:os";
import { JobError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { exec } from "./exec.ts";

export interface OcrRun {
  input: string;
  output: string;
  /** Scratch space for OCRmyPDF's own temporary files. */
  work: string;
  languages: readonly string[];
  deskew: boolean;
  rotatePages: boolean;
  /** skip: pages that have text are left as they are; force: every page rasterized and OCRed. */
  textPages: "skip" | "force";
  /** PDF/A part to write (OCRmyPDF converts through Ghostscript), or a plain PDF. */
  pdfa: 1 | 2 | 3 | null;
  /** CPU cores to use; 0 = all this process may use. */
  jobs: number;
  signal: AbortSignal;
  log: Logger;
}

/** ocrmypdf's documented exit codes (ocrmypdf/_exitcodes.py). */
const EXIT = {
  ok: 0,
  badArgs: 1,
  inputFile: 2,
  missingDependency: 3,
  invalidOutputPdf: 4,
  alreadyDone: 6,
  encrypted: 8,
  pdfaFailed: 10,
} as const;

/** Languages Tesseract has data for, from `tesseract --list-langs` (cached per process). */
let installed: Promise<Set<string>> | null = null;
export function installedLanguages(signal?: AbortSignal): Promise<Set<string>> {
  installed ??= exec("tesseract", ["--list-langs"], signal ? { signal } : {}).then((r) => {
    const langs = new Set(
      (r.stdout + r.stderr)
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => /^[a-z]{3}(_[a-z]{3,4})?$/.test(l) && l !== "osd"),
    );
    if (langs.size === 0) installed = null;
    return langs;
  });
  return installed;
}

export async function runOcrmypdf(r: OcrRun): Promise<{ ms: number }> {
  const have = await installedLanguages(r.signal);
  const missing = r.languages.filter((l) => !have.has(l));
  if (missing.length) {
    throw new JobError(
      "unsupported_input",
      `OCR language ${missing.join(", ")} is not installed; available: ${[...have].sort().join(", ")}.`,
    );
  }
  const jobs = r.jobs > 0 ? r.jobs : Math.max(1, availableParallelism());
  const args = [
    "--language",
    r.languages.join("+"),
    "--jobs",
    String(jobs),
    "--output-type",
    r.pdfa ? `pdfa-${r.pdfa}` : "pdf",
    r.textPages === "skip" ? "--skip-text" : "--force-ocr",
    ...(r.deskew ? ["--deskew"] : []),
    ...(r.rotatePages ? ["--rotate-pages"] : []),
    "--quiet",
    r.input,
    r.output,
  ];
  const started = performance.now();
  // Added to the engines' allow-listed environment (core/sandbox.ts), nothing of the runner's own.
  const env = { TMPDIR: r.work, OMP_THREAD_LIMIT: "1" };
  const res = await exec("ocrmypdf", args, { signal: r.signal, env });
  const ms = Math.round(performance.now() - started);
  switch (res.code) {
    case EXIT.ok:
      return { ms };
    case EXIT.inputFile:
      throw new JobError("invalid_pdf", "The PDF could not be read for OCR.");
    case EXIT.encrypted:
      throw new JobError("encrypted_input", "The PDF is encrypted; remove its password (edit's unlock) before OCR.");
    case EXIT.alreadyDone:
      throw new JobError("unsupported_input", "The PDF already has text; use skip_text to OCR only the pages without.");
    case EXIT.invalidOutputPdf:
    case EXIT.pdfaFailed:
      r.log.info({ code: res.code, stderr: res.stderr.slice(-2000) }, "OCRmyPDF could not write a valid output");
      throw new JobError(
        "conversion_failed",
        r.pdfa ? "The OCRed document could not be made PDF/A." : "OCR produced no valid PDF for this document.",
      );
    default:
      r.log.error({ code: res.code, stderr: res.stderr.slice(-2000) }, "OCRmyPDF failed");
      throw new Error(`ocrmypdf exited with ${res.code}`);
  }
}
