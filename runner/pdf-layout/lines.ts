/**
 * Text runs → lines → segments. A line is every run on one baseline; a segment is a stretch of a
 * line with no gap wider than a few word spaces, so two columns (or two table cells) on the same
 * baseline become two segments. Pure.
 */
import { readingOrder, RTL_SCRIPTS, wordOrder } from "./bidi.ts";
import type { Segment, TextItem } from "./types.ts";
import { maxOf, minOf } from "./minmax.ts";

/** Where an item (or a line) stands, up and down: the middle of its letters (y grows downwards). */
export const textMiddle = (i: { base: number; size: number }): number => i.base - 0.3 * i.size;

/** Baselines closer than this share a line (fraction of the font size; absorbs small sub/superscripts). */
const SAME_LINE = 0.35;
/** A gap wider than this (fraction of the font size) ends a segment: more than a justified word space. */
const SEGMENT_GAP = 0.9;
/** A gap wider than this (fraction of the font size) between two runs is a word space, as pdfjs reckons. */
export const WORD_GAP = 0.1;
/** A run starting this far (font sizes) inside the text before it is drawn over it: a cell's text clipped under the next (columns.ts). */
export const OVERDRAWN = 1;
/**
 * A run starting this far (font sizes) inside the text before it on its baseline is another word,
 * drawn over the end of the first (partsWords): about a whole letter back, as a producer placing
 * each word on its own does when its font is wider than the one it measured with. Kerning and an
 * italic letter's overhang overlap the next run by a fifth of an em at most (where poppler ends a
 * word: its minDupBreakOverlap), and pdftotext reads a run started back over the last letter of
 * the one before as another word.
 */
const OVERLAP_BREAK = 0.5;

export function segmentOf(items: TextItem[]): Segment {
  const size = maxOf(
    items.filter((i) => !i.opaque),
    (i) => i.size,
    items[0]!.size,
  );
  const base = items.reduce((b, i) => (i.size === size ? i.base : b), items[0]!.base);
  return {
    items,
    x0: minOf(items, (i) => i.x0),
    x1: maxOf(items, (i) => i.x1),
    base,
    top: base - 0.8 * size,
    bottom: base + 0.25 * size,
    size,
  };
}

/** Items grouped by baseline, each line sorted left to right (scripts joined to their line). */
export function groupLines(items: readonly TextItem[]): TextItem[][] {
  const sorted = [...items].sort((a, b) => a.base - b.base || a.x0 - b.x0);
  const lines: TextItem[][] = [];
  let current: TextItem[] = [];
  let base = Number.NaN;
  let size = 0;
  for (const item of sorted) {
    if (current.length && Math.abs(item.base - base) <= SAME_LINE * Math.min(size, item.size)) {
      // A glyph without text (a big delimiter of a display: TeX's bracket, set higher) does not
      // set the line's baseline: the first text on the line does.
      if (current.every((c) => c.opaque) && !item.opaque) [base, size] = [item.base, item.size];
      current.push(item);
      continue;
    }
    if (current.length) lines.push(current);
    current = [item];
    base = item.base;
    size = item.size;
  }
  if (current.length) lines.push(current);
  return joinScripts(lines).map((l) => composeAccents(stackedScripts(l.sort((a, b) => a.x0 - b.x0))));
}

/**
 * Whether an upper and a lower script are stacked: they overlap by a third of the narrower or more
 * (TeX's T^1_s, a binomial's two numbers); a charge set after its subscript ("HCO₃⁻") touches it.
 */
function stacked(a: TextItem, b: TextItem): boolean {
  return Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0) >= 0.3 * Math.min(a.x1 - a.x0, b.x1 - b.x0);
}

/**
 * A superscript set over a subscript (TeX's T^1_s, κ^{−n}_{Nor}) read as two words, the upper
 * first, and the text after the stack as another word: "T1 s S", as pdftotext and MuPDF both part
 * them, where left-to-right order would interleave the two ("κ−Norn") and glue the next letter on
 * ("Ts1S"). A script is smaller type than the line's, a sixth of an em off its baseline; a stack is
 * a stretch of scripts with an upper and a lower one stacked, not set one after the other. `line`
 * is sorted left to right.
 */
