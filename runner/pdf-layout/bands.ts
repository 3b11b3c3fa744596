/**
 * Rows that a ruled table does not rule apart. Many ruled tables draw a rule only every few rows
 * (a band of five states, a quarter of three months) or around the whole body, and set the rows
 * inside by whitespace alone; read cell by cell, each band would be one row of cells holding five
 * values each. A band is split into rows when its key cell (the first one with text; or, when a
 * cell of values alone holds more lines, that one) holds several lines and the band's other cells
 * hold lines on the same baselines — at least half of them when they hold values (numbers, dates),
 * all of them when the band is text only: those are rows. Each row starts at a key line; a cell's
 * lines between two key lines (a description wrapped over three lines beside one date) belong to
 * the row above. A band whose cells stack their lines differently (a header "Total / Segment /
 * Score" beside "Rank") stays one row. Pure.
 */
import { typeCell } from "./cells.ts";
import { groupLines } from "./lines.ts";
import type { CellDraft } from "./tables.ts";
import type { TextItem } from "./types.ts";

interface Line {
  base: number;
  size: number;
  items: TextItem[];
}

function linesOf(items: readonly TextItem[]): Line[] {
  return groupLines(items).map((l) => {
    const size = Math.max(...l.map((i) => i.size));
    return { base: l.find((i) => i.size === size)!.base, size, items: l };
  });
}

const isValue = (items: readonly TextItem[]): boolean =>
  typeof typeCell(
    items
      .filter((i) => !i.opaque)
      .map((i) => i.text)
      .join(" "),
  ).value !== "string";

/** The baselines that start the rows of a band read from one key cell, or null when they do not. */
function rowsFrom(key: Line[], withText: readonly CellDraft[], keyCell: CellDraft): number[] | null {
  if (key.length < 2) return null;
  const tol = (size: number): number => 0.4 * size;
  let aligned = 0;
  let values = false;
  const others = withText.filter((c) => c !== keyCell);
  for (const cell of others) {
    const lines = linesOf(cell.items);
    // Each key line has a line of this cell on its baseline (wrapped lines in between are allowed).
    if (!key.every((k) => lines.some((l) => Math.abs(l.base - k.base) <= tol(k.size)))) continue;
    aligned++;
    values ||= lines.length === key.length && lines.every((l) => isValue(l.items));
  }
  // With values beside the key lines half the cells must follow them; text alone (a header set on
  // two lines beside one-line headers) must be followed by every cell.
  return (values ? aligned * 2 >= others.length : aligned === others.length) ? key.map((k) => k.base - tol(k.size)) : null;
}

/**
 * The baselines that start the rows of one band, or null when the band is one row. The key cell is
 * the first one with text, unless a cell of values alone holds more lines and the others follow it
 * (the first column has a line only now and then: a label on a group's first row).
 */
function bandRows(cells: readonly CellDraft[]): number[] | null {
  const withText = [...cells].filter((c) => c.items.some((i) => !i.opaque)).sort((a, b) => a.col - b.col);
  if (withText.length < 2) return null;
  const first = rowsFrom(linesOf(withText[0]!.items), withText, withText[0]!);
  let dense: { cell: CellDraft; lines: Line[] } | null = null;
  for (const cell of withText.slice(1)) {
    const lines = linesOf(cell.items);
    if (lines.every((l) => isValue(l.items)) && lines.length > (dense?.lines.length ?? first?.length ?? 1)) dense = { cell, lines };
  }
  return (dense && rowsFrom(dense.lines, withText, dense.cell)) ?? first;
}

/** Index of the last start at or above `y` (0 when `y` is above the first). */
function rowAt(starts: readonly number[], y: number): number {
  let r = 0;
  while (r + 1 < starts.length && starts[r + 1]! <= y) r++;
  return r;
}

/**
 * The drafts of a ruled grid of `rows` bands with bands split into rows where they hold several
 * (see the header). Cells spanning bands span all their rows.
 */
export function splitBands(drafts: readonly CellDraft[], rows: number): { drafts: CellDraft[]; rows: number } {
  const starts: (number[] | null)[] = [];
  for (let r = 0; r < rows; r++) starts.push(bandRows(drafts.filter((d) => d.row === r && d.rowSpan === 1)));
  if (starts.every((s) => s === null)) return { drafts: [...drafts], rows };
  const count = starts.map((s) => s?.length ?? 1);
  const offset = count.map((_, r) => count.slice(0, r).reduce((a, b) => a + b, 0));
  const out: CellDraft[] = [];
  for (const d of drafts) {
    const split = d.rowSpan === 1 ? starts[d.row] : null;
    if (!split) {
      const span = count.slice(d.row, d.row + d.rowSpan).reduce((a, b) => a + b, 0);
      out.push({ ...d, row: offset[d.row]!, rowSpan: span });
      continue;
    }
    const parts: TextItem[][] = split.map(() => []);
    for (const item of d.items) parts[rowAt(split, item.base)]!.push(item);
    parts.forEach((items, k) => out.push({ ...d, row: offset[d.row]! + k, rowSpan: 1, items }));
  }
  return { drafts: out, rows: count.reduce((a, b) => a + b, 0) };
}
