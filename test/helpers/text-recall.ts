/**
 * Word recall against an independent extractor's text (poppler's pdftotext), robust to the ways two
 * faithful extractions of one page legitimately differ, and strict about the ways a conversion loses
 * text:
 *  - both texts are NFKC-normalised (a ligature "ﬁ" is "fi", a full-width "＜" is "<") and lower-cased,
 *    without soft hyphens inside a line and without accents on Latin, Greek and Cyrillic letters
 *    (withoutSoftHyphens, withoutAccents);
 *  - a word is a run of letters and digits; in scripts written without spaces (CJK ideographs, kana,
 *    hangul) every character is a word, so a different line breaking is not a different text;
 *  - a word hyphenated at a line end in the reference ("well-⏎known") is found as either its two
 *    halves or the joined word: reflowing a paragraph may rightly undo the hyphenation;
 *  - a word not found may be found written backwards: an extractor reading glyphs in the order they
 *    stand on the page gives right-to-left script ("يبيبَح" for "حَبيبي") and mirrored type in visual
 *    order, which is not the order a reader reads them in.
 * Two words of the reference glued into one in the output ("info value" → "infovalue") are not
 * forgiven, nor is one word split in two ("11,062.6" → "11,062 .6" splits "062" from "6"): those are
 * the defects the measure exists to catch — but for the few words both readers glue across a clip,
 * named by file (GLUED_ACROSS_CLIP). Pure, but for referenceText.
 */

import { decodeXml } from "./convert-quality.ts";
import { run } from "./tools.ts";

/** Characters that are words on their own: CJK ideographs, kana, hangul syllables. */
const SPACELESS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const WORD = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|[\p{L}\p{N}\p{M}]+/gu;

/** The words of a text, in order (see the header). */
export function recallTokens(text: string): string[] {
  const out: string[] = [];
  for (const m of withoutAccents(withoutSoftHyphens(text)).normalize("NFKC").toLowerCase().matchAll(WORD)) {
    const w = m[0];
    // A run mixing a spaceless script with letters splits at the script boundary (the regex takes
    // a spaceless character alone only when the run starts with it).
    if (w.length > 1 && SPACELESS.test(w))
      for (const part of w.split(
        /(?=[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}])|(?<=[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}])/u,
      ))
        out.push(part);
    else out.push(w);
  }
  return out;
}

/**
 * A soft hyphen (U+00AD) inside a line is invisible (Unicode: it shows only where a line breaks),
 * so it parts no words: "hyper\u00adkaliémique" is one word. At a line's end it is the hyphen of a
 * hyphenated line break, which referenceWords takes like "-".
 */
const withoutSoftHyphens = (text: string): string => text.replace(/\u00ad(?=\p{L})/gu, "");

/** Spacing accents (˜ ˆ ¨ ´ ¯ ˙ ˚ ˇ ˘ ˝ ¸ ˛) and the combining diacritics of Latin, Greek and Cyrillic letters. */
const ACCENTS = /[\u02c6\u02c7\u02c9\u02d8-\u02dd\u00a8\u00af\u00b4\u00b8\u0300-\u036f]/gu;

/**
 * A text without accents on Latin, Greek and Cyrillic letters: where TeX draws an accent as a glyph
 * of its own over a letter (\tilde\gamma_1), poppler puts it after the letter ("γ˜1", which NFKC
 * turns into "γ ̃1"), MuPDF before it ("˜γ1"), and a converter on it ("γ̃1"): three readings of one
 * word. Word recall is about words; an accent is for exact cells to judge.
 */
const withoutAccents = (text: string): string => text.normalize("NFD").replace(ACCENTS, "");

interface RefWord {
  word: string;
  /** The word backwards, reversed before normalisation (a ligature "ﬃ" stays in one piece). */
  backwards: string;
  /** The next word, when this one ends a line with a hyphen (a hyphenated line break). */
  joinsNext: boolean;
}

/** The reference's words, marking those hyphenated at a line end. */
function referenceWords(text: string): RefWord[] {
  const out: RefWord[] = [];
  for (const line of text.split("\n")) {
    const words = recallTokens(line).map((word) => ({ word, backwards: word, joinsNext: false }));
    // The same words, each reversed as drawn and then normalised.
    const raw = line.toLowerCase().match(WORD) ?? [];
    if (raw.length === words.length) raw.forEach((w, i) => (words[i]!.backwards = reversed(w).normalize("NFKC")));
    if (words.length && /\p{L}[-\u00ad\u2010]\s*$/u.test(line)) words.at(-1)!.joinsNext = true;
    out.push(...words);
  }
  return out;
}

/**
 * A word written in visual order, backwards: in visual order a combining mark comes before the
 * character it sits on, so each stays with the one after it ("يبيبَح" → "حَبيبي").
 */