function stackedScripts(line: readonly TextItem[]): TextItem[] {
  const text = line.filter((i) => !i.opaque);
  if (text.length < 3) return [...line];
  const main = text.reduce((a, b) => (b.size > a.size ? b : a));
  const side = (i: TextItem): -1 | 0 | 1 =>
    i.opaque || i.size > SCRIPT_SIZE * main.size || Math.abs(i.base - main.base) < main.size / 6 ? 0 : i.base < main.base ? -1 : 1;
  const out: TextItem[] = [];
  let wordAfter = false;
  for (let k = 0; k < line.length;) {
    if (side(line[k]!) === 0) {
      out.push(wordAfter ? { ...line[k]!, spaceBefore: true } : line[k]!);
      wordAfter = false;
      k++;
      continue;
    }
    let end = k;
    while (end < line.length && side(line[end]!) !== 0) end++;
    const run = line.slice(k, end);
    const upper = run.filter((i) => side(i) < 0);
    const lower = run.filter((i) => side(i) > 0);
    wordAfter = upper.some((u) => lower.some((l) => stacked(u, l)));
    out.push(...(wordAfter ? [...upper, { ...lower[0]!, spaceBefore: true }, ...lower.slice(1)] : run));
    k = end;
  }
  return out;
}

/** Spacing accents as TeX and others draw them over a letter, and the combining marks they stand for. */
const ACCENTS: Record<string, string> = {
  "\u02dc": "\u0303",
  "~": "\u0303",
  "\u02c6": "\u0302",
  "^": "\u0302",
  "\u00a8": "\u0308",
  "\u00b4": "\u0301",
  "`": "\u0300",
  "\u00af": "\u0304",
  "\u02c9": "\u0304",
  "\u02d9": "\u0307",
  "\u02da": "\u030a",
  "\u02c7": "\u030c",
  "\u02d8": "\u0306",
  "\u02dd": "\u030b",
};

/** A run of one letter: what TeX puts an accent over. */
const isLetter = (item: TextItem): boolean => [...item.text].length === 1 && /\p{L}/u.test(item.text);

/** Whether the accent run `a` sits over the letter run `l`: they overlap by most of the narrower (an italic letter's accent is set off to the right). */
const over = (a: TextItem, l: TextItem): boolean => Math.min(a.x1, l.x1) - Math.max(a.x0, l.x0) >= 0.4 * Math.min(a.x1 - a.x0, l.x1 - l.x0);

/**
 * An accent drawn as a glyph of its own over a one-letter run (TeX's \tilde{x}, \hat{p}) joined to
 * that letter as its combining mark (x̃), as a reader reads it; poppler does the same.
 */
function composeAccents(items: TextItem[]): TextItem[] {
  const line = items.flatMap((item) => splitAccent(item, items));
  const accents = line.filter((i) => ACCENTS[i.text.trim()] !== undefined);
  if (!accents.length) return line;
  const gone = new Set<TextItem>();
  const out = line.map((item) => {
    if (accents.includes(item)) return item;
    const first = isLetter(item) ? item : firstLetter(item);
    if (!first) return item;
    const accent = accents.find((a) => !gone.has(a) && over(a, first));
    if (!accent) return item;
    gone.add(accent);
    const [head, ...rest] = [...item.text];
    return { ...item, text: (head! + ACCENTS[accent.text.trim()]!).normalize("NFC") + rest.join("") };
  });
  return out.filter((i) => !gone.has(i));
}

/**
 * The first glyph of a run of several that starts with a letter, as a one-letter run of its own
 * width, for an accent drawn over it ("˜" over the "z" of "z, γ", over the "X" of "X, y": pdfjs
 * runs a letter on with the text after it in its font); null for other runs. The run's width is
 * shared among its characters by their usual widths (glyphEms), so a capital before a comma and a
 * space gets the most of it, as it does on the page; at most an em.
 */
function firstLetter(item: TextItem): TextItem | null {
  const chars = [...item.text];
  if (chars.length < 2 || !/\p{L}/u.test(chars[0]!)) return null;
  const share = glyphEms(chars[0]!) / chars.reduce((sum, c) => sum + glyphEms(c), 0);
  const width = Math.min((item.x1 - item.x0) * share, item.size);
  return { ...item, text: chars[0]!, x1: item.x0 + width };
}

/** A character's usual width in ems, roughly as most text fonts draw it: capitals wide, spaces and punctuation narrow. */
const glyphEms = (c: string): number => (/\p{Lu}/u.test(c) ? 0.75 : /[\p{L}\p{N}]/u.test(c) ? 0.5 : 0.3);

