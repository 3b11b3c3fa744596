/**
 * Stream tables: tables set by whitespace alone, no rules. A candidate is a run of consecutive
 * lines holding two or more separate pieces of text each (single-piece lines may sit inside the run:
 * a wrapped cell, a section row), starting at its first such line that is not running text (a
 * report's title lines above the table read before it, as text); its grid comes from its text
 * (textgrid.ts: columns where rivers of whitespace run down the lines, rows from the lines). A run
 * ends at a line of a paragraph reaching across its rows (the text between two tables), where
 * two rules stacked apart lie between two lines (one table's foot rule, the next one's head rule),
 * at a rule across its rows with larger type under it (the text under a booktabs table), and at a
 * line of cells in other type than all of its rows (a form's next box); it starts under a head
 * rule whose ends the column's text above runs past, and takes the labels between a head rule and
 * its first line of cells (a group's label, a \multirow label).
 * On a page set in two columns each column is read apart (pageStreamTables, gutter.ts).
 * Lookalikes are refused: prose set in two columns (cells hold sentences) or line beside line in
 * several (two columns or more of running text), a list (its first column is list markers), fewer
 * than two rows of two cells, two rows of a justified paragraph (word spaces between the cells, the
 * lines ending together) or among more lines reaching across the columns (a letterhead), and (from
 * three rows up) columns of three cells or more that share no edge (row labels may stand at a few
 * indents). Pure.
 */
import { mostlyRightToLeft } from "./bidi.ts";
import { typeCell } from "./cells.ts";
import type { Piece } from "./columns.ts";
import { bodyFigure, columnGaps, linePieces, paragraphLine, pieceOf, pieceText } from "./columns.ts";
import { crosses, sides, straddles, type Gutter } from "./gutter.ts";
import { groupLines, isMarker, segmentText } from "./lines.ts";
import { maxOf, minOf } from "./minmax.ts";
import { DETAIL_PITCH, SAME_SIZE, sameStyle, textGrid } from "./textgrid.ts";
import { RULE_PIECE } from "./textrules.ts";
import type { Cell, Rule, Table, TextItem } from "./types.ts";

/** Rows further apart than this (in font sizes, baseline to baseline) end a candidate. */
const MAX_ROW_PITCH = 3.5;
/** Lines of one text (a cell's, a header's) follow each other within this many font sizes, baseline to baseline. */
const LINE_SPACING = 1.7;
/** Cells of a table hold values and short labels: more words per cell on average is prose. */
const MAX_WORDS_PER_CELL = 5;
/** A table has at least this many rows with two or more cells (specifications print two-row tables). */
const MIN_ROWS = 2;
/** Rows this far apart (font sizes) still join a candidate when they repeat its columns. */
const MAX_ALIGNED_PITCH = 10;

/** Whether a line has three or more pieces, most of them edge to edge with pieces of `ref`. */
function sameColumns(line: Line, ref: Line): boolean {
  if (line.pieces.length < 3 || ref.pieces.length < 3) return false;
  const near = (a: number, b: number): boolean => Math.abs(a - b) <= ALIGN;
  const matched = line.pieces.filter((p) => ref.pieces.some((q) => near(p.x0, q.x0) || near(p.x1, q.x1))).length;
  return matched >= 0.6 * line.pieces.length;
}

/** At most this many single-piece lines in a row inside a candidate. */
const MAX_SINGLES = 3;
/** Edges closer than this (points) are aligned. */
const ALIGN = 2;
/** In each column, at least this share of the cells line up on a common left, right or centre… */
const MIN_ALIGNED = 0.6;
/** …judged from this many rows up (two cells show no tendency). */
const MIN_ALIGN_ROWS = 3;

interface Line {
  items: TextItem[];
  pieces: Piece[];
  base: number;
  size: number;
  /** A line of a paragraph (columns.ts paragraphLine), decided once. */
  paragraph: boolean;
  /** Its pieces' sizes, each once. */
  sizes: number[];
}

const cellText = (c: Cell): string => c.lines.map(segmentText).join(" ");
const words = (c: Cell): number => cellText(c).split(" ").filter(Boolean).length;

/** Indented row labels (a section, its items, their total) start at a few places: at most this many… */
const INDENT_LEVELS = 3;
/** …each holding two cells or more, and together nearly all of the column's cells. */
const MIN_INDENTED = 0.9;

/**
 * Whether most of the cells share a left edge, a right edge or a centre, or, in the first column
 * (`labels`: the row labels), nearly all start at one of a few indents.
 */
function aligned(cells: readonly Cell[], labels: boolean): boolean {
  const spans = cells.map((c) => [minOf(c.lines, (l) => l.x0), maxOf(c.lines, (l) => l.x1)] as const);
  const edges: ((s: readonly [number, number]) => number)[] = [(s) => s[0], (s) => s[1], (s) => (s[0] + s[1]) / 2];
  const shared = edges.some((edge) => {
    const xs = spans.map(edge);
    return xs.some((x) => xs.filter((y) => Math.abs(x - y) <= ALIGN).length >= MIN_ALIGNED * xs.length);
  });
  return shared || (labels && indented(spans.map((s) => s[0])));
}

/**
 * Whether nearly all of `xs` stand at one of a few places (INDENT_LEVELS), two or more at each, or
 * at a place between two of those (an indent one item uses).
 */
function indented(xs: readonly number[]): boolean {
  const levels: { x: number; n: number }[] = [];
  for (const x of [...xs].sort((a, b) => a - b)) {
    const last = levels.at(-1);
    if (last && x - last.x <= ALIGN) last.n++;
    else levels.push({ x, n: 1 });
  }
  const kept = levels
    .filter((l) => l.n >= 2)
    .sort((a, b) => b.n - a.n)
    .slice(0, INDENT_LEVELS);
  // A level between two of them is an indent of the same ladder, however few stand at it.
  const [lo, hi] = [minOf(kept, (l) => l.x), maxOf(kept, (l) => l.x)];
  const held = levels.filter((l) => kept.includes(l) || (l.x > lo && l.x < hi)).reduce((a, l) => a + l.n, 0);
  return held >= MIN_INDENTED * xs.length;
}

/** Gaps between cells no wider than this (font sizes) are a justified line's word spaces. */
const JUSTIFIED_GAP = 1;

/**
 * Whether rows too few to judge their columns by alignment are lines of a justified paragraph:
 * words only (no figures), every gap between two cells of a row no wider than a word space, and
 * the rows starting and ending together (two lines of text in a narrow column, its spaces stretched).
 */
function justified(rows: readonly Cell[][]): boolean {
  const spans = rows.map((r) => {
    const cells = [...r].sort((a, b) => a.col - b.col);
    const lines = cells.map((c) => ({
      x0: minOf(c.lines, (l) => l.x0),
      x1: maxOf(c.lines, (l) => l.x1),
      size: maxOf(c.lines, (l) => l.size),
    }));
    const narrow = lines.slice(1).every((l, k) => l.x0 - lines[k]!.x1 <= JUSTIFIED_GAP * l.size);
    return { x0: lines[0]!.x0, x1: lines.at(-1)!.x1, narrow };
  });
  const first = spans[0]!;
  const words = rows.every((r) => r.every((c) => !/\d/.test(cellText(c))));
  return words && spans.every((s) => s.narrow && Math.abs(s.x0 - first.x0) <= ALIGN && Math.abs(s.x1 - first.x1) <= ALIGN);
}

