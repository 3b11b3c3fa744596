/**
 * The page graph of a PDF read from qpdf JSON: pages in order with their inherited resources, the
 * XObjects a resource dictionary can reach, and which objects refer to which. The placement walker
 * (image-placement.ts) builds on these.
 */
import { deref, dictAt, isDict, isRef, nameOf, type JsonDict, type JsonValue, type PdfObjects } from "./pdf-json.ts";

/**
 * A resource dictionary and the indirect object that holds it: the dictionary itself when it is
 * indirect, otherwise the object it is written in (a page, a form XObject).
 */
export interface Resources {
  dict: JsonDict | null;
  container: string;
}

export interface PageInfo {
  ref: string;
  dict: JsonDict;
  resources: Resources;
  /** ISO 32000-1 §14.11.2 (PDF 1.6): size of a user-space unit in 1/72 inch. */
  userUnit: number;
}

/** Resolves a value that may be a reference, keeping track of which object holds the result. */
export function holder(objs: PdfObjects, v: JsonValue | undefined, container: string): { dict: JsonDict | null; container: string } {
  return isRef(v) ? { dict: dictAt(objs, v), container: v } : { dict: isDict(v) ? v : null, container };
}

export function resourcesOf(objs: PdfObjects, owner: JsonDict, ownerRef: string): Resources | null {
  if (owner["/Resources"] === undefined) return null;
  return holder(objs, owner["/Resources"], ownerRef);
}

/** The entries of a resource dictionary's /XObject subdictionary, with their holder. */
export function xobjectsOf(objs: PdfObjects, res: Resources): { entries: JsonDict; container: string } | null {
  if (!res.dict) return null;
  const x = holder(objs, res.dict["/XObject"], res.container);
  return x.dict ? { entries: x.dict, container: x.container } : null;
}

/**
 * Pages in document order, following /Kids from the catalog's /Pages (ISO 32000-1 §7.7.3), with
 * /Resources inherited from ancestors (§7.7.3.4). Returns null for a tree we cannot follow with
 * certainty (cycles, direct page objects): the caller then leaves the images alone.
 */
export function collectPages(objs: PdfObjects): PageInfo[] | null {
  const root = dictAt(objs, objs.trailer["/Root"]);
  const top = root?.["/Pages"];
  if (!isRef(top)) return null;
  const pages: PageInfo[] = [];
  const seen = new Set<string>();
  let ok = true;
  const visit = (ref: string, inherited: Resources | null, depth: number): void => {
    const node = dictAt(objs, ref);
    if (!node || seen.has(ref) || depth > 64) {
      ok = false;
      return;
    }
    seen.add(ref);
    const resources = resourcesOf(objs, node, ref) ?? inherited;
    const kids = deref(objs, node["/Kids"]);
    if (nameOf(node["/Type"]) === "Pages" || (Array.isArray(kids) && nameOf(node["/Type"]) !== "Page")) {
      if (!Array.isArray(kids)) return;
      for (const kid of kids) {
        if (isRef(kid)) visit(kid, resources, depth + 1);
        else ok = false;
      }
      return;
    }
    const uu = deref(objs, node["/UserUnit"]);
    pages.push({
      ref,
      dict: node,
      resources: resources ?? { dict: null, container: ref },
      userUnit: typeof uu === "number" && uu > 0 ? uu : 1,
    });
  };
  visit(top, null, 0);
  return ok ? pages : null;
}

/** A page's content streams: /Contents is one stream or an array of them (§7.7.3.3). */
export function contentRefs(objs: PdfObjects, page: JsonDict): string[] | null {
  const c = page["/Contents"];
  if (c === undefined || c === null) return [];
  if (isRef(c)) {
    const target = objs.objects.get(c);
    if (target?.stream) return [c];
    const arr = target?.value;
    if (Array.isArray(arr) && arr.every(isRef)) return arr;
    return target?.value === null ? [] : null;
  }
  if (Array.isArray(c) && c.every(isRef)) return c;
  return null;
}

/** The subtype of an XObject stream: "Image", "Form", or null for anything else. */
export function xobjectKind(objs: PdfObjects, ref: string): "Image" | "Form" | null {
  const dict = objs.objects.get(ref)?.stream?.dict;
  const subtype = nameOf(dict?.["/Subtype"]);
  return subtype === "Image" || subtype === "Form" ? subtype : null;
}

/**
 * Every image XObject a resource dictionary can reach, through nested form XObjects' own resources.
 * An over-approximation of what its content can paint, used to mark images we cannot measure.
 */
export function imagesUnder(objs: PdfObjects, res: Resources | null, into: Set<string>, seen = new Set<string>()): Set<string> {
  const x = res ? xobjectsOf(objs, res) : null;
  if (!x) return into;
  for (const v of Object.values(x.entries)) {
    if (!isRef(v) || seen.has(v)) continue;
    seen.add(v);
    const kind = xobjectKind(objs, v);
    if (kind === "Image") into.add(v);
    else if (kind === "Form") imagesUnder(objs, resourcesOf(objs, objs.objects.get(v)!.stream!.dict, v), into, seen);
  }
  return into;
}

function collectRefs(v: JsonValue | undefined, out: Set<string>): void {
  if (isRef(v)) out.add(v);
  else if (Array.isArray(v)) for (const x of v) collectRefs(x, out);
  else if (isDict(v)) for (const x of Object.values(v)) collectRefs(x, out);
}

/** For each of `targets`, the objects whose value or dictionary refers to it. */
export function referrers(objs: PdfObjects, targets: ReadonlySet<string>): Map<string, Set<string>> {
  const map = new Map<string, Set<string>>();
  const refs = new Set<string>();
  for (const [key, obj] of objs.objects) {
    refs.clear();
    collectRefs(obj.stream ? obj.stream.dict : obj.value, refs);
    for (const r of refs) {
      if (!targets.has(r)) continue;
      let set = map.get(r);
      if (!set) map.set(r, (set = new Set()));
      set.add(key);
    }
  }
  return map;
}

/**
 * Images that content we do not measure can paint: tiling patterns (§8.7.3), Type 3 glyphs
 * (§9.6.5) and soft-mask groups (§11.6.5.2) draw in coordinate systems of their own.
 */
export function imagesInUnmeasuredContexts(objs: PdfObjects): Set<string> {
  const out = new Set<string>();
  // Soft masks and Type 3 fonts may be direct dictionaries nested in other objects: look at every
  // dictionary inside every object, without following references.
  const visit = (d: JsonDict, ref: string, depth: number): void => {
    if (d["/PatternType"] === 1 || nameOf(d["/Subtype"]) === "Type3") imagesUnder(objs, resourcesOf(objs, d, ref), out);
    const s = nameOf(d["/S"]);
    const g = d["/G"];
    if ((s === "Alpha" || s === "Luminosity") && isRef(g)) {
      const group = dictAt(objs, g);
      if (group) imagesUnder(objs, resourcesOf(objs, group, g), out);
    }
    if (depth > 32) return;
    for (const v of Object.values(d)) {
      if (isDict(v)) visit(v, ref, depth + 1);
      else if (Array.isArray(v)) for (const x of v) if (isDict(x)) visit(x, ref, depth + 1);
    }
  };
  for (const [ref, obj] of objs.objects) {
    const d = obj.stream ? obj.stream.dict : obj.value;
    if (isDict(d)) visit(d, ref, 0);
  }
  return out;
}
