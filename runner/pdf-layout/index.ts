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
 *     tagged Table elements (tables.ts) → ruled grids (lattice.ts) → whitespace columns (stream.ts;
 *     on a page in two columns, column by column: gutter.ts) → tables ruled by rows only (rowrules.ts);
 *     text turned and drawn across other text (a running head along the edge) stays in the flow (turned.ts).
 *  3. lines.ts — the remaining runs as lines, split into segments at wide gaps.
 *  4. blocks.ts — segments stacked into blocks; blocks, tables and images put in reading order by
 *     recursive XY-cut (columns first, then bands).
 *  5. paragraphs.ts — blocks split into paragraphs with alignment, indents, list markers.
 * Then over the whole document, continued.ts joins tables cut by a page break, and classify.ts
 * decides headings from font size and weight (or takes the structure tree's H1…H6).
 *
 * Pages are analysed as the worker reads them, and each page's images are encoded to PNG at once
 * (images.ts), so memory holds one page's raw pixels, not the document's; a budget of decoded
 * pixels per document bounds the rest (a scan without text is refused at the end anyway). The
 * job's signal is checked between pages.
 */
import { readingOrder, buildBlocks, bounds, type Box, type TextBlock } from "./blocks.ts";
import { assignHeadings } from "./classify.ts";
import { joinContinuedTables } from "./continued.ts";
import { extractPages } from "./extract.ts";
import { pageGutter, type Gutter } from "./gutter.ts";
import { pageEncoder } from "./images.ts";
import { latticeTables } from "./lattice.ts";
import { minOf } from "./minmax.ts";
import { lineMarker, blockParagraphs } from "./paragraphs.ts";
import { pageSegments } from "./lines.ts";
import { rowRuledTables } from "./rowrules.ts";
import { joinStackedTables } from "./stacked.ts";
import { pageStreamTables } from "./stream.ts";
import { inside, orientTable, tableFromStructure } from "./tables.ts";
import { leaderless } from "./leaders.ts";
import { withoutBars } from "./textrules.ts";
import { atCharColumns } from "./charcolumns.ts";
import { drawnAcross } from "./turned.ts";
import type { Block, PageImage, PageLayout, Paragraph, PngImage, RawPage, Segment, Table, TextItem } from "./types.ts";

export interface DocumentLayout {
  pages: PageLayout[];
  /** Characters of text in the whole document (0: nothing to convert, e.g. a scan). */
  chars: number;
  /** Image placements left out: past the pixel budget, or unreadable. */
  imagesOmitted: number;
}

export interface AnalyzeOptions {
  signal: AbortSignal;
  maxImagePixels: number;
  /** False for XLSX, which has no use for images: they are then never decoded. */
  images: boolean;
}

/**
 * Decoded image pixels one document may bring into the DOCX: 300 megapixels is some 35 full-page
 * scans at 300 DPI. Beyond it images are left out (and counted), keeping time and memory bounded.
 */
const IMAGE_PIXEL_BUDGET = 300_000_000;

/**
 * The page's gutter when it is set in two columns (gutter.ts), from all of its text; a table already
 * found across it says the page is one column there (a wide ruled table with a river in the middle).
 */
function columnGutter(raw: RawPage, tables: readonly Table[]): Gutter | null {
  const gutter = pageGutter(raw.items, raw.width);
  return gutter && !tables.some((t) => t.x0 < gutter.x0 && t.x1 > gutter.x1) ? gutter : null;
}

/**
 * A page's runs cut for finding tables: monospaced runs at their bars (textrules.ts), then at their
 * character grid's column rivers (charcolumns.ts); `drawn` maps each part to its run as drawn.
 */
function cutRuns(page: readonly TextItem[]): { items: TextItem[]; drawn: Map<TextItem, TextItem>; bars: TextItem[] } {
  const barred = withoutBars(page);
  const gridded = atCharColumns(barred.items);
  const drawn = new Map(barred.drawn);
  for (const [part, run] of gridded.drawn) {
    drawn.set(part, barred.drawn.get(run) ?? run);
    // A bar's part cut again is no item any more: only its own parts map to the run.
    drawn.delete(run);
  }
  return { items: gridded.items, drawn, bars: barred.bars };
}

/** The tables of a page, most exact finder first; returns them and the items left for the flow. */
function findTables(raw: RawPage): { tables: Table[]; lines: Segment[][] } {
  const cut = cutRuns(raw.items);
  const { items, drawn, leaders } = leaderless(cut.items);
  const byMcid = new Map<string, TextItem[]>();
  for (const item of items) {
    if (!item.mcid) continue;
    const group = byMcid.get(item.mcid);
    if (group) group.push(item);
    else byMcid.set(item.mcid, [item]);
  }
  const tables: Table[] = [];
  const used = new Set<TextItem>();
  for (const st of raw.structTables) {
    const table = tableFromStructure(st, byMcid);
    if (!table) continue;
    tables.push(table);
    for (const c of table.cells) for (const l of c.lines) for (const i of l.items) used.add(i);
  }
  // Text drawn across other text (a running head turned along the edge, over a table) is no cell's.
  const across = drawnAcross(items.filter((i) => !used.has(i)));
  let rest = items.filter((i) => !used.has(i) && !across.has(i));
  for (const table of latticeTables(raw.rules, rest)) {
    tables.push(table);
    rest = rest.filter((i) => !inside(i, table));
  }
  const streamed = new Set<TextItem>();
  for (const found of pageStreamTables(rest, raw.rules, columnGutter(raw, tables))) {
    tables.push(found.table);
    for (const i of found.items) streamed.add(i);
  }
  // Tables ruled by rows only, where the text beside them on the page hid them from the stream
  // finder; the rules of the tables found are not theirs.
  const free = raw.rules.filter(
    (r) => !tables.some((t) => r.x0 >= t.x0 - 2 && r.x1 <= t.x1 + 2 && r.y0 >= t.top - 2 && r.y1 <= t.bottom + 2),
  );
  for (const found of rowRuledTables(
    free,
    rest.filter((i) => !streamed.has(i)),
  )) {
    tables.push(found.table);
    for (const i of found.items) streamed.add(i);
  }
  // The text outside the tables as drawn, leaders and bars and all; a leader or a bar inside a
  // table is no cell's text.
  const left = [...rest.filter((i) => !streamed.has(i)), ...across].map((i) => drawn.get(i) ?? i);
  // A run cut at its bars or its grid's rivers goes back whole, as drawn, when no table took a
  // part of it; else the parts no table took.
  const kept = new Set(left);
  const split = new Set([...cut.drawn].filter(([part]) => !kept.has(part)).map(([, run]) => run));
  const whole = (i: TextItem): TextItem => {
    const run = cut.drawn.get(i);
    return run && !split.has(run) ? run : i;
  };
  const flow = new Set(left.map(whole));
  // A table's outer bars stand beside its first and last cells' text: within an em of its box.
  const boxed = (bar: TextItem): boolean => tables.some((t) => inside(bar, { ...t, x0: t.x0 - bar.size, x1: t.x1 + bar.size }));
  const marks = [...leaders.filter((l) => !tables.some((t) => inside(l, t))), ...cut.bars.filter((b) => !boxed(b))];
  const lines = pageSegments([...flow, ...marks]);
  return { tables: joinStackedTables(tables, lines.flat()).map(orientTable), lines };
}

/** Images that carry text over them are backgrounds (or scans under an OCR layer): not content. */
function contentImages(images: readonly PageImage[], items: readonly TextItem[]): PageImage[] {
  return images.filter((im) => items.filter((i) => inside(i, { x0: im.x0, x1: im.x1, top: im.y0, bottom: im.y1 })).length < 3);
}

type Placed = (TextBlock & { kind: "text" }) | (Box & { kind: "table"; table: Table }) | (Box & { kind: "image"; image: PageImage });

/** One page's layout; its images come back as PNG through `encode` (null: left out). */
async function analyzePage(
  raw: RawPage,
  encode: (im: PageImage) => Promise<PngImage | null>,
): Promise<{ page: PageLayout; omitted: number }> {
  const { tables, lines } = findTables(raw);
  const flow = lines.flat();
  const boxes: Placed[] = [
    ...buildBlocks(flow).map((b) => ({ ...b, kind: "text" as const })),
    ...tables.map((t) => ({ x0: t.x0, x1: t.x1, top: t.top, bottom: t.bottom, kind: "table" as const, table: t })),
    ...contentImages(raw.images, raw.items).map((im) => ({
      x0: im.x0,
      x1: im.x1,
      top: im.y0,
      bottom: im.y1,
      kind: "image" as const,
      image: im,
    })),
  ];
  const frame = boxes.length ? bounds(boxes) : { x0: 0, x1: raw.width, top: 0, bottom: raw.height };
  const region = new Map<Placed, Box>();
  const ordered = readingOrder(boxes, region, frame);
  const markers = flow.map((s) => lineMarker(s)?.item.x0).filter((x): x is number => x !== undefined);
  const listLeft = minOf(markers, (x) => x, 0);
  const blocks: Block[] = [];
  let omitted = raw.imagesOmitted;
  for (const b of ordered) {
    if (b.kind === "text") blocks.push(...blockParagraphs(b, region.get(b) ?? frame, listLeft));
    else if (b.kind === "table") blocks.push({ type: "table", table: b.table, top: b.top, bottom: b.bottom });
    else {
      const image = await encode(b.image);
      if (image) blocks.push({ type: "image", image, top: b.top, bottom: b.bottom });
      else omitted++;
    }
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
  const page = {
    number: raw.number,
    width: raw.width,
    height: raw.height,
    blocks,
    frame,
    segments: pageSegments(raw.items),
    continued: false,
  };
  return { page, omitted };
}

/** Analyses a whole PDF (see the header). */
export async function analyzePdf(file: string, opts: AnalyzeOptions): Promise<DocumentLayout> {
  const pages: PageLayout[] = [];
  const headingOf = new Map<Paragraph, number>();
  let chars = 0;
  let imagesOmitted = 0;
  for await (const raw of extractPages(file, { ...opts, imagePixelBudget: IMAGE_PIXEL_BUDGET })) {
    opts.signal.throwIfAborted();
    const { page, omitted } = await analyzePage(raw, pageEncoder());
    imagesOmitted += omitted;
    for (const b of page.blocks) {
      if (b.type !== "paragraph") continue;
      const level = b.lines
        .flatMap((l) => l.items)
        .map((i) => (i.mcid ? raw.headings[i.mcid] : undefined))
        .find((l) => l !== undefined);
      if (level !== undefined) headingOf.set(b, level);
    }
    chars += raw.items.reduce((n, i) => n + i.text.trim().length, 0);
    pages.push(page);
  }
  opts.signal.throwIfAborted();
  joinContinuedTables(pages);
  const paragraphs = pages.flatMap((p) => p.blocks.filter((b): b is Paragraph => b.type === "paragraph"));
  assignHeadings(paragraphs, (p) => headingOf.get(p) ?? null);
  return { pages, chars, imagesOmitted };
}
