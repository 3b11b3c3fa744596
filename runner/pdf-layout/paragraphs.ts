/**
 * Text blocks → paragraphs. A block's lines are split into paragraphs where a line starts a list
 * item, the font changes (size or weight), the line spacing opens up, the previous line ended
 * early (the next line's first word would have fitted on it: ragged or last line), or the line is
 * indented while the previous one was not. Each paragraph gets its alignment, indentation and
 * list marker; headings are decided later over the whole document (classify.ts). Also joins a
 * paragraph's lines into text, undoing end-of-line hyphenation. Pure.
 */
import type { Box, TextBlock } from "./blocks.ts";
import { readingOrder } from "./bidi.ts";
import { isMarker, MARKER, partsWords, spaceBetween } from "./lines.ts";
import { maxOf, minOf } from "./minmax.ts";
import type { ListKind, Paragraph, Segment, TextItem } from "./types.ts";

/** Tolerance for "the same edge", in points. */
const EDGE = 2;

const allBold = (seg: Segment): boolean => seg.items.filter((i) => !i.opaque && i.text.trim()).every((i) => i.bold);

/** The list marker a line starts with, if any. */
export function lineMarker(seg: Segment): { kind: ListKind; item: TextItem; text: string } | null {
  const first = seg.items[0];
  if (!first) return null;
  if (first.opaque || isMarker([first])) {
    const text = first.text.trim();
    return { kind: /\w/.test(text) ? "number" : "bullet", item: first, text };
  }
  const m = /^(\S{1,6})\s/.exec(first.text);
  if (m && MARKER.test(m[1]!)) return { kind: /\w/.test(m[1]!) ? "number" : "bullet", item: first, text: m[1]! };
  return null;
}

/** Width of the first word of a line, estimated from its run's average character width. */
function firstWordWidth(seg: Segment): number {
  const item = seg.items.find((i) => !i.opaque && i.text.trim()) ?? seg.items[0]!;
  const word = item.text.trim().split(/\s+/)[0] ?? "";
  const chars = Math.max(1, item.text.length);
  return (word.length * (item.x1 - item.x0)) / chars;
}

function startsParagraph(prev: Segment, line: Segment, ctx: { right: number; left: number; pitch: number; inList: boolean }): boolean {
  if (lineMarker(line)) return true;
  if (Math.abs(line.size - prev.size) > 0.1 * prev.size || allBold(line) !== allBold(prev)) return true;
  if (line.base - prev.base > ctx.pitch * 1.15 + 1) return true;
  if (prev.x1 + 0.3 * line.size + firstWordWidth(line) < ctx.right - EDGE) return true;
  const indented = line.x0 > ctx.left + 0.8 * line.size && Math.abs(prev.x0 - ctx.left) <= EDGE;
  return indented && !ctx.inList;
}

function alignment(lines: readonly Segment[], region: Box): Paragraph["align"] {
  const size = lines[0]!.size;
  const mid = (region.x0 + region.x1) / 2;
  const centred = lines.every(
    (l) => Math.abs((l.x0 + l.x1) / 2 - mid) < Math.max(3, 0.04 * (region.x1 - region.x0)) && l.x0 > region.x0 + size,
  );
  if (centred) return "center";
  if (lines.every((l) => Math.abs(l.x1 - region.x1) <= EDGE && l.x0 > region.x0 + size)) return "right";
  if (lines.length >= 2 && lines.slice(0, -1).every((l) => Math.abs(l.x1 - region.x1) <= EDGE)) return "justify";
  return "left";
}

function makeParagraph(lines: Segment[], region: Box, listLeft: number): Paragraph {
  const marker = lineMarker(lines[0]!);
  const align = alignment(lines, region);
  const body = lines[1] ?? lines[0]!;
  const indent = align === "left" || align === "justify" ? Math.max(0, body.x0 - region.x0) : 0;
  const firstLine = lines.length > 1 ? lines[0]!.x0 - lines[1]!.x0 : 0;
  const top = minOf(lines, (l) => l.top);
  const bottom = maxOf(lines, (l) => l.bottom);
  const list = marker ? { kind: marker.kind, level: Math.max(0, Math.min(8, Math.round((marker.item.x0 - listLeft) / 18))) } : null;
  return { type: "paragraph", lines, heading: null, list, align, indent, firstLine, spaceBefore: 0, top, bottom };
}