/** A spacing accent's width, in font sizes (TeX's tilde and hat are half an em). */
const ACCENT_WIDTH = 0.5;

/**
 * A run that ends in a spacing accent drawn over the one-letter run that follows ("(0) = ˜" then
 * "a": pdfjs joins the accent to the text before it in the same font) cut into its text and the
 * accent, for composeAccents to put the accent on its letter; any other run is kept whole.
 */
function splitAccent(item: TextItem, line: readonly TextItem[]): TextItem[] {
  const chars = [...item.text.trimEnd()];
  if (chars.length < 2 || ACCENTS[chars.at(-1)!] === undefined) return [item];
  const accent = { ...item, text: chars.at(-1)!, x0: Math.max(item.x0, item.x1 - ACCENT_WIDTH * item.size) };
  const under = line.some((l) => isLetter(l) && over(accent, l));
  return under ? [{ ...item, text: chars.slice(0, -1).join(""), x1: accent.x0 }, accent] : [item];
}

/**
 * Whether `s` is an accent of the letter `t`: in its size, drawn over it, its baseline at most an em
 * above t's (TeX raises the accent over a capital, far enough for it to land on a line of its own).
 */
function isAccentOf(s: TextItem, t: TextItem): boolean {
  return (
    ACCENTS[s.text.trim()] !== undefined &&
    isLetter(t) &&
    Math.abs(s.size - t.size) <= 0.15 * t.size &&
    s.base <= t.base + 0.1 * t.size &&
    s.base >= t.base - t.size &&
    over(s, t)
  );
}

/** Smaller type than this share of a run's size may be a superscript or subscript of it. */
const SCRIPT_SIZE = 0.85;

/**
 * Whether `s` is a superscript or subscript of `t`: in smaller type, inside t's glyph band, and
 * touching it ("R²", "x₁", "HCO₃⁻", a footnote mark "total³"), or set over t's last letter (a
 * footnote mark placed on the word's end, which readers read after it). Such a run sits a third of
 * an em off the baseline, far enough to land on a line of its own.
 */
function isScriptOf(s: TextItem, t: TextItem): boolean {
  return (
    !s.opaque &&
    !t.opaque &&
    // A glyph of no width is no letter of a script: a diagram's dot (GeoTopo's Type3 "b").
    s.x1 - s.x0 >= 0.1 * s.size &&
    s.size <= SCRIPT_SIZE * t.size &&
    s.base - 0.8 * s.size >= t.base - 1.15 * t.size &&
    s.base + 0.25 * s.size <= t.base + 0.55 * t.size &&
    ((s.x1 > t.x1 && touches(t.x1, s.x0, s, t)) || (s.x0 < t.x0 && touches(s.x1, t.x0, s, t)) || markOver(s, t))
  );
}

/**
 * Whether `s` is a script of the script `t`, which is set smaller than its line's largest type:
 * x_{i_j} where TeX sets both levels in the one smallest size it has ("=V_{i_j}" under a brace,
 * "i" and "j" both in 6 pt). In t's size or smaller, touching its end, its baseline further off
 * than a continuation's (continuesScript) and at most half t's size.
 */
function isNestedScriptOf(s: TextItem, t: TextItem): boolean {
  const shift = Math.abs(s.base - t.base);
  return (
    !s.opaque &&
    !t.opaque &&
    s.x1 - s.x0 >= 0.1 * s.size &&
    s.size <= 1.05 * t.size &&
    shift >= 0.2 * t.size &&
    shift <= 0.5 * t.size &&
    s.x1 > t.x1 &&
    touches(t.x1, s.x0, s, t)
  );
}

/**
 * Whether `s` is a footnote mark set over the last letter of `t`: raised, at least half t's size
 * and as wide as a glyph (a diagram's dot in a tiny font, drawn at a label's corner, is none), it
 * starts within 0.6 em of t's end and ends by its own size past it.
 */
const markOver = (s: TextItem, t: TextItem): boolean =>
  s.base < t.base - 0.2 * t.size &&
  s.size >= 0.5 * t.size &&
  s.x1 - s.x0 >= 0.3 * s.size &&
  s.x0 > t.x0 &&
  s.x0 >= t.x1 - 0.6 * t.size &&
  s.x0 < t.x1 &&
  s.x1 <= t.x1 + s.size;

