/**
 * Tables ruled by rows only: a rule over the header, one under it and one at the foot, all of one
 * width, and no vertical rules (LaTeX's booktabs, the house style of papers and of many reports).
 * The rules touch nothing, so the lattice finder sees no grid; and on a page set in two columns the
 * table's lines share their baselines with the other column's text, so the stream finder reads
 * them as one with it. The rules tell where the table is: from its first rule to its last, and
 * between their ends. The text there is read as a whitespace table (stream.ts), which refuses it
 * unless it is one. A run of rules of one width breaks at a band of running text between two of
 * them (a paragraph between two tables of a column's width) or at a tall band holding no text. Pure.
 */
import { pieceLine, pieceText, running } from "./columns.ts";
import { groupLines, textMiddle } from "./lines.ts";
import { streamTable } from "./stream.ts";
import type { Rule, Table, TextItem } from "./types.ts";

/** Positions closer than this (points) are the same. */
const TOL = 2;
/** A rule shorter than this (points) rules no table (underlines, marks). */
const MIN_WIDTH = 40;
/** A run of text holding this many words or more is a line of a paragraph, not a cell. */
const SENTENCE_WORDS = 6;
/** A row-ruled table has a rule over its header, one under it and one at its foot. */
const MIN_RULES = 3;
/** Above this many rules a page is a drawing: left alone (as lattice.ts does). */
const MAX_RULES = 3000;

const horizontal = (r: Rule): boolean => r.y1 - r.y0 < TOL && r.x1 - r.x0 >= MIN_WIDTH;

/** Index of the first item (sorted by middle) whose middle is below y (y grows downwards). */
function firstBelow(sorted: readonly TextItem[], y: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (textMiddle(sorted[mid]!) <= y) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The items (sorted by middle) between two rules' ends, from one rule's height to the other's. */
function within(sorted: readonly TextItem[], x0: number, x1: number, top: number, bottom: number): TextItem[] {
  const out: TextItem[] = [];
  for (let k = firstBelow(sorted, top); k < sorted.length && textMiddle(sorted[k]!) < bottom; k++) {
    const i = sorted[k]!;
    if (i.x0 >= x0 - TOL && i.x1 <= x1 + TOL) out.push(i);
  }
  return out;
}

/** A line of one run of this many words or more from one end of the rules to the other is a justified line of text. */
const JUSTIFIED_WORDS = 4;

/** Whether the lines between two rules (from x0 to x1) are running text (a paragraph), not rows. */
function prose(items: readonly TextItem[], x0: number, x1: number): boolean {
  const lines = groupLines(items).map(pieceLine);
  // A line of running text: words set as one phrase, one run of text holding a sentence's words,
  // or a few words justified from one end of the rules to the other (a paragraph in a narrow column).
  const sentence = (l: (typeof lines)[number]): boolean =>
    running(l) ||
    l.pieces.some((p) => !p.value && pieceText(p).split(" ").length >= SENTENCE_WORDS) ||
    (l.pieces.length === 1 &&
      pieceText(l.pieces[0]!).split(" ").length >= JUSTIFIED_WORDS &&
      l.pieces[0]!.x0 <= x0 + TOL &&
      l.pieces[0]!.x1 >= x1 - TOL);
  return lines.length > 0 && lines.filter(sentence).length * 2 > lines.length;
}

/** Rules further apart than this (points) with no text between them are two tables' foot and head. */
const EMPTY_BAND = 12;

/**
 * Row-ruled tables among a page's text items (those no other table took), with the items each
 * took. Rules of one width (ends within TOL), stacked, are the candidates.
 */
export function rowRuledTables(rules: readonly Rule[], items: readonly TextItem[]): { table: Table; items: Set<TextItem> }[] {
  if (rules.length > MAX_RULES) return [];
  const hs = rules.filter(horizontal).sort((a, b) => a.x0 - b.x0 || a.x1 - b.x1 || a.y0 - b.y0);
  // Rules of one width, each group top to bottom.
  const groups: Rule[][] = [];
  for (const r of hs) {
    const g = groups.find((x) => Math.abs(x[0]!.x0 - r.x0) <= TOL && Math.abs(x[0]!.x1 - r.x1) <= TOL);
    if (g) g.push(r);
    else groups.push([r]);
  }
  const found: { table: Table; items: Set<TextItem> }[] = [];
  const taken = new Set<TextItem>();
  const sorted = [...items].sort((a, b) => textMiddle(a) - textMiddle(b));
  for (const group of groups.filter((g) => g.length >= 2)) {
    const ys = [...new Set(group.map((r) => r.y0))].sort((a, b) => a - b);
    const [x0, x1] = [Math.min(...group.map((r) => r.x0)), Math.max(...group.map((r) => r.x1))];
    for (const [top, bottom] of runs(sorted, x0, x1, ys)) {
      const inside = within(sorted, x0, x1, top, bottom).filter((i) => !taken.has(i));
      const table = inside.length ? streamTable(groupLines(inside)) : null;
      if (!table) continue;
      found.push({ table, items: new Set(inside) });
      for (const i of inside) taken.add(i);
    }
  }
  return found;
}

/**
 * The runs of rules (first and last height) whose bands hold no paragraph, MIN_RULES or more each;
 * a run also breaks at a tall band with no text (the space between one table's foot rule and the
 * next one's head rule, the text of a table between them taken already).
 */
function runs(sorted: readonly TextItem[], x0: number, x1: number, ys: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  let start = 0;
  for (let k = 1; k <= ys.length; k++) {
    if (k < ys.length) {
      const band = within(sorted, x0, x1, ys[k - 1]!, ys[k]!);
      const apart = band.length === 0 && ys[k]! - ys[k - 1]! > EMPTY_BAND;
      if (!apart && !prose(band, x0, x1)) continue;
    }
    if (k - 1 - start >= MIN_RULES - 1) out.push([ys[start]!, ys[k - 1]!]);
    start = k;
  }
  return out;
}
