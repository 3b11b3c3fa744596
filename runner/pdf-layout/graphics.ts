/**
 * Reads the graphics of one page from pdfjs' operator list: the straight lines that can be table
 * rules (stroked segments, filled rectangles thin enough to be lines, and the edges of filled boxes
 * where the colour changes) and the raster images.
 *
 * Paths in the operator list are in user space, so the walk keeps the current transformation
 * matrix itself (save/restore, cm, form XObjects; ISO 32000-1 §8.4.4) and maps everything through
 * the viewport transform to top-left page coordinates. Runs in the extraction worker.
 */
import { apply, boxOf, multiply, type Matrix } from "../pdf/pdf-matrix.ts";
import { coverage } from "./intervals.ts";
import type { PageImage, Rule } from "./types.ts";

/** pdfjs' OPS codes and path drawing codes (DrawOPS) that the walk needs. */
export interface OpCodes {
  save: number;
  restore: number;
  transform: number;
  constructPath: number;
  stroke: number;
  closeStroke: number;
  fill: number;
  eoFill: number;
  fillStroke: number;
  eoFillStroke: number;
  closeFillStroke: number;
  closeEOFillStroke: number;
  setFillRGBColor: number;
  setStrokeRGBColor: number;
  /** A pattern fill (its colour is the pattern's) and no fill at all. */
  setFillColorN?: number;
  setFillTransparent?: number;
  paintFormXObjectBegin: number;
  paintFormXObjectEnd: number;
  paintImageXObject: number;
  paintInlineImageXObject: number;
  beginAnnotation?: number;
  endAnnotation?: number;
}

const MOVE = 0;
const LINE = 1;
const CURVE = 2;
const QUAD = 3;
const CLOSE = 4;

/** Lines thinner than this (in points) count as rules when drawn as filled rectangles. */
const THIN = 2.5;
/** Images smaller than this on the page (points) are decoration, not content. */
const MIN_IMAGE = 12;

export interface RawImage {
  width: number;
  height: number;
  kind: number;
  data: Uint8Array | Uint8ClampedArray;
}

interface State {
  ctm: Matrix;
  fillLight: boolean;
  strokeLight: boolean;
  /** The fill colour ("#rrggbb"), or a name of its own for a pattern's (never the same as another fill's). */
  fill: string;
}

/** A filled box of a page (cell shading, a framed area), in device space, and its colour. */
export interface FilledBox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  fill: string;
}

