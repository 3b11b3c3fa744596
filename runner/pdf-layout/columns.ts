/**
 * Where a table's columns part, read from its text alone: the rivers of whitespace that run down
 * through its lines. A column gap is empty on (nearly) every line and lies between text on both of
 * its sides on several lines; a gap a table's own words leave (between two words of a label) is
 * not, because the next line's words fall elsewhere — or, when every line repeats the same phrase,
 * because that gap is one word space wide on every line. Beside a value (a number or a date) any
 * gap is a column gap: Calc leaves less than a word space between a right-aligned date and the
 * next cell's text. Lines of one piece (a title, a section row, a wrapped cell's next line) may
 * cross a river, and lines of several now and then (a group header): up to CROSSING of them; those
 * then span the columns (in a table too small for that, one short label may still cross a river
 * between two columns of values: spannedRivers) — but a label alone on its line, less than a line
 * from a row with text only right of it (a \multirow label centred on two rows), is a cell of its
 * own column, and values set apart on a line crossing a river part it (a sparse row: an invoice's
 * one item with its quantity and price over lines of amounts alone). A header set over several
 * lines counts once, as one row; a header label alone in a river, when the column right of it has
 * a label of its own, heads a column the body leaves empty. Pure.
 */
import { CURRENCY_SIGNS, typeCell } from "./cells.ts";
import { isMarker, OVERDRAWN, runsText, WORD_GAP } from "./lines.ts";
import { maxOf, minOf } from "./minmax.ts";
import type { TextItem } from "./types.ts";

/** A stretch of a line with no gap wider than a word space's touch: the unit columns are made of. */
export interface Piece {
  x0: number;
  x1: number;
  size: number;
  items: TextItem[];
  /** Its text is a number or a date (or a dash for nil: NIL). */
  value: boolean;
}

/** One text line of a table region, left to right. */
export interface PieceLine {
  base: number;
  size: number;
  pieces: Piece[];
}

/** Share of a region's lines allowed to cross a column gap (titles, group headers, section rows). */
const CROSSING = 0.12;
/** A gap this narrow (font sizes) on every line, and the same width on each, is a word space. */
const WORD_SPACE = 0.45;
/** Narrower than this (font sizes) is no word space: kerning, or cells set a hair apart. */
const MIN_WORD_SPACE = 0.15;
/** Edges closer than this (points) are in line. */
const ALIGN = 2;
/** Narrowest column gap, in points. */
const MIN_GAP = 0.8;

const isValueText = (text: string): boolean => typeof typeCell(text).value !== "string";

/** A year or a span of years, as a header groups columns under it ("2025", "2019-20"). */
const YEARS = String.raw`(?:1[89]|20)\d\d(?:\s*[-–]\s*\d{2,4})?`;
const YEAR = new RegExp(`^${YEARS}$`, "u");

/** Numbers a header labels columns with: a year or a span of years ("2019-20"), a column's number ("1", "(4)", "[8]"). */
const HEADER_NUMBER = new RegExp(String.raw`^(?:${YEARS}|[[(]?\d{1,2}[\])]?)$`, "u");

/** Whether a piece can label a column: text, a year, a column's number. */
export const labelPiece = (p: Piece): boolean => !p.value || HEADER_NUMBER.test(pieceText(p));

/** Whether a text is a figure of a table's body: a number or a date, not one a header labels columns with. */
export const bodyFigure = (text: string): boolean => isValueText(text) && !HEADER_NUMBER.test(text.trim());

/** A piece's text, as its line reads it (lines.ts runsText: "83" and ". Elevated" set flush are "83. Elevated"). */
export const pieceText = (p: Piece): string => runsText(p.items);

/** A dash alone, "n/a", "n/m", "nil" or dots stand for an amount not given: in a column of numbers they are values like them. */
const NIL = /^(?:[-–—]|n\/[am]|nil|\.\.|…)$/iu;

export function pieceOf(items: TextItem[]): Piece {
  const p: Piece = {
    x0: minOf(items, (i) => i.x0),
    x1: maxOf(items, (i) => i.x1),
    size: maxOf(items, (i) => i.size, items[0]!.size),
    items,
    value: false,
  };
  const text = pieceText(p);
  p.value = typeof typeCell(text).value !== "string" || NIL.test(text);
  return p;
}

