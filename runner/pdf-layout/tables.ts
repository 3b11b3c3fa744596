/**
 * What every table finder shares: building a Table from cells of text items, and the three
 * finders' common output. The finders themselves, most exact first:
 *  - structure: the tagged PDF's Table elements (structure.ts reads them; tableFromStructure here);
 *  - lattice.ts: grids drawn with ruling lines;
 *  - stream.ts: columns of text aligned by whitespace alone.
 * Pure.
 */
import { groupLines, splitLine } from "./lines.ts";
import type { Cell, StructTable, Table, TextItem } from "./types.ts";

/** Items of one cell as its text lines (one segment per line: a cell is never split further). */
export function cellLines(items: TextItem[]): Cell["lines"] {
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
export function buildTable(kind: Table["kind"], drafts: CellDraft[], colEdges: number[], box: { x0: number; x1: number; top: number; bottom: number }): Table {
  const cells: Cell[] = drafts.map((d) => ({ row: d.row, col: d.col, rowSpan: d.rowSpan, colSpan: d.colSpan, header: d.header ?? false, lines: cellLines(d.items) }));
  const rows = Math.max(...drafts.map((d) => d.row + d.rowSpan));
  const cols = Math.max(...drafts.map((d) => d.col + d.colSpan));
  const all = cells.flatMap((c) => c.lines);
  return {
    kind,
    rows,
    cols,
    cells,
    colEdges,
    x0: Math.min(box.x0, ...all.map((l) => l.x0)),
    x1: Math.max(box.x1, ...all.map((l) => l.x1)),
    top: Math.min(box.top, ...all.map((l) => l.top)),
    bottom: Math.max(box.bottom, ...all.map((l) => l.bottom)),
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
  const cols = Math.max(...drafts.map((d) => d.col + 1));
  const colEdges: number[] = [];
  for (let c = 0; c < cols; c++) {
    const xs = drafts.filter((d) => d.col === c).flatMap((d) => d.items.map((i) => i.x0));
    colEdges.push(xs.length ? Math.min(...xs) : (colEdges.at(-1) ?? 0) + 1);
  }
  // The last column ends where its text does, but no narrower than the average column.
  const average = cols > 1 ? (colEdges.at(-1)! - colEdges[0]!) / (cols - 1) : 0;
  colEdges.push(Math.max(...placed.map((i) => i.x1), colEdges.at(-1)! + average));
  const box = { x0: Math.min(...placed.map((i) => i.x0)), x1: Math.max(...placed.map((i) => i.x1)), top: Number.POSITIVE_INFINITY, bottom: Number.NEGATIVE_INFINITY };
  return buildTable("structure", drafts, colEdges, box);
}

/** Whether a text item's centre lies in a box. */
export function inside(item: TextItem, box: { x0: number; x1: number; top: number; bottom: number }): boolean {
  const cx = (item.x0 + item.x1) / 2;
  const cy = item.base - 0.3 * item.size;
  return cx >= box.x0 && cx <= box.x1 && cy >= box.top && cy <= box.bottom;
}
