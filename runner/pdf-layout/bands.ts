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
 * Score" beside "Rank") stays one row. A cell alone in its columns within a band of rows, centred
 * on them (a \multirow label), is one cell over the band (spanCentred). Pure.
 */
import { typeCell } from "./cells.ts";
import { groupLines, textMiddle } from "./lines.ts";
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

/** A cell centred on its band stands this near the middle of the band's other lines (font sizes). */
const BAND_MIDDLE = 0.3;

/**
 * Cells set centred on the rows they stand for, made one cell over those rows: a label or a value
 * alone in its columns within a band of several rows between rules drawn all across, in the middle
 * of the band's other lines (LaTeX's \multirow between two \hline: "Left" beside its three topics,
 * on the middle one's line; a value beside two rows, between them). It then spans the band from
 * its first row, as the rules draw it, and the empty cells it covers go; a cell off the middle (a
 * remark beside one row of a boxed body) stays in its row. `rules`: the heights of the rules drawn
 * all across, which part the bands.
 */
export function spanCentred(drafts: readonly CellDraft[], rules: readonly number[]): CellDraft[] {
  const text = (d: CellDraft): TextItem[] => d.items.filter((i) => !i.opaque);
  const bandOf = (i: TextItem): number => rules.filter((y) => y < textMiddle(i)).length;
  const rowBand = new Map<number, number>();
  for (const d of drafts) {
    const first = text(d)[0];
    if (d.rowSpan === 1 && first && !rowBand.has(d.row)) rowBand.set(d.row, bandOf(first));
  }
  const lastCol = (d: CellDraft): number => d.col + d.colSpan - 1;
  const gone = new Set<CellDraft>();
  const spans = new Map<CellDraft, CellDraft>();
  for (const d of drafts) {
    if (d.rowSpan !== 1 || !text(d).length || gone.has(d)) continue;
    const rows = [...rowBand].filter(([, b]) => b === rowBand.get(d.row)).map(([r]) => r);
    const [first, last] = [Math.min(...rows), Math.max(...rows)];
    if (rows.length < 2 || last - first + 1 !== rows.length) continue;
    const inBand = drafts.filter((o) => o !== d && o.row >= first && o.row + o.rowSpan - 1 <= last);
    const covered = inBand.filter((o) => o.col <= lastCol(d) && lastCol(o) >= d.col);
    if (covered.some((o) => text(o).length || o.col < d.col || lastCol(o) > lastCol(d))) continue;
    const bases = inBand.filter((o) => !covered.includes(o)).flatMap((o) => text(o).map((i) => i.base));
    if (!centredOnBand(text(d), bases)) continue;
    for (const o of covered) gone.add(o);
    spans.set(d, { ...d, row: first, rowSpan: rows.length });
  }
  return drafts.filter((d) => !gone.has(d)).map((d) => spans.get(d) ?? d);
}

/** Whether a cell's text stands in the middle of its band's other lines (`bases`, their baselines), BAND_MIDDLE near. */
function centredOnBand(items: readonly TextItem[], bases: readonly number[]): boolean {
  if (!items.length || !bases.length) return false;
  const size = Math.max(...items.map((i) => i.size));
  const middle = (Math.min(...items.map((i) => i.base)) + Math.max(...items.map((i) => i.base))) / 2;
  return Math.abs(middle - (Math.min(...bases) + Math.max(...bases)) / 2) <= BAND_MIDDLE * size;
}