/**
 * The line's items, each that a later one starts over an em inside (lines.ts's OVERDRAWN) ending
 * where that one starts: a cell's text too long for it, drawn on under the cells after it and
 * clipped at its edge (ledgers, exported reports), reaches as far as its cell on the page. Its
 * text stays whole. Kerning and italic overhangs overlap by a fraction of an em.
 */
function withinCells(sorted: readonly TextItem[]): TextItem[] {
  return sorted.map((item, k) => {
    const reach = item.x1 - OVERDRAWN * item.size;
    // Sorted by x0: only the items starting before `reach` can be drawn over this one.
    for (let n = k + 1; n < sorted.length && sorted[n]!.x0 < reach; n++) {
      const next = sorted[n]!;
      if (Math.abs(next.base - item.base) >= 0.1 * item.size) continue;
      // Cut back a word space short of the next run: the cell's text reads "192, 26406576", not glued.
      return next.x0 > item.x0 + OVERDRAWN * item.size ? { ...item, x1: next.x0 - 2 * WORD_GAP * item.size } : item;
    }
    return item;
  });
}

/** A footnote mark: at most this many characters, raised, in type this much smaller than the word before it… */
const MARK_CHARS = 4;
const MARK_SIZE = 0.8;
/** …and within this many of that word's font sizes after it. */
const MARK_GAP = 0.5;

/** Whether an item is a footnote mark raised after `prev` ("used⁽ᶜ⁾", "Provisions⁴"): one piece with it. */
function footnoteMark(item: TextItem, prev: TextItem): boolean {
  return (
    item.text.trim().length <= MARK_CHARS &&
    item.size <= MARK_SIZE * prev.size &&
    prev.base - item.base >= 0.2 * prev.size &&
    item.x0 - prev.x1 <= MARK_GAP * prev.size
  );
}

/** A currency sign standing alone: accounting layouts set it flush left in the amount's cell. */
const CURRENCY_SIGN = /^(?:[$€£¥₹]|[A-Z]{0,2}\$)$/u;

/**
 * A line's pieces: its items (sorted left to right, cut back to their cells: withinCells) joined
 * where they touch or overlap, and cut where a value meets anything but a touching run
 * ("2024-05-30" | "East"). A footnote mark raised after a word is one piece with it.
 */
export function linePieces(items: readonly TextItem[]): Piece[] {
  const sorted = withinCells([...items].sort((a, b) => a.x0 - b.x0));
  const out: TextItem[][] = [];
  let right = Number.NEGATIVE_INFINITY;
  for (const item of sorted) {
    const run = out.at(-1);
    if (run && (item.x0 - right <= WORD_GAP * item.size * 0.5 || footnoteMark(item, run.at(-1)!))) run.push(item);
    else out.push([item]);
    right = Math.max(right, item.x1);
  }
  const pieces = out.map(pieceOf);
  return pieces.flatMap((p, k) => (standsApart(pieces, k) ? valuesApart(p) : [p]));
}

/** A piece stands apart on its line when no other is this near (font sizes): not a word among the words of a cell. */
const APART = 1;

const standsApart = (pieces: readonly Piece[], k: number): boolean => {
  const p = pieces[k]!;
  const near = (q: Piece | undefined): boolean => q !== undefined && Math.max(q.x0 - p.x1, p.x0 - q.x1) < APART * p.size;
  return !near(pieces[k - 1]) && !near(pieces[k + 1]);
};

/** At most this many words of figures in one string are read apart (spacedValues: a row's cells, not a hostile line of thousands). */
const MAX_SPACED = 32;

const AMOUNT_SIGN = new RegExp(`[%${CURRENCY_SIGNS}]`, "u");

/** A value as typeCell reads it: a number, a date. */
const isValue = (text: string): boolean => typeof typeCell(text).value !== "string";

/**
 * The values of a string of them a space apart, the longest first from the left, where the whole
 * is none; null for anything else. A producer that sets a row's cells as one string leaves one space
 * between two wide figures ("15,460.00 141,055.66" in a fixed-width report, "$7,567.02 164,338"):
 * two cells. A number grouped by spaces ("12 345", "1 234,56") is one value; words among them
 * ("Mar 15, 2024", "$ 1,234", a code) or a bare integer ("103 (1)") leave the string whole.
 */
