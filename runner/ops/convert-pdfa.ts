/**
 * convert to PDF/A-1b, -2b or -3b (ISO 19005-1/-2/-3, level B: the visual appearance is
 * preserved): from a PDF, or from anything convert turns into a PDF first (Office, HTML,
 * Markdown, images). OCRmyPDF's PDF/A pipeline does the conversion — Ghostscript's pdfwrite with
 * an sRGB output intent, fonts embedded, XMP metadata matching the document information — with
 * OCR switched off (`--tesseract-timeout 0`, OCRmyPDF's documented way to convert only). veraPDF
 * then validates the output against the part's profile (engines/verapdf.ts): a file that does not
 * validate fails the job with `conversion_failed` and the clauses it breaks, never ships as PDF/A.
 */
import path from "node:path";
import { JobError } from "../../core/errors.ts";
import type { ConvertOptions, PdfaTarget } from "../../core/schemas/convert-options.ts";
import { CONTENT_TYPES } from "../../core/sniff.ts";
import { exec } from "../engines/exec.ts";
import { commitOutput, discard, partialPath, type PdfOutputFile } from "./outfile.ts";
import { validatePdfa } from "../engines/verapdf.ts";
import type { OpContext, OpResult } from "./types.ts";

/** The document as a PDF: the input itself, or convert's own output for the input (into the work directory). */
async function asPdf(
  ctx: OpContext<ConvertOptions>,
  toPdf: (c: OpContext<ConvertOptions>) => Promise<OpResult>,
): Promise<{ file: string; from: string }> {
  const first = ctx.inputs[0];
  if (first?.kind === "pdf") return { file: path.resolve(first.path), from: "pdf" };
  const made = await toPdf({ ...ctx, outDir: ctx.work, baseName: "source", options: { ...ctx.options, to: "pdf" } });
  return {
    file: made.files[0]!.path,
    from: typeof made.figures.source_format === "string" ? made.figures.source_format : (first?.kind ?? "url"),
  };
}

export async function toPdfa(
  ctx: OpContext<ConvertOptions>,
  target: PdfaTarget,
  toPdf: (c: OpContext<ConvertOptions>) => Promise<OpResult>,
): Promise<OpResult> {
  const source = await asPdf(ctx, toPdf);
  const part = target.slice("pdf/a-".length, -1); // "1", "2", "3"
  const tmp = partialPath(ctx.outDir, ".pdf");
  const started = performance.now();
  try {
    const args = [
      "--skip-text",
      "--tesseract-timeout",
      "0",
      "--output-type",
      `pdfa-${part}`,
      "--optimize",
      "0",
      "--quiet",
      source.file,
      tmp,
    ];
    const res = await exec("ocrmypdf", args, { signal: ctx.signal, env: { TMPDIR: ctx.work } });
    if (res.code === 8)
      throw new JobError("encrypted_input", "PDF/A cannot be encrypted; remove the document's password first (edit's unlock).");
    if (res.code === 2) throw new JobError("invalid_pdf", "The PDF could not be read for PDF/A conversion.");
    if (res.code !== 0) {
      ctx.log.info({ code: res.code, stderr: res.stderr.slice(-2000) }, "PDF/A conversion failed");
      throw new JobError("conversion_failed", `The document could not be converted to ${target.toUpperCase()}.`);
    }
    const convert_ms = Math.round(performance.now() - started);
    const pdfa = await validatePdfa(ctx, tmp, target);
    const filename = `${ctx.baseName}.pdf`;
    const out: Omit<PdfOutputFile, "pages"> = {
      path: await commitOutput(tmp, ctx.outDir, filename),
      filename,
      content_type: CONTENT_TYPES.pdf,
    };
    const figures = {
      source_format: source.from,
      target,
      convert_ms,
      validate_ms: Math.round(performance.now() - started) - convert_ms,
      pdfa,
    };
    ctx.log.info(figures, "Converted to PDF/A");
    return { files: [out], figures };
  } finally {
    await discard(tmp);
  }
}
