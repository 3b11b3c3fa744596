/**
 * Page ranges as API.md defines them: 1-based, inclusive, comma-separated; `N-` runs to the end;
 * `last` names the last page ("last", "5-last"). Parsing is pure and needs no page count;
 * resolving against a document's page count is where out-of-range pages are found.
 */

/** One range; `end: null` means "to the end". Numbers are 1-based; "last" is encoded as -1. */
export interface PageRange {
  start: number;
  end: number | null;
}

const LAST = -1;
const TOKEN = /^(\d+|last)(?:\s*(-)\s*(\d+|last)?)?$/;

function parseBound(text: string): number {
  return text === "last" ? LAST : Number.parseInt(text, 10);
}

/** One "N", "N-M", "N-" or "last" part as a range, or a message saying what is wrong. */
function parseRange(part: string): PageRange | string {
  const m = TOKEN.exec(part);
  if (!m) return `"${part}" is not a page or range (use "N", "N-M", "N-" or "last")`;
  const start = parseBound(m[1]!);
  const end = m[2] ? (m[3] ? parseBound(m[3]) : null) : start;
  if (start === 0 || end === 0) return "pages are numbered from 1";
  if (start !== LAST && end !== null && end !== LAST && end < start) return `"${part}" ends before it starts`;
  if (start === LAST && end !== null && end !== LAST) return `"${part}" ends before it starts`;
  return { start, end };
}

/** Parses "1-3,7,10-" into ranges, or returns a message saying what is wrong. */
export function parsePageRanges(spec: string): PageRange[] | string {
  const parts = spec.split(",").map((p) => p.trim());
  if (spec.trim() === "" || parts.some((p) => p === "")) return 'must be a comma-separated list like "1-3,7,10-"';
  const ranges: PageRange[] = [];
  for (const part of parts) {
    const range = parseRange(part);
    if (typeof range === "string") return range;
    ranges.push(range);
  }
  return ranges;
}

/** The highest page number a parsed spec names explicitly (0 when it only uses `last`/open ends). */
export function highestExplicitPage(ranges: readonly PageRange[]): number {
  let max = 0;
  for (const r of ranges) max = Math.max(max, r.start, r.end ?? 0);
  return max;
}

/**
 * Resolves ranges against a page count into concrete 1-based page lists, one per range.
 * Throws nothing: returns a message when a range lies outside the document.
 */
export function resolvePageRanges(ranges: readonly PageRange[], pageCount: number): number[][] | string {
  const out: number[][] = [];
  for (const r of ranges) {
    const start = r.start === LAST ? pageCount : r.start;
    const end = r.end === null || r.end === LAST ? pageCount : r.end;
    if (start > pageCount || end > pageCount) {
      return `page ${Math.max(start, end)} is outside the document, which has ${pageCount} page${pageCount === 1 ? "" : "s"}`;
    }
    if (end < start) return `range ${start}-${end} ends before it starts`;
    const pages: number[] = [];
    for (let p = start; p <= end; p++) pages.push(p);
    out.push(pages);
  }
  return out;
}

/** Formats concrete pages as a compact qpdf page-range string ("1-3,7"). */
export function toQpdfRange(pages: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < pages.length) {
    let j = i;
    while (j + 1 < pages.length && pages[j + 1] === pages[j]! + 1) j++;
    parts.push(i === j ? `${pages[i]}` : `${pages[i]}-${pages[j]}`);
    i = j + 1;
  }
  return parts.join(",");
}