export function spacedValues(text: string): string[] | null {
  const words = text.split(" ");
  if (words.length < 2 || words.length > MAX_SPACED || words.some((w) => !/\d/u.test(w)) || isValue(text)) return null;
  const values: string[] = [];
  for (let i = 0; i < words.length;) {
    let j = words.length;
    while (j > i && !isValue(words.slice(i, j).join(" "))) j--;
    if (j === i) return null;
    values.push(words.slice(i, j).join(" "));
    i = j;
  }
  return values.every(amountLike) ? values : null;
}

/**
 * A value that is a figure of a table's body, not a bare integer: decimals or groups, a percent or
 * a currency sign, or a date. Bare integers a space apart are too often one cell ("Section 103 (1)",
 * a reference, a range).
 */
const amountLike = (v: string): boolean => {
  const typed = typeCell(v);
  return typed.value instanceof Date || (typeof typed.value === "number" && (/\d[.,\u00a0\u202f ]\d/u.test(v) || AMOUNT_SIGN.test(v)));
};

/**
 * A piece of one run holding values a space apart (spacedValues), standing apart on its line, as a
 * piece a value, each where its characters' share of the run puts it (figures are set in one width).
 */
function valuesApart(piece: Piece): Piece[] {
  const item = piece.items.length === 1 ? piece.items[0]! : undefined;
  const values = item && !piece.value ? spacedValues(item.text) : null;
  if (!item || !values) return [piece];
  const length = [...item.text].length;
  const at = (k: number): number => item.x0 + ((item.x1 - item.x0) * k) / length;
  let from = 0;
  return values.map((v) => {
    const n = [...v].length;
    // Only the first value was started by whatever started the run (TextItem.spaceMove).
    const p = pieceOf([{ ...item, text: v, x0: at(from), x1: at(from + n), ...(from > 0 ? { spaceMove: false } : {}) }]);
    from += n + 1;
    return p;
  });
}

/**
 * A region's lines with each currency sign that stands alone, where no figure of the region
 * stands (bodyFigure: a header's year may), made one piece with the amount after it on its line,
 * however far apart: a statement's "$" flush left in its cell, the amount flush right ("$ 88,135").
 * A sign among a column's figures (a bulletin's "$" marking a value of that column) stays a piece
 * of its own.
 */
