/**
 * `ocr: "auto"` on PDF → DOCX/XLSX: a PDF with pages that carry no text (scans) gets a text layer
 * on those pages first (OCRmyPDF --skip-text leaves the others as they are), so a scan converts
 * instead of ending in unsupported_input. Which pages have text is read by poppler's pdftotext
 * (pages are separated by form feeds), one fast pass; a PDF whose every page has text is left alone.
 */
import path from "node:path";
import type { ConvertOptions } from "../../core/schemas/convert-options.ts";
import { exec } from "../engines/exec.ts";
import { runOcrmypdf } from "../engines/ocrmypdf.ts";
import type { OpContext } from "./types.ts";

/** How many pages of `file` have no letter or digit in their text. */
export async function pagesWithoutText(file: string, signal: AbortSignal): Promise<number> {
  const res = await exec("pdftotext", ["-q", file, "-"], { signal, maxOutput: 256 * 1024 * 1024 });
  const pages = res.stdout.split("\f").slice(0, -1);
  return pages.filter((p) => !/[\p{L}\p{N}]/u.test(p)).length;
}

/** The path of an OCRed copy when the input has pages without text; null when it needs none. */
export async function ocrIfScanned(ctx: OpContext<ConvertOptions>): Promise<string | null> {
  const input = path.resolve(ctx.inputs[0]!.path);
  if ((await pagesWithoutText(input, ctx.signal)) === 0) return null;
  const out = path.join(ctx.work, "ocr-auto.pdf");
  // The languages OCR offers by default; a client who knows better uses the ocr operation first.
  await runOcrmypdf({
    input,
    output: out,
    work: ctx.work,
    languages: ["eng"],
    deskew: false,
    rotatePages: true,
    textPages: "skip",
    pdfa: null,
    jobs: ctx.config.FOLIO_OCR_JOBS,
    signal: ctx.signal,
    log: ctx.log,
  });
  return out;
}
