/**
 * What every table finder shares: building a Table from cells of text items, and the three
 * finders' common output. The finders themselves, most exact first:
 *  - structure: the tagged PDF's Table elements (structure.ts reads them; tableFromStructure here);
 *  - lattice.ts: grids drawn with ruling lines;
 *  - stream.ts: columns of text aligned by whitespace alone.
 * Pure.
 */
import { logicalValue, mostlyRightToLeft } from "./bidi.ts";
import { groupLines, runsText, splitLine, textMiddle } from "./lines.ts";
import { maxOf, minOf } from "./minmax.ts";
import type { Cell, Segment, StructTable, Table, TextItem } from "./types.ts";

/** Items of one cell as its text lines (one segment per line: a cell is never split further). */
function cellLines(items: TextItem[]): Cell["lines"] {
  return groupLines(items).map((line) => splitLine(line, Number.POSITIVE_INFINITY)[0]!);
}

export interface CellDraft {
  row: number;
  col: number;
  rowSpan: number;
  colSpan: number;
  items: TextItem[];
  header?: boolean;
}

/** A Table from drafted cells; its box is the union of `box` and the cells' text. */
export function buildTable(
  kind: Table["kind"],
  drafts: CellDraft[],
  colEdges: number[],
  box: { x0: number; x1: number; top: number; bottom: number },
): Table {
  const cells: Cell[] = drafts.map((d) => ({
    row: d.row,
    col: d.col,
    rowSpan: d.rowSpan,
    colSpan: d.colSpan,
    header: d.header ?? false,
    lines: cellLines(d.items),
  }));
  const rows = maxOf(drafts, (d) => d.row + d.rowSpan);
  const cols = maxOf(drafts, (d) => d.col + d.colSpan);
  const all = cells.flatMap((c) => c.lines);
  return {
    kind,
    rows,
    cols,
    cells,
    colEdges,
    x0: Math.min(
      box.x0,
      minOf(all, (l) => l.x0),
    ),
    x1: Math.max(
      box.x1,
      maxOf(all, (l) => l.x1),
    ),
    top: Math.min(
      box.top,
      minOf(all, (l) => l.top),
    ),
    bottom: Math.max(
      box.bottom,
      maxOf(all, (l) => l.bottom),
    ),
  };
}

/** How far across the page a cell's items reach. */
const across = (items: readonly TextItem[]): { x0: number; x1: number } => ({
  x0: minOf(items, (i) => i.x0),
  x1: maxOf(items, (i) => i.x1),
});

/**
 * The cells of rows with fewer cells than the table's widest rows, put in the columns they stand
 * under. A row that a cell of an earlier row spans into (HTML's rowspan: Chromium's tags leave it
 * out of the rows below, and pdfjs gives no RowSpan attribute), or that has a cell spanning several
 * columns, tags fewer cells; counted from the left they would slide one column left ("John Smith"
 * under Department). Each such cell goes, left to right, to the column of the widest rows it
 * overlaps most. Rows as wide as the widest stay as they are.
 */
function placeShortRows(rows: CellDraft[][]): CellDraft[][] {
  const width = maxOf(rows, (r) => r.length, 0);
  const full = rows.filter((r) => r.length === width && r.every((d) => d.items.length > 0));
  if (!full.length || full.length === rows.length) return rows;
  const columns = Array.from({ length: width }, (_, c) => across(full.flatMap((r) => r[c]!.items)));
  return rows.map((row) => {
    if (row.length === width) return row;
    const filled = row.filter((cell) => cell.items.length > 0);
    const out: CellDraft[] = [];
    let next = 0;
    for (const d of filled) {
      const { x0, x1 } = across(d.items);
      const overlap = (c: number): number => Math.min(x1, columns[c]!.x1) - Math.max(x0, columns[c]!.x0);
      let col = next;
      for (let c = next + 1; c < width; c++) if (overlap(c) > overlap(col)) col = c;
      if (col >= width) break;
      out.push({ ...d, col });
      next = col + 1;
    }
    // A cell no column was left for keeps the order it was tagged in (consistent() then judges).
    return out.length === filled.length ? out : row;
  });
}

/**
 * Whether a tagged table's cells stand where its rows and columns say: each row below the one
 * before it, each cell right of the one before it in its row, and each column's cells overlapping
 * that column's span. Producers tag tables loosely — cells in another order than they stand,
 * empty cells left out so that the next one slides into their column — and such a tree would
 * scramble a table that its rules or its whitespace show plainly; it is then not used.
 */
function consistent(rows: readonly CellDraft[][]): boolean {
  // By the column each cell was given (placeShortRows may leave a row's first columns empty).
  const spans = rows.map((row) => {
    const byCol: ({ x0: number; x1: number; y: number } | null)[] = [];
    for (const d of row) byCol[d.col] = d.items.length ? { ...across(d.items), y: minOf(d.items, (i) => i.base) } : null;
    return byCol;
  });
  let prevY = Number.NEGATIVE_INFINITY;
  for (const row of spans) {
    const placed = row.filter((s) => s !== null);
    if (!placed.length) continue;
    const y = minOf(placed, (s) => s.y);
    if (y < prevY - 2) return false;
    prevY = y;
    for (let i = 1; i < placed.length; i++) if (placed[i]!.x0 < placed[i - 1]!.x1 - 1) return false;
  }
  const cols = Math.max(...spans.map((r) => r.length));
  for (let c = 0; c < cols; c++) {
    const cells = spans.map((r) => r[c]).filter((s) => s !== null && s !== undefined);
    for (let c2 = c + 1; c2 < cols; c2++) {
      const later = spans.map((r) => r[c2]).filter((s) => s !== null && s !== undefined);
      // A cell of a later column lying wholly left of a cell of this column: the tags misplace one.
      if (later.some((l) => cells.some((e) => l.x1 <= e.x0 + 1))) return false;
    }
  }
  return true;
}

