/**
 * Tables that a page break cut in two, joined again. When a page's last block is a table and the
 * next page's first block is a table with the same columns (as many, each one's middle inside the
 * other's column: whitespace columns shift a little with their widest cell), the second is the
 * rest of the first: its rows are appended (without the header rows it repeats) and the
 * next page is marked `continued`, so the DOCX flows on without a page break and the XLSX gets one
 * sheet for the whole table. Page numbers — a single short line with a number in the top or bottom
 * margin band ("12", "Page 3 of 10") — do not count as the page's first or last block. Pure.
 */
import { segmentText } from "./lines.ts";
import type { Block, PageLayout, Table } from "./types.ts";

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

/** Whether the middle of each column of `p` lies in the same column of `q`. */
function middlesWithin(p: Table, q: Table): boolean {
  return p.colEdges.slice(1).every((right, i) => {
    const middle = (p.colEdges[i]! + right) / 2;
    return middle >= q.colEdges[i]! && middle <= q.colEdges[i + 1]!;
  });
}

/** Whether two tables have the same columns (see the header). */
const sameColumns = (a: Table, b: Table): boolean => a.cols === b.cols && middlesWithin(a, b) && middlesWithin(b, a);

const rowText = (t: Table, row: number): string =>
  t.cells
    .filter((c) => c.row === row)
    .sort((a, b) => a.col - b.col)
    .map((c) => c.lines.map(segmentText).join(" "))
    .join("\t");

/** Header rows a continued table may repeat at the top of each page (a title row, group headers, column headers). */
const MAX_HEADER_ROWS = 3;

/**
 * Appends the rows of `rest` to `table`, dropping the first rows that repeat the table's first rows
 * (`header`: the texts of the table's first rows, kept so that a growing table is not rescanned).
 * Normalised to ignore whitespace: a centred group header can fall a little differently.
 */
function appendRows(table: Table, header: readonly string[], rest: Table): void {
  let skip = 0;
  while (skip < header.length && skip < rest.rows - 1 && rowText(rest, skip).replace(/\s+/g, "") === header[skip]!.replace(/\s+/g, ""))
    skip++;
  if (skip) for (const c of table.cells) if (c.row < skip) c.header = true;
  for (const c of rest.cells) if (c.row >= skip) table.cells.push({ ...c, row: c.row - skip + table.rows });
  table.rows += rest.rows - skip;
}

/** Joins every table continued from one page onto the next (see the header); edits `pages`. */
export function joinContinuedTables(pages: readonly PageLayout[]): void {
  /** The table the previous page ended with, which this page may continue. */
  let open: Table | null = null;
  let header: string[] = [];
  for (const page of pages) {
    const blocks = content(page);
    const first = blocks[0];
    if (open && first?.type === "table" && sameColumns(open, first.table)) {
      appendRows(open, header, first.table);
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
