/**
 * Pages set in two columns (papers, journals, newsletters): the gutter between the columns. On such
 * a page a line of one column shares its baseline with a line of the other, so a table in one
 * column and the text beside it in the other read as one run of lines of several pieces each —
 * the whitespace finder (stream.ts) took the two columns for one table, or refused the run and lost
 * the table to the text. Knowing the gutter, the finder reads each column apart (index.ts).
 *
 * The gutter is the widest stretch of the page's middle that no more than a few lines cross (a
 * title, an abstract or a table set across both columns cross it), with running text — lines of
 * a paragraph — wholly on each side of it on several lines, those on its right starting by it (the
 * right column's left edge). Pure.
 */
import { linePieces, paragraphLine, pieceLine } from "./columns.ts";
import { groupLines } from "./lines.ts";
import { maxOf, minOf } from "./minmax.ts";
import type { TextItem } from "./types.ts";

export interface Gutter {
  x0: number;
  x1: number;
  /** Its middle: an item ending before it is in the left column, one starting after it in the right. */
  mid: number;
}

/** The gutter lies in this middle share of the page's width. */
const MIDDLE = [0.3, 0.7] as const;
/** A table set across the gutter has cells on both sides in at least this share of its rows. */
const MIN_ACROSS = 0.5;
/** A column's paragraph line is this share of its side of the gutter wide, or wider. */
const SIDE_WIDTH = 0.7;
/** A line of this many characters or fewer is a page number or the like. */
const FOLIO_CHARS = 4;
/** A gutter no line crosses is this wide (font sizes) or wider… */
const CLEAR_GUTTER = 1.5;
/** …with this many lines or more on each side. */
const CLEAR_LINES = 10;
/** A paragraph's first line starts up to this far (font sizes) right of its column's edge. */
const INDENT = 2.5;
/** …and within this share of the text's width of its middle. */
const CENTRE = 0.1;
/** At most this share of the page's lines may cross the gutter (titles, abstracts, wide tables). */
const MAX_CROSSING = 0.3;
/** Each column holds at least this many lines of running text… */
const MIN_PROSE_LINES = 4;
/** …of this many words or more (a paragraph's last line may be short; a table's row label is). */
const PROSE_WORDS = 4;
/** Lines of a paragraph running across the gutter among the columns' lines: a caption of a figure set across both. */
const MAX_PARAGRAPHS_ACROSS = 2;
/** A column's running text: this share of the lines on its side of a table straddling the gutter, or more. */
const PROSE_SHARE = 0.4;
/** Gaps narrower than this (font sizes) inside a line are word spacing, not the gutter. */
const WORD_GAPS = 1;

type PageLine = ReturnType<typeof pieceLine>;

/** Whether a line (or a column's part of one) is a line of a paragraph (columns.ts). */
export const proseLine = (items: TextItem[]): boolean => items.length > 0 && paragraphLine(pieceLine(items));

/** The stretches a line covers, its word gaps closed. */
function spans(line: PageLine): [number, number][] {
  const out: [number, number][] = [];
  for (const p of line.pieces) {
    const last = out.at(-1);
    if (last && p.x0 - last[1] <= WORD_GAPS * line.size) last[1] = Math.max(last[1], p.x1);
    else out.push([p.x0, p.x1]);
  }
  return out;
}