/**
 * A tagged table as a Table, from its cells' marked-content ids (this page's text only: a table
 * tagged over several pages lists rows of the others too), or null when it has no text here or its
 * tags do not match its geometry (see consistent).
 */
export function tableFromStructure(st: StructTable, byMcid: Map<string, TextItem[]>): Table | null {
  const rows = placeShortRows(
    st.rows
      .map((row) => row.map((cell) => ({ items: cell.mcids.flatMap((id) => byMcid.get(id) ?? []), header: cell.header })))
      .filter((row) => row.some((cell) => cell.items.length > 0))
      .map((row, r) =>
        row.map((cell, c): CellDraft => ({ row: r, col: c, rowSpan: 1, colSpan: 1, items: cell.items, header: cell.header })),
      ),
  );
  const drafts = rows.flat();
  const placed = drafts.flatMap((d) => d.items);
  if (placed.length === 0 || !consistent(rows)) return null;
  const cols = maxOf(drafts, (d) => d.col + 1);
  const colEdges: number[] = [];
  for (let c = 0; c < cols; c++) {
    const xs = drafts.filter((d) => d.col === c).flatMap((d) => d.items.map((i) => i.x0));
    colEdges.push(xs.length ? minOf(xs, (x) => x) : (colEdges.at(-1) ?? 0) + 1);
  }
  // The last column ends where its text does, but no narrower than the average column.
  const average = cols > 1 ? (colEdges.at(-1)! - colEdges[0]!) / (cols - 1) : 0;
  colEdges.push(
    Math.max(
      maxOf(placed, (i) => i.x1),
      colEdges.at(-1)! + average,
    ),
  );
  const box = {
    x0: minOf(placed, (i) => i.x0),
    x1: maxOf(placed, (i) => i.x1),
    top: Number.POSITIVE_INFINITY,
    bottom: Number.NEGATIVE_INFINITY,
  };
  return buildTable("structure", drafts, colEdges, box);
}

/**
 * The table's cells, row by row, with no two merged areas overlapping: a cell whose span runs into
 * grid cells an earlier cell covers (or past the table's edge) loses its span, and a cell whose own
 * grid cell is covered already gives its lines to the cell covering it (never dropped: no text may
 * go missing, issue #13). Two pieces of text the finders put in one grid cell are joined the same
 * way. The writers go through this so that a finder's slip can never make exceljs throw ("Cannot
 * merge already merged cells") or Word get a row wider than its table.
 */
export function disjointCells(table: Table): Cell[] {
  const width = Math.max(
    table.cols,
    maxOf(table.cells, (c) => c.col + 1, 0),
  );
  const owner = new Map<number, Cell>();
  const key = (r: number, c: number): number => r * width + c;
  const out: Cell[] = [];
  for (const cell of [...table.cells].sort((a, b) => a.row - b.row || a.col - b.col)) {
    const covering = owner.get(key(cell.row, cell.col));
    if (covering) {
      covering.lines = [...covering.lines, ...cell.lines];
      continue;
    }
    const area: number[] = [];
    for (let r = cell.row; r < cell.row + cell.rowSpan; r++) for (let c = cell.col; c < cell.col + cell.colSpan; c++) area.push(key(r, c));
    const fits = cell.row + cell.rowSpan <= table.rows && cell.col + cell.colSpan <= width && area.every((k) => !owner.has(k));
    const placed: Cell = fits ? { ...cell } : { ...cell, rowSpan: 1, colSpan: 1 };
    for (const k of fits ? area : [key(cell.row, cell.col)]) owner.set(k, placed);
    out.push(placed);
  }
  return out;
}

/** A cell's line of a right-to-left table holding a value drawn in visual order (bidi.ts), as one run of its logical text. */
function logicalLine(seg: Segment): Segment {
  const text = runsText(seg.items);
  const logical = logicalValue(text);
  if (logical === text) return seg;
  const first = seg.items.find((i) => !i.opaque) ?? seg.items[0]!;
  return { ...seg, items: [{ ...first, text: logical, x0: seg.x0, x1: seg.x1, opaque: false }] };
}

/**
 * A table whose text is mostly in a right-to-left script, read the way its readers read it: its
 * first column is the rightmost (Unicode Bidirectional Algorithm, UAX #9: the table's paragraph
 * direction is right to left), and it is marked `rtl` so that the writers show it right to left,
 * as the page does; its values drawn in visual order are read back in logical order ("(30,329)",
 * not ")30,329("). Other tables are returned as they are.
 */
export function orientTable(table: Table): Table {
  const text = table.cells.flatMap((c) => c.lines.flatMap((l) => l.items.map((i) => i.text))).join("");
  return mostlyRightToLeft(text) ? rightToLeft(table) : table;
}

/** A table read right to left (see orientTable), whatever its text: a right-to-left table's part on another page. */
export function rightToLeft(table: Table): Table {
  if (table.rtl) return table;
  return {
    ...table,
    rtl: true,
    cells: table.cells.map((c) => ({ ...c, col: table.cols - c.col - c.colSpan, lines: c.lines.map(logicalLine) })),
    colEdges: [...table.colEdges].reverse(),
  };
}

/** Whether a text item's centre lies in a box. */
export function inside(item: TextItem, box: { x0: number; x1: number; top: number; bottom: number }): boolean {
  const cx = (item.x0 + item.x1) / 2;
  const cy = textMiddle(item);
  return cx >= box.x0 && cx <= box.x1 && cy >= box.top && cy <= box.bottom;
}
