/**
 * Document-level decisions that need every page: the body text size, and which paragraphs are
 * headings and at what level. A tagged PDF's H1…H6 elements are taken as they are; otherwise a
 * heading is a short paragraph set larger than the body text, or a short line all in bold at body
 * size, and levels follow the sizes (largest first, bold body-size lines last). Pure.
 */
import { maxOf } from "./minmax.ts";
import { paragraphText } from "./paragraphs.ts";
import type { Paragraph } from "./types.ts";

/** The most common font size, weighted by characters, rounded to half a point. */
export function bodySize(paragraphs: readonly Paragraph[]): number {
  const weight = new Map<number, number>();
  for (const p of paragraphs) {
    for (const line of p.lines) {
      for (const item of line.items) {
        const size = Math.round(item.size * 2) / 2;
        weight.set(size, (weight.get(size) ?? 0) + item.text.length);
      }
    }
  }
  let best = 0;
  let bestWeight = -1;
  for (const [size, w] of weight) if (w > bestWeight) [best, bestWeight] = [size, w];
  return best;
}

const isBold = (p: Paragraph): boolean => p.lines.every((l) => l.items.filter((i) => !i.opaque && i.text.trim()).every((i) => i.bold));

/** The size class of a heading candidate (its font size, or -1 for a bold body-size line), or null. */
function headingClass(p: Paragraph, body: number): number | null {
  if (p.list || p.lines.length > 3) return null;
  const text = paragraphText(p);
  if (text.length === 0 || text.length > 200 || !/\p{L}/u.test(text)) return null;
  const size = Math.round(maxOf(p.lines, (l) => l.size) * 2) / 2;
  if (size >= body * 1.15) return size;
  if (isBold(p) && size >= body * 0.95 && p.lines.length === 1 && text.length <= 120 && !/[.:;,]$/.test(text)) return -1;
  return null;
}

/**
 * Sets `heading` on the paragraphs that are headings. `tagged` gives the structure tree's level
 * of a paragraph (null when it has none); when any paragraph has one, only tagged ones count.
 */
export function assignHeadings(paragraphs: readonly Paragraph[], tagged: (p: Paragraph) => number | null): void {
  const levels = paragraphs.map(tagged);
  if (levels.some((l) => l !== null)) {
    paragraphs.forEach((p, i) => (p.heading = levels[i] ?? null));
  } else {
    const body = bodySize(paragraphs);
    const classes = paragraphs.map((p) => headingClass(p, body));
    const ranks = [...new Set(classes.filter((c): c is number => c !== null))].sort((a, b) => (a === -1 ? 1 : b === -1 ? -1 : b - a));
    paragraphs.forEach((p, i) => {
      const c = classes[i];
      p.heading = c === null || c === undefined ? null : Math.min(6, ranks.indexOf(c) + 1);
    });
  }
}
