/**
 * Lattice tables: grids drawn with ruling lines. Rules that touch form a region, and so do the two
 * strokes of a double rule (vertical rules shorter than a line of text are none: glyph stems). The
 * region's distinct horizontal and vertical rule positions are the grid, lines closer than a narrow
 * column with no text between taken as one (closeNarrow); and heights where vertical rules of
 * several columns stop inside a row (boxes whose top edge is not drawn), the ends of row rules
 * reaching past the outermost vertical ones over text (a grid not ruled around: outerEdges), and
 * the ends of column rules running on past the first or last row rule over text (a header ruled
 * under only, totals under the last rule: outerRows). A missing border between two grid cells (less
 * than half of the edge drawn) merges them into one spanning cell. A region whose rows share no
 * inner rule is tables stacked (one's box touching the next one's), read one by one, and so is a
 * box of two rows or more, ruled all across, that no inner rule parts over rows that are parted (a
 * page's header box over a ruled body); a header boxed alone over unruled columns, and a row boxed
 * alone whose cell holds figures set apart (a row of a whitespace table set off), and a few cells of
 * a whitespace table boxed row by row (figures beside every line of the grid), are left to the
 * stream finder. Text items go to the cell under their centre. Pure.
 */
import { spanCentred, splitBands } from "./bands.ts";
import { labelPiece, linePieces, VALUES_APART } from "./columns.ts";
import { coverage } from "./intervals.ts";
import { groupLines, textMiddle } from "./lines.ts";
import { buildTable, inside, type CellDraft } from "./tables.ts";
import { textGrid } from "./textgrid.ts";
import type { Rule, Table, TextItem } from "./types.ts";

type Box = { x0: number; x1: number; top: number; bottom: number };

/** Positions closer than this (points) are the same grid line; rules closer than this touch. */
const TOL = 2;
/** Above this many rules a page is a drawing, not a table: lattice analysis is skipped. */
const MAX_RULES = 3000;

const isHorizontal = (r: Rule): boolean => r.y1 - r.y0 < TOL;

/** The two strokes of a double rule lie this near (points): LaTeX's \hline\hline is 2.4 pt apart. */
const DOUBLE_RULE = 3.5;
/** …and each runs along this share of the other's length at least. */
const DOUBLE_OVERLAP = 0.9;

/**
 * Whether two rules touch, or are the two strokes of a double rule: a header's box closed by one
 * stroke, the body's opened by the other (\hline\hline under a header), is one table.
 */
function touches(a: Rule, b: Rule): boolean {
  if (a.x0 <= b.x1 + TOL && b.x0 <= a.x1 + TOL && a.y0 <= b.y1 + TOL && b.y0 <= a.y1 + TOL) return true;
  if (!isHorizontal(a) || !isHorizontal(b) || Math.abs(a.y0 - b.y0) > DOUBLE_RULE) return false;
  const overlap = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
  return overlap >= DOUBLE_OVERLAP * Math.max(a.x1 - a.x0, b.x1 - b.x0);
}

/** Groups rules that touch (transitively), by union-find. */
function ruleRegions(rules: readonly Rule[]): Rule[][] {
  const parent = rules.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  for (let i = 0; i < rules.length; i++) {
    for (let j = i + 1; j < rules.length; j++) if (touches(rules[i]!, rules[j]!)) parent[find(i)] = find(j);
  }
  const groups = new Map<number, Rule[]>();
  rules.forEach((r, i) => {
    const root = find(i);
    const group = groups.get(root);
    if (group) group.push(r);
    else groups.set(root, [r]);
  });
  return [...groups.values()];
}

/** Sorted distinct values, merging those closer than TOL. */
export function distinct(values: number[]): number[] {
  const out: number[] = [];
  for (const v of [...values].sort((a, b) => a - b)) if (!out.length || v - out.at(-1)! > TOL) out.push(v);
  return out;
}