/** Whether a run ending at `end` and the next starting at `start` touch: no gap wider than the script, little overlap. */
function touches(end: number, start: number, script: TextItem, base: TextItem): boolean {
  const gap = start - end;
  return gap > -0.25 * base.size && gap < Math.min(0.3 * base.size, script.size);
}

/**
 * Superscripts and subscripts moved onto the line of the run they belong to (see isScriptOf): a
 * script touches its run on one of the nearest lines above or below its own. A script of a script
 * ("HCO₃⁻" where "⁻" touches "₃") follows it.
 */
function joinScripts(lines: TextItem[][]): TextItem[][] {
  const home = new Map<TextItem, number>();
  lines.forEach((line, i) => line.forEach((item) => home.set(item, i)));
  // The largest type of each line: a run no smaller than a script of it looks no further (most text).
  const largest = lines.map((line) => maxOf(line, (i) => i.size, 0));
  for (let i = 0; i < lines.length; i++) {
    for (const s of lines[i]!) {
      const accent = ACCENTS[s.text.trim()] !== undefined;
      // An accent over a letter of its own line is where it belongs.
      const placed = accent && lines[i]!.some((l) => isAccentOf(s, l));
      for (let j = Math.max(0, i - 2); j <= Math.min(lines.length - 1, i + 2); j++) {
        if (j === i || (!accent && s.size > SCRIPT_SIZE * largest[j]!)) continue;
        const t = lines[j]!.find(
          (cand) =>
            (isScriptOf(s, cand) ||
              (cand.size <= SCRIPT_SIZE * largest[j]! && isNestedScriptOf(s, cand)) ||
              (accent && !placed && isAccentOf(s, cand))) &&
            home.get(cand) === j,
        );
        if (!t) continue;
        // A script that also touches a run of its own line stays there: "{x₀}" set just above a
        // display's big "⋃", whose top the subscript touches too.
        if (isScriptOf(s, t) && lines[i]!.some((l) => isScriptOf(s, l))) break;
        home.set(s, j);
        break;
      }
    }
  }
  followScripts(lines, home);
  const out: TextItem[][] = lines.map(() => []);
  for (const [item, i] of home) out[i]!.push(item);
  return out.filter((l) => l.length > 0);
}

/** Whether `s` goes on with the script `t` on its baseline, in its size, touching it ("2" then "πit" of e^{2πit}). */
function continuesScript(s: TextItem, t: TextItem): boolean {
  return (
    Math.abs(s.base - t.base) < 0.2 * t.size &&
    Math.abs(s.size - t.size) <= 0.1 * t.size &&
    ((s.x0 >= t.x0 && touches(t.x1, s.x0, s, t)) || (s.x1 <= t.x1 && touches(s.x1, t.x0, s, t)))
  );
}

/**
 * A script set in several runs (TeX's e^{2πit}: "2" in one font, "πit" in another) follows the run
 * that was moved: only the run touching the base text qualifies as its script, and the rest would
 * stay behind on a line of their own, read before the line they belong to. Each moved script takes
 * the runs that touch it in turn, rightwards and leftwards: linear in the line's length.
 */
function followScripts(lines: readonly TextItem[][], home: Map<TextItem, number>): void {
  lines.forEach((line, i) => {
    if (line.every((c) => home.get(c) === i)) return;
    const sorted = [...line].sort((a, b) => a.x0 - b.x0);
    sorted.forEach((t, k) => {
      const j = home.get(t)!;
      if (j === i || ACCENTS[t.text.trim()] !== undefined) return;
      follow(sorted, k, 1, i, j, home);
      follow(sorted, k, -1, i, j, home);
    });
  });
}

/** Moves from line i to line j the runs after (step 1) or before (step −1) sorted[k] that go on with it. */
function follow(sorted: readonly TextItem[], k: number, step: 1 | -1, i: number, j: number, home: Map<TextItem, number>): void {
  let last = sorted[k]!;
  for (let n = k + step; n >= 0 && n < sorted.length; n += step) {
    const s = sorted[n]!;
    if (home.get(s) !== i || !continuesScript(s, last)) return;
    home.set(s, j);
    last = s;
  }
}

/** A list marker: a bullet glyph, or a number or letter with a period or parenthesis. */
export const MARKER = /^(?:[•◦▪▫‣⁃●○■□◆◇►–—*·-]|\(?(?:\d{1,3}|[a-zA-Z]|[ivxlIVXL]{1,5})[.)])$/u;

