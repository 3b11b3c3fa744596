/**
 * Where images land: for each image XObject, the largest size (in inches) it is painted at, found
 * by following the current transformation matrix (ISO 32000-1 §8.3.4) through page content, form
 * XObjects (§8.10: the form's /Matrix, then its content) and annotation appearances (§12.5.5).
 * An image maps the unit square, so its placed width is the length of the CTM's first column
 * vector and its height that of the second (§8.9.4), whatever the rotation or skew.
 *
 * Correctness first: an image is reported `unsafe` — to be left exactly as it is — whenever some
 * place that paints it escapes this measurement (patterns, Type 3 glyphs, soft-mask groups, an
 * unreadable content stream, a name that does not resolve, any other referrer we do not walk).
 */
import { forEachOperator } from "../../pdf/content-stream.ts";
import {
  collectPages,
  contentRefs,
  imagesInUnmeasuredContexts,
  imagesUnder,
  referrers,
  resourcesOf,
  xobjectKind,
  xobjectsOf,
  type PageInfo,
  type Resources,
} from "../../pdf/page-graph.ts";
import { appearances, IDENTITY, matrixOf, multiply, type Appearance, type Matrix } from "../../pdf/pdf-matrix.ts";
import { dictAt, isRef, nameOf, type JsonDict, type PdfObjects } from "../../pdf/pdf-json.ts";

export interface ImageUse {
  /** Largest placed width of the image's unit square, in inches. */
  widthIn: number;
  heightIn: number;
}

export interface Placements {
  uses: Map<string, ImageUse>;
  /** Images some unmeasured context can paint: never to be changed. */
  unsafe: Set<string>;
}

export interface MeasureInput {
  objs: PdfObjects;
  /** The images the caller might change; only content that can reach them is read. */
  candidates: ReadonlySet<string>;
  /** Page count qpdf reported: a tree we walk differently is not trusted. */
  expectedPages: number;
  /** Decoded content of the given streams; null for one that could not be read within limits. */
  loadContent(refs: string[]): Promise<Map<string, Uint8Array | null>>;
}

/** Work bounds: beyond them the document is left to the lossless pass. */
const MAX_PLACEMENTS = 2_000_000;
const MAX_FORM_DEPTH = 16;

class BudgetExceeded extends Error {}

interface Placement {
  image: string;
  m: Matrix;
  /** The object holding the /XObject entry the image was found through. */
  container: string;
}

function formDict(objs: PdfObjects, ref: string): JsonDict {
  return objs.objects.get(ref)!.stream!.dict;
}

/** The pages and appearances that can paint a candidate, and the streams their walk needs. */
function planReads(
  objs: PdfObjects,
  pages: PageInfo[],
  reaches: (res: Resources | null) => boolean,
): { work: Work[]; needed: Set<string> } {
  const work: Work[] = [];
  const needed = new Set<string>();
  const formSeen = new Set<string>();
  const addForms = (res: Resources | null): void => {
    const x = res ? xobjectsOf(objs, res) : null;
    for (const v of Object.values(x?.entries ?? {})) {
      if (!isRef(v) || formSeen.has(v) || xobjectKind(objs, v) !== "Form") continue;
      formSeen.add(v);
      needed.add(v);
      addForms(resourcesOf(objs, formDict(objs, v), v));
    }
  };
  for (const page of pages) {
    const aps = appearances(objs, page.dict).filter((ap) => reaches(resourcesOf(objs, formDict(objs, ap.ref), ap.ref) ?? page.resources));
    const pageReaches = reaches(page.resources);
    if (!pageReaches && aps.length === 0) continue;
    work.push({ page, pageReaches, appearances: aps });
    if (pageReaches) {
      for (const r of contentRefs(objs, page.dict) ?? []) needed.add(r);
      addForms(page.resources);
    }
    for (const ap of aps) {
      needed.add(ap.ref);
      addForms(resourcesOf(objs, formDict(objs, ap.ref), ap.ref));
    }
  }
  return { work, needed };
}

interface Work {
  page: PageInfo;
  pageReaches: boolean;
  appearances: Appearance[];
}

/**
 * The content walker: follows q/Q/cm/Do through content and form XObjects and returns placements
 * relative to the matrix it starts from. A form's placements are computed once and reused at every
 * invocation (composed with the invoking CTM), so a logo form on 2,000 pages is parsed once.
 */