/** For each grid line in `lines`, the spans of the rules within TOL of it, sorted by start. */
function spansOn(
  lines: readonly number[],
  rules: readonly Rule[],
  at: (r: Rule) => number,
  span: (r: Rule) => [number, number],
): [number, number][][] {
  const out = lines.map((): [number, number][] => []);
  for (const r of rules) {
    const p = at(r);
    // Grid lines are more than TOL apart, so a rule is near at most the two around its position.
    const k = firstAtLeast(lines, p - TOL);
    for (let i = k; i < lines.length && lines[i]! <= p + TOL; i++) out[i]!.push(span(r));
  }
  for (const spans of out) spans.sort((p, q) => p[0] - q[0]);
  return out;
}

/** Index of the first value ≥ v in a sorted list (its length when none is). */
function firstAtLeast(sorted: readonly number[], v: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface Grid {
  xs: number[];
  ys: number[];
  /** rightEdge[r][c]: a border between column c and c+1 in row r; bottomEdge[r][c] likewise. */
  rightEdge: boolean[][];
  bottomEdge: boolean[][];
  /** ruledRows[k]: a horizontal rule is drawn on ys[k] (not only where column rules end). */
  ruledRows: boolean[];
}

/** A row boundary that no rule draws lies at least this far (points) from the drawn ones. */
const MIN_ROW = 4;

/**
 * Row boundaries where no horizontal rule is drawn: heights where vertical rules of two or more
 * columns stop inside a row, away from every drawn horizontal rule. They are the tops or feet of
 * boxes whose horizontal edges are not drawn (shaded label boxes under a group header: "Pre-Pawn"
 * above boxes "Handgun", "Long Gun", "*Other"), and part the row there as a rule would.
 */
function openEnds(vs: readonly Rule[], ys: readonly number[]): number[] {
  if (ys.length < 2) return [];
  const [top, bottom] = [ys[0]!, ys.at(-1)!];
  const ends = vs.flatMap((v) => [v.y0, v.y1].filter((y) => y > top && y < bottom).map((y) => ({ y, x: v.x0 })));
  const free = ends.filter((e) => !ys.some((l) => Math.abs(l - e.y) < MIN_ROW));
  return distinct(free.map((e) => e.y)).filter((y) => distinct(free.filter((e) => Math.abs(e.y - y) <= TOL).map((e) => e.x)).length >= 2);
}

/** Horizontal rules reaching this far (points) past the outermost vertical one rule a column there. */
const OPEN_COLUMN = 4;

/**
 * The vertical grid lines with the table's open sides: a grid ruled between its columns but not
 * around them (LaTeX's {l|r|r}, reports drawing inner separators only) has rows ruled past its
 * outermost vertical rules, and text out there (row labels, a last column) is the table's too. A
 * side is open when two horizontal rules or more reach past it and text stands between them; the
 * grid line goes where the farthest of them ends.
 */
function outerEdges(xs: readonly number[], hs: readonly Rule[], items: readonly TextItem[]): number[] {
  if (!xs.length || !hs.length) return [...xs];
  const [first, last] = [xs[0]!, xs.at(-1)!];
  const [top, bottom] = [Math.min(...hs.map((h) => h.y0)), Math.max(...hs.map((h) => h.y0))];
  const open = (reach: readonly Rule[], x0: number, x1: number): boolean =>
    reach.length >= 2 && items.some((i) => i.x0 >= x0 - TOL && i.x1 <= x1 + TOL && i.base > top && i.base < bottom);
  const before = hs.filter((h) => h.x0 < first - OPEN_COLUMN);
  const after = hs.filter((h) => h.x1 > last + OPEN_COLUMN);
  const left = Math.min(...before.map((h) => h.x0));
  const right = Math.max(...after.map((h) => h.x1));
  return [...(open(before, left, first) ? [left] : []), ...xs, ...(open(after, last, right) ? [right] : [])];
}

/** Vertical rules reaching this far (points) past the first or last row rule open a row there. */
const OPEN_ROW = 4;
/** A single column rule opens a row only when it reaches no farther than this many of the grid's tallest rows. */
const LONE_RULE_ROW = 1.5;

/**
 * The horizontal grid lines with the table's open ends: a grid whose column rules run on above its
 * first row rule (a header ruled under but not over) or below its last (a totals row under the
 * body's last rule) has a row out there, and the text in it is the table's. An end is open when
 * column rules of two columns or more reach past it — or one, no farther than LONE_RULE_ROW of
 * the grid's tallest row (a frame's side running on is no column rule) — and text within the row
 * rules' width stands between the rule and where they end; the grid line goes where the farthest
 * of them ends.
 */
function outerRows(drawn: readonly Rule[], vs: readonly Rule[], items: readonly TextItem[]): number[] {
  const ys = distinct(drawn.map((h) => h.y0));
  if (ys.length < 2 || !vs.length) return ys;
  const [first, last] = [ys[0]!, ys.at(-1)!];
  const [x0, x1] = [Math.min(...drawn.map((h) => h.x0)), Math.max(...drawn.map((h) => h.x1))];
  const tallest = Math.max(...ys.slice(1).map((y, k) => y - ys[k]!));
  const open = (reach: readonly Rule[], from: number, to: number): boolean =>
    reach.length > 0 &&
    (distinct(reach.map((v) => v.x0)).length >= 2 || to - from <= LONE_RULE_ROW * tallest) &&
    items.some((i) => i.x0 >= x0 - TOL && i.x1 <= x1 + TOL && textMiddle(i) > from && textMiddle(i) < to);
  const above = vs.filter((v) => v.y0 < first - OPEN_ROW);
  const below = vs.filter((v) => v.y1 > last + OPEN_ROW);
  const top = Math.min(...above.map((v) => v.y0));
  const bottom = Math.max(...below.map((v) => v.y1));
  return [...(open(above, top, first) ? [top] : []), ...ys, ...(open(below, last, bottom) ? [bottom] : [])];
}

/** Grid lines closer than this (points) with no text between them are one (see closeNarrow): columns, rows. */
const NARROW_COLUMN = 8;
const NARROW_ROW = 4;

/**
 * Grid lines (sorted) with those closer than `narrow` to the one before and no text centre between
 * them (`centres`, sorted) made one: the edges of a cell's shading and of the paragraph shading
 * Word insets in it by the cell's margin, the two strokes of a double rule. They part no text, and
 * as columns of their own they would push every cell of a row out of line. Returns the lines kept
 * (the outer one at the grid's ends, the middle one inside) and where a rule drawn at p stands.
 */
function closeNarrow(lines: readonly number[], centres: readonly number[], narrow: number): { lines: number[]; at: (p: number) => number } {
  const groups: number[][] = [];
  for (const v of lines) {
    const last = groups.at(-1);
    const k = firstAtLeast(centres, last?.at(-1) ?? v);
    if (last && v - last.at(-1)! < narrow && !(k < centres.length && centres[k]! < v)) last.push(v);
    else groups.push([v]);
  }
  const kept = groups.map((g, i) => (i === 0 ? g[0]! : i === groups.length - 1 ? g.at(-1)! : (g[0]! + g.at(-1)!) / 2));
  const at = (p: number): number => {
    const i = groups.findIndex((g) => p >= g[0]! - TOL && p <= g.at(-1)! + TOL);
    return i < 0 ? p : kept[i]!;
  };
  return { lines: kept, at };
}

/**
 * The grid of one region of rules, or null when it is not a grid of at least two cells. `items`
 * (the page's text) tell whether text stands in a column past the outermost vertical rules, and
 * which grid lines close together part text (closeNarrow).
 */
export function buildGrid(region: readonly Rule[], items: readonly TextItem[] = []): Grid | null {
  const drawn = region.filter(isHorizontal);
  const vs = region.filter((r) => !isHorizontal(r));
  const [left, right] = [Math.min(...region.map((r) => r.x0)), Math.max(...region.map((r) => r.x1))];
  const [top, bottom] = [Math.min(...region.map((r) => r.y0)), Math.max(...region.map((r) => r.y1))];
  const outer = outerRows(drawn, vs, items);
  const open = openEnds(vs, outer);
  // The open ends and the heights where boxes' undrawn edges lie part the grid all across.
  const ends = outer.filter((y) => !drawn.some((h) => Math.abs(h.y0 - y) <= TOL));
  const hs = [...drawn, ...[...ends, ...open].map((y) => ({ x0: left, x1: right, y0: y, y1: y }))];
  const within = items.filter((i) => i.x0 < right && i.x1 > left && i.base > top && i.base - i.size < bottom);
  const rowsAt = closeNarrow(
    distinct(hs.map((r) => r.y0)),
    within.map(textMiddle).sort((a, b) => a - b),
    NARROW_ROW,
  );
  const colsAt = closeNarrow(
    outerEdges(distinct(vs.map((r) => r.x0)), drawn, items),
    within.map((i) => (i.x0 + i.x1) / 2).sort((a, b) => a - b),
    NARROW_COLUMN,
  );
  const [xs, ys] = [colsAt.lines, rowsAt.lines];
  if (ys.length < 2 || xs.length < 2 || (ys.length - 1) * (xs.length - 1) < 2) return null;
  const ruledRows = ys.map((y) => drawn.some((h) => Math.abs(rowsAt.at(h.y0) - y) <= TOL));
  return { xs, ys, ...gridEdges(xs, ys, { vs, hs, xAt: colsAt.at, yAt: rowsAt.at }), ruledRows };
}

/** A region's rules by direction, and where a rule drawn at a position stands on the grid (closeNarrow). */
interface GridRules {
  vs: readonly Rule[];
  hs: readonly Rule[];
  xAt: (x: number) => number;
  yAt: (y: number) => number;
}

/** Which borders of a grid's cells are drawn: at least half of each edge. */
function gridEdges(xs: readonly number[], ys: readonly number[], rules: GridRules): Pick<Grid, "rightEdge" | "bottomEdge"> {
  // The spans drawn on each grid line, gathered once (a grid of n lines is then O(n²), not O(n³)).
  const vSpans = spansOn(
    xs,
    rules.vs,
    (v) => rules.xAt(v.x0),
    (v) => [v.y0, v.y1],
  );
  const hSpans = spansOn(
    ys,
    rules.hs,
    (h) => rules.yAt(h.y0),
    (h) => [h.x0, h.x1],
  );
  const rightEdge = ys.slice(1).map((yb, r) => xs.slice(1, -1).map((_, k) => coverage(ys[r]!, yb, vSpans[k + 1]!) >= 0.5));
  const bottomEdge = ys.slice(1, -1).map((_, k) => xs.slice(1).map((xr, c) => coverage(xs[c]!, xr, hSpans[k + 1]!) >= 0.5));
  return { rightEdge, bottomEdge };
}

/** Cells of a grid with their spans, merging across missing borders. */
export function gridCells(grid: Grid): { row: number; col: number; rowSpan: number; colSpan: number }[] {
  const rows = grid.ys.length - 1;
  const cols = grid.xs.length - 1;
  const taken = Array.from({ length: rows }, () => new Array<boolean>(cols).fill(false));
  const cells: { row: number; col: number; rowSpan: number; colSpan: number }[] = [];
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      if (taken[r]![c]) continue;
      // A span stops at a drawn border and at a grid cell another span has claimed already (a
      // missing border can let a column span run into a row span from above: merged cells must
      // never overlap).
      let colSpan = 1;
      while (c + colSpan < cols && !grid.rightEdge[r]![c + colSpan - 1] && !taken[r]![c + colSpan]) colSpan++;
      let rowSpan = 1;
      const open = (rr: number): boolean => {
        for (let k = c; k < c + colSpan; k++) if (grid.bottomEdge[rr]![k] || taken[rr + 1]![k]) return false;
        return true;
      };
      while (r + rowSpan < rows && open(r + rowSpan - 1)) rowSpan++;
      for (let rr = r; rr < r + rowSpan; rr++) for (let k = c; k < c + colSpan; k++) taken[rr]![k] = true;
      cells.push({ row: r, col: c, rowSpan, colSpan });
    }
  }
  return cells;
}

