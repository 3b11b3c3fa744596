/**
 * Text drawn twice or more at (nearly) the same place, shown once. Producers fake bold type by
 * overprinting the same glyphs a fraction of a point apart (two to four times), and some repeat a
 * whole line; a reader sees one text, and poppler and pdfplumber drop the copies. Left in, the
 * copies glue into "本科本科" or "20112011" in one cell.
 *
 * Runs are taken longest first. A run is a copy when a run kept before it, on the same baseline and
 * in the same size, holds its text and covers its box (within COPY_SHIFT): "2011 年年度报告" drawn
 * whole absorbs the copies of "2011" and of "年年度报告" drawn on their own. Two kept runs that
 * overlap where the first's end and the second's start are the same text (a copy that straddles
 * two originals: "股票代码：" and "：300218") lose the repeated part from the second. Pure.
 */
import type { TextItem } from "./types.ts";

/** How far (in font sizes) a copy's box may stick out of the original's. */
const COPY_SHIFT = 0.35;
/** Baselines of a copy and its original differ by less than this (font sizes). */
const SAME_BASE = 0.2;

/** The baseline bucket an item is filed under (buckets are a few points tall). */
const bucket = (base: number): number => Math.floor(base / 4);

function sameLine(a: TextItem, b: TextItem): boolean {
  return Math.abs(a.base - b.base) < SAME_BASE * b.size && Math.abs(a.size - b.size) < 0.1 * b.size;
}

/** A character's rough advance in ems: CJK full width, spaces narrow, the rest in between. */
const advance = (ch: string): number => (/\s/.test(ch) ? 0.28 : /[\u2e80-\u9fff\uac00-\ud7af\uff00-\uffef]/.test(ch) ? 1 : 0.55);

/**
 * Whether `item` repeats part of `of` where `of` draws that part: its text occurs in of's, at a
 * place whose estimated position (of's width spread over its characters' rough advances) is the
 * item's. A "0" under a long clipped line that happens to hold zeros is no copy of it.
 */
function isCopy(item: TextItem, of: TextItem): boolean {
  const tol = COPY_SHIFT * item.size;
  if (item.x0 < of.x0 - tol || item.x1 > of.x1 + tol) return false;
  const chars = [...of.text];
  const widths = chars.map(advance);
  const total = widths.reduce((a, b) => a + b, 0) || 1;
  const needle = item.text.trim();
  for (let at = of.text.indexOf(needle); at >= 0; at = of.text.indexOf(needle, at + 1)) {
    const before = widths.slice(0, [...of.text.slice(0, at)].length).reduce((a, b) => a + b, 0);
    if (Math.abs(of.x0 + ((of.x1 - of.x0) * before) / total - item.x0) <= tol) return true;
  }
  return false;
}

/** `b` without the start it shares with the end of `a`, when they overlap there; else `b`. */
function trimShared(a: TextItem, b: TextItem): TextItem {
  if (b.x0 >= a.x1 - 0.1 * b.size || b.x0 < a.x0) return b;
  const chars = [...b.text];
  for (let n = Math.min(chars.length - 1, [...a.text].length); n > 0; n--) {
    const head = chars.slice(0, n).join("");
    if (head.trim() && a.text.endsWith(head)) {
      // The repeated stretch ends where `a` does; the rest of `b` starts there.
      return { ...b, text: chars.slice(n).join("").trimStart(), x0: Math.max(b.x0, Math.min(a.x1, b.x1)) };
    }
  }
  return b;
}

/**
 * The items with overprinted copies removed, in their original order. Trimming a straddling copy
 * can leave a run that is now a plain copy ("：2012" → "2012" beside "2012 年"): a second pass takes it.
 */
export function dropOverprints(items: readonly TextItem[]): TextItem[] {
  const once = dropOnce(items);
  return once.length < items.length ? dropOnce(once) : once;
}

function dropOnce(items: readonly TextItem[]): TextItem[] {
  if (items.length < 2) return [...items];
  const order = items.map((item, i) => ({ item, i })).sort((a, b) => b.item.text.length - a.item.text.length || a.i - b.i);
  const kept = new Map<number, TextItem[]>();
  const drop = new Set<TextItem>();
  for (const { item } of order) {
    if (item.opaque || !item.text.trim()) continue;
    const b = bucket(item.base);
    const near = [b - 1, b, b + 1].flatMap((k) => kept.get(k) ?? []);
    if (near.some((k) => sameLine(item, k) && isCopy(item, k))) {
      drop.add(item);
      continue;
    }
    const list = kept.get(b);
    if (list) list.push(item);
    else kept.set(b, [item]);
  }
  if (!drop.size) return [...items];
  const out = items.filter((i) => !drop.has(i));
  // Kept runs that still overlap a neighbour on their line by a repeated stretch lose that stretch.
  const byLine = [...out].sort((a, b) => a.base - b.base || a.x0 - b.x0);
  const fixed = new Map<TextItem, TextItem>();
  for (let i = 1; i < byLine.length; i++) {
    const [a, b] = [fixed.get(byLine[i - 1]!) ?? byLine[i - 1]!, byLine[i]!];
    if (!sameLine(a, b)) continue;
    const t = trimShared(a, b);
    if (t !== b) fixed.set(b, t);
  }
  return out.map((i) => fixed.get(i) ?? i).filter((i) => i.opaque || i.text.trim());
}
