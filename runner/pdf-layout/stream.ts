/**
 * Stream tables: columns of text aligned by whitespace alone (no rules), as spreadsheets print.
 * A run of consecutive lines that each hold two or more segments is a candidate. A value (number
 * or date) is its own cell even when the next cell's text follows it closely (Calc leaves less
 * than a word space between a right-aligned date and left-aligned text), so segments are first cut
 * beside values where the glyphs jump (the items glyphs.ts made). The columns are then the
 * x-intervals where those pieces overlap (a projection); two neighbouring columns that no row uses
 * together are one column whose cells are aligned differently (a left-aligned header over
 * right-aligned numbers), and so are two that only a value cut in a single row divides ("lower 8 |
 * bits" in a producer that places every word). Lookalikes are refused: prose set in two columns
 * (cells hold sentences), a list (its first column is list markers), fewer than two rows of two
 * cells, and (from three rows up) columns whose cells share no edge. Pure.
 */
import { typeCell } from "./cells.ts";
import { isMarker, segmentOf, segmentText } from "./lines.ts";
import { maxOf, minOf } from "./minmax.ts";
import { buildTable, type CellDraft } from "./tables.ts";
import type { Segment, Table, TextItem } from "./types.ts";

/** Rows further apart than this (in font sizes, baseline to baseline) end a candidate. */
const MAX_ROW_PITCH = 2.6;
/** Cells of a table hold values and short labels: more words per cell on average is prose. */
const MAX_WORDS_PER_CELL = 5;
/** A table has at least this many rows with two or more cells (specifications print two-row tables). */
const MIN_ROWS = 2;
/** Value cuts make a column boundary only when this many rows have one there. */
const MIN_CUT_ROWS = 2;
/** Edges closer than this (points) are aligned. */
const ALIGN = 2;
/** In each column, at least this share of the cells line up on a common left, right or centre… */
const MIN_ALIGNED = 0.6;
/** …judged from this many rows up (two cells show no tendency). */
const MIN_ALIGN_ROWS = 3;

const isValue = (item: TextItem): boolean => typeof typeCell(item.text).value !== "string";

/** A segment cut between two runs where either is a number or a date. */
function valuePieces(seg: Segment): Segment[] {
  const out: Segment[] = [];
  let run: TextItem[] = [];
  for (const item of seg.items) {
    const prev = run.at(-1);
    if (prev && !prev.opaque && item.x0 > prev.x1 && (isValue(prev) || isValue(item))) {
      out.push(segmentOf(run));
      run = [];
    }
    run.push(item);
  }
  out.push(segmentOf(run));
  return out;
}

/** Column intervals where the segments of all rows overlap. */
export function projectColumns(rows: readonly Segment[][]): [number, number][] {
  const spans = rows
    .flat()
    .map((s) => [s.x0, s.x1] as [number, number])
    .sort((a, b) => a[0] - b[0]);
  const cols: [number, number][] = [];
  for (const [a, b] of spans) {
    const last = cols.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else cols.push([a, b]);
  }
  return cols;
}

/** Which column each segment of each row falls in (the one it overlaps most). */
function columnOf(seg: Segment, cols: readonly [number, number][]): number {
  let best = 0;
  let bestOverlap = Number.NEGATIVE_INFINITY;
  cols.forEach(([a, b], i) => {
    const overlap = Math.min(b, seg.x1) - Math.max(a, seg.x0);
    if (overlap > bestOverlap) [best, bestOverlap] = [i, overlap];
  });
  return best;
}

/**
 * Merges neighbouring columns that no row uses both of, or that fewer than MIN_CUT_ROWS rows use
 * both of when every such row has them in one segment (divided by a value cut only). `sourceOf`
 * gives the segment a piece was cut from.
 */
export function mergeComplementary(
  rows: readonly Segment[][],
  cols: [number, number][],
  sourceOf: (s: Segment) => Segment = (s) => s,
): [number, number][] {
  const out = cols.map((c) => [...c] as [number, number]);
  for (let i = 0; i + 1 < out.length;) {
    let apart = 0;
    let cut = 0;
    for (const row of rows) {
      const left = row.filter((s) => columnOf(s, out) === i).map(sourceOf);
      const right = row.filter((s) => columnOf(s, out) === i + 1).map(sourceOf);
      if (!left.length || !right.length) continue;
      if (left.some((l) => right.includes(l))) cut++;
      else apart++;
    }
    if (apart === 0 && cut < MIN_CUT_ROWS) {
      out.splice(i, 2, [out[i]![0], out[i + 1]![1]]);
      continue;
    }
    i++;
  }
  return out;
}