/** The inner grid lines (indexes into xs) drawn down grid row r: the columns that row parts at. */
const rowParts = (grid: Grid, r: number): Set<number> => new Set(grid.rightEdge[r]!.flatMap((drawn, k) => (drawn ? [k] : [])));

/**
 * The grid row after which a region's grid is two tables stacked, or -1: the rows above and below
 * that line are each parted by drawn inner rules, but by none in common (a table's box touching the
 * box of the next table's header, a rule of one running into the other). One table's rules carry on
 * across its rows; a group header above its columns shares their group rules.
 */
function stackSplit(grid: Grid): number {
  for (let r = 0; r + 1 < grid.ys.length - 1; r++) {
    const [above, below] = [rowParts(grid, r), rowParts(grid, r + 1)];
    if (above.size && below.size && ![...above].some((k) => below.has(k))) return r;
    // Two rows or more that no inner rule parts, each ruled all across, over parted rows: a boxed
    // block of its own (a page's header box over the ruled body), whose text must not set the
    // body's columns. (Rows some rule does not close are the table's own rows, its shading
    // parting only some of them.)
    if (r >= 1 && !above.size && below.size && openRows(grid, r) && closedRows(grid, r)) return r;
  }
  return -1;
}

/** Whether no inner rule parts any of the grid rows 0..r. */
const openRows = (grid: Grid, r: number): boolean => grid.rightEdge.slice(0, r + 1).every((row) => !row.some(Boolean));