/** A cell of running text holds this many words or more, none of them a value. */
const PROSE_WORDS = 4;
/** Prose set in columns: this share of a column's cells or more are running text, in two columns or more. */
const PROSE_SHARE = 0.75;

/**
 * Whether a grid is prose set in columns, line beside line (a journal's or the Federal Register's
 * three columns, where their baselines meet): two columns or more whose cells are nearly all
 * running text. A table holds one column of descriptions at most; its other columns are labels and
 * values.
 */
function proseColumns(filled: readonly Cell[], cols: number): boolean {
  let prose = 0;
  for (let col = 0; col < cols; col++) {
    const cells = filled.filter((c) => c.col === col && c.colSpan === 1);
    const running = cells.filter((c) => words(c) >= PROSE_WORDS && !bodyFigure(cellText(c))).length;
    if (cells.length >= MIN_ALIGN_ROWS && running >= PROSE_SHARE * cells.length) prose++;
  }
  return prose >= 2;
}

/**
 * Whether rows too few to judge their columns by alignment stand among more lines of text reaching
 * across their columns (a letterhead: its top line and a phone number apart, the address lines
 * between them across the gap): lines of text, not a table's rows.
 */
function amongText(byRow: ReadonlyMap<number, readonly Cell[]>, full: number): boolean {
  const across = [...byRow.values()].filter((r) => r.length === 1 && r[0]!.colSpan >= 2).length;
  return across > full;
}

/** Whether a grid reads as a table rather than prose or a list (see the header). */
function tableLike(table: Table): boolean {
  const filled = table.cells.filter((c) => c.lines.length > 0);
  const byRow = new Map<number, Cell[]>();
  for (const c of filled) byRow.set(c.row, [...(byRow.get(c.row) ?? []), c]);
  const full = [...byRow.values()].filter((r) => r.length >= 2);
  if (full.length < MIN_ROWS) return false;
  if (filled.reduce((n, c) => n + words(c), 0) / filled.length > MAX_WORDS_PER_CELL) return false;
  if (proseColumns(filled, table.cols)) return false;
  // The body starts at the first row with a figure in it (a year heads a column).
  const body = minOf(
    filled.filter((c) => c.col > 0 && bodyFigure(cellText(c))),
    (c) => c.row,
    0,
  );
  const firsts = full.map((r) => r.reduce((a, b) => (b.col < a.col ? b : a)));
  if (firsts.every((c) => c.col === 0 && c.lines.length === 1 && isMarker(c.lines[0]!.items))) return false;
  if (full.length < MIN_ALIGN_ROWS) return !justified(full) && !amongText(byRow, full.length);
  for (let col = 0; col < table.cols; col++) {
    // The row labels' indents show in every row under the header: a section's label alone on its row among them.
    const cells = (col === 0 ? filled.filter((c) => c.row >= body) : full.flat()).filter((c) => c.col === col && c.colSpan === 1);
    if (cells.length >= MIN_ALIGN_ROWS && !aligned(cells, col === 0)) return false;
  }
  return true;
}

/** The heights of the rules drawn across a run's rows between its first line and its last (booktabs' \midrule under the header, between groups of rows). */
function bandRules(run: readonly Line[], rules: readonly Rule[]): number[] {
  if (!run.some(multi)) return [];
  const width = rowsWidth(run);
  const [top, bottom] = [run[0]!.base, run.at(-1)!.base];
  return rules.filter((r) => ruleAcross(r, width) && r.y0 > top && r.y0 < bottom).map((r) => r.y0);
}

/**
 * One candidate run of lines (each its items) as a table, or null when it does not hold one;
 * `bandYs`, the rules drawn across it (textgrid.ts).
 */
export function streamTable(lines: readonly (readonly TextItem[])[], bandYs: readonly number[] = []): Table | null {
  if (lines.length < MIN_ROWS) return null;
  const grid = textGrid({ items: lines.flat(), kind: "stream", bandYs });
  return grid && grid.table.cols >= 2 && tableLike(grid.table) ? grid.table : null;
}

/**
 * A run without the single-piece lines it ends with, but those that continue a row (a cell wrapped
 * below it: wraps) or are a row of their own (ruledRow).
 */
function withoutTrailingText(part: readonly Line[], rules: readonly Rule[]): Line[] {
  const run = [...part];
  while (run.length && !multi(run.at(-1)!) && !wraps(run) && !ruledRow(run, rules)) run.pop();
  return run;
}

/**
 * Whether a run's last line, one piece flush with its first column, is a row of the table its rules
 * draw: a vertical rule between the first two columns of the rows above runs down beside it, as it
 * runs beside the last row of cells (LaTeX draws a row's column rules row by row, so a last row
 * holding only its first cell keeps the first rule). At row spacing (MAX_ROW_PITCH).
 */
function ruledRow(run: readonly Line[], rules: readonly Rule[]): boolean {
  const [prev, last] = [run.at(-2), run.at(-1)!];
  const ref = run.findLast(multi);
  if (!prev || !ref || last.pieces.length !== 1) return false;
  const piece = last.pieces[0]!;
  const [first, second] = [ref.pieces[0]!, ref.pieces[1]!];
  const pitch = pitchOf(prev, last);
  if (pitch > MAX_ROW_PITCH || Math.abs(piece.x0 - first.x0) > ALIGN) return false;
  const beside = (l: Line): boolean =>
    rules.some(
      (r) => r.x1 - r.x0 < 1 && r.x0 > Math.max(first.x1, piece.x1) && r.x0 < second.x0 && r.y0 <= l.base - 0.6 * l.size && r.y1 >= l.base,
    );
  return beside(last) && beside(ref);
}

/**
 * Whether the last line of a run reads as the wrapped end of a cell of the lines above: set at line
 * spacing below them, within the run's width and past its first column (right of it; left of it,
 * in a right-to-left table, whose first column is the rightmost); or a cell's detail line, in
 * smaller type flush under it.
 */
function wraps(run: readonly Line[]): boolean {
  const [prev, last] = [run.at(-2), run.at(-1)!];
  const ref = run.findLast(multi);
  if (!prev || !ref) return false;
  const pitch = pitchOf(prev, last);
  const piece = last.pieces[0]!;
  const [lo, hi] = mostlyRightToLeft([...ref.pieces, piece].map(pieceText).join(" "))
    ? [ref.pieces[0]!.x0, ref.pieces.at(-2)!.x1]
    : [ref.pieces[1]!.x0, ref.pieces.at(-1)!.x1];
  if (pitch <= LINE_SPACING && piece.x0 >= lo - 2 && piece.x1 <= hi + 2) return true;
  // A cell's detail line in smaller type, flush under it (textgrid.ts detailLine).
  const cell = ref.pieces.find((p) => Math.abs(p.x0 - piece.x0) <= ALIGN && !p.value);
  return (
    ref === prev &&
    cell !== undefined &&
    piece.size < (1 - SAME_SIZE) * cell.size &&
    last.base - prev.base <= DETAIL_PITCH * cell.size &&
    last.pieces.length === 1
  );
}

