/**
 * merge: 2..max_merge_files PDFs, each optionally cut to page ranges, into one PDF, with
 * bookmarks kept (rebuilt from every input), one per file, or none.
 *
 * The pages are assembled by one qpdf run, `qpdf --empty --pages f1 r1 f2 r2 … -- out` (qpdf
 * manual, "Page Selection"). Two flags matter:
 * - `--remove-unreferenced-resources=no`: by default qpdf inspects every page's content streams
 *   to drop resources the page does not use, which for PDFs whose pages share one big resource
 *   dictionary (LibreOffice's) makes the merge 3–8× slower (bench/qpdf-ops.ts measures it). Kept
 *   unused resources are shared objects, so the output is not larger; here it is even smaller.
 * - `--object-streams=disable`: what qpdf writes for an --empty document anyway; stated so the
 *   outline writer can rely on a classic cross-reference table to append to.
 *
 * qpdf keeps no outline when it copies pages between files, so with `outline: keep` every input's
 * bookmarks are read (qpdf JSON, in parallel with the merge itself; every destination form,
 * runner/pdf/outline-read.ts) and written into the result as an incremental update
 * (runner/pdf/outline.ts), which costs only the bookmarks' bytes. Nor does it keep the
 * inputs' embedded files: they are added back (runner/pdf/attachments.ts) whatever the
 * outline option, at the cost of one more qpdf pass only when an input has any.
 */
import path from "node:path";
import { availableParallelism } from "node:os";
import { rm } from "node:fs/promises";
import { JobError } from "../../core/errors.ts";
import { parsePageRanges, resolvePageRanges, toQpdfRange } from "../../core/pages.ts";
import type { MergeOptions } from "../../core/schemas/options.ts";
import { addAttachments, type AttachmentSource } from "../pdf/attachments.ts";
import { FIT, mapLimit, placeOutline, readStructure, writeOutline, type PlacedItem } from "../pdf/outline.ts";
import type { DocumentStructure } from "../pdf/outline-read.ts";
import { commitOutput, partialPath, type PdfOutputFile } from "./outfile.ts";
import { checkPages, outputCaps, specPageCount } from "./output-budget.ts";
import { blameInput, qpdf, type QpdfContext } from "../engines/qpdf.ts";
import type { InspectedInput, OpContext, OpDefinition, OpResult } from "./types.ts";

/** The pages taken from one input, in order (1-based), from its page ranges or all of them. */
export function selectPages(input: Pick<InspectedInput, "filename" | "pageSpec" | "pages">): number[] {
  const count = input.pages ?? 0;
  if (input.pageSpec === undefined) return Array.from({ length: count }, (_, i) => i + 1);
  const parsed = parsePageRanges(input.pageSpec);
  const resolved = typeof parsed === "string" ? parsed : resolvePageRanges(parsed, count);
  if (typeof resolved === "string")
    throw new JobError("invalid_page_range", `Pages "${input.pageSpec}" of "${input.filename}": ${resolved}.`);
  return resolved.flat();
}

/** A bookmark title for a file: its name without directories or extension. */
export function fileTitle(filename: string): string {
  const leaf = filename.split(/[\\/]/).pop() ?? filename;
  const stem = leaf
    .replace(/\.[^.]+$/, "")
    .replace(/[\u0000-\u001f\u007f]/g, "")
    .trim();
  return stem || leaf;
}

/**
 * Reads every input's bookmarks (with `outline: keep`) and embedded files, each distinct file
 * once; an unreadable outline or attachment list costs that file's, never the merge.
 */
async function readAllStructures(ctx: OpContext<MergeOptions>, qctx: QpdfContext): Promise<DocumentStructure[]> {
  const files = [...new Set(ctx.inputs.map((i) => path.resolve(i.path)))];
  // Alongside the merge, as many readers as cores: reading a large input's outline costs about as
  // much as merging it (qpdf walks every page to place each bookmark), so on two cores two readers
  // and the merge finish sooner together than with the readers queued behind one another.
  const limit = Math.max(2, availableParallelism());
  const outline = ctx.options.outline === "keep";
  const read = await mapLimit(files, limit, (file) =>
    readStructure(qctx, file, { outline }).catch((err: unknown): DocumentStructure => {
      ctx.log.warn({ err }, "Skipped bookmarks and attachments that qpdf could not read");
      return { outline: [], attachments: [] };
    }),
  );
  const byFile = new Map(files.map((f, i) => [f, read[i]!]));
  return ctx.inputs.map((i) => byFile.get(path.resolve(i.path)) ?? { outline: [], attachments: [] });
}

