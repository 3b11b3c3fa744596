/**
 * The directions of convert that issue #15 adds, routed before convert.ts's own (Office → PDF,
 * PDF → DOCX/XLSX): images ↔ PDF (convert-images.ts), HTML/Markdown/URL → PDF (convert-html.ts),
 * PDF/A (convert-pdfa.ts), and the `ocr: "auto"` hook in front of PDF → DOCX/XLSX. Returns null
 * when the request is one of convert.ts's.
 */
import { JobError } from "../../core/errors.ts";
import { isPdfa, type ConvertOptions } from "../../core/schemas/convert-options.ts";
import { IMAGE_KINDS, type DocKind } from "../../core/sniff.ts";
import type { OpContext, OpResult } from "./types.ts";

/** Inputs rendered by Chromium: a page, Markdown, or a zip of a page and its assets. */
const WEB_KINDS: readonly DocKind[] = ["html", "markdown", "zip"];

/**
 * Whether the inputs are images (one or several, to make one PDF); several inputs of any other
 * kind are refused.
 */
function imageInputs(ctx: OpContext<ConvertOptions>): boolean {
  const images = ctx.inputs.length > 0 && ctx.inputs.every((i) => IMAGE_KINDS.includes(i.kind));
  if (ctx.inputs.length > 1 && !images) {
    throw new JobError("unsupported_input", "convert takes one document, or several images to make one PDF.");
  }
  return images;
}

const isImageTarget = (to: ConvertOptions["to"]): to is "png" | "jpeg" => to === "png" || to === "jpeg";

/** A URL, or a page, Markdown or zip of a page to render. */
function isWeb(ctx: OpContext<ConvertOptions>): boolean {
  const first = ctx.inputs[0];
  return ctx.options.url !== undefined || (first !== undefined && WEB_KINDS.includes(first.kind));
}

/** The hook of `ocr: "auto"` before PDF → DOCX/XLSX: pages without text get a text layer, then convert.ts goes on as usual. */
async function ocrIfAsked(ctx: OpContext<ConvertOptions>): Promise<void> {
  const first = ctx.inputs[0];
  const to = ctx.options.to;
  if (first?.kind !== "pdf" || (to !== "docx" && to !== "xlsx") || ctx.options.ocr !== "auto") return;
  const scanned = await (await import("./ocr-auto.ts")).ocrIfScanned(ctx);
  if (scanned) ctx.inputs[0] = { ...first, path: scanned };
}

/**
 * `toPdf` is convert itself, for the directions that first need the document as a PDF (PDF/A from
 * Office, HTML or images).
 */
export async function convertMore(
  ctx: OpContext<ConvertOptions>,
  toPdf: (c: OpContext<ConvertOptions>) => Promise<OpResult>,
): Promise<OpResult | null> {
  const to = ctx.options.to;
  if (isPdfa(to)) return (await import("./convert-pdfa.ts")).toPdfa(ctx, to, toPdf);
  if (imageInputs(ctx)) {
    if (to !== "pdf") throw new JobError("unsupported_input", 'Images can only be converted to PDF ("to": "pdf").');
    return (await import("./convert-images.ts")).imagesToPdf(ctx);
  }
  if (ctx.inputs[0]?.kind === "pdf" && isImageTarget(to)) return (await import("./convert-images.ts")).pdfToImages(ctx, to);
  if (isWeb(ctx)) {
    if (to !== "pdf") throw new JobError("unsupported_input", `A web page can only be converted to PDF ("to": "pdf"), not ${to}.`);
    return (await import("./convert-html.ts")).htmlToPdf(ctx);
  }
  if (isImageTarget(to)) throw new JobError("unsupported_input", `Only a PDF can be converted to ${to.toUpperCase()}.`);
  await ocrIfAsked(ctx);
  return null;
}