/** Whether a run of items is only a list marker (which stays with the text after it). */
export function isMarker(run: readonly TextItem[]): boolean {
  if (run.length !== 1) return false;
  const item = run[0]!;
  return item.opaque || MARKER.test(item.text.trim());
}

/** Splits one line into segments at gaps wider than `gap` font sizes (never after a leading list marker). */
export function splitLine(line: readonly TextItem[], gap = SEGMENT_GAP): Segment[] {
  const out: Segment[] = [];
  let run: TextItem[] = [];
  let right = Number.NEGATIVE_INFINITY;
  for (const item of line) {
    const size = Math.min(item.size, run.at(-1)?.size ?? item.size);
    const markerGap = out.length === 0 && isMarker(run) && item.x0 - right < 4 * size;
    if (run.length && item.x0 - right > gap * size && !markerGap) {
      out.push(segmentOf(run));
      run = [];
    }
    run.push(item);
    right = Math.max(right, item.x1);
  }
  if (run.length) out.push(segmentOf(run));
  return out;
}

/** Scripts written without spaces between words (CJK): runs of them join without one. */
const SPACELESS_END = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]$/u;
const SPACELESS_START = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff00-\uffef]/u;

const RTL_END = new RegExp(`[${RTL_SCRIPTS}]\\p{M}*$`, "u");
const RTL_START = new RegExp(`^[${RTL_SCRIPTS}]`, "u");
const LTR_END = new RegExp(`[\\p{L}--[${RTL_SCRIPTS}]]\\p{M}*$`, "v");
const LTR_START = new RegExp(`^[\\p{L}--[${RTL_SCRIPTS}]]`, "v");

/** Two runs that meet where right-to-left letters meet left-to-right ones: different words, however close. */
export function scriptsMeet(before: string, after: string): boolean {
  return (RTL_END.test(before) && LTR_START.test(after)) || (LTR_END.test(before) && RTL_START.test(after));
}

/** Whether a visible gap between text ending `before` and text starting `after` is a word space. */
export function spaceBetween(before: string, after: string): boolean {
  return !(SPACELESS_END.test(before) && SPACELESS_START.test(after));
}

/** Lines of text (a table cell's) joined into one: with a space, but none between CJK characters. */
export function joinLines(texts: readonly string[]): string {
  return texts.reduce((out, t) => (!out ? t : !t ? out : out + (spaceBetween(out, t) ? " " : "") + t), "").trim();
}

/**
 * Whether `item` is another word than the run `prev` before it on a line (whose text so far ends
 * `before`): a visible gap, a space glyph drawn before it, a start well back inside `prev` on its
 * baseline (a cell's text running on under the next cell's, clipped; a word set over the end of
 * another: OVERLAP_BREAK), or a change of writing direction.
 */
export function partsWords(before: string, prev: TextItem, item: TextItem): boolean {
  const gap = item.x0 - prev.x1;
  const over = -gap > OVERLAP_BREAK * item.size && Math.abs(item.base - prev.base) < 0.1 * item.size;
  return gap > WORD_GAP * item.size || over || item.spaceBefore === true || scriptsMeet(before, item.text);
}

/** The text of a segment: runs joined with a space where they are two words (partsWords). */
export const segmentText = (seg: Segment): string => runsText(seg.items);

/**
 * The text of runs of one line, given left to right: the runs that touch made one word, the words
 * joined with a space (partsWords; none between CJK characters), runs and words in reading order
 * (bidi.ts wordOrder and readingOrder: a right-to-left phrase drawn word by word reads from its
 * right end).
 */
export function runsText(items: readonly TextItem[]): string {
  const words: TextItem[][] = [];
  let seen = "";
  for (const item of items) {
    if (item.opaque) continue;
    const word = words.at(-1);
    if (word && !partsWords(seen, word.at(-1)!, item)) word.push(item);
    else words.push([item]);
    seen += item.text;
  }
  const texts = readingOrder(
    words.map((w) => ({
      text: wordOrder(w)
        .map((i) => i.text)
        .join(""),
    })),
  );
  return joinLines(texts.map((t) => t.text))
    .replace(/\s+/g, " ")
    .trim();
}

/** All segments of a page, line by line (top to bottom). */
export function pageSegments(items: readonly TextItem[]): Segment[][] {
  return groupLines(items).map((line) => splitLine(line));
}