export function withCurrencySigns<L extends PieceLine>(lines: readonly L[]): L[] {
  const sign = (p: Piece): boolean => CURRENCY_SIGN.test(pieceText(p));
  const others = lines.flatMap((l) => l.pieces.filter((p) => !sign(p) && bodyFigure(pieceText(p))));
  return lines.map((line) => {
    if (!line.pieces.some(sign)) return line;
    const pieces = [...line.pieces];
    for (let k = pieces.length - 2; k >= 0; k--) {
      const [s, amount] = [pieces[k]!, pieces[k + 1]!];
      if (!sign(s) || !amount.value || !/^\(?[\d.]/u.test(pieceText(amount))) continue;
      if (others.some((p) => p.x0 < s.x1 && p.x1 > s.x0)) continue;
      pieces.splice(k, 2, pieceOf([...s.items, ...amount.items]));
    }
    return { ...line, pieces };
  });
}

/** A line of text items (as groupLines gives it) with its pieces: on its first item's baseline, at its largest size. */
export function pieceLine(items: TextItem[]): PieceLine & { items: TextItem[] } {
  return { items, pieces: linePieces(items), base: items[0]!.base, size: maxOf(items, (i) => i.size, items[0]!.size) };
}

interface Gap {
  x0: number;
  x1: number;
}

/** The x-intervals covered by at most `allow` lines, at least MIN_GAP wide, inside [lo, hi]. */
function emptyIntervals(lines: readonly PieceLine[], allow: number, lo: number, hi: number): Gap[] {
  const events: [number, number][] = [];
  for (const line of lines) {
    // A line covers the union of its pieces: merge its own overlapping pieces first.
    let cur: Gap | null = null;
    for (const p of line.pieces) {
      if (cur && p.x0 <= cur.x1) cur.x1 = Math.max(cur.x1, p.x1);
      else {
        if (cur) events.push([cur.x0, 1], [cur.x1, -1]);
        cur = { x0: p.x0, x1: p.x1 };
      }
    }
    if (cur) events.push([cur.x0, 1], [cur.x1, -1]);
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const gaps: Gap[] = [];
  let depth = 0;
  let start = lo;
  for (const [x, d] of events) {
    const before = depth;
    depth += d;
    if (before <= allow && depth > allow && x - start >= MIN_GAP && start >= lo) gaps.push({ x0: start, x1: Math.min(x, hi) });
    if (before > allow && depth <= allow) start = x;
  }
  return gaps.filter((g) => g.x0 > lo && g.x1 < hi);
}

/** The pieces of a line on each side of a gap, nearest first (null when that side is empty). */
function around(line: PieceLine, g: Gap): [Piece | null, Piece | null] {
  let left: Piece | null = null;
  let right: Piece | null = null;
  for (const p of line.pieces) {
    if (p.x1 <= g.x0 + 0.01 && (!left || p.x1 > left.x1)) left = p;
    if (p.x0 >= g.x1 - 0.01 && (!right || p.x0 < right.x0)) right = p;
  }
  return [left, right];
}

/**
 * Two pieces either side of a gap that read as one value together ("$" "0.61", "98" "452" with a
 * space for thousands), or a list marker before its text, when set close (a currency sign at its
 * cell's edge is the value's, however far from it).
 */
function readAsOne(l: Piece, r: Piece, size: number): boolean {
  const close = r.x0 - l.x1 <= WORD_SPACE * 1.5 * size;
  const sign = /^[$€£¥₹]$/.test(pieceText(l)) || pieceText(r) === "%";
  return (close || sign) && (isMarker(l.items) || isValueText(`${pieceText(l)} ${pieceText(r)}`));
}

/** Gaps no wider than a word space and (on two lines or more) all of one width: spacing inside a column. */
function wordSpacing(widths: readonly number[], size: number): boolean {
  const widest = maxOf(widths, (w) => w);
  const spread = widest - minOf(widths, (w) => w);
  return widest <= WORD_SPACE * size && (widths.length < 2 || spread <= 0.12 * size);
}

/**
 * Whether a river is the word space of a phrase: the words of a phrase straddle it, a word space
 * apart, on a few lines, and every other line leaves it wide open, with nothing there in line with
 * the words right of it. "Legislative District | 1" over a column of counts, a title's "Jan |
 * Voter" over a table's columns. Columns set a word space apart have such gaps on most of their
 * lines, or their cells line up with the cells of the lines set wider. `phrases` and `wide` are the
 * pieces right of the river on those lines; `lines` counts the lines with text on both sides.
 */
function phraseSpace(phrases: readonly Piece[], wide: readonly Piece[], lines: number): boolean {
  if (!phrases.length || phrases.length + wide.length !== lines || wide.length < 2 * phrases.length) return false;
  const near = (a: number, b: number): boolean => Math.abs(a - b) <= ALIGN;
  return !phrases.some((p) => wide.some((w) => near(p.x0, w.x0) || near(p.x1, w.x1)));
}

/** A label on a line of its own set this close (font sizes, baseline to baseline) to a row beside it is centred on rows. */
const BESIDE = 1;

/** Whether two lines stand under a line apart (BESIDE). */
export const besideLine = (a: PieceLine, b: PieceLine): boolean => Math.abs(a.base - b.base) < BESIDE * Math.max(a.size, b.size);

/**
 * The piece right of a gap beside the label on line k, when the label stands alone left of it,
 * centred on the rows next to it (LaTeX's \multirow: "Tying Knots" half a line under "Random"
 * and over "Task-Level"): the nearest piece right of the gap on the line just above or below,
 * under a line apart, that has nothing left of the gap. Null when there is none.
 */
function besideLabel(lines: readonly PieceLine[], k: number, g: Gap): Piece | null {
  const line = lines[k]!;
  if (line.pieces.some((p) => p.x1 > g.x0 + 0.01)) return null;
  for (const other of [lines[k - 1], lines[k + 1]]) {
    if (!other || !besideLine(line, other)) continue;
    const [l, r] = around(other, g);
    if (!l && r) return r;
  }
  return null;
}

/**
 * Whether the label on line k, alone left of the gap, is centred between the two lines around it,
 * each of which has text right of the gap and none left of it (a \multirow label on two rows): it
 * stands beside both, and counts as two lines with text on both sides of the gap.
 */
function centredOnTwo(lines: readonly PieceLine[], k: number, g: Gap): boolean {
  const [above, below] = [lines[k - 1], lines[k + 1]];
  const line = lines[k]!;
  if (
    !around(line, g)[0] ||
    line.pieces.some((p) => p.x1 > g.x0 + 0.01) ||
    !above ||
    !below ||
    !besideLine(line, above) ||
    !besideLine(line, below)
  )
    return false;
  return [above, below].every((o) => {
    const [l, r] = around(o, g);
    return !l && r !== null;
  });
}

/** The pieces either side of a gap on line k (around), the right one beside a centred label (besideLabel). */
function besideGap(lines: readonly PieceLine[], k: number, g: Gap): [Piece | null, Piece | null] {
  const [l, r] = around(lines[k]!, g);
  return [l, r ?? (l ? besideLabel(lines, k, g) : null)];
}

/**
 * The lines of one piece that are labels centred on the rows beside them (LaTeX's \multirow): a
 * line under a line apart (BESIDE) has text only right of the label, a word space clear of it.
 */
function besideRows(lines: readonly PieceLine[]): Set<PieceLine> {
  const out = new Set<PieceLine>();
  lines.forEach((line, k) => {
    if (line.pieces.length !== 1) return;
    const end = line.pieces[0]!.x1 + WORD_SPACE * line.size;
    const nextTo = (other: PieceLine | undefined): boolean =>
      other !== undefined && besideLine(line, other) && other.pieces.length > 0 && other.pieces.every((p) => p.x0 > end);
    if (nextTo(lines[k - 1]) || nextTo(lines[k + 1])) out.add(line);
  });
  return out;
}

/**
 * Whether a gap is a column gap (see the header) rather than a word space inside a column. Two
 * pieces that read as one value together and a list marker before its text are one cell's
 * (readAsOne), however regularly they line up.
 */
function isColumnGap(lines: readonly PieceLine[], g: Gap): boolean {
  const widths: number[] = [];
  let sizes = 0;
  let values = 0;
  let joined = 0;
  const wide: Piece[] = [];
  const phrases: Piece[] = [];
  for (const [k, line] of lines.entries()) {
    const [l, r] = besideGap(lines, k, g);
    if (!l || !r) continue;
    const gap = r.x0 - l.x1;
    if (gap > WORD_SPACE * line.size) wide.push(r);
    else if (!l.value && gap >= MIN_WORD_SPACE * line.size) phrases.push(r);
    widths.push(gap);
    sizes += line.size;
    if (l.value || r.value) values++;
    if (readAsOne(l, r, line.size)) joined++;
  }
  // A column gap has text on both sides on two lines at least (one, in a table of two lines).
  const centred = lines.filter((_, k) => centredOnTwo(lines, k, g)).length;
  if (widths.length + centred < Math.min(2, lines.length)) return false;
  if (phraseSpace(phrases, wide, widths.length)) return false;
  if (joined >= 0.8 * widths.length) return false;
  if (values * 2 >= widths.length) return true;
  return !wordSpacing(widths, sizes / widths.length);
}

/** A run of text set as one phrase this many words long or longer is a sentence or a title. */
const RUNNING_WORDS = 4;

/**
 * Whether a line is a title: running text (a phrase of several words) and no value standing
 * alone ("STATE OF ARIZONA REGISTRATION REPORT … Page: 5", "2024 Jan Voter Registration - January
 * 02, 2024").
 */
export function running(line: PieceLine): boolean {
  const groups = phraseGroups(line);
  return groups.some((g) => g.length >= RUNNING_WORDS) && groups.every((g) => g.some((p) => !p.value));
}

/** Gaps narrower than this (font sizes) between a line's words are a justified line's spaces. */
const JUSTIFIED_SPACE = 1;
/** A line of a paragraph holds this many words or more. */
const PARAGRAPH_WORDS = 6;

/**
 * Whether a line is a line of a paragraph: running text, or a sentence's worth of words (`minWords`)
 * with no gap wider than a justified line's spaces and no value standing alone (a tight table's row
 * has its numbers apart).
 */
export function paragraphLine(line: PieceLine, minWords = PARAGRAPH_WORDS): boolean {
  if (running(line)) return true;
  if (line.pieces.some((p) => p.value)) return false;
  // A gap wider than a justified line's spaces after the farthest the pieces before it reach.
  let right = line.pieces[0]?.x1 ?? 0;
  for (const p of line.pieces.slice(1)) {
    if (p.x0 - right > JUSTIFIED_SPACE * line.size) return false;
    right = Math.max(right, p.x1);
  }
  return line.pieces.map(pieceText).join(" ").split(" ").filter(Boolean).length >= minWords;
}

/**
 * Index of the first line holding a value: the lines above it are the header (0: none). A title
 * set above the header (running) holds no value of the table, whatever dates or numbers are in it,
 * nor does a line of years alone (the years a header groups its columns under).
 */
const headerEnd = (lines: readonly PieceLine[]): number => {
  const left = minOf(lines, (l) => l.pieces[0]?.x0 ?? Number.POSITIVE_INFINITY);
  const years = (l: PieceLine): boolean =>
    l.pieces.every((p) => YEAR.test(pieceText(p))) ||
    (l.pieces[0]!.x0 > left + l.size && l.pieces.every((p) => !p.value || YEAR.test(pieceText(p))));
  return Math.max(
    0,
    lines.findIndex((l) => !running(l) && l.pieces.some((p) => p.value) && !years(l)),
  );
};

/**
 * The lines with a header set over several lines at their top (the text-only lines before the first
 * line holding a value) merged into one: a group header and its second line ("The Judges Panel" /
 * "(in random order)") cross the rivers of the columns under them as one row, not as two; and a
 * column that only one of the header's lines fills ("Info", set turned between the lines of
 * "Executed / Elements") is a column of the header row all the same.
 */
export function headerAsOne(lines: readonly PieceLine[]): readonly PieceLine[] {
  const head = headerEnd(lines);
  if (head < 2) return lines;
  const pieces = lines
    .slice(0, head)
    .flatMap((l) => l.pieces)
    .sort((a, b) => a.x0 - b.x0);
  return [{ base: lines[head - 1]!.base, size: lines[0]!.size, pieces }, ...lines.slice(head)];
}

/** A group header's middle is on its labels' middle within this share of their width. */
const CENTRED = 0.08;

/**
 * The lines without the group headers of a header set over several lines: a header label centred
 * over the gap between two labels of a header line under it ("Easy" over "Seq. | Token",
 * LaTeX's \multicolumn over a \cmidrule). Read as one row with the rest of the header
 * (headerAsOne), a group header would close the rivers of the columns it groups; it spans them.
 * A label set lower than the others, between a header's lines, is no group header.
 */
function withoutGroupHeaders(lines: readonly PieceLine[]): readonly PieceLine[] {
  const head = headerEnd(lines);
  const mid = (p: Gap): number => (p.x0 + p.x1) / 2;
  const groups = new Set<Piece>();
  // Over labels i..j: across a gap between two of them, its middle on theirs (within CENTRED); or,
  // a line apart over them (`apart`: not a label set between a header's lines), over two labels
  // side by side, within their span, its middle in the gap between them (a header centred on two
  // cells whose labels keep to other sides of them: Word's right-to-left tables).
  const centredOver = (p: Piece, under: readonly Piece[], apart: boolean): boolean =>
    under.some((a, i) =>
      under.slice(i + 1).some((b, n) => {
        const crosses = under.slice(i, i + n + 2).some((l, k, run) => k > 0 && p.x0 < l.x0 && p.x1 > run[k - 1]!.x1);
        const between = apart && n === 0 && p.x0 >= a.x0 && p.x1 <= b.x1 && mid(p) > a.x1 && mid(p) < b.x0;
        return crosses && (between || Math.abs(mid(p) - (a.x0 + b.x1) / 2) <= CENTRED * (b.x1 - a.x0));
      }),
    );
  const left = minOf(lines, (l) => l.pieces[0]?.x0 ?? Number.POSITIVE_INFINITY);
  const labels = lines[head];
  // Under it: the header's lower lines, and the first line of values when its first column is
  // empty (column labels that are numbers: "20 | 50 | 100", years; not a row of the body), or when
  // the header runs over two of its labels, values all ("Speckle noise" over "35% 45% 65%" beside
  // "Method"; a label over a column the body leaves empty, between two of its values, runs over neither).
  const open = labels?.pieces[0] !== undefined && labels.pieces[0].x0 > left + labels.size;
  // Over two values or more, and nothing else: a word of the body cut in two pieces ("þ" and
  // "108%") is no row of column labels.
  const overValues = (p: Piece, l: PieceLine): boolean => {
    const below = l.pieces.filter((q) => q.x0 < p.x1 && q.x1 > p.x0);
    return below.length >= 2 && below.every((q) => q.value);
  };
  const over = (p: Piece, l: PieceLine): boolean => l !== labels || open || overValues(p, l);
  const under = lines.slice(0, head + 1);
  for (let k = 0; k + 1 < under.length; k++) {
    for (const p of lines[k]!.pieces)
      if (under.slice(k + 1).some((l) => over(p, l) && centredOver(p, l.pieces, !besideLine(lines[k]!, l)))) groups.add(p);
  }
  if (!groups.size) return lines;
  return lines.map((l) => ({ ...l, pieces: l.pieces.filter((p) => !groups.has(p)) })).filter((l) => l.pieces.length > 0);
}

/** A column separator: where the columns part, and whether the header alone shows it (see headerOnly). */
export interface Separator {
  x: number;
  pinned: boolean;
}

/** Header pieces that overlap one another (a label set on two lines) as one block each, left to right. */
function blocks(pieces: readonly Gap[]): Gap[] {
  const out: Gap[] = [];
  for (const p of [...pieces].sort((a, b) => a.x0 - b.x0)) {
    const last = out.at(-1);
    if (last && p.x0 <= last.x1) last.x1 = Math.max(last.x1, p.x1);
    else out.push({ x0: p.x0, x1: p.x1 });
  }
  return out;
}

/**
 * Header-only columns in a river: header labels (pieces stacked over one another taken together)
 * lying wholly inside it, a word space clear of both banks, when the column right of the river has
 * a label of its own over its text on the header's last line ("Ref" between the judges' marks and
 * "Scores / of Panel", over a column the body leaves empty). Each heads a column of its own.
 * Without a label of its own on the right ("Qty" left-aligned over right-aligned numbers, a group
 * header above it) the label heads the column to its right, and none is returned.
 */
function headerOnly(g: Gap, next: number, head: readonly PieceLine[]): Gap[] {
  const pieces = head.flatMap((l) => l.pieces);
  if (!pieces.length) return [];
  const space = WORD_SPACE * maxOf(pieces, (p) => p.size);
  // A label's words are one block: a title's words set over the columns ("STATE OF ARIZONA …")
  // cross the rivers together and head no column of their own.
  const inner = blocks(head.flatMap(phrases)).filter((b) => b.x0 > g.x0 + space && b.x1 < g.x1 - space);
  const labels = head.findLast((l) => l.pieces.length >= 2) ?? head.at(-1)!;
  return inner.length && labels.pieces.some((b) => b.x1 > g.x1 && b.x0 < next) ? inner : [];
}

/** A line's pieces grouped by phrase: no gap wider than a word space inside one. */
function phraseGroups(line: PieceLine): Piece[][] {
  const out: Piece[][] = [];
  let right = Number.NEGATIVE_INFINITY;
  for (const p of line.pieces) {
    if (out.length && p.x0 - right <= WORD_SPACE * line.size) out.at(-1)!.push(p);
    else out.push([p]);
    right = Math.max(right, p.x1);
  }
  return out;
}

/** A line's phrases (phraseGroups) as spans. */
const phrases = (line: PieceLine): Gap[] => phraseGroups(line).map((g) => ({ x0: g[0]!.x0, x1: maxOf(g, (p) => p.x1) }));

/**
 * Where a river parts its columns: its middle, or before a piece that starts inside it (a
 * left-aligned header over right-aligned numbers) — not one that goes on with a phrase from the
 * river's left bank ("Legislative District 1" across the river before a column of counts).
 * `starts` are where the lines' phrases start, sorted.
 */
function partAt(starts: readonly number[], g: Gap): number {
  // The first phrase starting right of the river's left bank.
  let [lo, hi] = [0, starts.length];
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (starts[m]! > g.x0) hi = m;
    else lo = m + 1;
  }
  const first = starts[lo];
  return Math.max(g.x0, Math.min((g.x0 + g.x1) / 2, first !== undefined && first < g.x1 ? first - 0.5 : Number.POSITIVE_INFINITY));
}

/** Values this far apart (font sizes) on one line are two cells, whatever the other lines hold. */
export const VALUES_APART = 2;

/**
 * A river the lines allowed to cross it (CROSSING) cross with values only, set VALUES_APART from
 * each other — a sparse row, an invoice's one item with its quantity and unit price over lines of
 * amounts alone, not a title or a section row running across — parted into the openings between
 * those values, where no line crosses. Else the river itself.
 */
function partedByValues(lines: readonly PieceLine[], g: Gap): Gap[] {
  const crossing = lines.flatMap((l) => l.pieces.filter((p) => p.x1 > g.x0 && p.x0 < g.x1));
  // The pieces wholly inside; those over a bank are the text either side going on into it.
  const inside = crossing.filter((p) => p.x0 >= g.x0 && p.x1 <= g.x1);
  if (!inside.length || inside.some(labelPiece)) return [g];
  const open: Gap[] = [];
  let start = g.x0;
  for (const p of crossing.sort((a, b) => a.x0 - b.x0)) {
    const room = start > g.x0 ? VALUES_APART * p.size : MIN_GAP;
    if (p.x0 > g.x0 && p.x0 - start < room) return [g];
    if (p.x0 > g.x0) open.push({ x0: start, x1: p.x0 });
    start = Math.max(start, p.x1);
  }
  return g.x1 - start >= MIN_GAP ? [...open, { x0: start, x1: g.x1 }] : open;
}

/** Lines with values on both sides of a river that a label crosses, at least (see spannedRivers). */
const SPANNED_VALUES = 2;
/** A label spanning two columns of values has at most this many words (more are the text beside the table). */
const SPANNING_WORDS = 3;

/**
 * Rivers that one line more than `allow` crosses, with short labels only (SPANNING_WORDS), between
 * columns of values: a label spanning them ("Overall accuracy" over the Recall and F1 columns
 * beside its 0.881, "Accuracy (%)" over two datasets' scores) in a table too small for CROSSING to
 * let any line cross. Kept where no river of `open` lies, when two lines or more have text on both
 * sides and SPANNED_VALUES of them values on both sides.
 */
function spannedRivers(region: readonly PieceLine[], open: readonly Gap[], allow: number, lo: number, hi: number): Gap[] {
  return emptyIntervals(region, allow + 1, lo, hi).filter((g) => {
    if (open.some((o) => o.x0 < g.x1 && o.x1 > g.x0)) return false;
    const crossing = region.flatMap((l) => l.pieces.filter((p) => p.x1 > g.x0 && p.x0 < g.x1));
    if (crossing.some((p) => p.value || pieceText(p).split(" ").length > SPANNING_WORDS)) return false;
    const sides = region.map((l) => around(l, g)).filter(([l, r]) => l && r);
    return sides.length >= 2 && sides.filter(([l, r]) => l!.value && r!.value).length >= SPANNED_VALUES;
  });
}

/**
 * The x positions where a table region's columns part (each the middle of its river), left to
 * right. `lines` are the region's text lines.
 */
export function columnGaps(lines: readonly PieceLine[]): number[] {
  return columnSeparators(lines).map((s) => s.x);
}

/** The separators of a table region's columns (see columnGaps), header-only columns' pinned. */
export function columnSeparators(lines: readonly PieceLine[]): Separator[] {
  if (!lines.length) return [];
  const all = lines.flatMap((l) => l.pieces);
  const [lo, hi] = [minOf(all, (p) => p.x0), maxOf(all, (p) => p.x1)];
  // Rivers run between the lines of several cells; a line of one piece (a section row, a title, a
  // wrapped cell's next line) may cross them freely: it is a cell spanning columns — but for a
  // label centred on the rows beside it (besideRows), a cell of its own column.
  const merged = headerAsOne(withoutGroupHeaders(lines));
  const beside = besideRows(merged);
  const rows = merged.filter((l) => l.pieces.length >= 2 || beside.has(l));
  const allow = rows.length >= 5 ? Math.floor(CROSSING * rows.length) : 0;
  const region = rows.length >= 2 ? rows : lines;
  const open = emptyIntervals(region, allow, lo, hi);
  const gaps = [...open, ...spannedRivers(region, open, allow, lo, hi)]
    .sort((a, b) => a.x0 - b.x0)
    .flatMap((g) => (allow ? partedByValues(region, g) : [g]))
    .filter((g) => isColumnGap(lines, g));
  const head = lines.slice(0, headerEnd(lines));
  const starts = lines
    .flatMap(phrases)
    .map((p) => p.x0)
    .sort((a, b) => a - b);
  return gaps.flatMap((g, k): Separator[] => {
    const own = headerOnly(g, gaps[k + 1]?.x0 ?? hi, head);
    if (!own.length) return [{ x: partAt(starts, g), pinned: false }];
    const edges = [g.x0, ...own.flatMap((b) => [b.x0, b.x1]), g.x1];
    return edges.flatMap((x, i) =>
      i % 2 ? [] : [{ x: i + 2 < edges.length ? (x + edges[i + 1]!) / 2 : partAt(starts, { x0: x, x1: edges[i + 1]! }), pinned: true }],
    );
  });
}
