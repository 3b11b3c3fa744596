/**
 * A table's grid from its text: columns where rivers of whitespace run down the lines (columns.ts),
 * with any vertical rules drawn among them; rows from the lines, cut by any horizontal rules drawn
 * across. This is how an unruled ("stream") table is read, and a ruled region that rules its rows
 * but not its columns (rules under the header only, a box around the whole table).
 *
 * Rows: between two drawn rules (a band), lines that keep to the rows of the band's key line make
 * one row each (bands.ts's rule), and a band of many lines of values (a box around a whole body of
 * rows set by whitespace), of two numbered labels, or of lines of figures in the same columns is
 * read as if unruled. Unruled, every line starts a row but for a continuation:
 *  - a line with no values and text only under text cells of the row above (or, less than a line
 *    below, in cells the row leaves empty), set at line spacing in the same type, with nothing in
 *    the key column (the first one most lines fill) or, failing that, in fewer cells than the row
 *    and none in its first: a wrapped description, the further lines of a wrapped header;
 *  - a row label wrapped (wrapsLabel), its values beside its last line or not;
 *  - a line of values less than a line below, in cells the row leaves empty (values centred
 *    beside a label's two lines);
 * but never labels under a group's label, within its span (the header's next row). A row of labels
 * alone, centred between two rows left of their cells (\multirow), joins the first of them; a row
 * of text alone that is the first lines of cells of the row under it, wrapped and set bottom-aligned
 * or centred (ReportLab's and Calc's default), joins that row (withLeadLines). Labels set halfway
 * between a header's two rows, beside cells of two lines, stand on the upper row and span both
 * (withTallLabels).
 * Cells: a piece belongs to the column its middle lies in, and spans the further columns it runs
 * across (a group header centred over its columns starts at the first of them) when the row has
 * nothing else there, never across a drawn vertical rule. Pure.
 */
import { spanCentred } from "./bands.ts";
import {
  besideLine,
  columnSeparators,
  headerAsOne,
  labelPiece,
  linePieces,
  pieceOf,
  pieceText,
  withCurrencySigns,
  type Piece,
  type PieceLine,
} from "./columns.ts";
import { groupLines, textMiddle } from "./lines.ts";
import { maxOf, minOf } from "./minmax.ts";
import { buildTable, type CellDraft } from "./tables.ts";
import type { Table, TextItem } from "./types.ts";

/** Separators closer than this (points) are one. */
const SAME_X = 3;
/** A centred group header's middle lies within this share of its columns' width of theirs. */
const CENTRED = 0.04;
/** Spans centred within this much (font sizes) of the best centred one are as centred. */
const CLOSE = 0.1;
/** Edges this close (points) are flush. */
const FLUSH = 1;
/** A label's edge this close (points) to its column's values' is set on their alignment (flushWith). */
const ALIGNED = 0.5;
/** A continuation line follows the line above within this many font sizes, baseline to baseline. */
const CONTINUATION_PITCH = 1.7;

export interface TextGridInput {
  /** The region's text items. */
  items: readonly TextItem[];
  /** x of vertical rules drawn inside the region (its outer border excluded). */
  drawnXs?: readonly number[];
  /** y of horizontal rules drawn across the region (its outer border excluded). */
  drawnYs?: readonly number[];
  /** Those of drawnYs where a rule is drawn all across the region's columns, not under some only nor where column rules end (default: all). */
  crossYs?: readonly number[];
  /**
   * y of rules drawn across a table set by whitespace, among its lines (booktabs' \midrule under
   * the header and between groups of rows): they part no rows, but a cell centred between two of
   * them is one cell over the rows between (bands.ts spanCentred). With drawnYs, crossYs serve.
   */
  bandYs?: readonly number[];
  kind: Table["kind"];
  box?: { x0: number; x1: number; top: number; bottom: number };
}

export interface TextGrid {
  table: Table;
  lines: PieceLine[];
  /** Column separators (x), left to right. */
  separators: number[];
}

function pieceLines(items: readonly TextItem[]): PieceLine[] {
  return withCurrencySigns(
    groupLines(items).map((line) => {
      const size = maxOf(line, (i) => i.size, line[0]!.size);
      return { base: line.find((i) => i.size === size)!.base, size, pieces: linePieces(line) };
    }),
  );
}

/** Index of the column an x lies in, given the separators. */
const columnAt = (seps: readonly number[], x: number): number => seps.filter((s) => s < x).length;

interface Placed {
  piece: Piece;
  line: number;
  col: number;
  /** Last column the piece runs into. */
  last: number;
}

/** A value this close (font sizes) after words in its column is said with them. */
const SAID_WITH = 0.6;

/**
 * A line's placed pieces with each value (a number, a date) that follows words a word space away
 * in the same column made one piece with them: "Serial:" and "59929" drawn as two runs (a producer
 * placing each word on its own, cairo) are one text cell, "Serial: 59929", as the same words drawn
 * as one run are, not a value under the row's description.
 */
function withLabelledNumbers(line: Placed[]): Placed[] {
  const alone = (q: Placed): boolean => q.col === q.last;
  const out: Placed[] = [];
  for (const p of line) {
    const before = out.at(-1);
    const near = before !== undefined && p.piece.x0 - before.piece.x1 <= SAID_WITH * Math.max(p.piece.size, before.piece.size);
    if (before && near && alone(before) && alone(p) && before.col === p.col && !before.piece.value && p.piece.value) {
      out[out.length - 1] = { ...before, piece: pieceOf([...before.piece.items, ...p.piece.items]) };
    } else out.push(p);
  }
  return out;
}