/** The lines' spans within [lo, hi] as sorted events: where a span starts (+1) and ends (−1). */
function spanEvents(lines: readonly [number, number][][], lo: number, hi: number): [number, number][] {
  const events: [number, number][] = [];
  for (const line of lines) for (const [a, b] of line) if (b > lo && a < hi) events.push([Math.max(a, lo), 1], [Math.min(b, hi), -1]);
  return events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

/** The widest stretch of [lo, hi] that at most `allow` of the spans (spanEvents) cross. */
function widestOpening(events: readonly [number, number][], allow: number, lo: number, hi: number): [number, number] | null {
  let best: [number, number] | null = null;
  let depth = 0;
  let start = lo;
  const close = (end: number): void => {
    if (end > start && (!best || end - start > best[1] - best[0])) best = [start, end];
  };
  for (const [x, d] of events) {
    const before = depth;
    depth += d;
    if (before <= allow && depth > allow) close(x);
    if (before > allow && depth <= allow) start = x;
  }
  if (depth <= allow) close(hi);
  return best;
}

/** The page's gutter, or null when its text is not set in two columns (see the header). */
export function pageGutter(items: readonly TextItem[], width: number): Gutter | null {
  // A page number in the middle of the foot tells nothing of the columns.
  const lines = groupLines(items)
    .map(pieceLine)
    .filter((l) => l.items.map((i) => i.text.trim()).join("").length > FOLIO_CHARS);
  if (lines.length < 2 * MIN_PROSE_LINES) return null;
  const size = lines.map((l) => l.size).sort((a, b) => a - b)[lines.length >> 1]!;
  const gutter = opening(lines, items, width, size);
  return gutter && (clear(lines, gutter, size) || twoColumns(lines, gutter, size)) ? gutter : null;
}

/**
 * The opening fewest lines cross (a table's columns in one column leave wider ones that more
 * cross), in the middle of the text (columns are set of one width), a font size wide or more.
 */
function opening(lines: readonly PageLine[], items: readonly TextItem[], width: number, size: number): Gutter | null {
  const [left, right] = [minOf(items, (i) => i.x0), maxOf(items, (i) => i.x1)];
  const centre = (left + right) / 2;
  const lo = Math.max(MIDDLE[0] * width, centre - CENTRE * (right - left));
  const hi = Math.min(MIDDLE[1] * width, centre + CENTRE * (right - left));
  const events = spanEvents(lines.map(spans), lo, hi);
  for (let allow = 0; allow <= MAX_CROSSING * lines.length; allow++) {
    const o = widestOpening(events, allow, lo, hi);
    if (o && o[1] - o[0] >= WORD_GAPS * size) return { x0: o[0], x1: o[1], mid: (o[0] + o[1]) / 2 };
  }
  return null;
}

/**
 * Whether an opening is a gutter no line crosses, from the page's top to its bottom, wide and with
 * many lines on each side: a page of tables set in two columns, with little prose to tell it by.
 */
function clear(lines: readonly PageLine[], gutter: Gutter, size: number): boolean {
  if (gutter.x1 - gutter.x0 < CLEAR_GUTTER * size) return false;
  if (lines.some((l) => spans(l).some(([a, b]) => a < gutter.x1 && b > gutter.x0))) return false;
  const left = lines.filter((l) => l.items.some((i) => i.x1 <= gutter.mid)).length;
  const right = lines.filter((l) => l.items.some((i) => i.x0 >= gutter.mid)).length;
  return Math.min(left, right) >= CLEAR_LINES;
}

/**
 * Whether the text either side of an opening is two columns: lines of a paragraph on each side,
 * those on the right starting by the gutter (display maths and centred lines of a page in one
 * column start anywhere), and no paragraph running across it where the columns are (a page in one
 * column has its paragraphs between the short lines that left it open).
 */
function twoColumns(lines: readonly PageLine[], gutter: Gutter, size: number): boolean {
  let left = 0;
  const flush: number[] = [];
  for (const line of lines) {
    const [l, r] = sides(line.items, gutter);
    if (l.length && paragraphLine(pieceLine(l), PROSE_WORDS)) left++;
    if (r.length && minOf(r, (i) => i.x0) - gutter.x1 <= INDENT * size && paragraphLine(pieceLine(r), PROSE_WORDS)) flush.push(line.base);
  }
  if (left < MIN_PROSE_LINES || flush.length < MIN_PROSE_LINES) return false;
  const [top, bottom] = [Math.min(...flush), Math.max(...flush)];
  const across = lines.filter((l) => l.base > top && l.base < bottom && spans(l).some(([a, b]) => a < gutter.x0 && b > gutter.x1));
  return across.filter((l) => paragraphLine(l)).length <= MAX_PARAGRAPHS_ACROSS;
}

/** A line's items left of the gutter and right of it (items across it in neither). */
export function sides(items: readonly TextItem[], g: Gutter): [TextItem[], TextItem[]] {
  return [items.filter((i) => i.x1 <= g.mid), items.filter((i) => i.x0 >= g.mid)];
}

/** Whether items stand on both sides of the gutter. */
export function crosses(items: Iterable<TextItem>, g: Gutter): boolean {
  const all = [...items];
  return all.some((i) => i.x0 < g.mid) && all.some((i) => i.x1 > g.mid);
}

/**
 * Whether a table found over the whole page straddles the gutter with a column's running text on
 * one side (lines of a paragraph as wide as the table's side of the gutter, or nearly, on two
 * lines or more and PROSE_SHARE of that side's lines), or with most of its rows on one side only:
 * the two columns read as one. A table set across both columns (a wide table with a river where
 * the gutter would be) holds its paragraphs in a column of its own, narrower, and has cells on
 * both sides in its rows.
 */
export function straddles(items: Iterable<TextItem>, g: Gutter): boolean {
  const all = [...items];
  if (!crosses(all, g)) return false;
  const [x0, x1] = [minOf(all, (i) => i.x0), maxOf(all, (i) => i.x1)];
  const wide = (part: TextItem[], width: number): boolean =>
    proseLine(part) && maxOf(part, (i) => i.x1) - minOf(part, (i) => i.x0) >= SIDE_WIDTH * width;
  const prose = [0, 0];
  const lines = [0, 0];
  let rows = 0;
  let across = 0;
  for (const line of groupLines(all)) {
    const [l, r] = sides(line, g);
    if (l.length) lines[0]!++;
    if (r.length) lines[1]!++;
    if (wide(l, g.x0 - x0)) prose[0]!++;
    if (wide(r, x1 - g.x1)) prose[1]!++;
    if (linePieces(line).length < 2) continue;
    rows++;
    if (l.length && r.length) across++;
  }
  // A column's running text fills most of its side's lines; a table's labels wrapped in their
  // column (a statement's long items) are a few of them.
  const running = [0, 1].some((s) => prose[s]! >= 2 && prose[s]! >= PROSE_SHARE * lines[s]!);
  // Or most of its rows stand on one side only: two tables side by side, their rows interleaved.
  return running || across < MIN_ACROSS * rows;
}
