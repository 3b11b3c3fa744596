/**
 * What every table finder shares: building a Table from cells of text items, and the three
 * finders' common output. The finders themselves, most exact first:
 *  - structure: the tagged PDF's Table elements (structure.ts reads them; tableFromStructure here);
 *  - lattice.ts: grids drawn with ruling lines;
 *  - stream.ts: columns of text aligned by whitespace alone.
 * Pure.
 */
import { groupLines, splitLine } from "./lines.ts";
import { maxOf, minOf } from "./minmax.ts";
import type { Cell, StructTable, Table, TextItem } from "./types.ts";

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

/** A tagged table as a Table, with its items taken out of `items` (the rest of the page). */
export function tableFromStructure(st: StructTable, byMcid: Map<string, TextItem[]>): Table | null {
  const drafts: CellDraft[] = [];
  st.rows.forEach((row, r) => {
    row.forEach((cell, c) => {
      const items = cell.mcids.flatMap((id) => byMcid.get(id) ?? []);
      drafts.push({ row: r, col: c, rowSpan: 1, colSpan: 1, items, header: cell.header });
    });
  });
  const placed = drafts.flatMap((d) => d.items);
  if (placed.length === 0) return null;
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
 * grid cell is covered already is left out. The finders do not make such cells; the writers go
 * through this so that a finder's slip can never make exceljs throw ("Cannot merge already merged
 * cells") or Word get a row wider than its table.
 */
export function disjointCells(table: Table): Cell[] {
  const width = Math.max(
    table.cols,
    maxOf(table.cells, (c) => c.col + 1, 0),
  );
  const taken = new Set<number>();
  const key = (r: number, c: number): number => r * width + c;
  const out: Cell[] = [];
  for (const cell of [...table.cells].sort((a, b) => a.row - b.row || a.col - b.col)) {
    if (taken.has(key(cell.row, cell.col))) continue;
    const area: number[] = [];
    for (let r = cell.row; r < cell.row + cell.rowSpan; r++) for (let c = cell.col; c < cell.col + cell.colSpan; c++) area.push(key(r, c));
    const fits = cell.row + cell.rowSpan <= table.rows && cell.col + cell.colSpan <= width && area.every((k) => !taken.has(k));
    for (const k of fits ? area : [key(cell.row, cell.col)]) taken.add(k);
    out.push(fits ? cell : { ...cell, rowSpan: 1, colSpan: 1 });
  }
  return out;
}

/** Whether a text item's centre lies in a box. */
export function inside(item: TextItem, box: { x0: number; x1: number; top: number; bottom: number }): boolean {
  const cx = (item.x0 + item.x1) / 2;
  const cy = item.base - 0.3 * item.size;
  return cx >= box.x0 && cx <= box.x1 && cy >= box.top && cy <= box.bottom;
}
