/**
 * compress: make a PDF smaller without touching what makes it a document.
 *
 * - `lossless`: qpdf rewrites the file with object streams (ISO 32000-1 §7.5.7), recompresses
 *   every Flate stream at level 9 and turns LZW/ASCII-encoded streams into Flate.
 * - `low`/`medium`/`high`: first the image pass (runner/ops/compress-images/pdf-images.ts) downsamples images
 *   above the level's resolution at their largest placed size and re-encodes them (COMPRESS_LEVELS),
 *   then the same lossless rewrite runs with the new image streams patched in. Text, fonts, form
 *   fields, links, bookmarks and structure are never decoded or rebuilt: qpdf copies them.
 *
 * The output is never larger than the input: when no candidate beats it — or when qpdf reads the
 * input but cannot write it back correctly — the input itself is the output and the figures say
 * `compressed: false`. The one exception is a damaged input, which is never returned as it came:
 * its reconstruction is (figures: `repaired: true`). An input's encryption (owner password only, the only kind that reaches an
 * operation) is kept as it was, with its permissions: qpdf preserves it on write.
 */
import { randomBytes } from "node:crypto";
import { copyFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import { COMPRESS_LEVELS, type CompressOptions } from "../../core/schemas/options.ts";
import { exec, ExecAborted } from "../engines/exec.ts";
import { checkPdfInflation } from "../pdf/pdf-inflation.ts";
import { recompressImages, type ImagePassResult } from "./compress-images/pdf-images.ts";
import { catalogMetadata } from "../pdf/pdf-json.ts";
import { qpdf, QPDF_EXIT, QpdfError, type QpdfContext } from "../engines/qpdf.ts";
import type { OpContext, OpDefinition, OpResult } from "./types.ts";

/**
 * The lossless rewrite, in two variants whose smaller output wins. Both pack non-stream objects
 * and the cross-reference table into object streams (ISO 32000-1 §7.5.7, §7.5.8; not for PDF/A-1,
 * see isPdfA1) and, through qpdf's generalized decoding, turn LZW- and ASCII-encoded streams into
 * Flate at level 9.
 * `recompress` also re-deflates every Flate stream at level 9 — usually smaller, but it drops PNG
 * predictors (§7.4.4.4), which is worse for images and soft masks stored with them; hence both.
 * Linearization (Annex F) is added only on request: it costs bytes.
 */
function rewriteArgs(
  input: string,
  output: string,
  opts: { patch: string | null; linearize: boolean; recompress: boolean; objectStreams: boolean },
): string[] {
  return [
    input,
    ...(opts.patch ? [`--update-from-json=${opts.patch}`] : []),
    `--object-streams=${opts.objectStreams ? "generate" : "disable"}`,
    "--compression-level=9",
    ...(opts.recompress ? ["--recompress-flate"] : []),
    ...(opts.linearize ? ["--linearize"] : []),
    output,
  ];
}

async function runImagePass(ctx: OpContext<CompressOptions>, q: QpdfContext): Promise<ImagePassResult> {
  const level = COMPRESS_LEVELS[ctx.options.level];
  const input = ctx.inputs[0]!;
  if (level.dpi === null || level.jpegQuality === null) return { patch: null, images: 0, recompressed: 0 };
  try {
    return await recompressImages({
      qpdf: q,
      input: input.path,
      pages: input.pages ?? 0,
      dpi: level.dpi,
      quality: level.jpegQuality,
      maxPixels: ctx.limits.max_image_pixels,
      log: ctx.log,
    });
  } catch (err) {
    // The image pass is an optimisation: when it fails, the lossless pass still runs.
    if (err instanceof ExecAborted || ctx.signal.aborted) throw err;
    ctx.log.warn({ err }, "Skipped the image pass after an error");
    return { patch: null, images: 0, recompressed: 0 };
  }
}

/**
 * qpdf can exit with success and still write a file it cannot read back (seen on the qpdf test
 * corpus: a trailer without /Size yields a broken cross-reference stream). A candidate counts only
 * when qpdf reopens it with the input's page count.
 */
async function verified(q: QpdfContext, file: string, pages: number | null): Promise<boolean> {
  const res = await exec(q.qpdf, ["--no-warn", "--show-npages", file], { signal: q.signal });
  return (res.code === QPDF_EXIT.OK || res.code === QPDF_EXIT.WARNINGS) && Number.parseInt(res.stdout.trim(), 10) === pages;
}

interface Rewritten {
  file: string;
  size: number;
  /** The new images are in it (false when only the rewrite without them succeeded). */
  patched: boolean;
}

/**
 * Writes both rewrite variants (in parallel: each qpdf is single-threaded) and returns the smaller
 * good one, or null when qpdf cannot rewrite the file. When the patched rewrite fails, the rewrite
 * without new images is tried, so a bad patch never costs the lossless gain.
 */
async function rewrite(
  ctx: OpContext<CompressOptions>,
  q: QpdfContext,
  patch: string | null,
  objectStreams: boolean,
): Promise<Rewritten | null> {
  const input = ctx.inputs[0]!;
  const variants = [true, false].map(async (recompress) => {
    const file = path.join(ctx.work, `rewrite-${recompress ? "recompressed" : "kept"}${patch ? "-images" : ""}.pdf`);
    try {
      await qpdf(q, rewriteArgs(input.path, file, { patch, linearize: ctx.options.linearize, recompress, objectStreams }));
      if (await verified(q, file, input.pages)) return { file, size: (await stat(file)).size, patched: patch !== null };
      ctx.log.warn({ recompress, patch: patch !== null }, "Discarded a rewrite qpdf cannot read back");
    } catch (err) {
      if (!(err instanceof QpdfError)) throw err;
      ctx.log.warn({ err, recompress, patch: patch !== null }, "Rewrite failed");
    }
    return null;
  });
  const results = await Promise.all(variants);
  const best = results.reduce((a, b) => (a && (!b || a.size <= b.size) ? a : b), null);
  if (!best && patch) return rewrite(ctx, q, null, objectStreams);
  return best;
}

/**
 * PDF/A-1 (ISO 19005-1) is based on PDF 1.4 and forbids object streams and cross-reference
 * streams; an archive copy must stay conformant, so such files keep a classic xref table.
 * The claim is read from the XMP identification schema (pdfaid:part), as validators do.
 */
async function isPdfA1(q: QpdfContext, file: string): Promise<boolean> {
  const xmp = await catalogMetadata(q, file).catch((err: unknown) => {
    if (err instanceof ExecAborted) throw err;
    return null;
  });
  return xmp !== null && /pdfaid:part\s*(=\s*["']\s*1\s*["']|>\s*1\s*<)/.test(xmp);
}

/** Copies or moves `from` to outDir/filename through a temporary name: never a half-written output. */
async function publish(from: string, outDir: string, filename: string, move: boolean): Promise<string> {
  const partial = path.join(outDir, `.folio-${randomBytes(6).toString("hex")}.partial.pdf`);
  try {
    if (move) await rename(from, partial).catch(() => copyFile(from, partial));
    else await copyFile(from, partial);
    const final = path.join(outDir, filename);
    await rename(partial, final);
    return final;
  } finally {
    await rm(partial, { force: true });
  }
}

export const compress: OpDefinition<CompressOptions> = {
  operation: "compress",
  accepts: "pdf",
  minInputs: 1,
  maxInputs: 1,
  async run(ctx: OpContext<CompressOptions>): Promise<OpResult> {
    const input = ctx.inputs[0]!;
    const q: QpdfContext = { qpdf: ctx.config.FOLIO_QPDF, work: ctx.work, signal: ctx.signal };
    // Every pass below inflates the streams (images decoded, Flate recompressed): a compression
    // bomb is stopped first, at the cost of its allowance, not of inflating and deflating it all.
    await checkPdfInflation(q, input.path, input.size, ctx.limits);
    const images = await runImagePass(ctx, q);

    // No good rewrite (a file qpdf reads but cannot write back correctly): the input is the output.
    // A damaged input never comes back as it was sent: its reconstruction (runner/engines/repair.ts)
    // stands in for it, or the rewrite when that is smaller, even if both outweigh the damaged file.
    const best = await rewrite(ctx, q, images.patch, !(await isPdfA1(q, input.path)));
    const compressed = best !== null && best.size < input.size;
    const source = { file: input.path, size: input.repaired ? (await stat(input.path)).size : input.size };
    const chosen = compressed || (input.repaired && best && best.size < source.size) ? best : source;

    const filename = `${ctx.baseName}.pdf`;
    const file = await publish(chosen.file, ctx.outDir, filename, chosen !== source);
    const finalSize = chosen.size;
    return {
      files: [{ path: file, filename, content_type: "application/pdf" }],
      figures: {
        level: ctx.options.level,
        original_size: input.size,
        size: finalSize,
        ratio: Math.round((finalSize / input.size) * 10_000) / 10_000,
        compressed,
        ...(input.repaired ? { repaired: true } : {}),
        linearized: chosen !== source && ctx.options.linearize,
        ...(ctx.options.level === "lossless" ? {} : { images: images.images }),
        images_recompressed: chosen !== source && best?.patched ? images.recompressed : 0,
      },
    };
  },
};