/** Whether each of the grid rows 0..r is closed by a rule drawn all across. */
const closedRows = (grid: Grid, r: number): boolean => grid.bottomEdge.slice(0, r + 1).every((row) => row.every(Boolean));

/**
 * A region's rules as the grids they draw: one, or several stacked (see stackSplit), each built
 * from the rules on its side of the line between them (a horizontal rule on that line in both).
 */
export function stackedGrids(region: readonly Rule[], items: readonly TextItem[] = []): Grid[] {
  const grid = buildGrid(region, items);
  if (!grid) return [];
  const r = stackSplit(grid);
  if (r < 0) return [grid];
  const y = grid.ys[r + 1]!;
  const mid = (rule: Rule): number => (rule.y0 + rule.y1) / 2;
  // A vertical rule goes to the side its middle is on, cut at the line: a frame's sides running
  // down both grids must not reach past the other one's edge (outerRows would open a row there).
  const upper = region.flatMap((rule) =>
    isHorizontal(rule) ? (rule.y0 <= y + TOL ? [rule] : []) : mid(rule) < y ? [{ ...rule, y1: Math.min(rule.y1, y) }] : [],
  );
  const lower = region.flatMap((rule) =>
    isHorizontal(rule) ? (rule.y0 >= y - TOL ? [rule] : []) : mid(rule) > y ? [{ ...rule, y0: Math.max(rule.y0, y) }] : [],
  );
  // Each side has fewer grid rows, so this ends.
  return [...stackedGrids(upper, items), ...stackedGrids(lower, items)];
}

