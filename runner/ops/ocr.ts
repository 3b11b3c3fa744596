/**
 * ocr: a scanned PDF, or images (PNG, JPEG, TIFF — every frame), → one searchable PDF. Images are
 * first made a PDF by Folio's own writer (convert-images.ts: JPEG untouched, others lossless),
 * which also gives OCRmyPDF each image's resolution; then OCRmyPDF adds the text layer
 * (engines/ocrmypdf.ts). The page limit is checked before any OCR starts (inspection counts a
 * PDF's pages and a TIFF's frames), so a 2,000-page scan over the limit costs no Tesseract time.
 */
import path from "node:path";
import { JobError } from "../../core/errors.ts";
import type { OcrOptions } from "../../core/schemas/ocr-options.ts";
import { CONTENT_TYPES, IMAGE_KINDS } from "../../core/sniff.ts";
import { commitOutput, discard, partialPath, type PdfOutputFile } from "./outfile.ts";
import { runOcrmypdf } from "../engines/ocrmypdf.ts";
import { validatePdfa } from "../engines/verapdf.ts";
import { imagesToPdf } from "./convert-images.ts";
import type { OpContext, OpDefinition, OpResult } from "./types.ts";

/** The PDF to OCR: the input itself, or the images made into one PDF in the work directory. */
async function sourcePdf(ctx: OpContext<OcrOptions>): Promise<{ file: string; pages: number }> {
  const first = ctx.inputs[0]!;
  if (first.kind === "pdf") {
    if (ctx.inputs.length > 1) throw new JobError("unsupported_input", "ocr takes one PDF, or images.");
    return { file: path.resolve(first.path), pages: first.pages ?? 0 };
  }
  if (!ctx.inputs.every((i) => IMAGE_KINDS.includes(i.kind)))
    throw new JobError("unsupported_input", "ocr takes a PDF, or PNG, JPEG and TIFF images.");
  const pages = ctx.inputs.reduce((n, i) => n + (i.pages ?? 1), 0);
  if (pages > ctx.limits.max_pages)
    throw new JobError("limit_exceeded", `The images make ${pages} pages; the limit is ${ctx.limits.max_pages}.`);
  const made = await imagesToPdf({ ...ctx, outDir: ctx.work, baseName: "images", options: { to: "pdf" } });
  return { file: made.files[0]!.path, pages };
}

export const ocr: OpDefinition<OcrOptions> = {
  operation: "ocr",
  accepts: "any",
  minInputs: 1,
  maxInputs: "max_merge_files",
  async run(ctx: OpContext<OcrOptions>): Promise<OpResult> {
    const o = ctx.options;
    const source = await sourcePdf(ctx);
    const tmp = partialPath(ctx.outDir, ".pdf");
    try {
      const { ms } = await runOcrmypdf({
        input: source.file,
        output: tmp,
        work: ctx.work,
        languages: o.languages,
        deskew: o.deskew,
        rotatePages: o.rotate_pages,
        textPages: o.skip_text ? "skip" : "force",
        pdfa: o.pdfa ? 2 : null,
        jobs: ctx.config.FOLIO_OCR_JOBS,
        signal: ctx.signal,
        log: ctx.log,
      });
      const validation = o.pdfa ? await validatePdfa(ctx, tmp, "pdf/a-2b") : null;
      const filename = `${ctx.baseName}.pdf`;
      const out: PdfOutputFile = {
        path: await commitOutput(tmp, ctx.outDir, filename),
        filename,
        content_type: CONTENT_TYPES.pdf,
        pages: source.pages,
      };
      const figures = { pages: source.pages, languages: o.languages, ocr_ms: ms, ...(validation ? { pdfa: validation } : {}) };
      ctx.log.info({ pages: source.pages, ocr_ms: ms }, "OCRed a document");
      return { files: [out], figures };
    } finally {
      await discard(tmp);
    }
  },
};