/** A paragraph's line reaches across a run's rows when it ends this close (font sizes) to both their ends. */
const ACROSS = 2;

/**
 * Whether a line of a paragraph reaches across the run's rows, within ACROSS of both their
 * ends: the text between two tables, not a row of either (a wrapped cell or a section row stands
 * inside the table's width). The rows are the run's lines of cells that are not running text.
 */
function across(line: Line, run: readonly Line[]): boolean {
  // A justified line of the text above the table, its word spaces wide enough to part it, is no row.
  const rows = run.filter((l) => multi(l) && !l.paragraph);
  if (!rows.length || !line.paragraph) return false;
  const [x0, x1] = [minOf(rows, (l) => l.pieces[0]!.x0), maxOf(rows, (l) => maxOf(l.pieces, (p) => p.x1))];
  return line.pieces[0]!.x0 <= x0 + ACROSS * line.size && maxOf(line.pieces, (p) => p.x1) >= x1 - ACROSS * line.size;
}

/**
 * Whether a single-piece line is the next line of a cell wrapped under its row (`row`, the run's
 * last line of cells): set at line spacing below the line before it, starting where one of the
 * row's cells starts and ending before the next cell.
 */
function wrappedUnder(line: Line, before: Line | undefined, row: Line | undefined): boolean {
  if (line.pieces.length !== 1 || !row || !before) return false;
  const piece = line.pieces[0]!;
  const k = row.pieces.findIndex((p) => Math.abs(p.x0 - piece.x0) <= ALIGN);
  const next = row.pieces[k + 1];
  return k >= 0 && pitchOf(before, line) <= LINE_SPACING && (!next || piece.x1 < next.x0);
}

/**
 * Whether a single-piece line goes on with the single-piece line above it: a label wrapped over
 * lines (a statement's long item with its values on its last line, or none), its next line at
 * line spacing, starting where it starts, in lower case. It counts once among a run's singles.
 */
function wrapsOn(line: Line, above: Line): boolean {
  if (line.pieces.length !== 1 || above.pieces.length !== 1) return false;
  const pitch = pitchOf(above, line);
  return (
    pitch <= LINE_SPACING && Math.abs(line.pieces[0]!.x0 - above.pieces[0]!.x0) <= ALIGN && /^\p{Ll}/u.test(pieceText(line.pieces[0]!))
  );
}

/**
 * Whether a line is a rule drawn in text, every piece a run of dashes, equals signs or box-drawing
 * lines (one per column, a space apart, in one piece or several: RULE_PIECE): a fixed-width
 * report's rule under its header or over its totals. It stays in its table's run, as a drawn rule
 * would, and is no row of it.
 */
const textRule = (line: Line): boolean => line.pieces.every((p) => RULE_PIECE.test(pieceText(p)));

/** Whether a line is an ASCII or box-drawn table's border: a rule drawn in text with corners ("+----+", "┌──┬──┐"). */
const border = (line: Line): boolean => textRule(line) && line.pieces.some((p) => /[+\u250c-\u254b]/u.test(pieceText(p)));

/** Whether a line holds separate pieces of text (cells, not one run). */
const multi = (line: Line): boolean => line.pieces.length >= 2 && !(line.pieces.length === 2 && isMarker(line.pieces[0]!.items));

/** Rules closer than this (font sizes) are one rule drawn twice, or a double rule under a header. */
const DOUBLE_RULE = 0.5;
/** A rule shorter than this (points) parts no tables (an underline, a mark). */
const MIN_RULE = 40;

/**
 * Whether two rules stacked apart lie between two lines, across them: one table's foot rule and the
 * next one's head rule (booktabs, reports), however close the tables stand.
 */
function ruledApart(prev: Line, line: Line, rules: readonly Rule[]): boolean {
  const ys = rulesBetween(prev, line, rules).map((r) => r.y0);
  return ys.length >= 2 && Math.max(...ys) - Math.min(...ys) > DOUBLE_RULE * line.size;
}

type Span = { x0: number; x1: number };

/** A rule across a table runs under this share of its rows' width or more (an underline, a heading's rule, under less). */
const ACROSS_RULE = 0.8;

/** Whether a rule is horizontal and runs under ACROSS_RULE of `width` or more. */
const ruleAcross = (r: Rule, width: Span): boolean =>
  r.y1 - r.y0 < 1 && Math.min(r.x1, width.x1) - Math.max(r.x0, width.x0) >= ACROSS_RULE * (width.x1 - width.x0);

/** From the first cell to the last of a run's lines of cells. */
function rowsWidth(run: readonly Line[]): Span {
  const rows = run.filter(multi);
  return { x0: minOf(rows, (l) => l.pieces[0]!.x0), x1: maxOf(rows, (l) => l.pieces.at(-1)!.x1) };
}

/**
 * The horizontal rules between two lines, under either: MIN_RULE long or more, or (with `width`)
 * across that width (ruleAcross).
 */
function rulesBetween(prev: Line, line: Line, rules: readonly Rule[], width?: Span): Rule[] {
  const [x0, x1] = [Math.min(prev.pieces[0]!.x0, line.pieces[0]!.x0), Math.max(prev.pieces.at(-1)!.x1, line.pieces.at(-1)!.x1)];
  const long = (r: Rule): boolean => (width ? ruleAcross(r, width) : r.y1 - r.y0 < 1 && r.x1 - r.x0 >= MIN_RULE);
  return rules.filter((r) => long(r) && r.x0 < x1 && r.x1 > x0 && r.y0 > prev.base + 0.2 * prev.size && r.y0 < line.base - 0.8 * line.size);
}

/** Type this much larger than a table's rows is not the table's. */
const LARGER_TYPE = 1.15;

/** The size of a run's lines of cells (the median), 0 when it has none. */
function rowSize(run: readonly Line[]): number {
  const sizes = run
    .filter(multi)
    .map((l) => l.size)
    .sort((a, b) => a - b);
  return sizes[sizes.length >> 1] ?? 0;
}

/**
 * Whether a line stands under the run's foot rule (across its rows' width) in larger type than its
 * rows: the page's text going on under a table (a booktabs table set in \small), however close,
 * not a row of it (a region's heading in larger type, underlined, is one).
 */
function underFoot(prev: Line, line: Line, run: readonly Line[], rules: readonly Rule[]): boolean {
  const size = rowSize(run);
  if (!size || line.size <= LARGER_TYPE * size) return false;
  return rulesBetween(prev, line, rules, rowsWidth(run)).length > 0;
}

/** Type this much larger or smaller than a run's rows is another table's (a form's boxes, each in its own size). */
const OTHER_TYPE = 1.2;

