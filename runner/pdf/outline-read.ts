/**
 * Reading an input's bookmarks (ISO 32000-1 §12.3.3) and embedded files (§7.11.4) with one qpdf
 * run: `qpdf --json=2 --json-key=outlines --json-key=pages --json-key=attachments` (qpdf manual,
 * "qpdf JSON"). qpdf decodes every title to UTF-8 and looks named destinations up (the catalog's
 * /Dests dictionary, PDF 1.1, and the /Names /Dests name tree, §12.3.2.3) and GoTo actions (/A,
 * §12.6.4.2); what it leaves to us, we finish here:
 *  - a destination that is a dictionary `<< /D [page /XYZ …] >>` — the form name trees hold as
 *    LaTeX/hyperref writes them, for which qpdf gives no page (issue #13);
 *  - a destination that is an indirect object, looked up with one more qpdf run;
 *  - a page given as an integer (a page index, as some producers write even for local targets).
 * The page of a destination is found from its page reference in the document's page list.
 */
import { qpdfJson, type QpdfContext } from "../engines/qpdf.ts";

/** A destination's view after its page: ["/XYZ", left, top, zoom], ["/Fit"], ["/FitH", top], … (§12.3.2.2). */
export type DestView = [string, ...(number | null)[]];

/** One bookmark of an input: `page` is 1-based in that input, null without a page destination. */
export interface OutlineNode {
  title: string;
  page: number | null;
  view: DestView | null;
  open: boolean;
  kids: OutlineNode[];
  /** Lowest and highest page of this item and its descendants (Infinity/-Infinity without any). */
  lo: number;
  hi: number;
}

/** An embedded file of the document's EmbeddedFiles name tree (§7.11.4, §7.7.4). */
export interface Attachment {
  key: string;
  filename: string;
  /** The embedded file stream ("12 0 R"). */
  contents: string;
  description: string | null;
  mimetype: string | null;
}

export interface DocumentStructure {
  outline: OutlineNode[];
  attachments: Attachment[];
}

/** §12.3.2.2 Table 151: destination types and how many numbers follow each. */
const VIEW_ARITY = new Map<string, number>([
  ["/XYZ", 3],
  ["/Fit", 0],
  ["/FitH", 1],
  ["/FitV", 1],
  ["/FitR", 4],
  ["/FitB", 0],
  ["/FitBH", 1],
  ["/FitBV", 1],
]);
/** Deeper levels are dropped: no reader shows them usefully, and it bounds our recursion. */
export const MAX_OUTLINE_DEPTH = 64;
/** Indirect destinations looked up in the extra qpdf run; more are left without a page. */
const MAX_LOOKUPS = 5000;
const REF = /^\d+ \d+ R$/;

/** The view of a destination array ["12 0 R", "/XYZ", 56.7, 785.2, 0]; null when malformed. */
function toView(dest: unknown[]): DestView | null {
  if (typeof dest[1] !== "string") return null;
  const [, type, ...args] = dest as [unknown, string, ...unknown[]];
  const arity = VIEW_ARITY.get(type);
  if (arity === undefined || args.length < arity) return null;
  const nums = args.slice(0, arity).map((a) => (typeof a === "number" && Number.isFinite(a) ? a : null));
  // null means "keep the current value" (Table 151), except in /FitR's rectangle.
  if (type === "/FitR" && nums.includes(null)) return null;
  return [type, ...nums];
}

type Resolve = (v: unknown) => unknown;

/** The destination array an item's destination stands for: through `<< /D … >>` and indirect objects. */
function destArray(dest: unknown, resolve: Resolve): unknown[] | null {
  let d = dest;
  for (let hops = 0; hops < 4; hops++) {
    if (typeof d === "string" && REF.test(d)) d = resolve(d);
    else if (d && typeof d === "object" && !Array.isArray(d) && "/D" in d) d = (d as Record<string, unknown>)["/D"];
    else break;
  }
  return Array.isArray(d) ? d : null;
}

interface RawItem {
  title?: unknown;
  dest?: unknown;
  destpageposfrom1?: unknown;
  open?: unknown;
  kids?: unknown;
}

/**
 * Whether qpdf left an item's destination for us (it placed no page): a destination that is an
 * indirect object is added to `refs` for looking up.
 */
function unplacedDest(raw: RawItem, refs: Set<string>): boolean {
  const d = raw.dest;
  if (typeof raw.destpageposfrom1 === "number" || d === undefined || d === null) return false;
  const inner = d && typeof d === "object" && !Array.isArray(d) ? (d as Record<string, unknown>)["/D"] : d;
  if (typeof inner === "string" && REF.test(inner) && refs.size < MAX_LOOKUPS) refs.add(inner);
  return true;
}

/**
 * What qpdf left for us to finish, at any depth: destinations that are indirect objects (to look
 * up) and whether any destination still needs the page list (a page reference qpdf did not place).
 */