/** Separators closer than this (points) are the same one. */
const SAME_X = 3;

/**
 * The region read by its text columns (textgrid.ts, its drawn rules kept) when its rules leave
 * columns out: a box around a table, rules under its header only, a grid ruling its groups of
 * columns but not the columns in a group. That is when its text parts into more columns, apart
 * from the drawn ones, than it has drawn inner rules — or, `hidden` (hiddenRows), when a merged
 * cell holds rows set in the grid's columns, and the text parts into at least the grid's columns.
 * Null when the rules tell the columns.
 */
function textColumns(lattice: Table, grid: Grid, box: Box, items: readonly TextItem[], hidden: boolean): Table | null {
  const innerXs = grid.xs.slice(1, -1);
  const tg = textGrid({
    items: items.filter((i) => inside(i, box)),
    drawnXs: innerXs,
    drawnYs: grid.ys.slice(1, -1),
    crossYs: grid.ys.slice(1, -1).filter((_, k) => grid.ruledRows[k + 1] && grid.bottomEdge[k]!.every(Boolean)),
    kind: "lattice",
    box,
  });
  if (!tg) return null;
  const textOnly = tg.separators.filter((x) => !innerXs.some((d) => Math.abs(d - x) < SAME_X)).length;
  if (hidden) return tg.table.cols >= lattice.cols ? tg.table : null;
  return textOnly > innerXs.length && tg.table.cols > lattice.cols ? tg.table : null;
}

