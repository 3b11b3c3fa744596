/**
 * Caps on what one job may write (issue #10 item 5): pages and bytes of all its outputs together.
 * A small request must not make tens of thousands of pages or gigabytes — page ranges repeated
 * ("1-,1-,1-,…" in every merge input or split range), a split into single pages whose every part
 * carries the shared fonts again, an Office document that explodes into pages.
 *
 * The caps never refuse ordinary work: a job may always write each page of its inputs once, and
 * twice its input bytes (a split's parts plus the zip of them). Where the size of the work is
 * known before it starts (pages of merge and split), it is checked before; bytes are estimated
 * before (from the pages taken), watched while qpdf writes, and checked when the outputs are done.
 */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { JobError } from "../../core/errors.ts";
import { parsePageRanges, type PageRange } from "../../core/pages.ts";
import type { RunnerLimits } from "../../core/schemas/job.ts";

/** core/pages.ts encodes "last" as -1. */
const LAST = -1;

export interface OutputCaps {
  pages: number;
  bytes: number;
}

/** The caps of a job with these inputs (pages null for Office documents). */
export function outputCaps(limits: RunnerLimits, inputs: readonly { pages: number | null; size: number }[]): OutputCaps {
  const inPages = inputs.reduce((n, i) => n + (i.pages ?? 0), 0);
  const inBytes = inputs.reduce((n, i) => n + i.size, 0);
  return { pages: Math.max(limits.max_output_pages, inPages), bytes: Math.max(limits.max_output_bytes, 2 * inBytes) };
}

const fmt = (n: number): string => n.toLocaleString("en-US");

export function checkPages(caps: OutputCaps, pages: number): void {
  if (pages > caps.pages) {
    throw new JobError(
      "limit_exceeded",
      `The outputs would hold ${fmt(pages)} pages; one job may write at most ${fmt(caps.pages)} (a page repeated in the ranges counts each time).`,
    );
  }
}

export function checkBytes(caps: OutputCaps, bytes: number, estimated = false): void {
  if (bytes > caps.bytes) {
    throw new JobError(
      "limit_exceeded",
      `The outputs would be ${estimated ? "at least " : ""}${fmt(bytes)} bytes; one job may write at most ${fmt(caps.bytes)} bytes.`,
    );
  }
}

/**
 * Bytes that writing `taken` pages of an input of `pages` pages and `size` bytes costs at least:
 * its share of the file per distinct page. Repeats are free (qpdf shares their content), and
 * resources shared between pages are counted once — so this only ever underestimates.
 */
export function estimateBytes(size: number, pages: number, distinctTaken: number): number {
  return pages > 0 ? Math.floor((size * distinctTaken) / pages) : 0;
}

/** Total size of the regular files directly in `dir`. */
export async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) {
    const st = await stat(path.join(dir, name)).catch(() => null);
    if (st?.isFile()) total += st.size;
  }
  return total;
}

const POLL_MS = 200;

/**
 * Runs `work` with a signal that aborts when the files it writes (`measure`) outgrow `cap`, or
 * when `parent` aborts. qpdf writes at most a few hundred MB/s, so the overshoot is bounded by
 * one poll. A run stopped by the cap ends in limit_exceeded.
 */
export async function withinBytes<T>(
  caps: OutputCaps,
  measure: () => Promise<number>,
  parent: AbortSignal,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const budget = new AbortController();
  let seen = 0;
  let polling = false;
  const timer = setInterval(() => {
    if (polling) return;
    polling = true;
    measure()
      .then((bytes) => {
        seen = bytes;
        if (bytes > caps.bytes) budget.abort();
      })
      .catch(() => undefined)
      .finally(() => (polling = false));
  }, POLL_MS);
  try {
    return await work(AbortSignal.any([parent, budget.signal]));
  } catch (err) {
    if (budget.signal.aborted && !parent.aborted) checkBytes(caps, seen);
    throw err;
  } finally {
    clearInterval(timer);
  }
}

/**
 * How many pages `ranges` take from a document of `pageCount` pages, without listing them (a
 * thousand "1-" over 2,000 pages would be two million numbers); 0 for a range outside the
 * document, which resolving the ranges reports properly.
 */
export function rangesPageCount(ranges: readonly PageRange[], pageCount: number): number {
  let n = 0;
  for (const r of ranges) {
    const start = r.start === LAST ? pageCount : r.start;
    const end = r.end === null || r.end === LAST ? pageCount : r.end;
    if (start >= 1 && end >= start && end <= pageCount) n += end - start + 1;
  }
  return n;
}

/** Pages a page-range spec takes ("1-3,7,10-"), or all of them without one; 0 when it does not parse. */
export function specPageCount(spec: string | undefined, pageCount: number): number {
  if (spec === undefined) return pageCount;
  const parsed = parsePageRanges(spec);
  return typeof parsed === "string" ? 0 : rangesPageCount(parsed, pageCount);
}
