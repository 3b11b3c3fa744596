/**
 * Tables that a page break cut in two, joined again. When a page's last block is a table and the
 * next page's first block is a table with the same columns (as many, each one's middle inside the
 * other's column: whitespace columns shift a little with their widest cell), the second is the
 * rest of the first: its rows are appended (without the header rows it repeats) and the
 * next page is marked `continued`, so the DOCX flows on without a page break and the XLSX gets one
 * sheet for the whole table. A part with fewer columns, at least half as wide, whose column
 * edges fall by the table's and whose every word stands in one of the table's columns is read in
 * the table's columns (a sparse column leaves no river over a few rows); a part that repeats the
 * table's header row over as many columns is its rest, however its edges moved; a right-to-left table's
 * part is read right to left. Page numbers — a single short line with a number in the top or bottom
 * margin band ("12", "Page 3 of 10") — running heads and feet (up to BAND_LINES lines in that band,
 * or over the page's first table in its top quarter, that the page before or after repeats there,
 * numbers aside), a line saying the table goes on ("Table 3—Continued", "(continued)") and an ASCII
 * table's borders ("+----+----+") do not count as the page's first or last block.
 *
 * A table cut with only a row or two left for the next page (ReportLab keeps no widow rows; one
 * row alone is no table) has that rest read as text: when the previous page's table reaches down
 * its page's lower part and the page's topmost lines keep every word in the table's columns, at
 * least one of them across two columns, they are its last rows (textRows). Pure.
 */
import { groupLines, joinLines, segmentOf, segmentText } from "./lines.ts";
import { maxOf, minOf } from "./minmax.ts";
import { rightToLeft } from "./tables.ts";
import { RULE_LINE } from "./textrules.ts";
import type { Block, Cell, PageLayout, Segment, Table, TextItem } from "./types.ts";

/** Share of the page height at its top and bottom where page numbers and running heads sit. */
const MARGIN_BAND = 0.1;

/** A running head or foot is at most this many lines (a printer's page header over a report's company, run date and currency). */
const BAND_LINES = 4;

/** A running head over the page's first table may reach this far down the page (share of its height): a listing's head in small type on a landscape page. */
const HEAD_BAND = 0.25;

/** Whether a block lies in the page's top or bottom margin band (MARGIN_BAND), where page numbers stand. */
const inMargin = (b: Block, page: PageLayout): boolean =>
  b.bottom < MARGIN_BAND * page.height || b.top > page.height - MARGIN_BAND * page.height;

/**
 * The lines' texts of a paragraph of up to BAND_LINES lines in the page's top or bottom band, or
 * over its first table in the page's top quarter (HEAD_BAND), or null.
 */
function bandText(b: Block, page: PageLayout): string[] | null {
  if (b.type !== "paragraph" || b.lines.length > BAND_LINES) return null;
  const tables = page.blocks.filter((t) => t.type === "table");
  const overTables = tables.length > 0 && b.bottom < HEAD_BAND * page.height && tables.every((t) => t.top >= b.bottom);
  return inMargin(b, page) || overTables ? b.lines.map(segmentText) : null;
}

/** A page number's numbers: one or two whole numbers ("12", "3 of 10", "3/10"), never a figure ("9,671.62", "3.2"). */
const PAGE_NUMBERS = /^\D*\d+(?:\D*[\s/]\D*\d+)?\D*$/u;

/** A page number: one short line of one or two whole numbers and a few words, in the page's top or bottom band. */
const isPageNumber = (text: string): boolean => PAGE_NUMBERS.test(text) && text.split(" ").length <= 4;

/** A band line's text with its numbers left out, as a running head or foot repeats it ("Annual report 2024 · 3"). */
const skeleton = (text: string): string => text.replace(/\d+/gu, "#");

/** The skeletons of a page's band lines. */
function bandSkeletons(page: PageLayout): Set<string> {
  const texts = page.blocks.flatMap((b) => bandText(b, page) ?? []);
  return new Set(texts.map(skeleton));
}

