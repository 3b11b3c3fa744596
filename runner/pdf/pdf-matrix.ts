/**
 * Geometry of PDF content: transformation matrices (ISO 32000-1 §8.3.3–8.3.4), rectangles, and
 * where an annotation's appearance stream lands on the page (§12.5.5).
 */
import { deref, dictAt, isDict, isRef, type JsonDict, type JsonValue, type PdfObjects } from "./pdf-json.ts";

export type Matrix = readonly [number, number, number, number, number, number];
export const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];

/** m × n in PDF's row-vector convention: apply m, then n (§8.3.4). */
export function multiply(m: Matrix, n: Matrix): Matrix {
  return [
    m[0] * n[0] + m[1] * n[2],
    m[0] * n[1] + m[1] * n[3],
    m[2] * n[0] + m[3] * n[2],
    m[2] * n[1] + m[3] * n[3],
    m[4] * n[0] + m[5] * n[2] + n[4],
    m[4] * n[1] + m[5] * n[3] + n[5],
  ];
}

/** The point (x, y) mapped through m. */
export function apply(m: Matrix, x: number, y: number): [number, number] {
  return [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]];
}

/** The bounding box of the rectangle [x0, x1] × [y0, y1] mapped through m. */
export function boxOf(m: Matrix, x0: number, y0: number, x1: number, y1: number): { x0: number; y0: number; x1: number; y1: number } {
  const pts = [apply(m, x0, y0), apply(m, x1, y0), apply(m, x0, y1), apply(m, x1, y1)];
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]);
  return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys) };
}

/** The inverse of an invertible matrix (a viewport's transform always is). */
export function inverse(m: Matrix): Matrix {
  const det = m[0] * m[3] - m[1] * m[2];
  return [m[3] / det, -m[1] / det, -m[2] / det, m[0] / det, (m[2] * m[5] - m[3] * m[4]) / det, (m[1] * m[4] - m[0] * m[5]) / det];
}

/** A /Matrix entry, or the identity when absent or malformed (as viewers treat it). */
export function matrixOf(objs: PdfObjects, value: JsonValue | undefined): Matrix {
  const v = deref(objs, value);
  return Array.isArray(v) && v.length === 6 && v.every((x) => typeof x === "number")
    ? [v[0]!, v[1]!, v[2]!, v[3]!, v[4]!, v[5]!]
    : IDENTITY;
}

/** A rectangle, normalized to [llx lly urx ury] (§7.9.5). */
export function rectOf(objs: PdfObjects, v: JsonValue | undefined): [number, number, number, number] | null {
  const r = deref(objs, v);
  if (!Array.isArray(r) || r.length !== 4 || !r.every((x) => typeof x === "number")) return null;
  const [a, b, c, d] = r;
  return [Math.min(a!, c!), Math.min(b!, d!), Math.max(a!, c!), Math.max(b!, d!)];
}

/** An annotation appearance stream and the matrix A of §12.5.5 that maps it onto /Rect. */
export interface Appearance {
  ref: string;
  a: Matrix;
}

/** The appearance streams of an annotation: /N, /R and /D, each a stream or a dictionary of states. */
function appearanceStreams(objs: PdfObjects, ap: JsonDict): string[] {
  const streams: string[] = [];
  const add = (v: JsonValue | undefined): void => {
    if (isRef(v) && objs.objects.get(v)?.stream) streams.push(v);
  };
  for (const key of ["/N", "/R", "/D"]) {
    const v = ap[key];
    if (isRef(v) && objs.objects.get(v)?.stream) add(v);
    else Object.values(dictAt(objs, v) ?? {}).forEach(add);
  }
  return streams;
}

/**
 * ISO 32000-1 §12.5.5: the form's BBox, transformed by its Matrix, is fitted to the annotation's
 * Rect by a matrix A that only scales and translates.
 */
function fitToRect(
  objs: PdfObjects,
  form: JsonDict,
  bbox: [number, number, number, number],
  rect: [number, number, number, number],
): Matrix | null {
  const m = matrixOf(objs, form["/Matrix"]);
  const corners = [
    [bbox[0], bbox[1]],
    [bbox[2], bbox[1]],
    [bbox[0], bbox[3]],
    [bbox[2], bbox[3]],
  ] as const;
  const xs = corners.map(([x, y]) => x * m[0] + y * m[2] + m[4]);
  const ys = corners.map(([x, y]) => x * m[1] + y * m[3] + m[5]);
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  if (!(x1 - x0 > 0) || !(y1 - y0 > 0)) return null;
  const sx = (rect[2] - rect[0]) / (x1 - x0);
  const sy = (rect[3] - rect[1]) / (y1 - y0);
  return [sx, 0, 0, sy, rect[0] - x0 * sx, rect[1] - y0 * sy];
}

/** The appearance streams of a page's annotations, each with its matrix A onto the annotation's /Rect. */
export function appearances(objs: PdfObjects, page: JsonDict): Appearance[] {
  const out: Appearance[] = [];
  const annots = deref(objs, page["/Annots"]);
  if (!Array.isArray(annots)) return out;
  for (const annotV of annots) {
    const annot = isRef(annotV) ? dictAt(objs, annotV) : isDict(annotV) ? annotV : null;
    const rect = annot ? rectOf(objs, annot["/Rect"]) : null;
    const ap = annot ? dictAt(objs, annot["/AP"]) : null;
    if (!ap || !rect) continue;
    for (const ref of appearanceStreams(objs, ap)) {
      const form = objs.objects.get(ref)!.stream!.dict;
      const bbox = rectOf(objs, form["/BBox"]);
      const a = bbox ? fitToRect(objs, form, bbox, rect) : null;
      if (a) out.push({ ref, a });
    }
  }
  return out;
}