/**
 * Whether a line of cells is set in other type (OTHER_TYPE) than every cell of the run's rows, rows
 * enough to tell: the next box of a form, not a row of this one. (A table beside another column's
 * text on the same lines has cells of both sizes: its rows go on.)
 */
function otherType(line: Line, run: readonly Line[]): boolean {
  const rows = run.filter(multi);
  if (rows.length < MIN_ROWS || !multi(line)) return false;
  const sizes = [...new Set(rows.flatMap((l) => l.sizes))];
  const near = (a: number, b: number): boolean => a < OTHER_TYPE * b && b < OTHER_TYPE * a;
  return line.sizes.every((a) => !sizes.some((b) => near(a, b)));
}

/** Whether a line goes on with the run of lines above it (see streamTables). */
function joins(line: Line, run: readonly Line[], rules: readonly Rule[]): boolean {
  const prev = run.at(-1);
  if (!prev) return false;
  const lastMulti = run.findLast(multi);
  const pitch = pitchOf(prev, line);
  // Tall rows (a neighbour cell wrapped over lines) leave wide gaps: a line that repeats the run's
  // columns still belongs to it.
  const close = pitch <= MAX_ROW_PITCH || (pitch <= MAX_ALIGNED_PITCH && lastMulti !== undefined && sameColumns(line, lastMulti));
  if (!close || across(line, run) || ruledApart(prev, line, rules) || underFoot(prev, line, run, rules) || otherType(line, run))
    return false;
  // Single-piece lines inside a table are wrapped cells or section rows: a few, not a paragraph.
  // (Lines of a cell wrapped under its row, however many, are no paragraph.)
  const singles = run
    .slice(run.findLastIndex(multi) + 1)
    .filter((l, k, after) => !wrappedUnder(l, k ? after[k - 1] : lastMulti, lastMulti) && !(k && wrapsOn(l, after[k - 1]!))).length;
  return multi(line) || singles < MAX_SINGLES || wrappedUnder(line, prev, lastMulti) || wrapsOn(line, prev);
}

/**
 * Where a run's table starts under its head rule: the first line under a horizontal rule whose
 * ends hold every line under it, where a line above runs past an end (the column's text over a
 * table narrower than it, a short last line of a paragraph among them) or the line just above is
 * a heading (one piece in HEADING_TYPE larger type than the rows: the table's title, a previous
 * table's last row over it, cut off by a page break), and too few lines of cells to be a table of
 * their own stand above. 0 when there is none.
 */
function headRuleAt(run: readonly Line[], rules: readonly Rule[]): number {
  const spans = (l: Line, r: Rule, slack: number): boolean => l.pieces[0]!.x0 >= r.x0 - slack && l.pieces.at(-1)!.x1 <= r.x1 + slack;
  for (let i = 1; i < run.length; i++) {
    const head = rulesBetween(run[i - 1]!, run[i]!, rules).find((r) => run.slice(i).every((l) => spans(l, r, ALIGN)));
    const above = run.slice(0, i);
    const rows = above.filter((l) => multi(l) && !l.paragraph).length;
    const titled = !multi(run[i - 1]!) && run[i - 1]!.size >= HEADING_TYPE * rowSize(run.slice(i));
    if (head && rows < MIN_ROWS && (titled || above.some((l) => !spans(l, head, l.size)))) return i;
  }
  return 0;
}

/** At most this many lines of labels stand between a table's head rule and its first row of cells. */
const HEAD_LINES = 3;
/** Lines a running head may hold: a printer's page header over a report's own three (runningHead). */
const RUNNING_HEAD_LINES = 4;

/** A running head stands this many of the table's row pitches or more above its first line (a blank line's worth). */
const HEAD_APART = 1.8;

/**
 * How many lines a run starts with that are a report's running head over its table, not rows: up
 * to RUNNING_HEAD_LINES lines of two pieces or more, text and dates (no numbers), at line spacing,
 * a blank line's worth (HEAD_APART rows) over the rest, each laid across the rows' columns (acrossColumns: a report
 * writer's "ACME Corporation | Monthly Account Summary | Page 1 of 3", left, centred and right on
 * the page). A group's labels over its columns stand at line spacing over the header and leave the
 * row labels' column open. 0 when there is none.
 */
function runningHead(run: readonly Line[]): number {
  for (let k = 1; k <= Math.min(RUNNING_HEAD_LINES, run.length - MIN_ROWS); k++) {
    const head = run.slice(0, k);
    if (!multi(head.at(-1)!) || head.some((l, j) => j > 0 && pitchOf(head[j - 1]!, l) > LINE_SPACING)) return 0;
    const rest = run.slice(k);
    const pitch = rowPitch(rest);
    // An ASCII table's top border between them is no line of the rest ("+-----+-----+"); a
    // header's underline of dashes is one (the blank line must stand over the header).
    const below = rest.find((l) => !border(l));
    if (!pitch || !below || pitchOf(head.at(-1)!, below) < HEAD_APART * pitch) continue;
    const gaps = columnGaps(rest);
    const width = rowsWidth(rest);
    // A printer's page header stands over the table's header, a line of labels, not over its rows.
    const overHeader = below.pieces.every((p) => !p.value);
    return head.every((l) => acrossColumns(l, gaps, width, overHeader ? rest : null)) ? k : 0;
  }
  return 0;
}

/** A page's number: a whole number of up to four digits. */
const PAGE_NUMBER = /^\d{1,4}$/u;
/** The word a page's number stands after, set apart from it on a fixed-width head ("PAGE    1"). */
const PAGE_WORD = /^(?:page|pg\.?|p\.|seite|blatt|página|pagina|sida|side)$/iu;

/** A line's pieces with a page word and the page's number after it (PAGE_WORD, PAGE_NUMBER) as one. */
function withPageNumber(pieces: readonly Piece[]): Piece[] {
  const [word, number] = pieces.slice(-2);
  if (!word || !number || !PAGE_WORD.test(pieceText(word)) || !PAGE_NUMBER.test(pieceText(number))) return [...pieces];
  return [...pieces.slice(0, -2), { ...word, x1: number.x1, items: [...word.items, ...number.items] }];
}

/**
 * Whether a line of text is laid across a table's columns (parted at `gaps`, its rows `width`
 * wide), not in them: it holds no number (but a page's number last: PAGE_NUMBER, a page word before
 * it counting with it), and it is a printer's page header (printerHead) over `rows` that start with
 * a header (null when they do not); or it has fewer pieces than the table has columns (a header has
 * one a column), starts at the rows' left edge or left of it, and each of its pieces reaches over a
 * gap between two columns — but for its first, when it starts there, and its last, when it ends at
 * the rows' right edge or right of it. At least one reaches over a gap.
 */
