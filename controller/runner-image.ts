/**
 * Which runner image a PdfJob's pod runs (docs/adr/0015). The engines of issue #15 — Chromium,
 * OCRmyPDF with Tesseract, a JRE for veraPDF — would more than double the runner image, whose
 * budget is 700 MB, and most jobs never use them; so they live in a second image built on the
 * first (docker/runner-full.Dockerfile), and only the jobs that need them run it:
 *  - ocr;
 *  - convert to PDF/A (OCRmyPDF's PDF/A pipeline, veraPDF);
 *  - convert of a web page: a `url`, or an HTML, Markdown or zip input (Chromium);
 *  - convert to DOCX/XLSX with `ocr: "auto"`.
 * Without a full image configured, every job runs the one image (a cluster that built one image
 * with everything, or that does not offer these operations).
 */
import type { PdfJobSpec } from "../core/schemas/pdfjob.ts";

const WEB_TYPES = new Set(["text/html", "text/markdown", "application/zip"]);

/** True when the job needs an engine only the full runner image has. */
export function needsFullImage(spec: Pick<PdfJobSpec, "operation" | "options" | "inputs">): boolean {
  if (spec.operation === "ocr") return true;
  if (spec.operation !== "convert") return false;
  const o = spec.options;
  if (typeof o.to === "string" && o.to.startsWith("pdf/a")) return true;
  if (o.url !== undefined || o.ocr === "auto") return true;
  return spec.inputs.some((i) => WEB_TYPES.has(i.contentType));
}

/** The image for the job: the full one when it needs it and one is configured, else the runner image. */
export function runnerImageFor(
  spec: Pick<PdfJobSpec, "operation" | "options" | "inputs">,
  images: { image: string; fullImage?: string },
): string {
  return images.fullImage && needsFullImage(spec) ? images.fullImage : images.image;
}