/**
 * A line saying a table goes on ("ESTIMATED COSTS—Continued", "Table 3 (cont'd)", "(Fortsetzung)",
 * "Continued on next page"): the table's caption repeated over its rest, or a note under its part.
 */
const CONTINUATION =
  /(?:^|[\s—–-])(?:\((?:continued|cont(?:'|’)?d\.?|cont\.|fortsetzung|suite|continuación|segue)\)|continued(?: on (?:the )?next page| overleaf)?|cont(?:'|’)?d\.?)[.:]?$/iu;
/** A continuation line is short: a caption, not a sentence that ends on the word. */
const CONTINUATION_WORDS = 12;

/** Whether a block is a one-line continuation caption (CONTINUATION). */
function continuation(b: Block): boolean {
  if (b.type !== "paragraph" || b.lines.length !== 1) return false;
  const text = segmentText(b.lines[0]!).trim();
  return CONTINUATION.test(text) && text.split(/\s+/u).length <= CONTINUATION_WORDS;
}

/** Whether a block is rules drawn in text alone: an ASCII table's border over or under its cells. */
const textRules = (b: Block): boolean => b.type === "paragraph" && b.lines.every((l) => RULE_LINE.test(segmentText(l)));

/**
 * The page's content blocks: page numbers and running heads and feet (band lines that a
 * neighbouring page's band repeats, numbers aside), continuation captions and rules drawn in text
 * (they stay on the page, as text) left out.
 */
function content(page: PageLayout, neighbours: readonly Set<string>[]): Block[] {
  return page.blocks.filter((b) => {
    if (continuation(b) || textRules(b)) return false;
    const lines = bandText(b, page);
    if (lines === null) return true;
    const pageNumber = lines.length === 1 && inMargin(b, page) && isPageNumber(lines[0]!);
    return !(pageNumber || neighbours.some((n) => lines.every((l) => n.has(skeleton(l)))));
  });
}

/** Column `i` of a table as an interval on the page (a right-to-left table's edges run right to left). */
function column(t: Table, i: number): [number, number] {
  const [a, b] = [t.colEdges[i]!, t.colEdges[i + 1]!];
  return a <= b ? [a, b] : [b, a];
}

/** Whether the middle of each column of `p` lies in the same column of `q`. */
function middlesWithin(p: Table, q: Table): boolean {
  return Array.from({ length: p.cols }, (_, i) => i).every((i) => {
    const [x0, x1] = column(p, i);
    const [y0, y1] = column(q, i);
    return (x0 + x1) / 2 >= y0 && (x0 + x1) / 2 <= y1;
  });
}

/** Points an item may reach past the column edge it stands by and still be that column's. */
const EDGE_SLACK = 1;

/** The column of `t` an item stands in (by its middle; between two columns, the nearer), or -1 when it reaches over an edge. */
function columnOf(t: Table, item: TextItem): number {
  const mid = (item.x0 + item.x1) / 2;
  let best = -1;
  let far = Infinity;
  for (let i = 0; i < t.cols; i++) {
    const [x0, x1] = column(t, i);
    const d = mid < x0 ? x0 - mid : mid > x1 ? mid - x1 : 0;
    if (d < far) [best, far] = [i, d];
  }
  const [x0, x1] = column(t, best);
  return item.x0 < x0 - EDGE_SLACK || item.x1 > x1 + EDGE_SLACK ? -1 : best;
}

/** The least width of a part with fewer columns, as a share of the table's. */
const MIN_WIDTH = 0.5;

/** How far (a share of the narrower column beside it) a whitespace column's edge may fall from another table's. */
const EDGE_SHIFT = 0.25;

/** Whether each edge between two columns of `rest` falls by an edge between two columns of `open`. */
function edgesAmong(rest: Table, open: Table): boolean {
  const inner = (t: Table): number[] => t.colEdges.slice(1, -1).sort((a, b) => a - b);
  const edges = [...open.colEdges].sort((a, b) => a - b);
  return inner(rest).every((e) =>
    edges.some((x, i) => i > 0 && i + 1 < edges.length && Math.abs(e - x) <= EDGE_SHIFT * Math.min(x - edges[i - 1]!, edges[i + 1]! - x)),
  );
}

/** A line's items parted by the column `colOf` puts each in, or null when it puts one in none (-1). */
function lineParts(items: readonly TextItem[], colOf: (item: TextItem) => number): Map<number, TextItem[]> | null {
  const parts = new Map<number, TextItem[]>();
  for (const item of items) {
    const col = colOf(item);
    if (col < 0) return null;
    const part = parts.get(col);
    if (part) part.push(item);
    else parts.set(col, [item]);
  }
  return parts;
}

/**
 * A page's first table as the rest of `open`, cell by cell in `open`'s columns, when it has fewer
 * columns than `open`, each of its column edges by one of `open`'s, and every one of its words
 * inside one of `open`'s columns: a sparse column (a label merged down the rows, set once on this
 * page) leaves no river over a few rows, so the page's part of the table read its words into the
 * column beside. Null when a word reaches over one of `open`'s column edges or its own columns
 * part where `open`'s do not (another table), or when it fills fewer than two columns.
 */
function inColumnsOf(open: Table, rest: Table): Table | null {
  if (rest.kind !== "stream" || rest.cols >= open.cols || rest.x1 - rest.x0 < MIN_WIDTH * (open.x1 - open.x0)) return null;
  if (!edgesAmong(rest, open)) return null;
  const cells = new Map<string, Cell>();
  for (const cell of rest.cells) {
    for (const line of cell.lines) {
      const parts = lineParts(line.items, (item) => columnOf(open, item));
      if (!parts) return null;
      for (const [col, items] of parts) {
        const key = `${cell.row}:${col}`;
        const seg: Segment = segmentOf(items);
        const had = cells.get(key);
        if (had) had.lines.push(seg);
        else
          cells.set(key, {
            row: cell.row,
            col,
            rowSpan: parts.size === 1 ? cell.rowSpan : 1,
            colSpan: 1,
            lines: [seg],
            header: cell.header,
          });
      }
    }
  }
  if (new Set([...cells.values()].map((c) => c.col)).size < 2) return null;
  return { ...rest, cols: open.cols, colEdges: [...open.colEdges], cells: [...cells.values()] };
}

/** Whether two tables have the same columns (see the header). */
const sameColumns = (a: Table, b: Table): boolean => a.cols === b.cols && middlesWithin(a, b) && middlesWithin(b, a);

/** The cells of row `row` of `t`, left to right. */
const rowCells = (t: Table, row: number): Cell[] => t.cells.filter((c) => c.row === row).sort((a, b) => a.col - b.col);

const rowText = (t: Table, row: number): string =>
  rowCells(t, row)
    .map((c) => c.lines.map(segmentText).join(" "))
    .join("\t");

/** Whether row `row` of `t` reads `text`, whitespace aside (a centred group header can fall a little differently). */
const repeats = (t: Table, row: number, text: string): boolean => rowText(t, row).replace(/\s+/g, "") === text.replace(/\s+/g, "");

/** Header rows a continued table may repeat at the top of each page (a title row, group headers, column headers). */
const MAX_HEADER_ROWS = 3;

/**
 * Appends the rows of `rest` to `table`, dropping the first rows that repeat the table's first rows
 * (`header`: the texts of the table's first rows, kept so that a growing table is not rescanned).
 * Returns the dropped rows' cell texts, column by column.
 */
function appendRows(table: Table, header: readonly string[], rest: Table): string[][] {
  let skip = 0;
  while (skip < header.length && skip < rest.rows - 1 && repeats(rest, skip, header[skip]!)) skip++;
  if (skip) for (const c of table.cells) if (c.row < skip) c.header = true;
  for (const c of rest.cells) if (c.row >= skip) table.cells.push({ ...c, row: c.row - skip + table.rows });
  table.rows += rest.rows - skip;
  return Array.from({ length: skip }, (_, r) => rowCells(rest, r).map((c) => joinLines(c.lines.map(segmentText))));
}

/**
 * Whether a table is `header`'s first row alone, repeated over its lines as a table of its own (a
 * report writer's header set apart from the rows by a rule, "ITEM" over "DESCRIPTION"): its
 * words are the header's, however its few lines parted them into columns.
 */
function headerAlone(t: Table, header: readonly string[]): boolean {
  if (t.rows > MAX_HEADER_ROWS || !header[0] || !/\S/u.test(header[0])) return false;
  const words = (text: string): string => text.split(/\s+/u).filter(Boolean).sort().join(" ");
  const text = t.cells.map((c) => c.lines.map(segmentText).join(" ")).join(" ");
  return words(text) === words(header[0]);
}

/** Whether a table's first row repeats `header`'s first row, a row with text. */
const repeatsHeader = (t: Table, header: readonly string[]): boolean =>
  header[0] !== undefined && /\S/u.test(header[0]) && t.rows > 1 && repeats(t, 0, header[0]);

/**
 * A page's first table as the rest of `open` (its own columns, or re-read in `open`'s), or null. A
 * part that repeats the table's header row over as many columns is its rest however its column
 * edges moved (a total's wide label on the last page widens a column of its own).
 */
function restOf(open: Table, first: Table, header: readonly string[]): Table | null {
  // A right-to-left table's part with few letters of its own was left left to right.
  const part = open.rtl ? rightToLeft(first) : first;
  if (sameColumns(open, part) || (part.cols === open.cols && repeatsHeader(part, header))) return part;
  return inColumnsOf(open, part);
}

/** The share of its page's height a table must reach below for its rest to be looked for in the next page's text. */
const CUT_LOW = 2 / 3;

/** Most space between two lines of a table's rest read as text, in line heights. */
const ROW_GAP = 1.5;

/**
 * The column of `t` each item of its rest read as text stands in: the one its middle lies in
 * (between two, the nearer), or -1 when it reaches into the text of another column. Column edges
 * found from whitespace fall anywhere in the gaps: a wider description on the next page runs past
 * one, not into the amounts beside. Each item's column is found once.
 */
function textColumns(t: Table): (item: TextItem) => number {
  const texts = t.cells.flatMap((c) => (c.colSpan === 1 ? c.lines.map((l) => ({ col: c.col, x0: l.x0, x1: l.x1 })) : []));
  const found = new Map<TextItem, number>();
  return (item) => {
    let col = found.get(item);
    if (col === undefined) {
      const mid = (item.x0 + item.x1) / 2;
      col = columnOf(t, { ...item, x0: mid, x1: mid });
      const own = col;
      if (texts.some((x) => x.col !== own && x.x0 < item.x1 - EDGE_SLACK && x.x1 > item.x0 + EDGE_SLACK)) col = -1;
      found.set(item, col);
    }
    return col;
  };
}

/**
 * The page's topmost paragraphs as the last rows of `open` (see the header), with the blocks they
 * were: paragraphs taken by their tops, each less than ROW_GAP line heights under the one before,
 * up to the first block that is not a paragraph or has a word reaching into the text of another of
 * `open`'s columns than its own (textColumns; null when that block stands beside the ones taken).
 * Each line across two columns or more starts a row; a line in one column alone belongs to a row
 * beside it, a wrapped cell's other lines: those above the first row's line are its first lines
 * (set bottom-aligned), those under the last row's line its last; between two rows the lines part
 * where the space between them is widest, the lowest of equal spaces (a cell wraps down more often
 * than it is set bottom-aligned). Null when no line is across two columns.
 */
function textRows(open: Table, blocks: readonly Block[]): { rest: Table; taken: Block[] } | null {
  if (open.rtl) return null;
  const colOf = textColumns(open);
  const taken: Block[] = [];
  let bottom = Number.NaN;
  for (const b of [...blocks].sort((p, q) => p.top - q.top)) {
    const fits = b.type === "paragraph" && b.lines.every((l) => l.items.every((i) => colOf(i) >= 0));
    if (!fits) {
      if (b.top < bottom) return null;
      break;
    }
    if (b.top - bottom > ROW_GAP * (b.lines[0]!.bottom - b.lines[0]!.top)) break;
    taken.push(b);
    bottom = Number.isNaN(bottom) ? b.bottom : Math.max(bottom, b.bottom);
  }
  const lines = groupLines(taken.flatMap((b) => (b.type === "paragraph" ? b.lines.flatMap((l) => l.items) : []))).map(segmentOf);
  const across = lines.flatMap((l, i) => (new Set(l.items.map(colOf)).size > 1 ? [i] : []));
  if (!across.length) return null;
  // rowOf[i]: the row (an index into `across`) line i belongs to.
  const rowOf = lines.map((_, i) => Math.max(0, across.filter((a) => a <= i).length - 1));
  const space = (i: number): number => lines[i]!.top - lines[i - 1]!.bottom;
  for (let r = 0; r + 1 < across.length; r++) {
    const [a, b] = [across[r]!, across[r + 1]!];
    let cut = b;
    for (let i = b - 1; i > a; i--) if (space(i) > space(cut)) cut = i;
    for (let i = cut; i < b; i++) rowOf[i] = r + 1;
  }
  const cells = new Map<string, Cell>();
  lines.forEach((line, i) => {
    const row = rowOf[i]!;
    for (const [col, items] of lineParts(line.items, colOf)!) {
      const cell = cells.get(`${row}:${col}`) ?? { row, col, rowSpan: 1, colSpan: 1, lines: [], header: false };
      cells.set(`${row}:${col}`, cell);
      cell.lines.push(segmentOf(items));
    }
  });
  const rest: Table = {
    ...open,
    kind: "stream",
    rows: across.length,
    cells: [...cells.values()],
    x0: minOf(lines, (l) => l.x0),
    x1: maxOf(lines, (l) => l.x1),
    top: minOf(lines, (l) => l.top),
    bottom: maxOf(lines, (l) => l.bottom),
  };
  return { rest, taken };
}

/**
 * The rest of `open` in the table `next` under its header read as a table of its own (`alone`,
 * headerAlone), appended to it; returns the header's rows' texts, or null when they are not so.
 */
function restUnderHeader(open: Table, header: readonly string[], alone: Table, next: Table): string[][] | null {
  const rest = headerAlone(alone, header) ? restOf(open, next, header) : null;
  if (!rest) return null;
  // The open table's first row is the header the page repeats, as appendRows marks it.
  for (const c of open.cells) if (c.row === 0) c.header = true;
  appendRows(open, [], rest);
  return Array.from({ length: alone.rows }, (_, r) => rowCells(alone, r).map((c) => joinLines(c.lines.map(segmentText))));
}

/**
 * Appends a page's start to `open` when it is the table's rest: its first table (restOf), the
 * table under its header read alone (restUnderHeader), or, when the table was `cut` low on its
 * page, its top lines read as text (textRows). Returns the
 * page's blocks that went into the table, none when the page starts with something else, and the
 * text of the header rows the rest repeated (appendRows).
 */
function joinRest(
  open: Table,
  header: readonly string[],
  cut: boolean,
  blocks: readonly Block[],
): { taken: Block[]; repeated: string[][] } {
  const [first, second] = blocks;
  const underHeader = first?.type === "table" && second?.type === "table" ? restUnderHeader(open, header, first.table, second.table) : null;
  if (underHeader) return { taken: [first!, second!], repeated: underHeader };
  if (first?.type === "table") {
    const rest = restOf(open, first.table, header);
    return rest ? { taken: [first], repeated: appendRows(open, header, rest) } : { taken: [], repeated: [] };
  }
  const asText = first && cut ? textRows(open, blocks) : null;
  if (asText) appendRows(open, [], asText.rest);
  return { taken: asText?.taken ?? [], repeated: [] };
}

/** A section's heading left under a table at its page's foot stands less than this many line heights under it. */
const ORPHAN_GAP = 2;

/** A note under a table, not a row of it: a source, a note, a footnote's mark, or a sentence. */
const TABLE_NOTE = /^(?:source|sources|note|notes|\*|†|‡|\(?\d+\)|\d+\s)|\.$/iu;

/** The type size of most of a table's lines. */
function bodySize(t: Table): number {
  const sizes = t.cells.flatMap((c) => c.lines.map((l) => l.size)).sort((a, b) => a - b);
  return sizes[sizes.length >> 1] ?? 0;
}

/**
 * A page's last block when it is a table's next row left under it by the page break: one line, in
 * the table's first column, right under the table, in the table's type (a section's heading, "Cash
 * flows from operating activities", whose rows begin on the next page) — not a note under the
 * table (TABLE_NOTE). Null otherwise.
 */
function orphanRow(blocks: readonly Block[]): { table: Table; line: Segment; block: Block } | null {
  const [before, last] = [blocks.at(-2), blocks.at(-1)];
  if (before?.type !== "table" || last?.type !== "paragraph" || last.lines.length !== 1) return null;
  const line = last.lines[0]!;
  const [x0, x1] = column(before.table, 0);
  const inFirst = line.x0 >= x0 - line.size && line.x1 <= x1 + line.size;
  const heading = line.size >= 0.95 * bodySize(before.table) && !TABLE_NOTE.test(segmentText(line).trim());
  return inFirst && heading && last.top - before.bottom <= ORPHAN_GAP * line.size ? { table: before.table, line, block: last } : null;
}

/** Puts `line` into `table` as a row of its own at `row` (the rows from there move down one). */
function insertRow(table: Table, row: number, line: Segment): void {
  for (const c of table.cells) if (c.row >= row) c.row++;
  table.cells.push({ row, col: 0, rowSpan: 1, colSpan: 1, lines: [line], header: false });
  table.rows++;
}

/**
 * Joins the start of `page` to the table `open` when it is its rest (joinRest), the row the page
 * break left under the table on the page before (`prev`) put back first; returns `blocks` without
 * those joined.
 */
function joinPage(
  page: PageLayout,
  prev: PageLayout | undefined,
  at: { open: Table; header: readonly string[]; cut: boolean; orphan: ReturnType<typeof orphanRow> },
  blocks: readonly Block[],
): Block[] {
  const { open, orphan } = at;
  const rowsBefore = open.rows;
  const { taken, repeated } = joinRest(open, at.header, at.cut, blocks);
  if (!taken.length) return [...blocks];
  if (orphan && prev) {
    insertRow(open, rowsBefore, orphan.line);
    prev.blocks = prev.blocks.filter((b) => b !== orphan.block);
  }
  const index = page.blocks.findIndex((b) => taken.includes(b));
  page.blocks = page.blocks.filter((b) => !taken.includes(b));
  page.continued = true;
  page.rest = { table: open, at: index, header: repeated };
  return blocks.filter((b) => !taken.includes(b));
}

/** Joins every table continued from one page onto the next (see the header); edits `pages`. */
export function joinContinuedTables(pages: readonly PageLayout[]): void {
  /** The table the previous page ended with, which this page may continue. */
  let open: Table | null = null;
  let header: string[] = [];
  /** How far down its page `open` reaches, as a share of the page's height. */
  let reach = 0;
  /** The row the page break left under `open` on its page (orphanRow), if any. */
  let orphan: ReturnType<typeof orphanRow> = null;
  const bands = pages.map(bandSkeletons);
  for (const [i, page] of pages.entries()) {
    let blocks = content(
      page,
      [bands[i - 1], bands[i + 1]].filter((b) => b !== undefined),
    );
    if (open) blocks = joinPage(page, pages[i - 1], { open, header, cut: reach > CUT_LOW, orphan }, blocks);
    const last = blocks.at(-1);
    orphan = orphanRow(blocks);
    // A page the table fills entirely passes it on to the next.
    const next: Table | null = last ? (last.type === "table" ? last.table : (orphan?.table ?? null)) : page.continued ? open : null;
    if (next && next !== open) header = Array.from({ length: Math.min(MAX_HEADER_ROWS, next.rows) }, (_, r) => rowText(next, r));
    if (next) reach = (last ? last.bottom : page.height) / page.height;
    open = next;
  }
}
