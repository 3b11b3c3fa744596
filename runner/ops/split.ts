/**
 * split: one PDF into parts — by page ranges (one part per range), every N pages, or one part per
 * page — returned as the parts plus one zip of them all.
 *
 * Parts are written by qpdf. `every` and `pages` are one run of `qpdf IN --split-pages=N` (qpdf
 * manual, "--split-pages"), which opens the input once for all parts; `ranges` runs
 * `qpdf --empty --pages IN RANGE -- PART` per range, two at a time. Both use
 * `--remove-unreferenced-resources=no`, 3× faster on LibreOffice-made input (bench/qpdf-ops.ts).
 *
 * Bookmarks: qpdf writes none into split parts; each part gets the input's bookmarks that point
 * into it, placed on its pages (the rules of runner/pdf/outline.ts), except in `pages` mode,
 * where a one-page part needs no navigation and thousands of tiny updates would cost more than
 * the split.
 *
 * Names: `${baseName}-${i}.pdf`, with i the 1-based part number in request order, zero-padded to
 * the width of the part count ("report-01.pdf" … "report-12.pdf"), so names sort in part order
 * and never collide, even for repeated or overlapping ranges; the zip is `${baseName}.zip`.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { JobError } from "../../core/errors.ts";
import { parsePageRanges, resolvePageRanges, toQpdfRange } from "../../core/pages.ts";
import type { SplitOptions } from "../../core/schemas/options.ts";
import { mapLimit, placeOutline, readOutline, writeOutline, type OutlineNode } from "../pdf/outline.ts";
import { commitOutput, discard, partialPath, stagingDir, type PdfOutputFile } from "./outfile.ts";
import { checkBytes, checkPages, dirBytes, estimateBytes, outputCaps, specPageCount, withinBytes } from "./output-budget.ts";
import { blameInput, qpdf, type QpdfContext } from "../engines/qpdf.ts";
import { writeZip } from "../engines/zip.ts";
import type { OpContext, OpDefinition, OpOutputFile, OpResult } from "./types.ts";

const QPDF_WRITE = ["--object-streams=disable", "--remove-unreferenced-resources=no"];

/** The parts to write: each a contiguous run of 1-based pages, in request order. */
export function planParts(options: SplitOptions, pageCount: number): number[][] {
  if (options.mode === "ranges") {
    const parsed = parsePageRanges(options.ranges);
    const resolved = typeof parsed === "string" ? parsed : resolvePageRanges(parsed, pageCount);
    if (typeof resolved === "string") throw new JobError("invalid_page_range", `Ranges "${options.ranges}": ${resolved}.`);
    return resolved;
  }
  const size = options.mode === "every" ? options.every : 1;
  const parts: number[][] = [];
  for (let first = 1; first <= pageCount; first += size) {
    parts.push(Array.from({ length: Math.min(size, pageCount - first + 1) }, (_, i) => first + i));
  }
  return parts;
}

/** Part file names, zero-padded so that they sort in part order. */
export function partNames(baseName: string, parts: number): string[] {
  const width = String(parts).length;
  return Array.from({ length: parts }, (_, i) => `${baseName}-${String(i + 1).padStart(width, "0")}.pdf`);
}

/** Writes the parts into `staging` and returns their paths in part order. */
async function writeParts(
  ctx: OpContext<SplitOptions>,
  qctx: QpdfContext,
  input: string,
  parts: number[][],
  staging: string,
): Promise<string[]> {
  if (ctx.options.mode === "ranges") {
    return mapLimit(parts, 2, async (pages, i) => {
      const out = path.join(staging, `part-${i}.pdf`);
      await qpdf(qctx, ["--empty", ...QPDF_WRITE, "--pages", input, toQpdfRange(pages), "--", out]);
      return out;
    });
  }
  const size = parts[0]!.length;
  await qpdf(qctx, [input, ...QPDF_WRITE, `--split-pages=${size}`, path.join(staging, "part-%d.pdf")]);
  // qpdf names parts by zero-padded page ranges ("part-0001-0100.pdf"), which sort in page order.
  const files = (await readdir(staging)).filter((f) => f.startsWith("part-")).sort();
  if (files.length !== parts.length) throw new Error(`qpdf wrote ${files.length} parts, expected ${parts.length}`);
  return files.map((f) => path.join(staging, f));
}