function unfinished(items: unknown, refs: Set<string>, depth = 1): boolean {
  if (!Array.isArray(items) || depth > MAX_OUTLINE_DEPTH) return false;
  let needsPages = false;
  for (const raw of items as RawItem[]) {
    if (typeof raw !== "object" || raw === null) continue;
    if (unplacedDest(raw, refs)) needsPages = true;
    if (unfinished(raw.kids, refs, depth + 1)) needsPages = true;
  }
  return needsPages;
}

/** The item's page: the position qpdf placed, else the page its destination names (via `pageOf`), else null. */
function itemPage(raw: RawItem, dest: unknown[] | null, pageOf: (target: unknown) => number | null): number | null {
  const pos = raw.destpageposfrom1;
  if (typeof pos === "number" && Number.isInteger(pos) && pos >= 1) return pos;
  return dest ? pageOf(dest[0]) : null;
}

/** Turns qpdf's outline JSON into nodes; `pageOf` maps a page reference or index to its 1-based position. */
export function toNodes(items: unknown, pageOf: (target: unknown) => number | null, resolve: Resolve, depth = 1): OutlineNode[] {
  if (!Array.isArray(items) || depth > MAX_OUTLINE_DEPTH) return [];
  const out: OutlineNode[] = [];
  for (const raw of items as RawItem[]) {
    if (typeof raw !== "object" || raw === null) continue;
    const dest = destArray(raw.dest, resolve);
    const page = itemPage(raw, dest, pageOf);
    const kids = toNodes(raw.kids, pageOf, resolve, depth + 1);
    out.push({
      title: typeof raw.title === "string" ? raw.title : "",
      page,
      view: page === null || !dest ? null : toView(dest),
      open: raw.open === true,
      kids,
      lo: kids.reduce((m, k) => Math.min(m, k.lo), page ?? Infinity),
      hi: kids.reduce((m, k) => Math.max(m, k.hi), page ?? -Infinity),
    });
  }
  return out;
}

function toAttachments(json: unknown): Attachment[] {
  if (!json || typeof json !== "object") return [];
  const out: Attachment[] = [];
  for (const [key, raw] of Object.entries(json as Record<string, Record<string, unknown>>)) {
    const contents = raw.preferredcontents;
    if (typeof contents !== "string" || !REF.test(contents)) continue;
    const streams = raw.streams as Record<string, { mimetype?: unknown }> | undefined;
    const mimetype = Object.values(streams ?? {}).find((s) => typeof s.mimetype === "string")?.mimetype;
    out.push({
      key,
      filename: typeof raw.preferredname === "string" && raw.preferredname ? raw.preferredname : key,
      contents,
      description: typeof raw.description === "string" ? raw.description : null,
      mimetype: typeof mimetype === "string" ? mimetype.replace(/^\//, "").replace(/#2[Ff]/g, "/") : null,
    });
  }
  return out;
}

/**
 * Reads an input's bookmarks (unless `outline` is false) and embedded files: one qpdf run, and a
 * second only when some destination needs the page list or an indirect object looked up.
 */
export async function readStructure(
  ctx: QpdfContext,
  file: string,
  opts: { outline: boolean } = { outline: true },
): Promise<DocumentStructure> {
  const keys = ["--json-key=attachments", ...(opts.outline ? ["--json-key=outlines"] : [])];
  const json = (await qpdfJson(ctx, keys, file)) as { outlines?: unknown; attachments?: unknown };
  const attachments = toAttachments(json.attachments);
  if (!opts.outline) return { outline: [], attachments };
  const refs = new Set<string>();
  const byRef = new Map<string, number>();
  const found = new Map<string, unknown>();
  let pageCount = 0;
  if (unfinished(json.outlines, refs)) {
    const lookups = [...refs].map((r) => `--json-object=${r.split(" ").slice(0, 2).join(",")}`);
    const more = (await qpdfJson(ctx, ["--json-key=pages", ...(lookups.length ? ["--json-key=qpdf", ...lookups] : [])], file)) as {
      pages?: { object?: unknown }[];
      qpdf?: [unknown, Record<string, { value?: unknown }>];
    };
    const pages = Array.isArray(more.pages) ? more.pages : [];
    pageCount = pages.length;
    pages.forEach((p, i) => typeof p.object === "string" && byRef.set(p.object, i + 1));
    for (const [k, v] of Object.entries(more.qpdf?.[1] ?? {})) if (k.startsWith("obj:")) found.set(k.slice(4), v.value);
  }
  const pageOf = (target: unknown): number | null => {
    if (typeof target === "string") return byRef.get(target) ?? null;
    return typeof target === "number" && Number.isInteger(target) && target >= 0 && target < pageCount ? target + 1 : null;
  };
  return { outline: toNodes(json.outlines, pageOf, (r) => found.get(r as string)), attachments };
}

/** Reads an input's bookmarks (an empty list when it has none). */
export async function readOutline(ctx: QpdfContext, file: string): Promise<OutlineNode[]> {
  return (await readStructure(ctx, file)).outline;
}