/** Each distinct file's attachments once, in input order. */
function attachmentSources(ctx: OpContext<MergeOptions>, structures: DocumentStructure[]): AttachmentSource[] {
  const seen = new Set<string>();
  return ctx.inputs.flatMap((input, i) => {
    const file = path.resolve(input.path);
    if (seen.has(file)) return [];
    seen.add(file);
    return [{ file, attachments: structures[i]!.attachments }];
  });
}

function buildOutline(
  ctx: OpContext<MergeOptions>,
  selections: number[][],
  offsets: number[],
  structures: DocumentStructure[],
): PlacedItem[] {
  if (ctx.options.outline === "per_file") {
    return ctx.inputs.map((input, i) => ({ title: fileTitle(input.filename), page: offsets[i]!, view: FIT, open: true, kids: [] }));
  }
  if (ctx.options.outline !== "keep") return [];
  return structures
    .map((s) => s.outline)
    .flatMap((nodes, i) => {
      // A page taken twice is located at its first place.
      const firstPlace = new Map<number, number>();
      selections[i]!.forEach((page, j) => {
        if (!firstPlace.has(page)) firstPlace.set(page, offsets[i]! + j);
      });
      return placeOutline(nodes, (page) => firstPlace.get(page));
    });
}

export const merge: OpDefinition<MergeOptions> = {
  operation: "merge",
  accepts: "pdf",
  minInputs: 2,
  maxInputs: "max_merge_files",
  async run(ctx: OpContext<MergeOptions>): Promise<OpResult> {
    const qctx: QpdfContext = { qpdf: ctx.config.FOLIO_QPDF, work: ctx.work, signal: ctx.signal };
    // The output cap first (issue #10): pages are counted before any list of them is made. Bytes
    // need no estimate here: without repeats a merge is no larger than its inputs, repeats share
    // their content, and run.ts checks the written output against the byte cap.
    const caps = outputCaps(ctx.limits, ctx.inputs);
    checkPages(
      caps,
      ctx.inputs.reduce((n, i) => n + specPageCount(i.pageSpec, i.pages ?? 0), 0),
    );
    const selections = ctx.inputs.map(selectPages);
    const offsets: number[] = [];
    let total = 0;
    for (const sel of selections) {
      offsets.push(total);
      total += sel.length;
    }
    const tmp = partialPath(ctx.outDir, ".pdf");
    // Absolute paths: an input named "-x.pdf" or "@list" must never read as a qpdf option.
    const args = ["--empty", "--object-streams=disable", "--remove-unreferenced-resources=no", "--pages"];
    ctx.inputs.forEach((input, i) => args.push(path.resolve(input.path), toQpdfRange(selections[i]!)));
    args.push("--", tmp);
    try {
      const [merged, structures] = await Promise.allSettled([qpdf(qctx, args), readAllStructures(ctx, qctx)]);
      if (merged.status === "rejected") throw blameInput(merged.reason, ctx.inputs);
      if (structures.status === "rejected") throw structures.reason;
      const attachments = await addAttachments(qctx, tmp, attachmentSources(ctx, structures.value), ctx.log);
      const items = buildOutline(ctx, selections, offsets, structures.value);
      const bookmarks = await writeOutline(tmp, items, total);
      const filename = `${ctx.baseName}.pdf`;
      const file: PdfOutputFile = {
        path: await commitOutput(tmp, ctx.outDir, filename),
        filename,
        content_type: "application/pdf",
        pages: total,
      };
      ctx.log.debug({ pages: total, bookmarks, attachments }, "Merged PDFs");
      return { files: [file], figures: { pages: total, inputs: ctx.inputs.length, bookmarks, attachments } };
    } finally {
      await rm(tmp, { force: true });
    }
  },
};
