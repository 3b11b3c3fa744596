/**
 * PDF layout analysis: from a PDF's drawn text, lines and images back to the document a person
 * would have typed — paragraphs in reading order, headings, lists, tables, images — for the
 * PDF → DOCX and PDF → XLSX writers (runner/ops/convert-docx.ts, convert-xlsx.ts).
 *
 * The pipeline, per page:
 *  1. extract.ts / extract-worker.ts — pdfjs in a throwaway worker thread: text runs with fonts and
 *     marked-content ids, cut where the glyphs jump (glyphs.ts), ruling lines and images
 *     (graphics.ts), the structure tree (structure.ts).
 *  2. tables, most exact first, each taking its text out of the flow:
 *     tagged Table elements (tables.ts) → ruled grids (lattice.ts) → whitespace columns (stream.ts).
 *  3. lines.ts — the remaining runs as lines, split into segments at wide gaps.
 *  4. blocks.ts — segments stacked into blocks; blocks, tables and images put in reading order by
 *     recursive XY-cut (columns first, then bands).
 *  5. paragraphs.ts — blocks split into paragraphs with alignment, indents, list markers.
 * Then over the whole document, continued.ts joins tables cut by a page break, and classify.ts
 * decides headings from font size and weight (or takes the structure tree's H1…H6).
 */
import { readingOrder, buildBlocks, bounds, type Box, type TextBlock } from "./blocks.ts";
import { assignHeadings } from "./classify.ts";
import { joinContinuedTables } from "./continued.ts";
import { extractPages, type ExtractOptions } from "./extract.ts";
import { latticeTables } from "./lattice.ts";
import { lineMarker, blockParagraphs } from "./paragraphs.ts";
import { pageSegments } from "./lines.ts";
import { streamTables } from "./stream.ts";
import { inside, tableFromStructure } from "./tables.ts";
import type { Block, PageImage, PageLayout, Paragraph, RawPage, Segment, Table, TextItem } from "./types.ts";

export interface DocumentLayout {
  pages: PageLayout[];
  /** Characters of text in the whole document (0: nothing to convert, e.g. a scan). */
  chars: number;
  headings: number;
}

/** The tables of a page, most exact finder first; returns them and the items left for the flow. */
function findTables(raw: RawPage): { tables: Table[]; lines: Segment[][] } {
  const byMcid = new Map<string, TextItem[]>();
  for (const item of raw.items) if (item.mcid) byMcid.set(item.mcid, [...(byMcid.get(item.mcid) ?? []), item]);
  const tables: Table[] = [];
  const used = new Set<TextItem>();
  for (const st of raw.structTables) {
    const table = tableFromStructure(st, byMcid);
    if (!table) continue;
    tables.push(table);
    for (const c of table.cells) for (const l of c.lines) for (const i of l.items) used.add(i);
  }
  let rest = raw.items.filter((i) => !used.has(i));
  for (const table of latticeTables(raw.rules, rest)) {
    tables.push(table);
    rest = rest.filter((i) => !inside(i, table));
  }
  const lines = pageSegments(rest);
  const streamLines = new Set<number>();
  for (const found of streamTables(lines)) {
    tables.push(found.table);
    for (const i of found.lines) streamLines.add(i);
  }
  return { tables, lines: lines.filter((_, i) => !streamLines.has(i)) };
}

/** Images that carry text over them are backgrounds (or scans under an OCR layer): not content. */
function contentImages(images: readonly PageImage[], items: readonly TextItem[]): PageImage[] {
  return images.filter((im) => items.filter((i) => inside(i, { x0: im.x0, x1: im.x1, top: im.y0, bottom: im.y1 })).length < 3);
}

type Placed = (TextBlock & { kind: "text" }) | (Box & { kind: "table"; table: Table }) | (Box & { kind: "image"; image: PageImage });

export function analyzePage(raw: RawPage): PageLayout {
  const { tables, lines } = findTables(raw);
  const flow = lines.flat();
  const boxes: Placed[] = [
    ...buildBlocks(flow).map((b) => ({ ...b, kind: "text" as const })),
    ...tables.map((t) => ({ x0: t.x0, x1: t.x1, top: t.top, bottom: t.bottom, kind: "table" as const, table: t })),
    ...contentImages(raw.images, raw.items).map((im) => ({ x0: im.x0, x1: im.x1, top: im.y0, bottom: im.y1, kind: "image" as const, image: im })),
  ];
  const frame = boxes.length ? bounds(boxes) : { x0: 0, x1: raw.width, top: 0, bottom: raw.height };
  const region = new Map<Placed, Box>();
  const ordered = readingOrder(boxes, region, frame);
  const markers = flow.map((s) => lineMarker(s)?.item.x0).filter((x): x is number => x !== undefined);
  const listLeft = markers.length ? Math.min(...markers) : 0;
  const blocks: Block[] = [];
  for (const b of ordered) {
    if (b.kind === "text") blocks.push(...blockParagraphs(b, region.get(b) ?? frame, listLeft));
    else if (b.kind === "table") blocks.push({ type: "table", table: b.table, top: b.top, bottom: b.bottom });
    else blocks.push({ type: "image", image: b.image, top: b.top, bottom: b.bottom });
  }
  let prevBottom = Number.NaN;
  for (const block of blocks) {
    if (block.type === "paragraph") {
      const size = block.lines[0]!.size;
      const gap = block.top - prevBottom - 0.35 * size;
      block.spaceBefore = Number.isFinite(gap) ? Math.max(0, Math.min(48, gap)) : 0;
    }
    prevBottom = block.bottom;
  }
  return { number: raw.number, width: raw.width, height: raw.height, blocks, frame, segments: pageSegments(raw.items), continued: false };
}

/** Analyses a whole PDF. Checks the job's signal between pages. */
export async function analyzePdf(file: string, opts: ExtractOptions): Promise<DocumentLayout> {
  const raws = await extractPages(file, opts);
  const pages: PageLayout[] = [];
  const headingOf = new Map<Paragraph, number>();
  for (const raw of raws) {
    opts.signal.throwIfAborted();
    const page = analyzePage(raw);
    for (const b of page.blocks) {
      if (b.type !== "paragraph") continue;
      const level = b.lines.flatMap((l) => l.items).map((i) => (i.mcid ? raw.headings[i.mcid] : undefined)).find((l) => l !== undefined);
      if (level !== undefined) headingOf.set(b, level);
    }
    pages.push(page);
  }
  joinContinuedTables(pages);
  const paragraphs = pages.flatMap((p) => p.blocks.filter((b): b is Paragraph => b.type === "paragraph"));
  const headings = assignHeadings(paragraphs, (p) => headingOf.get(p) ?? null);
  const chars = raws.reduce((n, r) => n + r.items.reduce((m, i) => m + i.text.trim().length, 0), 0);
  return { pages, chars, headings };
}