function acrossColumns(line: Line, gaps: readonly number[], width: Span, rows: readonly Line[] | null): boolean {
  const pieces = withPageNumber(line.pieces);
  const number = (p: Piece, k: number): boolean =>
    typeof typeCell(pieceText(p)).value === "number" && !(k === pieces.length - 1 && PAGE_NUMBER.test(pieceText(p)));
  if (pieces.some(number)) return false;
  // A head of as many parts as the rows have columns is no header only if its middle stands in none.
  if (rows && printerHead(pieces, width, pieces.length > gaps.length ? rows : [])) return true;
  if (pieces.length > gaps.length || pieces[0]!.x0 > width.x0 + ALIGN) return false;
  const over = (p: Piece): boolean => gaps.some((x) => p.x0 < x && p.x1 > x);
  const flush = (p: Piece, k: number): boolean =>
    (k === 0 && p.x0 <= width.x0 + ALIGN) || (k === pieces.length - 1 && p.x1 >= width.x1 - ALIGN);
  return pieces.some(over) && pieces.every((p, k) => over(p) || flush(p, k));
}

/**
 * Whether a line's pieces are a printer's page header: a part centred over the rows (or over the
 * line, when it reaches past them), with a part flush left before it, one flush right after it or
 * both ("ACME   MONTHLY SUMMARY   PAGE 1", "Currency: EUR   TIME 23:41", enscript's "file  date
 * Page 1"). The centred part is no column's header: neither of its edges is flush with a piece on half of
 * `rows` (those of a table with as few columns as the head has parts).
 */
function printerHead(pieces: readonly Piece[], width: Span, rows: readonly Line[]): boolean {
  if (pieces.length < 2 || pieces.length > 3) return false;
  const [x0, x1] = [Math.min(width.x0, pieces[0]!.x0), Math.max(width.x1, pieces.at(-1)!.x1)];
  const mid = pieces.findIndex((p) => Math.abs((p.x0 + p.x1) / 2 - (x0 + x1) / 2) < (x1 - x0) / 10);
  if (mid < 0 || mid > 1 || pieces.length - mid > 2) return false;
  const centre = pieces[mid]!;
  const flushWith = (q: Piece): boolean => Math.abs(q.x0 - centre.x0) <= ALIGN || Math.abs(q.x1 - centre.x1) <= ALIGN;
  const flushRows = rows.filter((l) => l.pieces.some(flushWith)).length;
  if (flushRows >= Math.max(2, rows.length / 2)) return false;
  const left = mid === 1 ? pieces[0]! : null;
  const right = pieces[mid + 1] ?? null;
  return (!left || left.x0 <= width.x0 + ALIGN) && (!right || right.x1 >= width.x1 - ALIGN);
}

/**
 * How far up from lines[first] the lines over a table's first row go on with it: the index of the
 * topmost of up to HEAD_LINES lines, each taken by no other table and accepted (`takes`, given the
 * line, the one under it, and whether that one is lines[first]); `first` when none is.
 */
function climb(
  lines: readonly Line[],
  first: number,
  taken: ReadonlySet<Line>,
  takes: (above: Line, below: Line, last: boolean) => boolean,
): number {
  let k = first;
  while (k > 0 && first - k < HEAD_LINES && !taken.has(lines[k - 1]!) && takes(lines[k - 1]!, lines[k]!, k === first)) k--;
  return k;
}

/** A run's usual pitch from one line of cells to the next (font sizes; the median), 0 for fewer than two. */
function rowPitch(run: readonly Line[]): number {
  const rows = run.filter(multi);
  const pitches = rows
    .slice(1)
    .map((l, k) => pitchOf(rows[k]!, l))
    .sort((a, b) => a - b);
  return pitches[pitches.length >> 1] ?? 0;
}

/** How much further apart (font sizes) than the table's rows a label over it may stand. */
const ROW_SLACK = 0.05;

/** Whether a line lies within a span, ALIGN of slack on either side. */
const within = (line: Line, span: Span): boolean => line.pieces[0]!.x0 >= span.x0 - ALIGN && line.pieces.at(-1)!.x1 <= span.x1 + ALIGN;

/** Baseline to baseline from one line to the next, in the larger one's font sizes. */
const pitchOf = (above: Line, below: Line): number => (below.base - above.base) / Math.max(above.size, below.size);

/** Whether a rule across `width` is drawn just over a line: a head rule, under one font size to two above its baseline. */
const ruledOver = (top: Line, rules: readonly Rule[], width: Span): boolean =>
  rules.some((r) => ruleAcross(r, width) && r.y0 < top.base - 0.8 * top.size && r.y0 > top.base - 2 * top.size);

/**
 * The width of the table's rows widened to the rules drawn across it over its first line of cells
 * (`first`), up to HEAD_LINES lines of header above it: its head rule's, a booktabs \toprule's.
 */
function headRuleSpan(first: Line, rules: readonly Rule[], width: Span): Span {
  const reach = (HEAD_LINES + 1) * LINE_SPACING * first.size;
  const over = rules.filter((r) => ruleAcross(r, width) && r.y0 < first.base && r.y0 > first.base - reach);
  return over.reduce((span, r) => ({ x0: Math.min(span.x0, r.x0), x1: Math.max(span.x1, r.x1) }), width);
}

/**
 * The lines of one piece between a table's head rule and the first line of cells of its run
 * (lines[first]): a group's label over its columns, a label centred on the header's two lines
 * (LaTeX's \multicolumn and \multirow over a \cmidrule) — up to HEAD_LINES labels within the
 * table's width, at line spacing or as far apart as its rows, that no other table took, under a
 * rule across the table (ruleAcross) and with none between them, or all of them right of where
 * the shortest row label ends (a group's heading over the amounts of a statement, no rule under
 * it). None else: the lines above a table are text (a title, a caption) unless its rules or their
 * place say otherwise.
 */
function headLines(lines: readonly Line[], first: number, run: readonly Line[], rules: readonly Rule[], taken: ReadonlySet<Line>): Line[] {
  const width = rowsWidth(run);
  // At line spacing, or as far apart as the table's rows (a spreadsheet's group label a row over its header).
  const spacing = Math.max(LINE_SPACING, rowPitch(run) + ROW_SLACK);
  const labelsWithin = (span: Span): number =>
    climb(
      lines,
      first,
      taken,
      (above, below) =>
        !multi(above) &&
        !above.paragraph &&
        within(above, span) &&
        pitchOf(above, below) <= spacing &&
        !rulesBetween(above, below, rules, width).length,
    );
  // Under a head rule the rule's width is the table's: a label centred over the row labels may
  // reach past their column ("Houses" centred beside a header's two lines, wider than the digits
  // under it).
  const ruled = labelsWithin(headRuleSpan(lines[first]!, rules, width));
  if (ruled < first && ruledOver(lines[ruled]!, rules, width)) return lines.slice(ruled, first);
  const k = labelsWithin(width);
  if (k === first) return leadLines(lines, first, width, rules, taken);
  const headRule = ruledOver(lines[k]!, rules, width);
  // Or labels over the columns right of the row labels (right of where the shortest of them
  // ends): a group's heading over the amounts ("Year ended 31 December").
  const labelsEnd = minOf(run.filter(multi), (l) => l.pieces[0]!.x1);
  const overColumns = lines.slice(k, first).every((l) => l.pieces[0]!.x0 > labelsEnd + ALIGN);
  // Or a cell's first lines set over its row (bottom-aligned, as ReportLab and Calc set cells): the
  // header's "Gross" over "margin", a description's first line over the row at a page's top.
  return headRule || overColumns ? lines.slice(k, first) : leadLines(lines, first, width, rules, taken);
}