const words = (seg: Segment): number => segmentText(seg).split(" ").filter(Boolean).length;

/** Whether most of the cells (each the span of its pieces) share a left edge, a right edge or a centre. */
function aligned(cells: readonly Segment[][]): boolean {
  const spans = cells.map((c) => [minOf(c, (s) => s.x0), maxOf(c, (s) => s.x1)] as const);
  const edges: ((s: readonly [number, number]) => number)[] = [(s) => s[0], (s) => s[1], (s) => (s[0] + s[1]) / 2];
  return edges.some((edge) => {
    const xs = spans.map(edge);
    return xs.some((x) => xs.filter((y) => Math.abs(x - y) <= ALIGN).length >= MIN_ALIGNED * xs.length);
  });
}

/** Whether the cells look like a table's rather than prose's or a list's (see the header). */
function tableLike(rows: readonly Map<number, Segment[]>[]): boolean {
  const full = rows.filter((r) => r.size >= 2);
  if (full.length < MIN_ROWS) return false;
  const segs = rows.flatMap((r) => [...r.values()].flat());
  if (segs.reduce((n, s) => n + words(s), 0) / segs.length > MAX_WORDS_PER_CELL) return false;
  if (full.every((r) => r.has(0) && r.get(0)!.every((s) => isMarker(s.items)))) return false;
  if (full.length < MIN_ALIGN_ROWS) return true;
  const cols = new Set(full.flatMap((r) => [...r.keys()]));
  return [...cols].every((c) => aligned(full.flatMap((r) => (r.has(c) ? [r.get(c)!] : []))));
}

/** One candidate run of lines as a table, or null when it does not hold a table. */
export function streamTable(lines: readonly Segment[][]): Table | null {
  if (lines.length < MIN_ROWS) return null;
  const source = new Map<Segment, Segment>();
  const rows = lines.map((line) =>
    line.flatMap((seg) => {
      const pieces = valuePieces(seg);
      for (const p of pieces) source.set(p, seg);
      return pieces;
    }),
  );
  const cols = mergeComplementary(rows, projectColumns(rows), (p) => source.get(p) ?? p);
  if (cols.length < 2) return null;
  const byCols = rows.map((row) => {
    const byCol = new Map<number, Segment[]>();
    for (const seg of row) {
      const c = columnOf(seg, cols);
      const group = byCol.get(c);
      if (group) group.push(seg);
      else byCol.set(c, [seg]);
    }
    return byCol;
  });
  if (!tableLike(byCols)) return null;
  const segs = rows.flat();
  const drafts: CellDraft[] = [];
  byCols.forEach((byCol, r) => {
    for (const [c, group] of [...byCol].sort((a, b) => a[0] - b[0])) {
      const x1 = maxOf(group, (s) => s.x1);
      let span = 1;
      while (c + span < cols.length && x1 > cols[c + span]![0] + 2 && !byCol.has(c + span)) span++;
      drafts.push({ row: r, col: c, rowSpan: 1, colSpan: span, items: group.flatMap((s) => s.items) });
    }
  });
  const colEdges = [...cols.map((c) => c[0]), cols.at(-1)![1]];
  const box = { x0: cols[0]![0], x1: cols.at(-1)![1], top: minOf(segs, (s) => s.top), bottom: maxOf(segs, (s) => s.bottom) };
  return buildTable("stream", drafts, colEdges, box);
}

/**
 * Stream tables among a page's lines (each line its segments, top to bottom). Returns each table
 * with the indexes of the lines it took.
 */
export function streamTables(lines: readonly Segment[][]): { table: Table; lines: number[] }[] {
  const found: { table: Table; lines: number[] }[] = [];
  let run: number[] = [];
  const flush = (): void => {
    // A run may start or end with single-segment lines only if they sit inside it.
    while (run.length && lines[run.at(-1)!]!.length < 2) run.pop();
    const table = streamTable(run.map((i) => [...lines[i]!]));
    if (table) found.push({ table, lines: run });
    run = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const prev = run.length ? lines[run.at(-1)!]! : null;
    const size = line[0]?.size ?? 0;
    const close = prev !== null && line[0]!.base - prev[0]!.base <= MAX_ROW_PITCH * size;
    if (line.length >= 2 && (close || run.length === 0)) run.push(i);
    else if (line.length === 1 && close && run.length > 0) run.push(i);
    else {
      flush();
      if (line.length >= 2) run.push(i);
    }
  }
  flush();
  return found;
}
