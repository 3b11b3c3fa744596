/**
 * Stream tables: columns of text aligned by whitespace alone (no rules), as spreadsheets print.
 * A run of consecutive lines that each hold two or more segments is a candidate; its columns are
 * the x-intervals where segments overlap (a projection); two neighbouring columns that no row uses
 * together are one column whose cells are aligned differently (a left-aligned header over
 * right-aligned numbers). Prose set in two columns looks alike, so candidates whose cells hold
 * sentences rather than values are refused. Pure.
 */
import { segmentText } from "./lines.ts";
import { buildTable, type CellDraft } from "./tables.ts";
import type { Segment, Table } from "./types.ts";

/** Rows further apart than this (in font sizes, baseline to baseline) end a candidate. */
const MAX_ROW_PITCH = 2.6;
/** Cells of a table hold values and short labels: more words per cell on average is prose. */
const MAX_WORDS_PER_CELL = 5;

/** Column intervals where the segments of all rows overlap. */
export function projectColumns(rows: readonly Segment[][]): [number, number][] {
  const spans = rows.flat().map((s) => [s.x0, s.x1] as [number, number]).sort((a, b) => a[0] - b[0]);
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

/** Merges neighbouring columns that no row uses both of. */
export function mergeComplementary(rows: readonly Segment[][], cols: [number, number][]): [number, number][] {
  const out = cols.map((c) => [...c] as [number, number]);
  for (let i = 0; i + 1 < out.length; ) {
    const used = rows.map((r) => new Set(r.map((s) => columnOf(s, out))));
    const both = used.some((u) => u.has(i) && u.has(i + 1));
    if (!both) {
      out.splice(i, 2, [out[i]![0], out[i + 1]![1]]);
      continue;
    }
    i++;
  }
  return out;
}

const words = (seg: Segment): number => segmentText(seg).split(" ").filter(Boolean).length;

/** One candidate run of lines as a table, or null when it does not hold a table. */
export function streamTable(rows: readonly Segment[][]): Table | null {
  if (rows.length < 2) return null;
  const cols = mergeComplementary(rows, projectColumns(rows));
  if (cols.length < 2) return null;
  const segs = rows.flat();
  if (segs.reduce((n, s) => n + words(s), 0) / segs.length > MAX_WORDS_PER_CELL) return null;
  const drafts: CellDraft[] = [];
  rows.forEach((row, r) => {
    const byCol = new Map<number, Segment[]>();
    for (const seg of row) {
      const c = columnOf(seg, cols);
      byCol.set(c, [...(byCol.get(c) ?? []), seg]);
    }
    for (const [c, group] of [...byCol].sort((a, b) => a[0] - b[0])) {
      const x1 = Math.max(...group.map((s) => s.x1));
      let span = 1;
      while (c + span < cols.length && x1 > cols[c + span]![0] + 2 && !byCol.has(c + span)) span++;
      drafts.push({ row: r, col: c, rowSpan: 1, colSpan: span, items: group.flatMap((s) => s.items) });
    }
  });
  const colEdges = [...cols.map((c) => c[0]), cols.at(-1)![1]];
  const box = { x0: cols[0]![0], x1: cols.at(-1)![1], top: Math.min(...segs.map((s) => s.top)), bottom: Math.max(...segs.map((s) => s.bottom)) };
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