/** The lines over a run's first line of cells that are its table's header: ruledHead's, or else headLines'. */
function headOf(lines: readonly Line[], run: readonly Line[], rules: readonly Rule[], taken: ReadonlySet<Line>): Line[] {
  const first = lines.indexOf(run[0]!);
  const ruled = ruledHead(lines, first, run, rules, taken);
  return ruled.length ? ruled : headLines(lines, first, run, rules, taken);
}

/**
 * The header of a table ruled as booktabs rules it: the lines between a rule across the table over
 * them and one across it under them, right over its first line of cells (lines[first]) at line
 * spacing — the head rule and the rule under the header (\toprule, \midrule). Such lines are the
 * header whatever their text looks like: labels of several words set a justified space apart
 * ("Flow (1 step)  Flow (10 step)") read like a line of prose, and would be left out of the table
 * as its title. Up to HEAD_LINES lines within the table's width that no other table took; none when
 * a rule is missing or another lies between them.
 */
function ruledHead(lines: readonly Line[], first: number, run: readonly Line[], rules: readonly Rule[], taken: ReadonlySet<Line>): Line[] {
  const rows = rowsWidth(run);
  const under = first > 0 ? rulesBetween(lines[first - 1]!, lines[first]!, rules, rows)[0] : undefined;
  if (!under) return [];
  // The rules' width: a header centred over the last column may run past its values.
  const width = { x0: Math.min(rows.x0, under.x0), x1: Math.max(rows.x1, under.x1) };
  const k = climb(lines, first, taken, (above, below, last) => {
    const ruled = rulesBetween(above, below, rules, rows).length > 0;
    return within(above, width) && pitchOf(above, below) <= (last ? RULED_SPACING : LINE_SPACING) && ruled === last;
  });
  const band = lines.slice(k, first);
  // Labels over columns, not a caption boxed over the table: its last line parts into cells.
  if (!band.length || !multi(band.at(-1)!)) return [];
  return ruledOver(band[0]!, rules, rows) ? band : [];
}

/** A header's last line and the first row under the rule between them stand this far apart at most (font sizes, baseline to baseline). */
const RULED_SPACING = 2.5;

/**
 * The lines of one piece right over a run's first line that are the first lines of one of its
 * cells, set bottom-aligned over it (ReportLab and Calc set cells so): the header's "Gross" over
 * "margin", a description's first lines over its row at the top of a page (running text as they may
 * look). Up to HEAD_LINES, flush with each other, at line spacing, the last leading into the row
 * (leadsInto); textgrid.ts withLeadLines decides whether they are the cell's.
 */
function leadLines(lines: readonly Line[], first: number, width: Span, rules: readonly Rule[], taken: ReadonlySet<Line>): Line[] {
  const k = climb(lines, first, taken, (above, below, last) => {
    const flush = last ? leadsInto(above, below) : Math.abs(above.pieces[0]!.x0 - below.pieces[0]!.x0) <= ALIGN;
    return (
      above.pieces.length === 1 &&
      within(above, width) &&
      pitchOf(above, below) <= LINE_SPACING &&
      flush &&
      !rulesBetween(above, below, rules, width).length
    );
  });
  return lines.slice(k, first);
}

/**
 * Whether a single-piece line is the first line of a cell of the line under it: flush with one of
 * its pieces (on either edge, or centred) in the same type, a piece of text that carries it on in
 * lower case (textgrid.ts withLeadLines decides whether the cell is wrapped).
 */
function leadsInto(line: Line, below: Line): boolean {
  const p = line.pieces[0]!;
  return below.pieces.some(
    (q) =>
      !q.value &&
      /^\p{Ll}/u.test(pieceText(q)) &&
      sameStyle(p, q) &&
      (Math.abs(q.x0 - p.x0) <= ALIGN || Math.abs(q.x1 - p.x1) <= ALIGN || Math.abs(q.x0 + q.x1 - p.x0 - p.x1) <= 2 * ALIGN),
  );
}

/**
 * A line of one piece in type this much larger than a run's rows is a heading between two tables:
 * 12 pt over 10 pt, however the two sizes come back rounded (a page printed again through a scaled
 * matrix: 11.99 over 9.99).
 */
const HEADING_TYPE = 1.19;

/**
 * A run parted where text of its own stands between its lines of cells: at a heading (a line of
 * one piece in HEADING_TYPE larger type than the rows: a statement's title over the next
 * statement, or a region's heading inside one table: `heading`); failing that, at two
 * single-piece lines or more in a row, or one in larger type (LARGER_TYPE) than the rows. The lines
 * between go to the text. No parts when there is no such place.
 */
function apart(run: readonly Line[]): { parts: Line[][]; heading: boolean } {
  const size = rowSize(run);
  const partedAt = (ends: (between: readonly Line[]) => boolean): Line[][] => {
    const parts: Line[][] = [];
    let part: Line[] = [];
    let between: Line[] = [];
    for (const line of run) {
      if (!multi(line)) {
        between.push(line);
        continue;
      }
      if (part.length && ends(between)) {
        parts.push(part);
        part = [];
      } else part.push(...between);
      between = [];
      part.push(line);
    }
    part.push(...between);
    return parts.length ? [...parts, part] : [];
  };
  const headings = partedAt((between) => between.some((l) => l.size >= HEADING_TYPE * size));
  if (headings.length) return { parts: headings, heading: true };
  return { parts: partedAt((between) => between.length >= 2 || between.some((l) => l.size > LARGER_TYPE * size)), heading: false };
}

/** A foot's labels start this far (font sizes) right of the run's first column at least. */
const FOOT_INDENT = 4;

/**
 * How many lines at the end of a run are a block of its own set under it: two or more lines of a
 * label and a value, the labels aligned with each other and with no column edge of the rows above,
 * well right of their first column (an invoice's totals, "Subtotal | $1,234.00", in a box of their
 * own under the amounts). Totals set as rows of the table stand in its columns and stay. 0 when
 * there is no such block.
 */