/**
 * Each line's pieces in their columns. A row label runs into a column only when it reaches that
 * column's text (the nearest its own pieces start): a long label ending in the room a column of
 * right-aligned numbers leaves on its left is its own column's, not a cell spanning both. (A
 * group header centred over columns spans them as it is centred: centredSpan.)
 */
function place(lines: readonly PieceLine[], seps: readonly number[]): Placed[][] {
  const placed = lines.map((line, li) =>
    withLabelledNumbers(
      line.pieces.map((piece) => {
        const col = columnAt(seps, (piece.x0 + piece.x1) / 2);
        const first = columnAt(seps, piece.x0 + 0.5);
        const last = columnAt(seps, piece.x1 - 0.5);
        return { piece, line: li, col: Math.min(col, first === last ? col : first), last: Math.max(col, last) };
      }),
    ),
  );
  const starts = Array.from({ length: seps.length + 1 }, () => Number.POSITIVE_INFINITY);
  for (const p of placed.flat()) if (p.col === p.last) starts[p.col] = Math.min(starts[p.col]!, p.piece.x0);
  for (const p of placed.flat()) while (p.col === 0 && p.last > p.col && p.piece.x1 < starts[p.last]! - FLUSH) p.last--;
  return placed;
}

/** The key column: the first one that most lines of several cells have text in. */
function keyColumn(placed: readonly Placed[][], cols: number): number {
  const rowLines = placed.filter((line) => new Set(line.map((p) => p.col)).size >= 2);
  for (let c = 0; c < cols; c++) {
    if (rowLines.filter((line) => line.some((p) => p.col === c)).length * 2 >= rowLines.length) return c;
  }
  return 0;
}

/** What deciding a region's rows needs besides the line at hand. */
interface RowContext {
  placed: readonly Placed[][];
  lines: readonly PieceLine[];
  key: number;
  /** Where the key column's text ends at the farthest: the width its labels wrap at. */
  keyRight: number;
}

/**
 * A label wrapped when its next word would have ended past the width the key column's labels wrap
 * at, less this much (font sizes: the widest label may stop short of the column's edge too).
 */
const WRAP_SLACK = 1;
/** A word space, in font sizes. */
const WORD_SPACE = 0.25;
/** A line this far right of a numbered label's start, and no farther (font sizes), is at its hanging indent. */
const HANGING = 0.5;
const MAX_HANGING = 4;
/**
 * A label that stops at a comma, an ampersand, a hyphen or a conjunction or preposition goes on
 * on the next line, whatever the case of its first letter ("Dadra and Nagar Haveli and" / "Daman
 * and Diu").
 */
const UNFINISHED = /(?:[,&/(–-]|\b(?:and|or|of|the|for|in|on|to|with|by|at|from))\s*$/iu;
/** A label numbered in brackets: "(a) ", "(iv) ". */
const ENUMERATED_BRACKET = /^\([a-z]{1,4}\)\s/u;
/** A label that starts a row of its own: numbered ("12.", "b)", "iv.") or a bullet. */
const ENUMERATED = /^(?:\d+(?:\.\d+)*[.)]|[a-z][.)]|[ivxlc]+[.)]|[•·▪–-])\s/iu;

/**
 * Whether line `li` carries on the row label above it, wrapped (a long indicator's second line): the
 * row's last label line ran to the width the key column's labels wrap at, and this line goes on in
 * the key column in lower case (or after a label stopping at "and", "of", a comma: UNFINISHED), or
 * at the hanging indent of a numbered label, not numbered itself, its values (if any) in columns
 * the row leaves empty. Values set beside the label's last line, or between its lines, are the
 * row's. (A section's label over the rows indented under it is no numbered label wrapped:
 * "Legislative District 1" over "Coconino".)
 */
function wrapsLabel(li: number, row: readonly number[], ctx: RowContext): boolean {
  const { placed, key } = ctx;
  const first = placed[li]![0];
  // The label's next line alone, or beside values: not a line of cells of text (a list of words set in columns).
  if (!first || first.col !== key || placed[li]!.some((p) => (p === first ? p.piece.value : !p.piece.value))) return false;
  const labelLine = row.findLast((r) => placed[r]!.some((p) => p.col === key && !p.piece.value));
  const label = labelLine === undefined ? undefined : placed[labelLine]!.find((p) => p.col === key);
  if (!label) return false;
  const size = Math.max(first.piece.size, label.piece.size);
  const text = pieceText(first.piece);
  // A leader starting the line is the label's, wrapped because its tab did not fit (leaders.ts);
  // else a label of words (a single word has nothing before it to wrap after) going on here.
  const wraps =
    /^[.…\s]+$/u.test(text) ||
    (/\S\s+\S/u.test(pieceText(label.piece)) &&
      wrapsAt(label.piece, first.piece, ctx.keyRight) &&
      !ENUMERATED.test(text) &&
      goesOn(first.piece, label.piece, size));
  if (!wraps) return false;
  const taken = new Set(row.flatMap((r) => placed[r]!.filter((p) => p.piece.value).map((p) => p.col)));
  return placed[li]!.every((p) => p === first || !taken.has(p.col));
}

/**
 * Whether text wrapped from piece `line` onto piece `next`: the next line's first word would have
 * run past `right` (where the column's text ends at the farthest, less WRAP_SLACK).
 */
function wrapsAt(line: Piece, next: Piece, right: number): boolean {
  const size = Math.max(line.size, next.size);
  const text = pieceText(next);
  const word = /^\S+/u.exec(text)?.[0] ?? "";
  const wordWidth = ((next.x1 - next.x0) * [...word].length) / Math.max(1, [...text].length);
  return line.x1 + WORD_SPACE * size + wordWidth >= right - WRAP_SLACK * size;
}