/** Merged cells with at least this many lines parted along the grid's columns in all are rows, not cells. */
const HIDDEN_ROWS = 4;

/**
 * Whether the grid's cells hold rows of a table set by whitespace: lines whose pieces stand in
 * different ones of the grid columns their cell spans (the body of a table boxed as one band under
 * its ruled header: the header's rules part the columns, the body's rows are set by whitespace inside
 * one box; rows a shading leaves white, with no rule at all), or lines of two values or more (columns
 * of figures under one shaded band). Read as merged cells, each row's cells would be glued into one text.
 */
function hiddenRows(grid: Grid, drafts: readonly CellDraft[]): boolean {
  const column = (x: number): number => Math.max(1, firstAtLeast(grid.xs, x)) - 1;
  const parted = drafts.flatMap((d) =>
    groupLines(d.items.filter((i) => !i.opaque)).filter((line) => {
      const pieces = linePieces(line);
      if (pieces.filter((p) => p.value).length >= 2) return true;
      return d.colSpan >= 2 && new Set(pieces.map((p) => column((p.x0 + p.x1) / 2))).size >= 2;
    }),
  );
  return parted.length >= HIDDEN_ROWS;
}

/** At most this many rows of a boxed header, and lines in each of its cells (see boxedHeader). */
const HEADER_ROWS = 3;
const HEADER_LINES = 3;

/** Unruled text this many font sizes under a boxed header (baseline below its bottom) is its table's. */
const UNDER_HEADER = 3;

/**
 * Whether a grid is a header boxed on its own: up to three rows of cells holding a few lines of
 * labels and no values (but years and columns' numbers), with lines of several pieces of unruled
 * text right under it (a shaded bar over columns of figures set by whitespace; year bands over
 * shaded "Person | Male | Female" labels and a row numbering the columns). It is no table by itself; its text is left to the stream finder,
 * which reads it as the head of the columns under it. (A ruled table's header row alone at the foot
 * of a page has nothing under it: it stays a table, to be joined to the rest on the next page.)
 */
function boxedHeader(grid: Grid, drafts: readonly CellDraft[], box: Box, items: readonly TextItem[], others: readonly Box[]): boolean {
  if (grid.ys.length > HEADER_ROWS + 1) return false;
  const labels = drafts.every((d) => {
    const lines = groupLines(d.items.filter((i) => !i.opaque));
    return lines.length <= HEADER_LINES && lines.every((l) => linePieces(l).every(labelPiece));
  });
  if (!labels) return false;
  // Unruled: text another grid holds (a ruled body boxed apart from its header box) is no header's.
  const under = items.filter(
    (i) =>
      i.x0 >= box.x0 &&
      i.x1 <= box.x1 &&
      i.base > box.bottom &&
      i.base - box.bottom <= UNDER_HEADER * i.size &&
      !others.some((o) => inside(i, o)),
  );
  return groupLines(under).some((l) => linePieces(l).length >= 2);
}

/**
 * Whether a grid of one row is a row of a whitespace table boxed on its own (a row set off for its
 * label wrapped over two lines, a highlighted total): a cell of it holds a line of two values or
 * more set apart (columns.ts VALUES_APART), the columns its rules do not draw. Read as a lattice, those values would be glued
 * into one cell; left to the stream finder, they are the row of the columns around them.
 */