function createWalker(objs: PdfObjects, content: Map<string, Uint8Array | null>, unsafe: Set<string>) {
  const formCache = new Map<string, Placement[]>();
  let spent = 0;
  const markAll = (res: Resources | null): void => void imagesUnder(objs, res, unsafe);
  const charge = (n: number): void => {
    spent += n;
    if (spent > MAX_PLACEMENTS) throw new BudgetExceeded();
  };

  const doXObject = (name: string | null, res: Resources, ctm: Matrix, stack: readonly string[], out: Placement[]): void => {
    const x = xobjectsOf(objs, res);
    const ref = name !== null ? x?.entries[`/${name}`] : undefined;
    const kind = isRef(ref) ? xobjectKind(objs, ref) : null;
    if (!isRef(ref) || !x) return markAll(res); // a name we cannot resolve: whatever it paints is unknown
    if (kind === "Image") {
      charge(1);
      out.push({ image: ref, m: ctm, container: x.container });
    } else if (kind === "Form") {
      const inner = formPlacements(ref, res, stack);
      charge(inner.length);
      for (const p of inner) out.push({ image: p.image, m: multiply(p.m, ctm), container: p.container });
    }
  };

  const walk = (bytes: Uint8Array, res: Resources, base: Matrix, stack: readonly string[], out: Placement[]): void => {
    let ctm = base;
    const saved: Matrix[] = [];
    forEachOperator(bytes, (op, operands) => {
      if (op === "q") saved.push(ctm);
      else if (op === "Q") ctm = saved.pop() ?? ctm;
      else if (op === "cm") {
        const m = operands.slice(-6);
        if (m.length === 6 && m.every((o) => typeof o === "number")) ctm = multiply(m as unknown as Matrix, ctm);
      } else if (op === "Do") {
        const operand = operands[operands.length - 1];
        doXObject(typeof operand === "object" && operand !== null ? operand.name : null, res, ctm, stack, out);
      }
    });
  };

  const formPlacements = (ref: string, callerRes: Resources, stack: readonly string[]): Placement[] => {
    const dict = formDict(objs, ref);
    const own = resourcesOf(objs, dict, ref);
    const res = own ?? callerRes; // a form without /Resources uses its caller's (§7.8.3, deprecated)
    const cached = own ? formCache.get(ref) : undefined;
    if (cached) return cached;
    const out: Placement[] = [];
    const bytes = content.get(ref);
    if (stack.includes(ref) || stack.length >= MAX_FORM_DEPTH || !bytes) markAll(res);
    else walk(bytes, res, matrixOf(objs, dict["/Matrix"]), [...stack, ref], out);
    if (own) formCache.set(ref, out);
    return out;
  };

  return { walk, formPlacements, markAll };
}

/** Largest placement per image, and the objects each was reached through. */
class UseTable {
  readonly uses = new Map<string, ImageUse>();
  readonly walked = new Map<string, Set<string>>();
  readonly unsafe: Set<string>;

  constructor(unsafe: Set<string>) {
    this.unsafe = unsafe;
  }

  record(p: Placement, m: Matrix, userUnit: number): void {
    const w = (Math.hypot(m[0], m[1]) * userUnit) / 72;
    const h = (Math.hypot(m[2], m[3]) * userUnit) / 72;
    if (!Number.isFinite(w) || !Number.isFinite(h)) return void this.unsafe.add(p.image);
    const u = this.uses.get(p.image);
    if (u) {
      u.widthIn = Math.max(u.widthIn, w);
      u.heightIn = Math.max(u.heightIn, h);
    } else this.uses.set(p.image, { widthIn: w, heightIn: h });
    let c = this.walked.get(p.image);
    if (!c) this.walked.set(p.image, (c = new Set()));
    c.add(p.container);
  }
}

/** Measures every candidate image's largest placement; null when the document cannot be trusted. */
export async function measurePlacements(input: MeasureInput): Promise<Placements | null> {
  const { objs, candidates } = input;
  const pages = collectPages(objs);
  if (!pages || pages.length !== input.expectedPages) return null;

  const unsafe = imagesInUnmeasuredContexts(objs);
  const reachMemo = new Map<JsonDict, boolean>();
  const reaches = (res: Resources | null): boolean => {
    if (!res?.dict) return false;
    let r = reachMemo.get(res.dict);
    if (r === undefined) reachMemo.set(res.dict, (r = [...imagesUnder(objs, res, new Set())].some((i) => candidates.has(i))));
    return r;
  };
  const { work, needed } = planReads(objs, pages, reaches);
  if (work.length === 0) return { uses: new Map(), unsafe };
  const content = await input.loadContent([...needed]);
  const walker = createWalker(objs, content, unsafe);
  const table = new UseTable(unsafe);
  try {
    for (const { page, pageReaches, appearances: aps } of work) {
      if (pageReaches) walkPage(objs, page, content, walker, table);
      for (const ap of aps)
        for (const p of walker.formPlacements(ap.ref, page.resources, [])) table.record(p, multiply(p.m, ap.a), page.userUnit);
    }
  } catch (err) {
    if (err instanceof BudgetExceeded) return null;
    throw err;
  }
  markUnwalkedReferrers(objs, candidates, table);
  return { uses: table.uses, unsafe };
}

function walkPage(
  objs: PdfObjects,
  page: PageInfo,
  content: Map<string, Uint8Array | null>,
  walker: ReturnType<typeof createWalker>,
  table: UseTable,
): void {
  const parts = contentRefs(objs, page.dict)?.map((r) => content.get(r));
  if (!parts || parts.some((p) => !p)) return walker.markAll(page.resources);
  // A page's content streams are one stream split at token boundaries (§7.8.2).
  const out: Placement[] = [];
  walker.walk(Buffer.concat(parts.flatMap((p) => [p!, Buffer.from("\n")])), page.resources, IDENTITY, [], out);
  for (const p of out) table.record(p, p.m, page.userUnit);
}

/**
 * An image referred to from anywhere we did not walk may be painted there: leave it alone.
 * Object-reference dictionaries of the structure tree (§14.7.4.3) only point at it.
 */
function markUnwalkedReferrers(objs: PdfObjects, candidates: ReadonlySet<string>, table: UseTable): void {
  for (const [image, from] of referrers(objs, candidates)) {
    const seen = table.walked.get(image);
    const foreign = [...from].some((r) => !seen?.has(r) && nameOf(dictAt(objs, r)?.["/Type"]) !== "OBJR");
    if (foreign) table.unsafe.add(image);
  }
}