/** Gives each part the bookmarks that point into it; returns how many were written in all. */
async function writePartOutlines(ctx: OpContext<SplitOptions>, nodes: OutlineNode[], parts: number[][], files: string[]): Promise<number> {
  if (nodes.length === 0) return 0;
  const counts = await mapLimit(parts, 4, async (pages, i) => {
    const first = pages[0]!;
    const last = pages[pages.length - 1]!;
    const items = placeOutline(nodes, (p) => (p >= first && p <= last ? p - first : undefined), { first, last });
    return writeOutline(files[i]!, items, pages.length);
  });
  return counts.reduce((a, b) => a + b, 0);
}

export const split: OpDefinition<SplitOptions> = {
  operation: "split",
  accepts: "pdf",
  minInputs: 1,
  maxInputs: 1,
  async run(ctx: OpContext<SplitOptions>): Promise<OpResult> {
    const qctx: QpdfContext = { qpdf: ctx.config.FOLIO_QPDF, work: ctx.work, signal: ctx.signal };
    const source = ctx.inputs[0]!;
    const input = path.resolve(source.path);
    const pageCount = source.pages ?? 0;
    // Amplification caps (issue #10): the parts' pages before any list of them is made, their
    // bytes (twice: the parts and the zip of them) estimated now, watched while qpdf writes them.
    const caps = outputCaps(ctx.limits, ctx.inputs);
    if (ctx.options.mode === "ranges") checkPages(caps, specPageCount(ctx.options.ranges, pageCount));
    const parts = planParts(ctx.options, pageCount);
    checkBytes(caps, 2 * parts.reduce((n, p) => n + estimateBytes(source.size, pageCount, p.length), 0), true);
    const names = partNames(ctx.baseName, parts.length);
    const staging = await stagingDir(ctx.outDir);
    const zipTmp = partialPath(ctx.outDir, ".zip");
    try {
      const wantOutline = ctx.options.mode !== "pages";
      const [written, outline] = await Promise.allSettled([
        withinBytes(
          caps,
          async () => 2 * (await dirBytes(staging)),
          ctx.signal,
          (signal) => writeParts(ctx, { ...qctx, signal }, input, parts, staging),
        ),
        wantOutline
          ? readOutline(qctx, input).catch((err: unknown) => {
              ctx.log.warn({ err }, "Skipped bookmarks that qpdf could not read");
              return [];
            })
          : Promise.resolve([]),
      ]);
      if (written.status === "rejected") throw blameInput(written.reason, ctx.inputs);
      if (outline.status === "rejected") throw outline.reason;
      const bookmarks = await writePartOutlines(ctx, outline.value, parts, written.value);
      checkBytes(caps, 2 * (await dirBytes(staging)));
      const files: PdfOutputFile[] = [];
      for (const [i, tmp] of written.value.entries()) {
        const filename = names[i]!;
        files.push({
          path: await commitOutput(tmp, ctx.outDir, filename),
          filename,
          content_type: "application/pdf",
          pages: parts[i]!.length,
        });
      }
      const zipName = `${ctx.baseName}.zip`;
      await writeZip(
        zipTmp,
        files.map((f) => ({ path: f.path, name: f.filename })),
        { signal: ctx.signal },
      );
      const zip: OpOutputFile = {
        path: await commitOutput(zipTmp, ctx.outDir, zipName),
        filename: zipName,
        content_type: "application/zip",
      };
      ctx.log.debug({ parts: parts.length, bookmarks }, "Split PDF");
      return { files: [...files, zip], figures: { parts: parts.length } };
    } finally {
      await discard(staging, zipTmp);
    }
  },
};