function footLines(run: readonly Line[], gaps: readonly number[]): number {
  let k = 0;
  while (k < run.length) {
    const line = run[run.length - 1 - k]!;
    const [label, value, more] = line.pieces;
    if (!label || !value || more || label.value || !value.value) break;
    k++;
  }
  // The rows above it: up to a wide gap over them (an invoice's addresses are not its table's rows).
  const top = gaps.findLast((g) => g < run.length - k) ?? 0;
  const body = run.slice(top, run.length - k).filter(multi);
  if (k < 2 || body.length < MIN_ROWS) return 0;
  const labels = run.slice(run.length - k).map((l) => l.pieces[0]!);
  const near = (a: number, b: number): boolean => Math.abs(a - b) <= 2 * ALIGN;
  // The labels' own edge: where they all start, or all end (the closer of the two).
  const spread = (side: "x0" | "x1"): number => maxOf(labels, (p) => p[side]) - minOf(labels, (p) => p[side]);
  const side = spread("x1") < spread("x0") ? "x1" : "x0";
  if (spread(side) > 2 * ALIGN) return 0;
  const left = minOf(body, (l) => l.pieces[0]!.x0);
  // An edge of the rows' cells: most of them start or end there. Figures are set flush right, so
  // where figures of one width start is no edge (two-digit quantities all start at one x). The
  // rows of values tell, where there are any: a header's label may start anywhere over its column
  // (the last page of an invoice, its header repeated over a row or two, then its totals).
  const at = (p: Piece, x: number): boolean => (side === "x1" ? near(p.x1, x) : !p.value && near(p.x0, x));
  const valued = body.filter((l) => l.pieces.some((p) => p.value));
  const rows = valued.length ? valued : body;
  const edge = (x: number): boolean => rows.filter((l) => l.pieces.some((p) => at(p, x))).length >= rows.length / 2;
  return labels.every((p) => p.x0 > left + FOOT_INDENT * p.size) && !edge(labels[0]![side]) ? k : 0;
}

/** Lines this much further apart (font sizes) than the run's usual pitch, and GAP_PITCH at least, stand apart. */
const GAP_SHARE = 1.5;
const GAP_PITCH = 2.5;

/**
 * A run parted at its wide gaps between two lines: set GAP_PITCH font sizes apart at least and
 * GAP_SHARE times the run's median pitch (an invoice's address blocks over its line items, one
 * margin apart). No parts when there is no such gap.
 */
function gapApart(run: readonly Line[], gaps: readonly number[]): Line[][] {
  const parts: Line[][] = [];
  let from = 0;
  for (const k of [...gaps, run.length]) {
    parts.push(run.slice(from, k));
    from = k;
  }
  return parts.length >= 2 ? parts : [];
}

/** Where a run's wide gaps are (see gapApart): the indexes of the lines under them. */
function wideGaps(run: readonly Line[]): number[] {
  const pitch = (k: number): number => pitchOf(run[k - 1]!, run[k]!);
  const pitches = run
    .slice(1)
    .map((_, k) => pitch(k + 1))
    .sort((a, b) => a - b);
  const usual = pitches[pitches.length >> 1];
  if (usual === undefined) return [];
  return run.map((_, k) => k).filter((k) => k > 0 && pitch(k) >= GAP_PITCH && pitch(k) >= GAP_SHARE * usual);
}

/**
 * Whether blocks one margin apart, each read as a table, are tables of their own rather than
 * parts of one of `whole` columns: they read in other numbers of columns, and one of them in more
 * than the run as one (its columns lost to the lines of the others), or the widest in as many as
 * the run as one and every other in half as many at most, most of its text flush with none of
 * the widest one's (an invoice's addresses in two columns of their own, spread over its items'
 * columns; totals set in the items' columns are rows of them, a statement's header over its
 * amounts its header).
 */
function blocksApart(blocks: readonly { table: Table; run: readonly Line[] }[], whole: number): boolean {
  const cols = blocks.map((b) => b.table.cols);
  const widest = Math.max(...cols);
  if (new Set(cols).size < 2) return false;
  if (widest > whole) return true;
  // The widest block's column edges: where a third of its lines of cells start or end a piece.
  const lines = blocks.find((b) => b.table.cols === widest)!.run.filter(multi);
  const edge = (x: number, side: "x0" | "x1"): boolean =>
    3 * lines.filter((l) => l.pieces.some((q) => Math.abs(q[side] - x) <= ALIGN)).length >= lines.length;
  const inColumn = (p: Piece): boolean => edge(p.x0, "x0") || edge(p.x1, "x1");
  const own = (b: { table: Table; run: readonly Line[] }): boolean => {
    const pieces = b.run.flatMap((l) => l.pieces);
    return 2 * b.table.cols <= widest && 2 * pieces.filter((p) => !inColumn(p)).length > pieces.length;
  };
  return widest === whole && blocks.every((b) => b.table.cols === widest || own(b));
}

/** A line's text, whitespace aside. */
const lineText = (l: Line): string =>
  l.items
    .map((i) => i.text)
    .join("")
    .replace(/\s+/gu, "");

/**
 * Whether a part after a heading starts with a header of the first part's (its first line of
 * cells repeats one of the first part's first HEAD_LINES): a statement under its own title, its
 * columns headed as the one above, not a region of that one.
 */
function headsAgain(parts: readonly (readonly Line[])[]): boolean {
  const head = new Set((parts[0] ?? []).filter(multi).slice(0, HEAD_LINES).map(lineText));
  return parts.slice(1).some((p) => {
    const first = p.find(multi);
    return first !== undefined && head.has(lineText(first));
  });
}

/**
 * Whether a run's parts read other columns than the run as one (the lines between two tables cross
 * the rivers of both: the run as one may lose columns, or, at a heading, gain the next table's; a
 * region's heading inside one table parts no columns): more columns in one part, or, parts of
 * unlike columns, more cells in all (two listings stacked, their columns set apart differently,
 * merge cells as one).
 */
function other(heading: boolean, parts: readonly { table: Table }[], table: Table): boolean {
  if (heading) return parts.some((p) => p.table.cols !== table.cols);
  if (parts.length < 2) return false;
  const unlike = new Set(parts.map((p) => p.table.cols)).size > 1;
  return parts.some((p) => p.table.cols > table.cols) || (unlike && cellCount(parts.map((p) => p.table)) > cellCount([table]));
}

/** The cells holding text in some tables: more where a reading keeps apart what another runs together. */
const cellCount = (tables: readonly Table[]): number => tables.reduce((n, t) => n + t.cells.filter((c) => c.lines.length > 0).length, 0);

/** A gap this narrow (font sizes) between two pieces of a line is a word space's (withWordSpaces)… */
const WORD_SPACE_GAP = 0.35;
/** …unless a line this near (font sizes, baseline to baseline) is parted there too. */
const NEIGHBOUR_PITCH = MAX_ROW_PITCH;

/**
 * A page's lines with each piece that a move about a space wide parts from the one before
 * (TextItem.spaceMove) made one with it, unless a line beside them is parted there too. A
 * producer that draws some word spaces as moves, not glyphs (cairo: "(109)-220(Station Street)",
 * "(IBAN GB29)-220(8960)…", a jump from a figure or to one) leaves runs a word space apart that are
 * one phrase, not cells: read as cells, they made an invoice's addresses and bank line rows of a
 * table over the whole page. A tight table's cells set a space apart are parted there on a line
 * above or below too: text left of the gap, none across it, and text in the same column right of it.
 * This steers which lines make a table only; a table's cells come from its pieces as drawn, its
 * columns from the rivers they leave (textgrid.ts).
 */