function reversed(word: string): string {
  return (word.match(/\p{M}*\P{M}/gu) ?? [])
    .map((g) => g.slice(-1) + g.slice(0, -1))
    .reverse()
    .join("");
}

export interface Recall {
  /** Found words / reference words (1 when the reference has none). */
  recall: number;
  found: number;
  total: number;
  /** The reference's words not found, with how many times each is missing. */
  missing: Map<string, number>;
}

/**
 * Multiset word recall of `candidate` against `reference` (see the header). With `confirmedBy` (a
 * second extractor's text), only the reference's words that the second extractor read too are
 * counted: a word one extractor misreads (poppler reads TeX's prime ′ as "0") is no evidence either way.
 * A word of `gluedByReaders` is found as the two adjacent words it is made of (GLUED_ACROSS_CLIP).
 */
export function textRecall(reference: string, candidate: string, confirmedBy?: string, gluedByReaders: readonly string[] = []): Recall {
  const have = new Map<string, number>();
  const tokens = recallTokens(candidate);
  for (const w of tokens) have.set(w, (have.get(w) ?? 0) + 1);
  const take = (w: string): boolean => {
    const n = have.get(w) ?? 0;
    if (n > 0) have.set(w, n - 1);
    return n > 0;
  };
  let ref = referenceWords(reference);
  if (confirmedBy !== undefined) {
    const other = new Map<string, number>();
    for (const w of recallTokens(confirmedBy)) other.set(w, (other.get(w) ?? 0) + 1);
    const confirm = (w: string): boolean => {
      const n = other.get(w) ?? 0;
      if (n > 0) other.set(w, n - 1);
      return n > 0;
    };
    ref = ref.filter((r) => confirm(r.word) || confirm(r.backwards));
  }
  const found = ref.map((r) => take(r.word));
  // Second pass: a hyphenated pair neither half of which was found may be there joined, and a word
  // written backwards (visual order) may be there forwards.
  for (let i = 0; i + 1 < ref.length; i++) {
    if (ref[i]!.joinsNext && !found[i] && !found[i + 1] && take(ref[i]!.word + ref[i + 1]!.word)) found[i] = found[i + 1] = true;
  }
  ref.forEach((r, i) => {
    if (!found[i] && r.word.length > 1) found[i] = take(r.backwards);
  });
  // A word the readers glue across a clip (GLUED_ACROSS_CLIP) is there as the two words a reader sees.
  ref.forEach((r, i) => {
    if (found[i] || !gluedByReaders.includes(r.word)) return;
    const k = tokens.findIndex((t, j) => j + 1 < tokens.length && t + tokens[j + 1] === r.word);
    if (k < 0) return;
    const [a, b] = [tokens[k]!, tokens[k + 1]!];
    const left = (w: string): number => have.get(w) ?? 0;
    if (a === b ? left(a) >= 2 : left(a) >= 1 && left(b) >= 1) found[i] = take(a) && take(b);
  });
  const missing = new Map<string, number>();
  ref.forEach((r, i) => {
    if (!found[i]) missing.set(r.word, (missing.get(r.word) ?? 0) + 1);
  });
  const n = found.filter(Boolean).length;
  return { recall: ref.length ? n / ref.length : 1, found: n, total: ref.length, missing };
}

/**
 * The reference texts of a PDF (or of one page), by poppler's pdftotext in its two modes: the layout
 * mode (-layout: every line of the page as it stands) and the reading-order mode (columns one after
 * another); and the reading-order words of its -bbox-layout mode with text drawn twice at one place
 * read once (bboxText). Each has its own artifacts — the layout mode puts the next column's text
 * between a hyphenated word's halves, the reading-order mode can run two table cells into one word
 * and reads a fake-bold label twice — so a document is measured against each and keeps the best
 * recall (bestRecall). Empty texts for a file poppler cannot read.
 */
export async function referenceTexts(file: string, page?: number): Promise<string[]> {
  const pages = page === undefined ? [] : ["-f", String(page), "-l", String(page)];
  const out: string[] = [];
  for (const mode of [["-layout"], []]) {
    const res = await run("pdftotext", [...mode, ...pages, file, "-"]);
    out.push(res.code === 0 ? res.stdout : "");
  }
  const boxes = await run("pdftotext", ["-bbox-layout", ...pages, file, "-"]);
  if (boxes.code === 0) out.push(bboxText(boxes.stdout));
  return out;
}

/**
 * The reading-order text of pdftotext's `-bbox-layout` XHTML, line by line, each word once: a word
 * that starts where an earlier word of the page starts (within DUP_ALONG and DUP_ACROSS of its
 * height) and is that word or the start of it is the same glyphs drawn again — fake bold, which
 * poppler drops only while the copies fall in one line and otherwise files under a line of their
 * own ("股票代码：" then "股票代码" a quarter point lower). A reader reads it once; stextText does the
 * same for MuPDF. Pure.
 */