/**
 * Whether a label's next line reads as its continuation: in lower case (a bracket opened in lower case too), after a label that stops
 * unfinished (UNFINISHED), or, under a numbered label, at a hanging indent (where the words after
 * its number start).
 */
function goesOn(next: Piece, label: Piece, size: number): boolean {
  const indent = next.x0 - label.x0;
  const hanging = ENUMERATED.test(pieceText(label)) && indent >= HANGING * size && indent <= MAX_HANGING * size;
  // A bracket opened in lower case goes on too: "(including amounts due …)", not "(a) Rent".
  return hanging || (/^\(?\p{Ll}/u.test(pieceText(next)) && !ENUMERATED_BRACKET.test(pieceText(next))) || UNFINISHED.test(pieceText(label));
}

/** A size this close (share) is the same type size. */
export const SAME_SIZE = 0.05;

/** A piece set in bold throughout. */
const isBold = (p: Piece): boolean => p.items.every((i) => i.bold);

/** Whether two pieces are set alike: the same type size and weight. */
export function sameStyle(a: Piece, b: Piece): boolean {
  return Math.abs(a.size - b.size) <= SAME_SIZE * Math.max(a.size, b.size) && isBold(a) === isBold(b);
}

/**
 * Whether a spanning cell of a row is a group's label over labels of the line under it, in columns
 * of their own (a header's second row, "Ant. | Det." under "Task 01"): two pieces or more under
 * it, and the label within their span. (Two labels set too close to part, their next lines under
 * each, reach over the first and last of those lines: "Average handling time Average handling
 * time" over "in days | in days" is a header wrapped.)
 */
function groupOver(a: Placed, line: readonly Placed[]): boolean {
  if (a.last === a.col) return false;
  const under = line.filter((p) => a.col <= p.col && p.col <= a.last);
  return under.length >= 2 && a.piece.x0 > under[0]!.piece.x0 && a.piece.x1 < under.at(-1)!.piece.x1;
}

/**
 * Whether a row's values (line `values`, its number among them) are set between the two lines of
 * its label wrapped around them (`label`, `rest`: labels only, in the same columns), each less
 * than a line from the next ("D & N HAVELI AND" / "31 … 3 242 245" / "DAMAN & DIU").
 */
function wrappedAround(label: number, values: number | undefined, rest: number | undefined, ctx: RowContext): boolean {
  const { placed, lines } = ctx;
  if (values === undefined || rest === undefined) return false;
  const labels = (l: number): boolean => placed[l]!.every((p) => !p.piece.value);
  if (!labels(label) || !labels(rest) || !placed[values]!.some((p) => p.piece.value)) return false;
  const [top, mid, bottom] = [lines[label]!, lines[values]!, lines[rest]!];
  const size = Math.max(top.size, mid.size, bottom.size);
  const sameCols = placed[rest]!.every((p) => placed[label]!.some((q) => q.col === p.col));
  return sameCols && mid.base - top.base < size && bottom.base - mid.base < size;
}

/** A detail line is set at least this much (share) closer to the line above than the next line is to it… */
const DETAIL_HUG = 1.2;
/** …or, the last line of its band, this close (font sizes of the label, baseline to baseline). */
export const DETAIL_PITCH = 1.3;

/**
 * Whether line `li` is a cell's detail line: one piece of text in smaller type than the label it is
 * set under, flush with it and no bolder, closer to it than to the next line (an invoice item's
 * "Serial: 29741" in grey under its description); the band's last line only at DETAIL_PITCH. A
 * section's heading is no smaller than its items, and a note under a table stands further apart.
 */
function detailLine(li: number, row: readonly number[], ctx: RowContext, after: readonly number[]): boolean {
  const { placed, lines } = ctx;
  const [p, more] = placed[li]!;
  const next = after[0];
  if (!p || more || p.piece.value) return false;
  const above = placed[row.at(-1)!]!.find((a) => a.col === p.col && !a.piece.value);
  if (!above) return false;
  const size = above.piece.size;
  if (p.piece.size > size * (1 - SAME_SIZE) || (isBold(p.piece) && !isBold(above.piece))) return false;
  if (Math.abs(p.piece.x0 - above.piece.x0) > WORD_SPACE * size) return false;
  const gapAbove = lines[li]!.base - lines[row.at(-1)!]!.base;
  // The band's last line hugs its label, a note under a table stands apart.
  if (next === undefined) return gapAbove <= DETAIL_PITCH * size;
  return lines[next]!.base - lines[li]!.base > DETAIL_HUG * gapAbove;
}

/**
 * Whether line `li` continues the row made of `row` (line indexes) rather than starting one; `after`
 * are the band's lines after it.
 */
function continues(li: number, row: readonly number[], ctx: RowContext, after: readonly number[] = []): boolean {
  const { placed, lines, key } = ctx;
  const line = placed[li]!;
  const prev = lines[row.at(-1)!]!;
  const here = lines[li]!;
  if (here.base - prev.base > CONTINUATION_PITCH * Math.max(here.size, prev.size)) return false;
  if (wrapsLabel(li, row, ctx)) return true;
  // The first line of a label wrapped around its row's values, a line or more under the row above, starts that row.
  if (here.base - prev.base >= Math.max(here.size, prev.size) && wrappedAround(li, after[0], after[1], ctx)) return false;
  const above = row.flatMap((r) => placed[r]!);
  // Less than a line below the one above, a piece in a column the row leaves empty is a cell of the
  // row set lower (centred beside cells of two lines, or turned: "Info" between "Executed" and
  // "Elements"; a row's values centred beside its label wrapped over two lines).
  const between = here.base - prev.base < Math.max(here.size, prev.size);
  const covered = (p: Placed): boolean => above.some((a) => a.col <= p.col && p.col <= a.last);
  // (The row's number too, in the key column, when its label wraps around the values: wrappedAround.)
  const wrapped = row.length === 1 && wrappedAround(row[0]!, li, after[0], ctx);
  if (line.some((p) => p.piece.value)) return between && line.every((p) => (p.col > key || wrapped) && !covered(p));
  const text = above.filter((p) => !p.piece.value);
  if (text.some((a) => groupOver(a, line))) return false;
  if (!line.every((p) => text.some((a) => a.col <= p.col && p.col <= a.last) || (between && !covered(p)))) return false;
  if (detailLine(li, row, ctx, after)) return true;
  // A cell's next line is set as its first: a line in another size or weight under a cell (a state's
  // heading in bold under the last reservoir of the region before it) starts a row.
  if (line.some((p) => text.some((a) => a.col <= p.col && p.col <= a.last && !sameStyle(a.piece, p.piece)))) return false;
  // A line with text in the key column starts a row, unless it fills fewer cells than the row and
  // leaves its first one empty (a header wrapped in some of its cells, the key column's among them).
  if (!line.some((p) => p.col <= key)) return true;
  const first = Math.min(...above.map((p) => p.col));
  return new Set(line.map((p) => p.col)).size < new Set(above.map((p) => p.col)).size && !line.some((p) => p.col <= first);
}

/**
 * Whether a band's lines are rows by bands.ts's rule: every line holding the key column starts one,
 * the band's other columns following each of them, values among them.
 */
function keyRows(lines: readonly number[], placed: readonly Placed[][], key: number): boolean {
  const keyLines = lines.filter((li) => placed[li]!.some((p) => p.col === key));
  const others = new Set(lines.flatMap((li) => placed[li]!.filter((p) => p.col !== key).map((p) => p.col)));
  return (
    keyLines.length >= 2 &&
    others.size > 0 &&
    [...others].every((c) => keyLines.every((k) => placed[k]!.some((p) => p.col === c || (p.col < c && p.last >= c)))) &&
    keyLines.some((k) => placed[k]!.some((p) => p.piece.value))
  );
}

/**
 * A band with at least this many lines holding values is a list of rows set by whitespace inside a
 * box (a box around the whole body, rules between groups of columns only), read as unruled lines.
 */
const LISTED_LINES = 4;

/**
 * Whether a band's lines are rows set by whitespace, to be read as unruled lines: many lines of
 * values, or two numbered labels in the key column with values (two rows between the same rules).
 * (Rows of figures, figureRows, are read so too.)
 */
function listed(lines: readonly number[], placed: readonly Placed[][], key: number): boolean {
  const valueLines = lines.filter((li) => placed[li]!.some((p) => p.piece.value)).length;
  const numbered = lines.filter((li) => placed[li]!.some((p) => p.col === key && ENUMERATED.test(pieceText(p.piece)))).length;
  return valueLines >= LISTED_LINES || (valueLines >= 2 && numbered >= 2);
}

/** A line of this many figures or more, in a band, is a row of figures. */
const FIGURES = 3;

/**
 * Whether two lines or more of a band each hold FIGURES values or more in the same columns, not all
 * in parentheses (a figure's spread or interval set under it): rows of figures a shading boxes
 * together ("M", "F", "T" of a cause of death under one grey band).
 */
function figureRows(lines: readonly number[], placed: readonly Placed[][]): boolean {
  const rows = lines
    .map((li) => placed[li]!.filter((p) => p.piece.value))
    .filter((vs) => vs.length >= FIGURES && !vs.every((p) => /^\(.*\)$/.test(pieceText(p.piece))))
    .map((vs) => vs.map((p) => p.col).join(","));
  return rows.length >= 2 && rows.some((cols, k) => rows.indexOf(cols) !== k);
}

/**
 * How many lines at the top of a ruled band are a section's heading over its first row: labels
 * alone, every piece over a column where the first line with values holds values only ("STATES:"
 * over "1 | Andhra Pradesh | 119229 …", drawn in one band with it). A label does not wrap onto a
 * number: they are a row of their own. 0 when there are none.
 */
function headingLines(lines: readonly number[], placed: readonly Placed[][]): number {
  const first = lines.findIndex((li) => placed[li]!.some((p) => p.piece.value));
  if (first <= 0) return 0;
  // Columns where that line holds values only (a footnote's number after a label is no value cell).
  const row = placed[lines[first]!]!;
  const valueCols = new Set(row.filter((p) => row.every((q) => q.col !== p.col || q.piece.value)).map((p) => p.col));
  return lines.slice(0, first).every((li) => placed[li]!.every((p) => valueCols.has(p.col))) ? first : 0;
}

/**
 * The rows (as lists of line indexes) of lines between two drawn rules, or of a whole unruled
 * region: a section's heading at a ruled band's top first (headingLines), then the lines' rows.
 */
function rowsOf(lines: readonly number[], ctx: RowContext, ruled: boolean): number[][] {
  if (!lines.length) return [];
  const heading = ruled ? headingLines(lines, ctx.placed) : 0;
  if (heading) return [lines.slice(0, heading), ...rowsOf(lines.slice(heading), ctx, ruled)];
  return withLeadLines(withRaisedValues(withCentredLabels(lineRows(lines, ctx, ruled), ctx), ctx), ctx);
}

/** The rows of a band's lines (see the header), each line joined to the row above or starting one. */
function lineRows(lines: readonly number[], ctx: RowContext, ruled: boolean): number[][] {
  const { placed, key } = ctx;
  // A ruled band is one row, unless its lines are rows: by the key column (bands.ts), in which case
  // lines without it join the row above; or listed, read as unruled lines.
  const figures = ruled && figureRows(lines, placed);
  const byKey = ruled && !figures && keyRows(lines, placed, key);
  if (ruled && !byKey && !figures && !listed(lines, placed, key)) return [[...lines]];
  const rows: number[][] = [];
  for (const [k, li] of lines.entries()) {
    const row = rows.at(-1);
    if (row && continues(li, row, ctx, lines.slice(k + 1, k + 3))) row.push(li);
    else if (row && byKey && !placed[li]!.some((p) => p.col === key)) row.push(li);
    else rows.push([li]);
  }
  return rows;
}

/** A line of values set less than this (font sizes, baseline to baseline) over the next is on its row. */
const RAISED = 0.5;

/**
 * Rows of one line of values only, set less than half a line over the next row's first line and in
 * columns it leaves empty, joined to it: a cell whose text its producer set a little higher than
 * the rest of its row ("100 %" 4 pt over "Upper Tapi Hatnur … 90.59 %"), past the tolerance of one
 * baseline.
 */
function withRaisedValues(rows: readonly number[][], ctx: RowContext): number[][] {
  const { placed, lines } = ctx;
  return joinedToNext(rows, (row, next) => {
    if (row.length !== 1) return false;
    const [line, below] = [lines[row[0]!]!, lines[next[0]!]!];
    const taken = new Set(next.flatMap((li) => placed[li]!.map((p) => p.col)));
    return (
      below.base - line.base < RAISED * Math.max(line.size, below.size) && placed[row[0]!]!.every((p) => p.piece.value && !taken.has(p.col))
    );
  });
}

/**
 * Rows with each row that `joins` the next (given the rows kept so far's last, if any) joined to
 * it; a row so joined joins nothing further.
 */
function joinedToNext(
  rows: readonly number[][],
  joins: (row: readonly number[], next: readonly number[], prev: readonly number[] | undefined) => boolean,
): number[][] {
  const out: number[][] = [];
  for (let r = 0; r < rows.length; r++) {
    const [row, next] = [rows[r]!, rows[r + 1]];
    if (next && joins(row, next, out.at(-1))) {
      out.push([...row, ...next]);
      r++;
    } else out.push([...row]);
  }
  return out;
}

/** A label centred on two rows stands less than this (font sizes, baseline to baseline) under the first. */
const CENTRED_LABEL = 1.1;

/**
 * Rows of labels alone set between two rows, about a line under the one above (CENTRED_LABEL) and
 * at line spacing over the next (a rule may part those), left of all the cells of the row above:
 * labels centred on the two rows (LaTeX's \multirow, "Tying Knots" between "Random" and
 * "Task-Level"; "Activity" between a group header and the labels under it), joined to the first of
 * them, the row the label's source cell is in.
 */
function withCentredLabels(rows: readonly number[][], ctx: RowContext): number[][] {
  const { placed, lines } = ctx;
  const out: number[][] = [];
  rows.forEach((row, r) => {
    const [prev, next] = [out.at(-1), rows[r + 1]];
    if (prev && next) {
      const [top, bottom] = [lines[row[0]!]!, lines[row.at(-1)!]!];
      const [above, below] = [lines[prev.at(-1)!]!, lines[next[0]!]!];
      const first = Math.min(...prev.flatMap((li) => placed[li]!.map((p) => p.col)));
      const centred =
        top.base - above.base < CENTRED_LABEL * Math.max(top.size, above.size) &&
        below.base - bottom.base <= CONTINUATION_PITCH * Math.max(bottom.size, below.size) &&
        row.every((li) => placed[li]!.every((p) => !p.piece.value && p.last < first));
      if (centred) {
        prev.push(...row);
        return;
      }
    }
    out.push([...row]);
  });
  return out;
}

/**
 * Rows of text alone that are the first lines of cells of the row under them, wrapped and set
 * bottom-aligned or centred (ReportLab's and Calc's default: a description's first lines over the
 * line that holds the row's date, code and amounts), joined to it. Such a row's last line is, in
 * each of its columns, flush with a piece of the next row's first line in the same type, wrapped
 * onto it (its next word would not have fitted: wrapsAt) and carried on by it (goesOn); that line
 * fills columns the row leaves empty; and the row hugs the next one, at line spacing, closer to it
 * than to the row above by DETAIL_HUG (a cell's padding parts rows). A section's heading over its
 * rows stops short of its column's width, and a top-aligned cell's next lines hug the row above. A
 * header's first lines ("Gross" over "margin") need not fill their column, and may be flush on
 * either edge or centred, and above the first line of values, flush on an edge, they go on in
 * any case ("OVER 90" over "DAYS"); never a group's label over labels under it (groupOver).
 */
function withLeadLines(rows: readonly number[][], ctx: RowContext): number[][] {
  const { placed, lines } = ctx;
  const right = new Map<number, number>();
  for (const p of placed.flat()) if (!p.piece.value && p.col === p.last) right.set(p.col, Math.max(right.get(p.col) ?? 0, p.piece.x1));
  // Lines above the first that holds a value are the header's: its cells' lines go on whatever
  // their case ("OVER 90" / "DAYS" on a line printer's header in capitals).
  const firstValue = placed.findIndex((line) => line.some((p) => p.piece.value));
  const aboveValues = (row: readonly number[]): boolean => firstValue > 0 && row.every((li) => li < firstValue);
  return joinedToNext(rows, (row, next, prev) => {
    if (!row.every((li) => placed[li]!.every((p) => !p.piece.value))) return false;
    const [last, first] = [row.at(-1)!, next[0]!];
    const size = Math.max(lines[last]!.size, lines[first]!.size);
    const gap = lines[first]!.base - lines[last]!.base;
    const hugs = gap <= CONTINUATION_PITCH * size && (!prev || lines[row[0]!]!.base - lines[prev.at(-1)!]!.base > DETAIL_HUG * gap);
    const cols = new Set(placed[last]!.map((p) => p.col));
    // A header's cells are set on lines of their own ("Gross" / "margin"), flush on either edge
    // or centred; a description's wrap where its words no longer fit.
    const header = placed[first]!.every((q) => labelPiece(q.piece));
    // Flush on an edge, not centred over it (a group's label centred over its middle column).
    const edgeFlush = (p: Piece, q: Piece): boolean =>
      Math.abs(q.x0 - p.x0) <= WORD_SPACE * size || Math.abs(q.x1 - p.x1) <= WORD_SPACE * size;
    const flush = (p: Piece, q: Piece): boolean =>
      Math.abs(q.x0 - p.x0) <= WORD_SPACE * size ||
      (header && (Math.abs(q.x1 - p.x1) <= WORD_SPACE * size || Math.abs(q.x0 + q.x1 - p.x0 - p.x1) <= 2 * WORD_SPACE * size));
    return (
      hugs &&
      placed[first]!.some((q) => !cols.has(q.col)) &&
      placed[last]!.every((p) => {
        // The cell's next line: on the row's first line, or under it (the row's other cells centred
        // between the cell's lines).
        const q = next.flatMap((li) => placed[li]!).find((q) => q.col === p.col);
        return (
          q !== undefined &&
          !q.piece.value &&
          flush(p.piece, q.piece) &&
          sameStyle(p.piece, q.piece) &&
          !groupOver(p, placed[first]!) &&
          (header || wrapsAt(p.piece, q.piece, right.get(p.col) ?? p.piece.x1)) &&
          ((header && aboveValues(next) && edgeFlush(p.piece, q.piece)) || goesOn(q.piece, p.piece, size))
        );
      })
    );
  });
}

/** A label line halfway between two rows lies this near (font sizes) to the middle of them… */
const HALFWAY = 0.2;
/** …and at most this far (font sizes, baseline to baseline) from each (a header's lines are set closer than a row's). */
const HALF_ROW = 1.1;

/**
 * Header lines of labels set halfway between a header's two rows, moved to the upper one; returns
 * the rows and the lines moved. A header whose cells are one or two lines tall, each centred in
 * the header's height, sets its one-line labels halfway between the two lines of the others
 * ("Scene", "Campus" beside "BigCity" over "Street"): those lines part the header into two rows, and
 * the labels stand for cells spanning both, as a spreadsheet's merged cells and the source's
 * \multirow do. Such a line is the lower row's first, within HALF_ROW of the upper row's last line
 * and of the lower row's next one, halfway within HALFWAY; no rule is drawn all across between
 * them (`crossYs`: a group's rule under its label is no border of the labels beside it); every
 * piece of both rows is a label; and no other line of either row has text in its columns.
 */
function withTallLabels(rows: readonly number[][], ctx: RowContext, crossYs: readonly number[]): { rows: number[][]; tall: Set<number> } {
  const { placed, lines } = ctx;
  const tall = new Set<number>();
  const out = rows.map((row) => [...row]);
  const labels = (row: readonly number[]): boolean => row.every((li) => placed[li]!.every((p) => labelPiece(p.piece)));
  const cols = (li: number): number[] => placed[li]!.flatMap((p) => Array.from({ length: p.last - p.col + 1 }, (_, k) => p.col + k));
  for (let r = 0; r + 1 < out.length; r++) {
    const [upper, lower] = [out[r]!, out[r + 1]!];
    if (lower.length < 2 || !labels(upper) || !labels(lower)) continue;
    const [a, l, b] = [lines[upper.at(-1)!]!, lines[lower[0]!]!, lines[lower[1]!]!];
    const size = Math.max(a.size, l.size, b.size);
    const [above, below] = [l.base - a.base, b.base - l.base];
    if (above > HALF_ROW * size || below > HALF_ROW * size || Math.abs(above - below) > HALFWAY * size) continue;
    if (crossYs.some((y) => y > a.base && y < b.base - 0.7 * b.size)) continue;
    const mine = new Set(cols(lower[0]!));
    const others = [...upper, ...lower.slice(1)].flatMap(cols);
    if (others.some((c) => mine.has(c))) continue;
    upper.push(lower.shift()!);
    tall.add(upper.at(-1)!);
  }
  return { rows: out, tall };
}

/**
 * The free columns `free` around a cell covering `covers`, cut at the drawn rules (indexes into the
 * separators: rule j lies between columns j and j+1): a header centred over columns never reaches
 * across a rule drawn beside it (four blocks of columns in one box, a rule between each two).
 */
function withinRules(free: [number, number], covers: [number, number], ruled: readonly number[]): [number, number] {
  const lo = Math.max(free[0], ...ruled.filter((j) => j < covers[0]).map((j) => j + 1));
  const hi = Math.min(free[1], ...ruled.filter((j) => j >= covers[1]));
  return [lo, hi];
}

/**
 * The columns a row's cell (its pieces, `group`, covering `covers`) spans, within the free ones
 * around it. A header cell of one piece, or of pieces stacked on lines of their own (a header
 * wrapped over two lines), may be centred over a group of columns (centredSpan); a label set flush
 * with its own column's values (`flushWith`) is that column's, however centred it looks. A label
 * across columns, first in a row of figures, the columns before it empty, spans those too: a
 * total's label set across them (\multicolumn{4}{r}{Overall accuracy} beside its 0.881).
 */
function cellSpan(
  group: readonly Placed[],
  covers: [number, number],
  free: [number, number],
  row: {
    header: boolean;
    figures: boolean;
    first: boolean;
    flushWith: (col: number, extent: { x0: number; x1: number }) => boolean;
    edges: readonly number[];
    texts: readonly ({ x0: number; x1: number } | undefined)[];
  },
): [number, number] {
  const [c, reach] = covers;
  const stacked = new Set(group.map((p) => p.line)).size === group.length;
  const extent = { x0: minOf(group, (p) => p.piece.x0), x1: maxOf(group, (p) => p.piece.x1), size: maxOf(group, (p) => p.piece.size) };
  if (row.header && stacked && !(c === reach && row.flushWith(c, extent))) return centredSpan(extent, covers, free, row.edges, row.texts);
  const leading = row.first && reach > c && free[0] < c && row.figures && group.every((p) => !p.piece.value);
  return leading ? [free[0], reach] : covers;
}

/**
 * The columns a header piece spans when it is centred over several (a group header: "Berth 2016"
 * over Revenue, Tonnage and Net change, printed in the middle one): among the runs of free columns
 * around it whose middle is the piece's, within CENTRED of their width, the best centred — and of
 * those centred as well within CLOSE of its size, the widest (equal columns make every symmetric
 * run centred; the text is closest to the middle of the one it was set over). Else the columns
 * it covers. `texts`: each column's text extent.
 */
function centredSpan(
  piece: { x0: number; x1: number; size: number },
  covers: [number, number],
  free: [number, number],
  edges: readonly number[],
  texts: readonly ({ x0: number; x1: number } | undefined)[],
): [number, number] {
  const mid = (piece.x0 + piece.x1) / 2;
  // Centred between the columns' edges, or, when over none so, over their text (a river's
  // separator may lie at one bank of its gap: "ILIAS" over mAP | LocScore, set just right of the
  // separator between them).
  const over = (extent: (a: number, b: number) => [number, number] | null): { span: [number, number]; off: number }[] => {
    const out: { span: [number, number]; off: number }[] = [];
    for (let a = free[0]; a <= covers[0]; a++) {
      for (let b = Math.max(covers[1], a + 1); b <= free[1]; b++) {
        const [left, right] = extent(a, b) ?? [0, 0];
        const off = Math.abs((left + right) / 2 - mid);
        if (right > left && off <= CENTRED * (right - left)) out.push({ span: [a, b], off });
      }
    }
    return out;
  };
  const byEdges = over((a, b) => [edges[a]!, edges[b + 1]!]);
  const centred = byEdges.length ? byEdges : over((a, b) => (texts[a] && texts[b] ? [texts[a].x0, texts[b].x1] : null));
  const best = minOf(centred, (c) => c.off);
  return centred
    .filter((c) => c.off <= best + CLOSE * piece.size)
    .reduce<[number, number]>((w, c) => (c.span[1] - c.span[0] > w[1] - w[0] ? c.span : w), covers);
}

/**
 * Whether a label left of a river stands on a line of its own, centred between two lines that both
 * have text right of it and none left (LaTeX's \multirow: "Actual Class" half a line under the
 * first of its rows, over the second): the river parts the label's column from theirs.
 */
function centredBeside(lines: readonly PieceLine[], left: (l: PieceLine) => boolean, right: (l: PieceLine) => boolean): boolean {
  return lines.some((line, k) => {
    const [above, below] = [lines[k - 1], lines[k + 1]];
    if (!above || !below || !left(line) || right(line)) return false;
    const near = (o: PieceLine): boolean => besideLine(line, o) && right(o) && !left(o);
    return near(above) && near(below);
  });
}

/**
 * The separators: text rivers and drawn rules, a river within SAME_X of a rule being that rule.
 * A river between two columns that no line uses both of is dropped: those are one column whose
 * cells align differently (a left-aligned header over right-aligned numbers). A header set over
 * several lines counts as one line here (columns.ts's headerAsOne), and the rivers of a column only
 * the header fills (pinned, columns.ts's headerOnly) are kept like drawn rules.
 */
function separators(lines: readonly PieceLine[], drawn: readonly number[]): number[] {
  const found = columnSeparators(lines).filter((s) => !drawn.some((d) => Math.abs(d - s.x) < SAME_X));
  const kept = [...drawn, ...found.filter((s) => s.pinned).map((s) => s.x)];
  let text = found.filter((s) => !s.pinned).map((s) => s.x);
  const rows = headerAsOne(lines);
  const mid = (p: Piece): number => (p.x0 + p.x1) / 2;
  for (let changed = true; changed;) {
    changed = false;
    const seps = [...kept, ...text].sort((a, b) => a - b);
    for (const x of text) {
      const k = seps.indexOf(x);
      const [lo, hi] = [seps[k - 1] ?? Number.NEGATIVE_INFINITY, seps[k + 1] ?? Number.POSITIVE_INFINITY];
      const left = (l: PieceLine): boolean => l.pieces.some((p) => mid(p) > lo && mid(p) < x);
      const right = (l: PieceLine): boolean => l.pieces.some((p) => mid(p) > x && mid(p) < hi);
      if (!rows.some((l) => left(l) && right(l)) && !centredBeside(rows, left, right)) {
        text = text.filter((t) => t !== x);
        changed = true;
        break;
      }
    }
  }
  return [...kept, ...text].sort((a, b) => a - b);
}

/** The extent of each column's text that stands in it alone (undefined: the column holds no such text), in one pass. */
function columnTexts(placed: readonly Placed[][], cols: number): ({ x0: number; x1: number } | undefined)[] {
  const texts = new Array<{ x0: number; x1: number } | undefined>(cols);
  for (const { piece, col, last } of placed.flat()) {
    if (col !== last) continue;
    const t = texts[col];
    texts[col] = t ? { x0: Math.min(t.x0, piece.x0), x1: Math.max(t.x1, piece.x1) } : { x0: piece.x0, x1: piece.x1 };
  }
  return texts;
}

/** The table a region's text makes (see the header), or null when it has fewer than two columns. */
export function textGrid(input: TextGridInput): TextGrid | null {
  const lines = pieceLines(input.items);
  if (!lines.length) return null;
  const seps = separators(lines, input.drawnXs ?? []);
  if (!seps.length) return null;
  const cols = seps.length + 1;
  const placed = place(lines, seps);
  const key = keyColumn(placed, cols);
  const ys = [...(input.drawnYs ?? [])].sort((a, b) => a - b);
  const bandOf = (li: number): number => ys.filter((y) => y < textMiddle(lines[li]!)).length;
  const bands = new Map<number, number[]>();
  lines.forEach((_, li) => bands.set(bandOf(li), [...(bands.get(bandOf(li)) ?? []), li]));
  const keyRight = maxOf(
    placed.flat().filter((p) => p.col === key && !p.piece.value),
    (p) => p.piece.x1,
    0,
  );
  const ctx: RowContext = { placed, lines, key, keyRight };
  const { rows, tall } = withTallLabels(
    [...bands.keys()].sort((a, b) => a - b).flatMap((b) => rowsOf(bands.get(b)!, ctx, ys.length > 0)),
    ctx,
    input.crossYs ?? ys,
  );
  // The columns of each row that a tall label of the row above spans down into.
  const spannedDown = new Map<number, number[]>();
  // Indexes of the separators that are drawn rules: no cell spans across one.
  const ruled = seps.flatMap((x, j) => ((input.drawnXs ?? []).some((d) => Math.abs(d - x) < SAME_X) ? [j] : []));
  const edges = [
    minOf(
      lines.flatMap((l) => l.pieces),
      (p) => p.x0,
    ),
    ...seps,
    maxOf(
      lines.flatMap((l) => l.pieces),
      (p) => p.x1,
    ),
  ];
  const texts = columnTexts(placed, cols);
  const drafts: CellDraft[] = [];
  // Each column's values that stand in it alone.
  const values = Array.from({ length: cols }, (): Piece[] => []);
  for (const p of placed.flat()) if (p.piece.value && p.col === p.last) values[p.col]!.push(p.piece);
  // Whether a label's edge is the edge half of its column's values or more are set flush on (a
  // column left- or right-aligned): one centred value of the label's width is no alignment.
  const flushWith = (col: number, extent: { x0: number; x1: number }): boolean => {
    const vs = values[col]!;
    const on = (edge: (p: { x0: number; x1: number }) => number): boolean =>
      vs.length > 0 && vs.filter((v) => Math.abs(edge(v) - edge(extent)) <= ALIGNED).length * 2 >= vs.length;
    return on((p) => p.x0) || on((p) => p.x1);
  };
  rows.forEach((row, r) => {
    const byCol = new Map<number, Placed[]>();
    for (const p of row.flatMap((li) => placed[li]!)) byCol.set(p.col, [...(byCol.get(p.col) ?? []), p]);
    const starts = [...byCol.keys()].sort((a, b) => a - b);
    // A header row: labels only, years and columns' numbers among them ("2011" over its three columns).
    const header = row.every((li) => placed[li]!.every((p) => labelPiece(p.piece)));
    const figures = row.some((li) => placed[li]!.some((p) => p.piece.value));
    // The row's cells never overlap: a group header centred over its columns leaves the next one
    // only the columns after them ("Handgun" over 1–3, "Long gun" over 4–6, not 3–7).
    let taken = -1;
    // A piece running across columns spans them, up to the next cell of the row.
    const reaches = starts.map((c, k) =>
      Math.min(
        maxOf(byCol.get(c)!, (p) => p.last),
        (starts[k + 1] ?? cols) - 1,
      ),
    );
    starts.forEach((c, k) => {
      const group = byCol.get(c)!;
      const reach = reaches[k]!;
      // Free: the columns between the ones the cells beside it run across (or a tall label
      // from the row above spans down into).
      const free = withinRules(
        [Math.max(reaches[k - 1] ?? -1, taken) + 1, (starts[k + 1] ?? cols) - 1],
        [c, reach],
        [...ruled, ...(spannedDown.get(r) ?? []).flatMap((j) => [j - 1, j])],
      );
      const span = cellSpan(group, [c, reach], free, { header, figures, first: k === 0, flushWith, edges, texts });
      taken = span[1];
      const down = group.every((p) => tall.has(p.line)) && r + 1 < rows.length;
      const spanned = Array.from({ length: span[1] - span[0] + 1 }, (_, j) => span[0] + j);
      if (down) spannedDown.set(r + 1, [...(spannedDown.get(r + 1) ?? []), ...spanned]);
      const rowSpan = down ? 2 : 1;
      drafts.push({ row: r, col: span[0], rowSpan, colSpan: spanned.length, items: group.flatMap((p) => p.piece.items) });
    });
  });
  const all = lines.flatMap((l) => l.pieces);
  const x0 = minOf(all, (p) => p.x0);
  const x1 = maxOf(all, (p) => p.x1);
  const box = input.box ?? { x0, x1, top: minOf(lines, (l) => l.base - l.size), bottom: maxOf(lines, (l) => l.base + 0.25 * l.size) };
  // The bands that rules drawn all across part: a cell centred on one of them spans its rows.
  const bandYs = ys.length ? (input.crossYs ?? ys) : (input.bandYs ?? []);
  const cells = bandYs.length ? spanCentred(drafts, bandYs) : drafts;
  return { table: buildTable(input.kind, cells, [Math.min(x0, box.x0), ...seps, Math.max(x1, box.x1)], box), lines, separators: seps };
}

export { pieceText };
