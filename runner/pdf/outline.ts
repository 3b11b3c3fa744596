/**
 * Bookmarks (the document outline, ISO 32000-1 §12.3.3): read from any input with qpdf, placed
 * onto the pages of an output that qpdf assembled, and written into that output as an incremental
 * update. qpdf's page selection keeps no outline at all, so merge and split rebuild it here.
 *
 * Reading is outline-read.ts's (qpdf JSON: no PDF parsing of arbitrary inputs happens in Node).
 *
 * Placement rules, for merge page ranges and split parts alike: an item whose page is in the output points at
 * that page, with its original view (/XYZ left top zoom, /Fit, …). A page taken more than once
 * counts at its first place. An item whose page was not taken, or that has no page destination
 * (URI and launch actions, broken destinations), is dropped unless some descendant survives; then
 * it stays as a heading for them and points at the first surviving one's page.
 */
import { PdfSyntaxError, pdfNumber, pdfTextString, serialize, type PdfRef, type PdfValue } from "./pdf-syntax.ts";
import { QpdfWrittenPdf, type UpdateObject } from "./pdf-update.ts";
import type { DestView, OutlineNode } from "./outline-read.ts";

export { MAX_OUTLINE_DEPTH, readOutline, readStructure, type DestView, type OutlineNode } from "./outline-read.ts";

/** One bookmark of an output: `page` is the 0-based index of its page in the output. */
export interface PlacedItem {
  title: string;
  page: number;
  view: DestView;
  open: boolean;
  kids: PlacedItem[];
}

export const FIT: DestView = ["/Fit"];

/** Counts items at every level. */
export function countItems(items: readonly { kids: readonly unknown[] }[]): number {
  let n = 0;
  for (const it of items) n += 1 + countItems(it.kids as { kids: unknown[] }[]);
  return n;
}

/**
 * Places an input's bookmarks onto an output: `locate` maps a 1-based input page to its 0-based
 * index in the output, or undefined when the page was not taken (see the rules above). When all
 * pages taken lie within `span` (split parts), subtrees entirely outside it are skipped unvisited.
 */
export function placeOutline(
  nodes: readonly OutlineNode[],
  locate: (page: number) => number | undefined,
  span?: { first: number; last: number },
): PlacedItem[] {
  const out: PlacedItem[] = [];
  for (const node of nodes) {
    if (span && (node.hi < span.first || node.lo > span.last)) continue;
    const kids = placeOutline(node.kids, locate, span);
    const at = node.page === null ? undefined : locate(node.page);
    if (at !== undefined) out.push({ title: node.title, page: at, view: node.view ?? FIT, open: node.open, kids });
    else if (kids[0]) out.push({ title: node.title, page: kids[0].page, view: kids[0].view, open: node.open, kids });
  }
  return out;
}

/** Number of descendants shown when `item` is open (§12.3.3 Table 153, /Count). */
function visibleDescendants(item: PlacedItem): number {
  let n = 0;
  for (const kid of item.kids) n += 1 + (kid.open ? visibleDescendants(kid) : 0);
  return n;
}

function destOf(item: PlacedItem, pages: readonly PdfRef[]): string {
  const page = pages[item.page];
  if (!page) throw new PdfSyntaxError(`bookmark points at page ${item.page + 1}, past the end`);
  const [type, ...args] = item.view;
  return `[ ${serialize(page)} ${type}${args.map((a) => ` ${a === null ? "null" : pdfNumber(a)}`).join("")} ]`;
}

/** Builds the item objects of one level (§12.3.3 Table 153), numbering from `next`. */
function buildLevel(
  items: readonly PlacedItem[],
  parent: number,
  next: { num: number },
  pages: readonly PdfRef[],
  out: UpdateObject[],
): { first: number; last: number } {
  const nums = items.map(() => next.num++);
  items.forEach((item, i) => {
    const num = nums[i]!;
    const entries = [`/Title ${pdfTextString(item.title)}`, `/Parent ${parent} 0 R`];
    if (i > 0) entries.push(`/Prev ${nums[i - 1]} 0 R`);
    if (i < items.length - 1) entries.push(`/Next ${nums[i + 1]} 0 R`);
    if (item.kids.length) {
      const kids = buildLevel(item.kids, num, next, pages, out);
      const count = visibleDescendants(item);
      entries.push(`/First ${kids.first} 0 R`, `/Last ${kids.last} 0 R`, `/Count ${item.open ? count : -count}`);
    }
    entries.push(`/Dest ${destOf(item, pages)}`);
    out.push({ num, gen: 0, body: `<< ${entries.join(" ")} >>` });
  });
  return { first: nums[0]!, last: nums[nums.length - 1]! };
}

/**
 * Writes `items` as the outline of `file` (which qpdf wrote and which has no outline yet) and
 * returns how many items were written. `expectedPages` guards against a page-tree surprise.
 */
export async function writeOutline(file: string, items: readonly PlacedItem[], expectedPages: number): Promise<number> {
  if (items.length === 0) return 0;
  const pdf = await QpdfWrittenPdf.open(file);
  try {
    const catalog = await pdf.readObject(pdf.rootRef);
    if (catalog.kind !== "dict") throw new PdfSyntaxError("catalog is not a dictionary");
    const pages = await pdf.pageRefs(catalog);
    if (pages.length !== expectedPages) throw new PdfSyntaxError(`expected ${expectedPages} pages, found ${pages.length}`);
    const objects: UpdateObject[] = [];
    const rootNum = pdf.objectCount;
    const next = { num: rootNum + 1 };
    const { first, last } = buildLevel(items, rootNum, next, pages, objects);
    // The outline dictionary's /Count is the number of visible items at all levels (ISO 32000-2 Table 151).
    const visible = items.reduce((n, it) => n + 1 + (it.open ? visibleDescendants(it) : 0), 0);
    objects.push({ num: rootNum, gen: 0, body: `<< /Type /Outlines /First ${first} 0 R /Last ${last} 0 R /Count ${visible} >>` });
    // A new catalog: the same dictionary with /Outlines (replacing one if qpdf ever wrote it).
    const entries = new Map<string, PdfValue>(catalog.entries);
    entries.set("/Outlines", { kind: "ref", num: rootNum, gen: 0 });
    objects.push({ num: pdf.rootRef.num, gen: pdf.rootRef.gen, body: serialize({ kind: "dict", entries }) });
    await pdf.append(objects);
    return next.num - rootNum - 1;
  } finally {
    await pdf.close();
  }
}

/** Runs `fn` over `items` with at most `limit` running at once, keeping the order of results. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