function boxedRow(grid: Grid, drafts: readonly CellDraft[]): boolean {
  if (grid.ys.length !== 2) return false;
  return drafts.some((d) =>
    groupLines(d.items.filter((i) => !i.opaque)).some((l) => {
      const values = linePieces(l).filter((p) => p.value);
      return values.some((p, k) => k > 0 && p.x0 - values[k - 1]!.x1 >= VALUES_APART * p.size);
    }),
  );
}

/** A line's run in its largest type, the first of them, glyphs before opaque runs: where the line stands. */
const mainItem = (line: readonly TextItem[]): TextItem => line.reduce((a, b) => (!b.opaque && (a.opaque || b.size > a.size) ? b : a));

/** Figures beside a grid's line, this near its box (font sizes), are cells of the line's row. */
const BESIDE = 4;

/**
 * Whether a grid boxes a few cells of a whitespace table around it (a reservoir's name and level
 * boxed among its row's figures, row by row): two lines of text or more, each with a value on its
 * baseline just outside the box, left or right (within BESIDE font sizes), that no other grid
 * holds. Read as a lattice, those cells would leave their rows; left to the stream finder, they are
 * cells of the rows around them. (A ruled table beside the page's other column has prose there, not
 * a figure on each of its lines.)
 */
function boxedInRows(box: Box, items: readonly TextItem[], others: readonly Box[]): boolean {
  const lines = groupLines(items.filter((i) => !i.opaque && inside(i, box)));
  if (lines.length < 2) return false;
  const outside = items.filter((i) => !i.opaque && (i.x1 <= box.x0 || i.x0 >= box.x1) && !others.some((o) => inside(i, o)));
  return lines.every((line) => {
    const { size, base } = mainItem(line);
    const beside = outside.filter(
      (i) =>
        Math.abs(i.base - base) <= 0.2 * size &&
        ((box.x0 - i.x1 <= BESIDE * size && i.x1 <= box.x0) || (i.x0 - box.x1 <= BESIDE * size && i.x0 >= box.x1)),
    );
    return beside.length > 0 && linePieces(beside).some((p) => p.value);
  });
}

/** Runs nearer than this (share of their size) with no space drawn between are one word's. */
const WORD_GAP = 0.15;
/** A grid line this near (points) the gap between two runs parts them: two cells' texts set against their border. */
const PARTS = 1;

/**
 * A line's runs (left to right) in words: runs that touch with no space between them, unless a
 * grid line runs in the gap. A grid line that passes through a glyph does not part the word: a
 * drawing's label set across one of its lines ("(x₁, y₁)" over a line through its "x") is one
 * word, placed whole. `xs` are the grid's column lines.
 */
function gridWords(line: readonly TextItem[], xs: readonly number[]): TextItem[][] {
  const words: TextItem[][] = [];
  for (const item of line) {
    const word = words.at(-1);
    const prev = word?.at(-1);
    const gap = prev ? item.x0 - prev.x1 : Infinity;
    const joins =
      prev !== undefined &&
      !item.spaceBefore &&
      gap < WORD_GAP * Math.min(prev.size, item.size) &&
      gap > -0.25 * Math.min(prev.size, item.size) &&
      !xs.some((x) => x >= prev.x1 - PARTS && x <= item.x0 + PARTS);
    if (joins) word!.push(item);
    else words.push([item]);
  }
  return words;
}

/**
 * Whether a word of the text runs across the grid's left or right edge, in part inside it and in
 * part outside: a label drawn over a diagram's frame ("(x₂, y₂)" across the side of a drawn
 * square). No table's cell text crosses the table's border.
 */
function crossesFrame(box: Box, xs: readonly number[], items: readonly TextItem[]): boolean {
  const band = items.filter((i) => {
    const cy = textMiddle(i);
    return !i.opaque && cy >= box.top && cy <= box.bottom && i.x1 >= box.x0 - i.size && i.x0 <= box.x1 + i.size;
  });
  return groupLines(band).some((line) =>
    gridWords(line, xs).some((word) => word.some((i) => inside(i, box)) && word.some((i) => !inside(i, box))),
  );
}