export function bboxText(xhtml: string): string {
  const lines: string[] = [];
  for (const page of xhtml.split(/<page\b/).slice(1)) {
    const kept: { x: number; y: number; h: number; text: string }[] = [];
    for (const line of page.split(/<\/line>/)) {
      let text = "";
      let right = Number.NaN;
      for (const m of line.matchAll(/<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">([^<]*)<\/word>/g)) {
        const [x, x1, y0, y1, word] = [Number(m[1]), Number(m[3]), Number(m[2]), Number(m[4]), decodeXml(m[5]!)];
        const h = y1 - y0;
        if (kept.some((k) => Math.abs(k.x - x) < DUP_ALONG * h && Math.abs(k.y - y1) < DUP_ACROSS * h && k.text.startsWith(word))) continue;
        kept.push({ x, y: y1, h, text: word });
        // Words that touch or overlap read as one, as pdftotext writes them ("Total" and its
        // footnote mark "3", a word in two fonts); any gap is a word space.
        text += text && x - right > 0.02 * h ? ` ${word}` : word;
        right = x1;
      }
      if (text) lines.push(text);
    }
  }
  return lines.join("\n");
}

/**
 * The text of a PDF (or of one page) by a second independent extractor, MuPDF's mutool: with
 * poppler's it makes the consensus reference (textRecall's `confirmedBy`). Null when mutool is
 * missing or cannot read the file. Each glyph counts once (stextText).
 */
export async function mupdfText(file: string, page?: number): Promise<string | null> {
  const res = await run("mutool", ["draw", "-q", "-F", "stext", "-o", "-", file, ...(page === undefined ? [] : [String(page)])]);
  return res.code === 0 ? stextText(res.stdout) : null;
}

/** Glyphs closer than these (font sizes, along and across the line) are one glyph drawn twice: poppler's dupMaxPriDelta and dupMaxSecDelta. */
const DUP_ALONG = 0.1;
const DUP_ACROSS = 0.2;

/**
 * The text of MuPDF's structured text (mutool's `stext` XML), line by line, with each glyph once: a
 * glyph drawn again at (nearly) the same place — fake bold overprinted two to four times, a drop
 * shadow — is one glyph on the page, and a reader reads it once. MuPDF reports every copy (poppler
 * drops most, with the thresholds used here, but not a copy it files under another line), and the
 * consensus would otherwise ask the converter for text a reader never sees twice. Pure.
 */
export function stextText(xml: string): string {
  const seen = new Map<string, { x: number; y: number }[]>();
  const out: string[] = [];
  let page = 0;
  let size = 0;
  let line = "";
  const copy = (c: string, x: number, y: number): boolean => {
    const key = (dy: number): string => `${page}|${c}|${Math.floor(y / 4) + dy}`;
    const near = [-1, 0, 1].flatMap((dy) => seen.get(key(dy)) ?? []);
    if (near.some((p) => Math.abs(p.x - x) < DUP_ALONG * size && Math.abs(p.y - y) < DUP_ACROSS * size)) return true;
    const list = seen.get(key(0));
    if (list) list.push({ x, y });
    else seen.set(key(0), [{ x, y }]);
    return false;
  };
  for (const m of xml.matchAll(/<(page|font|char)\b([^>]*)>|<\/(line|block)>/g)) {
    const attr = (name: string): string => new RegExp(`\\b${name}="([^"]*)"`).exec(m[2] ?? "")?.[1] ?? "";
    if (m[1] === "page") page++;
    else if (m[1] === "font") size = Number(attr("size")) || size;
    else if (m[1] === "char") {
      const c = decodeXml(attr("c"));
      if (/^\s*$/.test(c) || !copy(c, Number(attr("x")), Number(attr("y")))) line += c;
    } else {
      out.push(line);
      line = "";
    }
  }
  return out.join("\n");
}

/**
 * Words of real PDFs that both reference readers glue across a clipping path, by file: a ledger
 * cell's text cut at the cell's edge ("…dated 29.01.2016", its last glyph hidden) and the next
 * cell's amount drawn where the hidden glyph ends ("1074935"). Neither poppler nor MuPDF honours
 * clipping, so both read "20161074935"; a reader sees a gap, and the converter writes two cells.
 * Each was checked on the page by hand; textRecall finds such a word as its two halves, adjacent.
 */
export const GLUED_ACROSS_CLIP: Readonly<Record<string, readonly string[]>> = {
  "issue-912.pdf": ["20161074935"],
};

/** The better of the recalls against each reference text (see referenceTexts), confirmed as textRecall says. */
export function bestRecall(
  references: readonly string[],
  candidate: string,
  confirmedBy?: string,
  gluedByReaders?: readonly string[],
): Recall {
  const all = references.map((r) => textRecall(r, candidate, confirmedBy, gluedByReaders));
  return all.reduce((a, b) => (b.recall > a.recall ? b : a), all[0] ?? textRecall("", candidate));
}
