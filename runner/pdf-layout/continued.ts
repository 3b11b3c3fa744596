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
 * margin band ("12", "Page 3 of 10") — do not count as the page's first or last block. Pure.
 */
import { segmentOf, segmentText } from "./lines.ts";
import { rightToLeft } from "./tables.ts";
import type { Block, Cell, PageLayout, Segment, Table, TextItem } from "./types.ts";

/** Share of the page height at its top and bottom where page numbers sit. */
const MARGIN_BAND = 0.1;

/** A page number: one short line with a number in the page's top or bottom band. */
function isPageNumber(b: Block, page: PageLayout): boolean {
  if (b.type !== "paragraph" || b.lines.length !== 1) return false;
  const band = MARGIN_BAND * page.height;
  const text = segmentText(b.lines[0]!);
  return (b.bottom < band || b.top > page.height - band) && /\d/.test(text) && text.split(" ").length <= 4;
}

/** The page's content blocks, page numbers left out. */
const content = (page: PageLayout): Block[] => page.blocks.filter((b) => !isPageNumber(b, page));

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
      const parts = new Map<number, TextItem[]>();
      for (const item of line.items) {
        const col = columnOf(open, item);
        if (col < 0) return null;
        const part = parts.get(col);
        if (part) part.push(item);
        else parts.set(col, [item]);
      }
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

const rowText = (t: Table, row: number): string =>
  t.cells
    .filter((c) => c.row === row)
    .sort((a, b) => a.col - b.col)
    .map((c) => c.lines.map(segmentText).join(" "))
    .join("\t");

/** Whether row `row` of `t` reads `text`, whitespace aside (a centred group header can fall a little differently). */
const repeats = (t: Table, row: number, text: string): boolean => rowText(t, row).replace(/\s+/g, "") === text.replace(/\s+/g, "");

/** Header rows a continued table may repeat at the top of each page (a title row, group headers, column headers). */
const MAX_HEADER_ROWS = 3;

/**
 * Appends the rows of `rest` to `table`, dropping the first rows that repeat the table's first rows
 * (`header`: the texts of the table's first rows, kept so that a growing table is not rescanned).
 */
function appendRows(table: Table, header: readonly string[], rest: Table): void {
  let skip = 0;
  while (skip < header.length && skip < rest.rows - 1 && repeats(rest, skip, header[skip]!)) skip++;
  if (skip) for (const c of table.cells) if (c.row < skip) c.header = true;
  for (const c of rest.cells) if (c.row >= skip) table.cells.push({ ...c, row: c.row - skip + table.rows });
  table.rows += rest.rows - skip;
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

/** Joins every table continued from one page onto the next (see the header); edits `pages`. */
export function joinContinuedTables(pages: readonly PageLayout[]): void {
  /** The table the previous page ended with, which this page may continue. */
  let open: Table | null = null;
  let header: string[] = [];
  for (const page of pages) {
    const blocks = content(page);
    const first = blocks[0];
    const rest = open && first?.type === "table" ? restOf(open, first.table, header) : null;
    if (open && first && rest) {
      appendRows(open, header, rest);
      page.blocks = page.blocks.filter((b) => b !== first);
      page.continued = true;
      blocks.shift();
    }
    const last = blocks.at(-1);
    // A page the table fills entirely passes it on to the next.
    const next: Table | null = last ? (last.type === "table" ? last.table : null) : page.continued ? open : null;
    if (next && next !== open) header = Array.from({ length: Math.min(MAX_HEADER_ROWS, next.rows) }, (_, r) => rowText(next, r));
    open = next;
  }
}