/** A vertical rule shorter than this (share of the text's usual size) is no border: a glyph's stem. */
const MIN_BORDER = 0.9;

/**
 * The rules that can be borders: every horizontal one, and the vertical ones at least as long as a
 * line of the page's text is tall (its median size). Text drawn as outlines (a page that draws some
 * labels as paths) fills an "l" or a "|" as a thin rectangle, shorter than its line: as a border it
 * would cut its row into columns no cell has.
 */
function borders(rules: readonly Rule[], items: readonly TextItem[]): Rule[] {
  if (!items.length) return [...rules];
  const sizes = items.map((i) => i.size).sort((a, b) => a - b);
  const min = MIN_BORDER * sizes[sizes.length >> 1]!;
  return rules.filter((r) => isHorizontal(r) || r.y1 - r.y0 >= min);
}

/**
 * The grid's cells, each with the text items in it. Each line's items go to the row of its text's
 * middle: a subscript or superscript stays in the row of the run it belongs to ("e₂" whose "₂"
 * reaches under a grid line); each word to the column of its centre (gridWords).
 */
function placeText(grid: Grid, box: Box, items: readonly TextItem[]): CellDraft[] {
  const drafts: CellDraft[] = gridCells(grid).map((c) => ({ ...c, items: [] }));
  // The draft covering each grid cell, so that placing an item is a lookup, not a search.
  const owner = Array.from({ length: grid.ys.length - 1 }, () => new Array<CellDraft | undefined>(grid.xs.length - 1));
  for (const d of drafts) for (let r = d.row; r < d.row + d.rowSpan; r++) for (let c = d.col; c < d.col + d.colSpan; c++) owner[r]![c] = d;
  for (const line of groupLines(items.filter((i) => inside(i, box)))) {
    const main = mainItem(line);
    const row = Math.max(1, firstAtLeast(grid.ys, textMiddle(main))) - 1;
    for (const word of gridWords(line, grid.xs)) {
      // The first grid line at or after the word's centre (never the first line) closes its cell.
      const col = Math.max(1, firstAtLeast(grid.xs, (word[0]!.x0 + word.at(-1)!.x1) / 2)) - 1;
      owner[row]?.[col]?.items.push(...word);
    }
  }
  return drafts;
}

/** Lattice tables of a page; `items` are the page's text items not yet placed elsewhere. */
export function latticeTables(allRules: readonly Rule[], items: readonly TextItem[]): Table[] {
  if (allRules.length > MAX_RULES) return [];
  const rules = borders(allRules, items);
  const tables: Table[] = [];
  const grids = ruleRegions(rules).flatMap((region) => stackedGrids(region, items));
  const boxes = grids.map((g) => ({ x0: g.xs[0]!, x1: g.xs.at(-1)!, top: g.ys[0]!, bottom: g.ys.at(-1)! }));
  for (const [k, grid] of grids.entries()) {
    const box = boxes[k]!;
    const drafts = placeText(grid, box, items);
    const others = boxes.filter((b) => b !== box);
    if (
      drafts.filter((d) => d.items.length > 0).length < 2 ||
      crossesFrame(box, grid.xs, items) ||
      boxedRow(grid, drafts) ||
      boxedInRows(box, items, others) ||
      boxedHeader(grid, drafts, box, items, others)
    )
      continue;
    // Bands of rows between rules drawn all across (not where column rules merely end).
    const ruled = grid.ys.filter((_, k) => grid.ruledRows[k]);
    const cells = spanCentred(splitBands(drafts, grid.ys.length - 1).drafts, ruled);
    const lattice = buildTable("lattice", cells, grid.xs, box);
    tables.push(textColumns(lattice, grid, box, items, hiddenRows(grid, drafts)) ?? lattice);
  }
  return tables;
}