/** A colour too light to be seen as a line on white paper ("#f0f0f0" and lighter). */
function isLight(hex: unknown): boolean {
  if (typeof hex !== "string" || !/^#[0-9a-f]{6}$/i.test(hex)) return false;
  const v = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
  return v.every((c) => c >= 0xf0);
}

/** The polylines of a pdfjs path (curves are reduced to their end points: they are never rules). */
function subpaths(data: ArrayLike<number>): [number, number][][] {
  const out: [number, number][][] = [];
  let cur: [number, number][] = [];
  for (let i = 0; i < data.length;) {
    const op = data[i++];
    if (op === MOVE) {
      if (cur.length) out.push(cur);
      cur = [[data[i]!, data[i + 1]!]];
      i += 2;
    } else if (op === LINE) {
      cur.push([data[i]!, data[i + 1]!]);
      i += 2;
    } else if (op === CURVE) {
      cur.push([Number.NaN, Number.NaN], [data[i + 4]!, data[i + 5]!]);
      i += 6;
    } else if (op === QUAD) {
      cur.push([Number.NaN, Number.NaN], [data[i + 2]!, data[i + 3]!]);
      i += 4;
    } else if (op === CLOSE) {
      if (cur.length) cur.push(cur[0]!);
    } else break;
  }
  if (cur.length) out.push(cur);
  return out;
}

/** A stroked segment longer than this (points) is a rule; a glyph's or a dot's strokes are shorter. */
const RULE = 1;
/** A stroked segment at least this long (points), and up to RULE, is a bit of a rule drawn in pieces. */
const BIT = 0.1;
/** Bits of one rule follow each other within this (points) on one line. */
const BIT_GAP = 0.5;

/** An axis-aligned segment from a to b at least `min` long, as a rule; null otherwise. */
function axisSegment(a: [number, number], b: [number, number], min: number): Rule | null {
  if (!Number.isFinite(a[0]) || !Number.isFinite(b[0])) return null;
  const horizontal = Math.abs(a[1] - b[1]) < 0.5 && Math.abs(a[0] - b[0]) >= min;
  const vertical = Math.abs(a[0] - b[0]) < 0.5 && Math.abs(a[1] - b[1]) >= min;
  if (!horizontal && !vertical) return null;
  return { x0: Math.min(a[0], b[0]), y0: Math.min(a[1], b[1]), x1: Math.max(a[0], b[0]), y1: Math.max(a[1], b[1]) };
}

/** Rules of a stroked path: each axis-aligned segment longer than RULE; shorter ones of BIT or more go to `bits` (see joinedBits). */
function strokedRules(paths: [number, number][][], bits: Rule[]): Rule[] {
  const rules: Rule[] = [];
  for (const p of paths) {
    for (let i = 1; i < p.length; i++) {
      const r = axisSegment(p[i - 1]!, p[i]!, BIT);
      if (!r) continue;
      const [long, across] = [Math.max(r.x1 - r.x0, r.y1 - r.y0), Math.min(r.x1 - r.x0, r.y1 - r.y0)];
      if (long > RULE) rules.push(r);
      // A bit lies on its line: a flattened curve's short chords slant.
      else if (across <= BIT / 2) bits.push(r);
    }
  }
  return rules;
}

/**
 * The rules drawn as runs of bits: stroked segments shorter than a rule that follow each other on
 * one line, each touching the next (a dashed or dotted border drawn piece by piece, 0.81 pt a
 * piece, each in a clip of its own). A run of two bits or more, longer than RULE in all, is one
 * rule from its first bit to its last; a bit alone (a glyph's stroke, a dot) is none.
 */
export function joinedBits(bits: readonly Rule[]): Rule[] {
  // Bits on one line: the same y (horizontal) or x (vertical), within half a point.
  const lines = new Map<string, { horizontal: boolean; bits: Rule[] }>();
  for (const b of bits) {
    const horizontal = b.x1 - b.x0 >= b.y1 - b.y0;
    const key = `${horizontal ? "h" : "v"}${Math.round((horizontal ? b.y0 : b.x0) * 2)}`;
    const line = lines.get(key) ?? { horizontal, bits: [] };
    line.bits.push(b);
    lines.set(key, line);
  }
  return [...lines.values()].flatMap((line) => bitRuns(line.bits, line.horizontal));
}

/** The rules that the bits of one line make (see joinedBits), horizontal or vertical. */
function bitRuns(line: Rule[], horizontal: boolean): Rule[] {
  const [lo, hi] = horizontal ? (["x0", "x1"] as const) : (["y0", "y1"] as const);
  const sorted = line.sort((a, b) => a[lo] - b[lo]);
  const rules: Rule[] = [];
  let start = 0;
  let to = sorted[0]?.[hi] ?? 0;
  for (let i = 1; i <= sorted.length; i++) {
    const cur = sorted[i];
    if (cur && cur[lo] - to <= BIT_GAP) {
      to = Math.max(to, cur[hi]);
      continue;
    }
    const from = sorted[start]![lo];
    if (i - start >= 2 && to - from > RULE) {
      const at = horizontal ? sorted[start]!.y0 : sorted[start]!.x0;
      rules.push(horizontal ? { x0: from, x1: to, y0: at, y1: at } : { x0: at, x1: at, y0: from, y1: to });
    }
    start = i;
    if (cur) to = cur[hi];
  }
  return rules;
}

/** Rules of a filled path: thin axis-aligned rectangles become their centre line; wider ones go to `boxes` (see boxEdges). */
function filledRules(paths: [number, number][][], fill: string, boxes: FilledBox[]): Rule[] {
  const rules: Rule[] = [];
  for (const p of paths) {
    const pts = p.filter((q) => Number.isFinite(q[0]));
    if (pts.length < 4 || pts.length > 6) continue;
    const xs = pts.map((q) => q[0]);
    const ys = pts.map((q) => q[1]);
    const x0 = Math.min(...xs),
      x1 = Math.max(...xs),
      y0 = Math.min(...ys),
      y1 = Math.max(...ys);
    const axisAligned = pts.every(
      (q) => (Math.abs(q[0] - x0) < 0.5 || Math.abs(q[0] - x1) < 0.5) && (Math.abs(q[1] - y0) < 0.5 || Math.abs(q[1] - y1) < 0.5),
    );
    if (!axisAligned) continue;
    if (y1 - y0 <= THIN && x1 - x0 > y1 - y0) rules.push({ x0, x1, y0: (y0 + y1) / 2, y1: (y0 + y1) / 2 });
    else if (x1 - x0 <= THIN && y1 - y0 > x1 - x0) rules.push({ x0: (x0 + x1) / 2, x1: (x0 + x1) / 2, y0, y1 });
    else if (x1 - x0 > THIN && y1 - y0 > THIN) boxes.push({ x0, y0, x1, y1, fill });
  }
  return rules;
}

/** Boxes this close (points) touch: an edge between them shows nothing. */
const ABUT = 0.5;
/** An edge this much covered (share of its length) by the same colour beyond it shows nothing. */
const HIDDEN_EDGE = 0.9;
/** Above this many boxes of one colour, every edge is kept (the test is quadratic in them). */
const MAX_SAME_FILL = 500;

/** One edge of a filled box: which side, the line it lies on, its extent along that line. */
interface BoxEdge {
  side: "top" | "bottom" | "left" | "right";
  at: number;
  from: number;
  to: number;
}

/** The four edges of a box. */
const edgesOf = (b: FilledBox): BoxEdge[] => [
  { side: "top", at: b.y0, from: b.x0, to: b.x1 },
  { side: "bottom", at: b.y1, from: b.x0, to: b.x1 },
  { side: "left", at: b.x0, from: b.y0, to: b.y1 },
  { side: "right", at: b.x1, from: b.y0, to: b.y1 },
];

/** Whether the colour of the boxes `same` but `own` lies just beyond `own`'s edge `e`, along at least HIDDEN_EDGE of it. */
function coveredBeyond(e: BoxEdge, own: FilledBox, same: readonly FilledBox[]): boolean {
  const out = e.side === "top" || e.side === "left" ? -1 : 1;
  const [lo, hi] = [Math.min(e.at, e.at + out), Math.max(e.at, e.at + out)];
  const across = e.side === "top" || e.side === "bottom";
  const spans = same
    .filter((o) => o !== own && (across ? o.y0 - ABUT <= lo && o.y1 + ABUT >= hi : o.x0 - ABUT <= lo && o.x1 + ABUT >= hi))
    .map((o): [number, number] => (across ? [o.x0 - ABUT, o.x1 + ABUT] : [o.y0 - ABUT, o.y1 + ABUT]))
    .sort((p, q) => p[0] - q[0]);
  return coverage(e.from, e.to, spans) >= HIDDEN_EDGE;
}

/**
 * Edges of one side that lie on one line and touch or overlap, joined: the border of the area they
 * bound, drawn once (a line's shading under the next one's, flush with its cell's sides, is one side
 * of the cell's shading, not two pieces that end inside it).
 */
function joined(edges: readonly BoxEdge[]): BoxEdge[] {
  const sorted = [...edges].sort((a, b) => (a.side === b.side ? a.at - b.at || a.from - b.from : a.side < b.side ? -1 : 1));
  const out: BoxEdge[] = [];
  for (const e of sorted) {
    const open = out.findLast((o) => o.side === e.side && Math.abs(o.at - e.at) <= ABUT && e.from <= o.to + ABUT);
    if (open) open.to = Math.max(open.to, e.to);
    else out.push({ ...e });
  }
  return out;
}

/**
 * The edges of filled boxes that show, as rules: where the colour changes. A box's edge delimits
 * cells like a drawn rule does (cell shading, a framed area), but not where the same colour goes on
 * beyond it: two boxes of one colour that touch (Word shades a wrapped paragraph line by line, and a
 * row's cells one by one) or one inside another (a paragraph's shading inset in its cell's) are one
 * area to the eye, and their shared edges are no rules. Where such boxes share a border (lines'
 * shadings flush with their cell's sides), it is drawn once, whole (joined): pieces ending inside
 * the cell would be taken for the ends of a row's borders by the lattice.
 */
export function boxEdges(boxes: readonly FilledBox[]): Rule[] {
  const byFill = new Map<string, FilledBox[]>();
  for (const b of boxes) {
    const same = byFill.get(b.fill);
    if (same) same.push(b);
    else byFill.set(b.fill, [b]);
  }
  const rules: Rule[] = [];
  for (const same of byFill.values()) {
    const checked = same.length <= MAX_SAME_FILL;
    const showing = same.flatMap((b) => edgesOf(b).filter((e) => !checked || !coveredBeyond(e, b, same)));
    for (const e of checked ? joined(showing) : showing) {
      rules.push(
        e.side === "top" || e.side === "bottom"
          ? { x0: e.from, x1: e.to, y0: e.at, y1: e.at }
          : { x0: e.at, x1: e.at, y0: e.from, y1: e.to },
      );
    }
  }
  return rules;
}

function mapPaths(paths: [number, number][][], m: Matrix): [number, number][][] {
  return paths.map((p) => p.map((q) => (Number.isFinite(q[0]) ? apply(m, q[0], q[1]) : q)));
}

/** Converts pdfjs image data to 1, 3 or 4 channels (1-bit images are expanded to grey). */
function pixelsOf(img: RawImage): { channels: 1 | 3 | 4; pixels: Uint8Array } | null {
  const n = img.width * img.height;
  if (img.kind === 3 && img.data.length >= n * 4) return { channels: 4, pixels: new Uint8Array(img.data.subarray(0, n * 4)) };
  if (img.kind === 2 && img.data.length >= n * 3) return { channels: 3, pixels: new Uint8Array(img.data.subarray(0, n * 3)) };
  if (img.kind === 1) {
    const rowBytes = (img.width + 7) >> 3;
    if (img.data.length < rowBytes * img.height) return null;
    const out = new Uint8Array(n);
    for (let y = 0; y < img.height; y++) {
      for (let x = 0; x < img.width; x++) out[y * img.width + x] = (img.data[y * rowBytes + (x >> 3)]! >> (7 - (x & 7))) & 1 ? 255 : 0;
    }
    return { channels: 1, pixels: out };
  }
  return null;
}

/** Where an image lands on the page, or null when it is too small to be content. */
function imageBox(m: Matrix): { x0: number; x1: number; y0: number; y1: number } | null {
  const box = boxOf(m, 0, 0, 1, 1);
  return box.x1 - box.x0 < MIN_IMAGE || box.y1 - box.y0 < MIN_IMAGE ? null : box;
}

export interface OperatorList {
  fnArray: number[];
  argsArray: unknown[];
}

type ImageLookup = (id: string) => RawImage | null;

/** Walks a page's operators in order, keeping the graphics state, and collects the rules and images they draw. */
class GraphicsCollector {
  readonly rules: Rule[] = [];
  /** Stroked segments too short to be rules alone, which runs of them may make (joinedBits). */
  readonly bits: Rule[] = [];
  /** Filled boxes, whose edges that show become rules once the page is walked (boxEdges). */
  readonly boxes: FilledBox[] = [];
  readonly images: PageImage[] = [];
  /** Image placements passed over because no images are wanted. */
  skipped = 0;
  readonly #OPS: OpCodes;
  readonly #image: ImageLookup | null;
  readonly #stack: State[] = [];
  #st: State;
  /** An image placed several times is converted once: its placements share one pixel buffer. */
  readonly #converted = new Map<RawImage, ReturnType<typeof pixelsOf>>();
  readonly #filled: Set<number>;
  /** Pattern fills seen: each is a colour of its own. */
  #patterns = 0;
  readonly #stroked: Set<number>;

  constructor(OPS: OpCodes, view: Matrix, image: ImageLookup | null) {
    this.#OPS = OPS;
    this.#image = image;
    this.#st = { ctm: view, fillLight: false, strokeLight: false, fill: "#000000" };
    this.#filled = new Set([OPS.fill, OPS.eoFill, OPS.fillStroke, OPS.eoFillStroke, OPS.closeFillStroke, OPS.closeEOFillStroke]);
    this.#stroked = new Set([OPS.stroke, OPS.closeStroke, OPS.fillStroke, OPS.eoFillStroke, OPS.closeFillStroke, OPS.closeEOFillStroke]);
  }

  /** Graphics-state operators: true when `fn` was one. */
  stateOp(fn: number | undefined, args: unknown[] | null): boolean {
    const OPS = this.#OPS;
    if (fn === OPS.save || (fn === OPS.paintFormXObjectBegin && args)) {
      this.#stack.push(this.#st);
      this.#st = { ...this.#st };
      const matrix = fn === OPS.paintFormXObjectBegin ? (args![0] as Matrix | null) : null;
      if (matrix) this.#st.ctm = multiply(matrix, this.#st.ctm);
    } else if (fn === OPS.restore || fn === OPS.paintFormXObjectEnd) this.#st = this.#stack.pop() ?? this.#st;
    else if (fn === OPS.transform && args) this.#st.ctm = multiply(args as unknown as Matrix, this.#st.ctm);
    else return this.#colourOp(fn, args);
    return true;
  }

  /** Colour operators: true when `fn` was one. */
  #colourOp(fn: number | undefined, args: unknown[] | null): boolean {
    const OPS = this.#OPS;
    if (fn === OPS.setFillRGBColor && args) Object.assign(this.#st, { fillLight: isLight(args[0]), fill: String(args[0]) });
    else if (fn !== undefined && (fn === OPS.setFillColorN || fn === OPS.setFillTransparent))
      Object.assign(this.#st, { fillLight: false, fill: `pattern ${++this.#patterns}` });
    else if (fn === OPS.setStrokeRGBColor && args) this.#st.strokeLight = isLight(args[0]);
    else return false;
    return true;
  }

  /** A path painted (constructPath's paint operator and data): its rules, unless painted in a light colour. */
  path(args: unknown[]): void {
    const paint = args[0] as number;
    const data = (args[1] as ArrayLike<number>[] | undefined)?.[0];
    if (!data) return;
    const paths = mapPaths(subpaths(data), this.#st.ctm);
    if (this.#stroked.has(paint) && !this.#st.strokeLight) this.rules.push(...strokedRules(paths, this.bits));
    if (this.#filled.has(paint) && !this.#st.fillLight) this.rules.push(...filledRules(paths, this.#st.fill, this.boxes));
  }

  /** An image XObject (by id) or an inline image (its data) placed by the current matrix. */
  paintImage(fn: number | undefined, args: unknown[]): void {
    if (!this.#image) {
      this.skipped++;
      return;
    }
    const raw = fn === this.#OPS.paintImageXObject ? this.#image(String(args[0])) : (args[0] as RawImage);
    if (raw) this.#place(raw, this.#st.ctm);
  }

  #place(raw: RawImage, m: Matrix): void {
    const box = imageBox(m);
    if (!box) return;
    if (!this.#converted.has(raw)) this.#converted.set(raw, pixelsOf(raw));
    const px = this.#converted.get(raw);
    if (px) this.images.push({ ...box, width: raw.width, height: raw.height, ...px });
  }
}

/**
 * Rules and images of a page. `view` is the viewport transform; `image` resolves an image
 * XObject id to its decoded pixels (null when pdfjs dropped it, e.g. above maxImageSize), and is
 * null itself when no images are wanted (`skipped` then counts the placements passed over). An
 * image placed several times is converted once: its placements share one pixel buffer.
 */
export function pageGraphics(
  ops: OperatorList,
  OPS: OpCodes,
  view: Matrix,
  image: ImageLookup | null,
): { rules: Rule[]; images: PageImage[]; skipped: number } {
  const g = new GraphicsCollector(OPS, view, image);
  // Annotations' appearances (form fields, stamps) give their text to the page, not rules or images.
  let annotation = 0;
  for (let i = 0; i < ops.fnArray.length; i++) {
    const fn = ops.fnArray[i];
    const args = ops.argsArray[i] as unknown[] | null;
    if (fn !== undefined && fn === OPS.beginAnnotation) annotation++;
    else if (fn !== undefined && fn === OPS.endAnnotation) annotation--;
    if (annotation > 0 || g.stateOp(fn, args) || !args) continue;
    if (fn === OPS.constructPath) g.path(args);
    else if (fn === OPS.paintImageXObject || fn === OPS.paintInlineImageXObject) g.paintImage(fn, args);
  }
  return { rules: [...g.rules, ...joinedBits(g.bits), ...boxEdges(g.boxes)], images: g.images, skipped: g.skipped };
}
