/**
 * convert (API.md), two families of directions:
 *  - Office documents (DOCX/DOC/ODT/RTF, XLSX/XLS/ODS, PPTX/PPT/ODP) → PDF with LibreOffice — warm
 *    pool or cold one-shot, whichever the process was given;
 *  - PDF → DOCX and PDF → XLSX by Folio's own layout analysis (runner/pdf-layout) and writers
 *    (convert-docx.ts, convert-xlsx.ts). A PDF with no text at all (a scan, pages of images) is
 *    `unsupported_input`: there is nothing to edit until it has been through OCR.
 *
 * LibreOffice's word on success is worth nothing (exit 0 and IPC "done" on failures too), so the
 * PDF is verified twice: the provider checks it exists and starts with %PDF-, and here qpdf must
 * open it and count at least one page.
 */
import { copyFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { JobError } from "../../core/errors.ts";
import type { ConvertOptions } from "../../core/schemas/options.ts";
import { convertMore } from "./convert-more.ts";
import { CONTENT_TYPES, OFFICE_KINDS, type DocKind } from "../../core/sniff.ts";
import { isPasswordProtected } from "../engines/office-encryption.ts";
import { checkZipInflation, normalizeZipNames } from "../engines/office-zip.ts";
import { checkPdfInflation } from "../pdf/pdf-inflation.ts";
import { qpdf } from "../engines/qpdf.ts";
import { analyzePdf } from "../pdf-layout/index.ts";
import { writeDocx } from "./convert-docx.ts";
import { writeXlsx } from "./convert-xlsx.ts";
import type { OpContext, OpDefinition, OpResult } from "./types.ts";

const TARGET_NAMES = { docx: "Word (DOCX)", xlsx: "Excel (XLSX)", pdf: "PDF" } as const;

/** Refuses the directions that do not exist, with a message a client can act on. */
function checkDirection(kind: DocKind, to: "docx" | "xlsx" | "pdf"): void {
  if (kind === "pdf" && to === "pdf") throw new JobError("unsupported_input", "The input is already a PDF; there is nothing to convert.");
  if (kind === "pdf") return;
  if (to !== "pdf") {
    throw new JobError(
      "unsupported_input",
      `A ${kind.toUpperCase()} document can only be converted to PDF ("to": "pdf"); ${TARGET_NAMES[to]} output takes a PDF input.`,
    );
  }
  if (!OFFICE_KINDS.includes(kind)) throw new JobError("unsupported_input", `${kind.toUpperCase()} documents cannot be converted to PDF.`);
}

/** PDF → DOCX or XLSX: layout analysis, then the writer for the target. */
async function fromPdf(ctx: OpContext<ConvertOptions>, to: "docx" | "xlsx"): Promise<OpResult> {
  const input = ctx.inputs[0]!;
  const started = performance.now();
  // Layout analysis decodes every content stream: a compression bomb is stopped before it.
  await checkPdfInflation({ qpdf: ctx.config.FOLIO_QPDF, work: ctx.work, signal: ctx.signal }, input.path, input.size, ctx.limits);
  const layout = await analyzePdf(input.path, { signal: ctx.signal, maxImagePixels: ctx.limits.max_image_pixels, images: to === "docx" });
  if (layout.chars === 0) {
    throw new JobError(
      "unsupported_input",
      "The PDF has no text to convert (it looks scanned or made of images); run it through OCR first.",
    );
  }
  const filename = `${ctx.baseName}.${to}`;
  const out = path.join(ctx.outDir, filename);
  const figures = to === "docx" ? await writeDocx(layout, out, ctx.signal) : await writeXlsx(layout, out, ctx.signal);
  const ms = Math.round(performance.now() - started);
  const all = { source_format: "pdf", pages: layout.pages.length, ...figures, ms };
  ctx.log.info(all, `Converted PDF to ${to.toUpperCase()}`);
  return { files: [{ path: out, filename, content_type: CONTENT_TYPES[to] }], figures: all };
}

/** Pages of the PDF LibreOffice wrote, by qpdf; a PDF qpdf cannot open is a failed conversion. */
async function verifiedPages(ctx: OpContext<ConvertOptions>, pdf: string): Promise<number> {
  let pages = Number.NaN;
  try {
    const res = await qpdf({ qpdf: ctx.config.FOLIO_QPDF, work: ctx.work, signal: ctx.signal }, ["--show-npages", pdf]);
    pages = Number.parseInt(res.stdout.trim(), 10);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.log.info({ err }, "LibreOffice wrote a PDF qpdf cannot open");
  }
  if (!(pages >= 1)) throw new JobError("conversion_failed", "LibreOffice produced an unreadable PDF for this document.");
  return pages;
}

async function moveInto(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch {
    // Work and output directories may be on different file systems (EXDEV).
    await copyFile(from, to);
    await rm(from, { force: true });
  }
}

export const convert: OpDefinition<ConvertOptions> = {
  operation: "convert",
  accepts: "any",
  minInputs: 1,
  maxInputs: "max_merge_files",
  async run(ctx) {
    const more = await convertMore(ctx, (c) => convert.run(c));
    if (more) return more;
    const input = ctx.inputs[0]!;
    // convertMore has taken every other target.
    const to = ctx.options.to as "docx" | "xlsx" | "pdf";
    checkDirection(input.kind, to);
    if (input.kind === "pdf" && to !== "pdf") return fromPdf(ctx, to);
    // A zip bomb never reaches LibreOffice (entry count, overlapping entries, declared and real inflated sizes).
    await checkZipInflation(input.path, input.size, ctx.limits);
    if (await isPasswordProtected(input.path, input.kind, ctx.limits.max_file_bytes)) {
      throw new JobError("encrypted_input", "The document is password-protected; remove the password and try again.");
    }
    const started = performance.now();
    // Entry names with backslashes (Excel reads them, LibreOffice does not): the zip rewritten first.
    const normalized = path.join(ctx.work, `normalized.${input.kind}`);
    const source = (await normalizeZipNames(input.path, input.size, normalized)) ? normalized : input.path;
    const pdf = await ctx.soffice.toPdf(source, { work: ctx.work, signal: ctx.signal, ext: input.kind });
    const convert_ms = Math.round(performance.now() - started);
    const pages = await verifiedPages(ctx, pdf);
    const out = path.join(ctx.outDir, `${ctx.baseName}.pdf`);
    await moveInto(pdf, out);
    ctx.log.info({ source_format: input.kind, pages, engine: ctx.soffice.engine, convert_ms }, "Converted document to PDF");
    return {
      files: [{ path: out, filename: `${ctx.baseName}.pdf`, content_type: CONTENT_TYPES.pdf }],
      figures: { source_format: input.kind, pages, engine: ctx.soffice.engine, convert_ms },
    };
  },
};