/** Splits one block (lines top to bottom) into paragraphs. `listLeft`: leftmost list marker on the page. */
export function blockParagraphs(block: TextBlock, region: Box, listLeft: number): Paragraph[] {
  const lines = block.segs;
  const pitches = lines.slice(1).map((l, i) => l.base - lines[i]!.base);
  const pitch = minOf(pitches, (p) => p, lines[0]!.size * 1.2);
  const ctx = { right: Math.max(region.x1, block.x1), left: block.x0, pitch, inList: false };
  const out: Paragraph[] = [];
  let current: Segment[] = [lines[0]!];
  ctx.inList = lineMarker(lines[0]!) !== null;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (startsParagraph(lines[i - 1]!, line, ctx)) {
      out.push(makeParagraph(current, region, listLeft));
      current = [];
      ctx.inList = lineMarker(line) !== null;
    }
    current.push(line);
  }
  out.push(makeParagraph(current, region, listLeft));
  return out;
}

/** A run of text with one formatting. */
export interface Run {
  text: string;
  bold: boolean;
  italic: boolean;
  size: number;
  font: string;
}

const sameFormat = (a: Run, b: TextItem): boolean =>
  a.bold === b.bold && a.italic === b.italic && Math.abs(a.size - b.size) < 0.5 && a.font === b.font;

/**
 * What joins a line's first text to the previous line's: nothing where the line ended in a
 * hyphenated word ("exam-" + "ple", the hyphen then dropped from `last`), else a space where words
 * part.
 */
function lineBreakSeparator(last: Run, text: string): string {
  const lastText = last.text;
  if (/\p{L}-$/u.test(lastText) && /^\p{Ll}/u.test(text)) {
    last.text = lastText.slice(0, -1);
    return "";
  }
  return !/\s$/.test(lastText) && spaceBetween(lastText, text) ? " " : "";
}

/** A space between two items of a line where they are two words (lines.ts partsWords). */
function gapSeparator(lastText: string, text: string, item: TextItem, prev: TextItem): string {
  // Read right to left, the item before stands right of this one: the gap is between them as drawn.
  const [left, right] = prev.x0 <= item.x0 ? [prev, item] : [item, prev];
  return partsWords(lastText, left, right) && !/\s$/.test(lastText) && !/^\s/.test(text) && spaceBetween(lastText, text) ? " " : "";
}

/** Adds an item's text to the last run when it has the same formatting, else starts a run. */
function appendText(runs: Run[], item: TextItem, text: string, sep: string): void {
  const last = runs.at(-1);
  if (last && sameFormat(last, item)) last.text += sep + text;
  else {
    if (last && sep) last.text += sep;
    runs.push({ text, bold: item.bold, italic: item.italic, size: item.size, font: item.font });
  }
}

/**
 * The runs of a paragraph: its items in order, a space where a visible gap or a line break
 * separates words, nothing where a line ends in a hyphenated word ("exam-" + "ple"). The list
 * marker of a list paragraph is dropped (the writer numbers it), except numbers, which stay
 * literal so that the document's text is kept exactly.
 */
export function paragraphRuns(p: Paragraph): Run[] {
  const runs: Run[] = [];
  let prev: TextItem | null = null;
  const marker = p.list?.kind === "bullet" ? lineMarker(p.lines[0]!) : null;
  p.lines.forEach((line, li) => {
    // A right-to-left line drawn word by word reads from its right end (bidi.ts); a list's marker
    // stays where lineMarker found it.
    (marker ? line.items : readingOrder(line.items)).forEach((item, ii) => {
      let text = item.text;
      if (li === 0 && ii === 0 && marker) text = item.opaque ? "" : text.trimStart().slice(marker.text.length);
      if (item.opaque || !text) return;
      const last = runs.at(-1);
      let sep = "";
      if (last) sep = ii === 0 || !prev ? lineBreakSeparator(last, text) : gapSeparator(last.text, text, item, prev);
      prev = item;
      appendText(runs, item, text, sep);
    });
  });
  for (const r of runs) r.text = r.text.replace(/\s+/g, " ");
  if (runs[0]) runs[0].text = runs[0].text.trimStart();
  if (runs.at(-1)) runs.at(-1)!.text = runs.at(-1)!.text.trimEnd();
  return runs.filter((r) => r.text.length > 0);
}

/** The plain text of a paragraph. */
export function paragraphText(p: Paragraph): string {
  return paragraphRuns(p)
    .map((r) => r.text)
    .join("");
}