function withWordSpaces<L extends { pieces: Piece[]; base: number; size: number }>(lines: readonly L[]): L[] {
  // Parted between `left` and `right` as a column: text on both sides, none across, and a piece
  // standing in the column of `right` (flush with it on either side).
  const columnGap = (line: L, left: Piece, right: Piece): boolean =>
    line.pieces.some((p) => p.x1 <= left.x1 + ALIGN) &&
    line.pieces.some((p) => Math.abs(p.x0 - right.x0) <= ALIGN || Math.abs(p.x1 - right.x1) <= ALIGN) &&
    !line.pieces.some((p) => p.x0 < right.x0 - ALIGN && p.x1 > left.x1 + ALIGN);
  return lines.map((line, k) => {
    if (!line.pieces.some((p) => p.items[0]!.spaceMove)) return line;
    const near = lines.filter((l, j) => j !== k && Math.abs(l.base - line.base) <= NEIGHBOUR_PITCH * Math.max(l.size, line.size));
    const pieces: Piece[] = [];
    for (const p of line.pieces) {
      const before = pieces.at(-1);
      const spaced =
        before !== undefined && p.items[0]!.spaceMove === true && p.x0 - before.x1 <= WORD_SPACE_GAP * Math.max(p.size, before.size);
      if (spaced && !near.some((l) => columnGap(l, before, p))) pieces[pieces.length - 1] = pieceOf([...before.items, ...p.items]);
      else pieces.push(p);
    }
    return pieces.length === line.pieces.length ? line : { ...line, pieces };
  });
}

/**
 * Stream tables among a page's text items (those no other table took), parted where two rules
 * apart lie between two lines (ruledApart). Returns each table with the items it took; the items
 * of the running heads left out of tables (runningHead) go into `heads`.
 */
export function streamTables(
  items: readonly TextItem[],
  rules: readonly Rule[] = [],
  heads: Set<TextItem> = new Set(),
): { table: Table; items: Set<TextItem> }[] {
  const lines: Line[] = withWordSpaces(
    groupLines(items).map((l) => {
      const size = maxOf(l, (i) => i.size, l[0]!.size);
      return { items: l, pieces: linePieces(l), base: l.find((i) => i.size === size)!.base, size };
    }),
  ).map((line) => ({ ...line, paragraph: paragraphLine(line), sizes: [...new Set(line.pieces.map((p) => p.size))] }));
  const found: { table: Table; items: Set<TextItem> }[] = [];
  const taken = new Set<Line>();
  /** The runs being read, by their first line and length (see read). */
  const reading = new Set<string>();
  let run: Line[] = [];
  /** The tables of a run: the run as one, or its parts (apart) when it holds none or they read more columns. */
  const read = (part: Line[]): { table: Table; run: Line[] }[] => {
    let run = withoutTrailingText(part, rules);
    // Nor does it start with a title set above it (running text), or the single-piece lines under
    // the title: they read before the table, as text.
    const start = run.findIndex((l) => !l.paragraph && multi(l));
    run = start < 0 ? [] : run.slice(start);
    run = run.slice(headRuleAt(run, rules));
    const head = runningHead(run);
    for (const l of run.slice(0, head)) for (const i of l.items) heads.add(i);
    run = run.slice(head);
    if (run.length) run = [...headOf(lines, run, rules, taken), ...run];
    // A part that its header lines grow back into a run being read further up is read as one:
    // parting it again would go round for ever.
    const key = run.length ? `${lines.indexOf(run[0]!)}:${run.length}` : "";
    if (reading.has(key)) return asOne(run);
    reading.add(key);
    try {
      return readRun(run);
    } finally {
      reading.delete(key);
    }
  };
  /** A run as one table, or none; its rules drawn in text are no rows (textRule). */
  const asOne = (run: Line[]): { table: Table; run: Line[] }[] => {
    const table = streamTable(
      run.filter((l) => !textRule(l)).map((l) => l.items),
      bandRules(run, rules),
    );
    return table ? [{ table, run }] : [];
  };
  /** The tables of a run its header lines were added to (see read). */
  const readRun = (run: Line[]): { table: Table; run: Line[] }[] => {
    const wide = wideGaps(run);
    const foot = footLines(run, wide);
    if (foot) return [...read(run.slice(0, -foot)), ...read(run.slice(-foot))];
    const split = apart(run);
    const parts = split.parts.flatMap(read);
    const whole = asOne(run);
    const table = whole[0]?.table;
    if (parts.length && (!table || other(split.heading, parts, table) || (split.heading && headsAgain(split.parts)))) return parts;
    // Blocks one margin apart, in other columns, whose lines the run as one reads across (an
    // invoice's addresses over its items): each part a table of its own, every line of cells in one.
    // (When the run as one is no table, those of its blocks that are.)
    const gaps = gapApart(run, wide).flatMap(read);
    const inParts = new Set(gaps.flatMap((p) => p.run));
    const wholly = gaps.length >= 2 && run.every((l) => !multi(l) || inParts.has(l));
    if (!table || (wholly && blocksApart(gaps, table.cols))) return gaps;
    return whole;
  };
  const flush = (): void => {
    for (const t of read(run)) {
      found.push({ table: t.table, items: new Set(t.run.flatMap((l) => l.items)) });
      for (const l of t.run) taken.add(l);
    }
    run = [];
  };
  for (const line of lines) {
    if (joins(line, run, rules)) run.push(line);
    else {
      flush();
      if (multi(line)) run.push(line);
    }
  }
  flush();
  return found;
}

/**
 * Whitespace tables over the whole page, then, on a page set in two columns (its `gutter`, found
 * from all of the page's text: gutter.ts), in each column apart: a table found over the whole page
 * that straddles the gutter (straddles) is the two columns read as one, and is read again column
 * by column, as is one that stands on one side only. A running head over a table is read in neither
 * column: its parts are set left, centred and right on the page, not in columns.
 */
export function pageStreamTables(
  items: readonly TextItem[],
  rules: readonly Rule[],
  gutter: Gutter | null,
): { table: Table; items: Set<TextItem> }[] {
  const heads = new Set<TextItem>();
  const found = streamTables(items, rules, heads);
  if (!gutter) return found;
  // A table over the whole page that stands on one side is read again with its side: found among
  // the other column's lines, it may be a few rows of a table whose other rows they parted.
  const oneSide = found.filter((f) => !crosses(f.items, gutter));
  const kept = found.filter((f) => !oneSide.includes(f) && !straddles(f.items, gutter));
  const taken = new Set(kept.flatMap((f) => [...f.items]));
  const [left, right] = sides(
    items.filter((i) => !taken.has(i) && !heads.has(i)),
    gutter,
  );
  const again = [...streamTables(left, rules), ...streamTables(right, rules)];
  // One that its side read again makes nothing of stays as the whole page read it.
  const readAgain = new Set(again.flatMap((f) => [...f.items]));
  const lost = oneSide.filter((f) => ![...f.items].some((i) => readAgain.has(i)));
  return [...kept, ...lost, ...again];
}

export { pieceText };
