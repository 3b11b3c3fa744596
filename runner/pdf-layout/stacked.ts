/**
 * Tables stacked on a page that are one table: a statistics table set by whitespace with its
 * header boxed by rules above it, or its total rows boxed below it (NCRB's "TOTAL (UTs)" and
 * "TOTAL (ALL INDIA)" in a ruled box under the unruled rows of the states). The lattice finder
 * reads the box, the stream finder the rows: two tables, the box's columns coarser where a label
 * spans two of the rows' columns, so the totals came out a column off in a sheet of their own.
 *
 * A ruled table and a whitespace table one over the other, with no more than two lines' height
 * and no text between them, are one when their columns agree: each column of the finer lies in
 * one column of the coarser (its middle inside it), every column of the coarser holds at least
 * one of the finer's, and only one holds several (MAX_SPANNING). The coarser table's cells then
 * span the finer columns they hold. Two tables of one finder are never joined: the finder parted
 * them for a reason (a rule, a change of type). Pure.
 */
import { maxOf, minOf } from "./minmax.ts";
import type { Cell, Segment, Table } from "./types.ts";

/** At most this many of the tables' text sizes between the upper table's foot and the lower one's top. */
const MAX_GAP = 2;

/**
 * At most this many columns of the coarser table span columns of the finer: a total's label over
 * the number and name columns. A box whose every label spans several (a score sheet's header over
 * its details) is a table of its own columns.
 */
const MAX_SPANNING = 1;

const middles = (t: Table): number[] => t.colEdges.slice(1).map((right, i) => (t.colEdges[i]! + right) / 2);

/**
 * For each column of `coarse`, the columns of `fine` whose middles lie in it ([first, last]), or
 * null when a column of `fine` lies in none, a column of `coarse` holds none, or more than
 * MAX_SPANNING hold several.
 */
function columnMap(coarse: Table, fine: Table): [number, number][] | null {
  const mids = middles(fine);
  const spans: [number, number][] = [];
  for (let c = 0; c + 1 < coarse.colEdges.length; c++) {
    const [lo, hi] = [coarse.colEdges[c]!, coarse.colEdges[c + 1]!];
    const held = mids.flatMap((m, k) => (m >= lo && m <= hi ? [k] : []));
    if (!held.length) return null;
    spans.push([held[0]!, held.at(-1)!]);
  }
  const spanning = spans.filter(([a, b]) => b > a).length;
  return spanning <= MAX_SPANNING && spans.reduce((n, [a, b]) => n + b - a + 1, 0) === mids.length ? spans : null;
}

/** The cells of `t` in the columns of the finer table (`map`, from columnMap), `rows` rows down. */
function remapped(t: Table, map: readonly [number, number][] | null, rows: number): Cell[] {
  return t.cells.map((c) => {
    if (!map) return { ...c, row: c.row + rows };
    const [first, last] = [map[c.col]![0], map[c.col + c.colSpan - 1]![1]];
    return { ...c, row: c.row + rows, col: first, colSpan: last - first + 1 };
  });
}

/** The text size of a table's cells (their lines' median). */
function textSize(t: Table): number {
  const sizes = t.cells.flatMap((c) => c.lines.map((l) => l.size)).sort((a, b) => a - b);
  return sizes[sizes.length >> 1] ?? 0;
}

/** `upper` and `lower` as one table, or null when they are two (see the header). */
function joined(upper: Table, lower: Table, flow: readonly Segment[]): Table | null {
  if ((upper.kind === "lattice") === (lower.kind === "lattice") || upper.kind === "structure" || lower.kind === "structure") return null;
  if (!upper.rtl !== !lower.rtl) return null;
  const size = Math.max(textSize(upper), textSize(lower));
  const gap = lower.top - upper.bottom;
  if (gap > MAX_GAP * size || gap < -size) return null;
  const [x0, x1] = [Math.min(upper.x0, lower.x0), Math.max(upper.x1, lower.x1)];
  if (flow.some((s) => s.x1 > x0 && s.x0 < x1 && s.base > upper.bottom - 0.25 * s.size && s.top < lower.top)) return null;
  const [fine, coarse] = upper.cols >= lower.cols ? [upper, lower] : [lower, upper];
  const map = columnMap(coarse, fine);
  if (!map) return null;
  const cells = [...remapped(upper, upper === coarse ? map : null, 0), ...remapped(lower, lower === coarse ? map : null, upper.rows)];
  return {
    kind: fine.kind,
    rows: upper.rows + lower.rows,
    cols: Math.max(
      fine.cols,
      maxOf(cells, (c) => c.col + c.colSpan),
    ),
    cells,
    x0,
    x1,
    top: Math.min(upper.top, lower.top),
    bottom: Math.max(upper.bottom, lower.bottom),
    colEdges: [
      minOf([upper, lower], (t) => t.colEdges[0]!),
      ...fine.colEdges.slice(1, -1),
      maxOf([upper, lower], (t) => t.colEdges.at(-1)!),
    ],
    ...(fine.rtl ? { rtl: true } : {}),
  };
}

/** The page's tables with those stacked into one joined (see the header); `flow` is the page's text outside tables. */
export function joinStackedTables(tables: readonly Table[], flow: readonly Segment[]): Table[] {
  const out: Table[] = [];
  for (const t of [...tables].sort((a, b) => a.top - b.top)) {
    let merged = false;
    for (let k = 0; k < out.length && !merged; k++) {
      const one = joined(out[k]!, t, flow);
      if (one) [out[k], merged] = [one, true];
    }
    if (!merged) out.push(t);
  }
  return out;
}
