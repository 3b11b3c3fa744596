/**
 * Where a page's glyphs are drawn, from pdfjs' operator list — what its text content leaves out.
 *
 * pdfjs joins glyphs into one text run across gaps of up to 0.6 em, putting a space in between, so
 * a right-aligned date and the left-aligned text of the next table cell come back as one run
 * ("2024-05-30 East") and the two cells would merge. glyphRuns walks the operator list keeping the
 * text state as pdfjs' canvas renderer does (text and line matrices, Td/TD/T*, TL, Tc, Tw, Tz, Ts,
 * Tf; q/Q, cm and form XObjects for the graphics state; ISO 32000-1 §9.3–9.4) and returns the
 * stretches of glyphs drawn without a jump. Only a jump to where a text-showing operator starts
 * counts — text placed on its own, as a cell's is; the offsets inside one TJ array are how TeX and
 * others space words, and stay inside a run, unless the font draws its spaces as glyphs elsewhere
 * on the page (then a wide offset jumps to the next cell of a row set in one TJ). The walk also
 * follows the clipping path (W/W*, kept with q/Q): a run's box ends where its clip hides the rest
 * of it, its text staying whole, and text going on without a gap in another clipping area is the
 * next cell's. splitAtGaps then cuts each pdfjs text item where two of those stretches meet, and
 * ends an item its clip cuts short where its visible glyphs end. Only upright horizontal text is
 * measured; anything else stays as pdfjs gave it. The walk runs in the extraction worker;
 * splitAtGaps is pure.
 */
import { IDENTITY, multiply, type Matrix } from "../pdf/pdf-matrix.ts";
import { readingOrder, RTL_SCRIPTS } from "./bidi.ts";
import { WORD_GAP } from "./lines.ts";
import { monospaced } from "./textrules.ts";
import type { TextItem } from "./types.ts";

/** pdfjs' OPS codes that move the text position or draw glyphs. */
export interface TextOpCodes {
  save: number;
  restore: number;
  transform: number;
  paintFormXObjectBegin: number;
  paintFormXObjectEnd: number;
  setGState: number;
  beginText: number;
  setFont: number;
  setTextMatrix: number;
  moveText: number;
  setLeadingMoveText: number;
  nextLine: number;
  setLeading: number;
  setCharSpacing: number;
  setWordSpacing: number;
  setHScale: number;
  setTextRise: number;
  showText: number;
  /** An annotation's appearance begins / ends (pdfjs renders them into the operator list). */
  beginAnnotation?: number;
  endAnnotation?: number;
  /** W and W* (the next path clips), and the path operator (clipPath follows them). */
  clip?: number;
  eoClip?: number;
  constructPath?: number;
}

/** What the walk needs of a loaded font (pdfjs' FontFaceObject). */
export interface FontMetrics {
  fontMatrix?: number[];
  vertical?: boolean;
  /** The font's name, subset tag included ("BAAAAA+SimSun"). */
  name?: string;
}

/** A font's PostScript name without the six-letter subset tag ("BAAAAA+LiberationSans-Bold"). */
export const baseFontName = (name: string): string => name.replace(/^[A-Z]{6}\+/, "");

/** The weight and slant a font's name says. */
export const fontStyle = (font: string): { bold: boolean; italic: boolean } => ({
  bold: /bold|black|heavy|semibold|demi/i.test(font),
  italic: /italic|oblique/i.test(font),
});

/** A stretch of glyphs on one baseline drawn without a jump: its ink box and its text. */
export interface GlyphRun {
  x0: number;
  x1: number;
  base: number;
  size: number;
  text: string;
  /** Drawn by an annotation's appearance (a form field's value, a stamp), not by the page. */
  annotation?: boolean;
  /**
   * It goes on from the run before it without a jump, but in another clipping area: the next cell
   * of a table whose cells each clip their text (splitAtGaps cuts there even without a space).
   */
  clipped?: boolean;
  /**
   * Started by a TJ number about a space wide (SPACE_LIKE) between two glyphs that are no spaces,
   * where a run starts all the same (spacedJump): a word space drawn as a move (cairo draws many so,
   * "(net.)-190(Please)", "(GB29)-220(8960)"), or a tight table's next cell; the layout tells which
   * (stream.ts withWordSpaces).
   */
  spaceMove?: boolean;
}

/** The horizontal extent of a clipping area, in device space. */
interface Clip {
  x0: number;
  x1: number;
}

/** Where a glyph drawn from x0 to x1 shows inside `clip`: nothing (an empty box at its edge) when the clip hides it wholly. */
function visibleInk(x0: number, x1: number, clip: Clip | null): { x0: number; x1: number; hidden: boolean } {
  if (!clip) return { x0, x1, hidden: false };
  if (x0 >= clip.x1) return { x0: clip.x1, x1: clip.x1, hidden: true };
  if (x1 <= clip.x0) return { x0: clip.x0, x1: clip.x0, hidden: true };
  return { x0: Math.max(x0, clip.x0), x1: Math.min(x1, clip.x1), hidden: false };
}

/** Two clipping areas of the same extent (a producer may set the same one again for each run). */
const sameClip = (a: Clip | null, b: Clip | null): boolean =>
  a === b || (a !== null && b !== null && Math.abs(a.x0 - b.x0) < 0.5 && Math.abs(a.x1 - b.x1) < 0.5);

/**
 * A jump wider than this (font sizes) between two glyphs ends a run: a word space, where pdfjs puts
 * one — so the pieces are joined with a space again (lines.ts). Calc leaves as little as 0.19 em
 * between a right-aligned date and the text of the next cell.
 */
const RUN_GAP = WORD_GAP;
/** Inside one text-showing operator, pdfjs' own limit: a wider jump makes two items there already. */
const SHOW_GAP = 0.6;
/**
 * pdfjs parts an item at a space glyph as wide as SHOW_GAP or wider: every word space of a
 * monospaced font (Courier's is 0.6 em), however the sum rounds. Across a gap up to this wide along
 * one glyph run in such a font, the items are one string, words a space apart (joinFontSwitches).
 */
const ONE_SPACE = 0.65;
/** A TJ number moving this far right (ems) in a TJ that draws space glyphs jumps to a new cell (showText). */
const SPACED_JUMP = 0.2;
/**
 * Between two glyphs that are no spaces, a TJ number moving this far right (ems) in such a TJ: no
 * kerning pair moves so far ("(32,679.33)-199(ZX-5012)", two cells cairo set in one TJ).
 */
const KERN_JUMP = 0.15;
/** A TJ number this near (ems) the width of its font's space glyph is a word space drawn as a number (spacedJump). */
const SPACE_MATCH = 0.012;
/** A TJ number up to this many times its font's space glyph wide may be a word space drawn as a move (GlyphRun.spaceMove). */
const SPACE_LIKE = 1.5;
/** Glyphs a number ends with, and glyphs one starts with: a jump between two is a jump between cells. */
const NUMBER_END = /^[0-9%]$/;
const NUMBER_START = /^[0-9.+\-\u2212]$/;
/**
 * A TJ number moving right this many times as far as the TJ's narrowest word space, from a label to
 * a number, jumps to the next cell ("VLD)-279(\(MSE\))-460(0.71)": a row set in one TJ). TeX sets
 * the word spaces of one line alike; the space after a sentence's end is wider, so it never counts.
 */
const LABEL_JUMP = 1.4;
const SENTENCE_END = /^[.!?:;,]$/;

export interface TextState {
  ctm: Matrix;
  tm: Matrix;
  x: number;
  y: number;
  lineX: number;
  lineY: number;
  leading: number;
  charSpacing: number;
  wordSpacing: number;
  hScale: number;
  rise: number;
  font: FontMetrics | null;
  fontSize: number;
  /** The clipping area text is drawn in (part of the graphics state), or null for the whole page. */
  clip: Clip | null;
}

export interface Glyph {
  unicode?: string;
  width?: number;
  isSpace?: boolean;
  /** A vertical font's metrics: [vertical advance (negative: downwards), vx, vy], in glyph space. */
  vmetric?: number[];
}

/** Collects glyphs into runs: a glyph joins the last run when it starts where that run's last glyph ends. */
class RunBuilder {
  readonly runs: GlyphRun[] = [];
  /** Where the last glyph of the last run advanced the text position to (spaces included). */
  private cursor = Number.NaN;
  /** No visible glyph of the current text-showing operator yet: its first may start a run. */
  private opening = true;
  /** Glyphs being drawn belong to an annotation's appearance. */
  annotation = false;
  /** The fonts the page draws space glyphs in, with their space's width (spacedFonts). */
  spacedFonts: ReadonlyMap<FontMetrics, number> = new Map();
  /** The next run starts at a move about a space wide (GlyphRun.spaceMove). */
  private spaceMove = false;

  /** A text-showing operator begins, or a jump inside one starts a run (`spaceMove`: a jump about a space wide). */
  show(spaceMove = false): void {
    this.opening = true;
    this.spaceMove = spaceMove;
  }

  /** The clipping area of the last run's glyphs. */
  private clip: Clip | null = null;

  /** Whether a glyph at x0 starts near enough to the cursor to go on with the run (see RUN_GAP, SHOW_GAP). */
  #closeTo(x0: number, size: number): boolean {
    const gap = x0 - this.cursor;
    return gap > -0.5 * size && gap <= (this.opening ? RUN_GAP : SHOW_GAP) * size;
  }

  /** A run starting with `run`'s glyph, marked as drawn by an annotation, in a clip of its own right after the last (`seamless`), or after a move about a space wide. */
  #started(run: GlyphRun, seamless: boolean): GlyphRun {
    return {
      ...run,
      ...(this.annotation ? { annotation: true } : {}),
      ...(seamless ? { clipped: true } : {}),
      ...(this.spaceMove ? { spaceMove: true } : {}),
    };
  }

  /**
   * A glyph drawn from x0, its ink ending at x1 and its advance (with Tc and Tw) at next, inside
   * `clip`. What the clip hides still belongs to the run's text (a cell's text cut at the cell's
   * edge is the cell's, whole, as a reader copying it gets it); the run's box ends at the clip.
   */
  add(x0: number, x1: number, next: number, base: number, size: number, text: string, clip: Clip | null = null): void {
    const last = this.runs.at(-1);
    const sameLine = last !== undefined && Math.abs(base - last.base) < 0.1 * size && Math.abs(size - last.size) < 0.1 * size;
    const seamless = sameLine && this.#closeTo(x0, size);
    // A glyph the clip hides wholly goes on with the run it is hidden from, however far it jumps.
    const ink = visibleInk(x0, x1, clip);
    const follows = sameClip(clip, this.clip) && (seamless || (sameLine && ink.hidden));
    if (/^\s*$/.test(text)) {
      // A space never starts a run; it only carries the cursor.
      if (follows) {
        last.text += " ";
        this.cursor = next;
      }
      return;
    }
    if (follows && Boolean(last.annotation) === this.annotation) {
      last.text += text;
      if (!ink.hidden) last.x1 = Math.max(last.x1, ink.x1);
    } else this.runs.push(this.#started({ x0: ink.x0, x1: ink.x1, base, size, text }, seamless));
    this.cursor = next;
    this.spaceMove = false;
    this.opening = false;
    this.clip = clip;
  }
}

/** Text drawn left to right on a horizontal baseline in device space (y grows downward in the viewport), neither skewed nor mirrored. */
function isUpright(trm: Matrix, hScale: number): boolean {
  return Math.abs(trm[1]) < 1e-6 && Math.abs(trm[2]) < 1e-6 && trm[0] * hScale > 0 && trm[3] < 0;
}

const isGlyph = (x: Glyph | number | undefined): x is Glyph => typeof x === "object";

/**
 * Whether a TJ number `g` moving right between `before` and `after`, in a font the page draws
 * spaces in whose space is `space` wide (thousandths of an em), jumps to a new cell: SPACED_JUMP
 * wide; between two glyphs that are no spaces, KERN_JUMP wide already — but for a move of just a
 * space's width (SPACE_MATCH near) between words: a word space drawn as a number, as cairo draws
 * some ("…ing)-279(amoun…" in Liberation Sans, whose space is 278); from a figure or to one, the
 * same move is a tight table's next cell ("150,453)-216(ZX-2550", Caladea's space being 220).
 */
function spacedJump(before: Glyph | number | undefined, g: number, after: Glyph | number | undefined, space: number): boolean {
  if (!isGlyph(before) || !isGlyph(after) || before.isSpace || after.isSpace) return -g > SPACED_JUMP * 1000;
  const figures = NUMBER_END.test(before.unicode ?? "") || NUMBER_START.test(after.unicode ?? "");
  return -g > KERN_JUMP * 1000 && (figures || Math.abs(-g - space) > SPACE_MATCH * 1000);
}

/** Whether a TJ number `g` between two glyphs that are no spaces moves about a space's width (`space`: SPACE_LIKE). */
function aboutASpace(before: Glyph | number | undefined, g: number, after: Glyph | number | undefined, space: number): boolean {
  return isGlyph(before) && isGlyph(after) && !before.isSpace && !after.isSpace && -g <= SPACE_LIKE * space;
}

/**
 * Whether the TJ number at `k` jumps to a new cell (see showText): in a font the page draws spaces
 * in (`spaced`, its space's width), see spacedJump; else a wide one between the end of a number and
 * the start of another, or, from a label to a number, one LABEL_JUMP times as wide as the TJ's
 * narrowest word space (`space`).
 */
function cellJump(glyphs: readonly (Glyph | number)[], k: number, spaced: number | undefined, space: number): boolean {
  const [before, g, after] = [glyphs[k - 1], glyphs[k], glyphs[k + 1]];
  if (typeof g !== "number") return false;
  if (spaced !== undefined) return spacedJump(before, g, after, spaced);
  if (-g <= SPACED_JUMP * 1000 || !isGlyph(before) || !isGlyph(after) || !NUMBER_START.test(after.unicode ?? "")) return false;
  return NUMBER_END.test(before.unicode ?? "") || (-g >= LABEL_JUMP * space && !SENTENCE_END.test(before.unicode ?? ""));
}

/** The narrowest word space (a TJ number moving right more than SPACED_JUMP) of a TJ, in its thousandths of an em; Infinity when it has none. */
function narrowestSpace(glyphs: readonly (Glyph | number)[]): number {
  let space = Number.POSITIVE_INFINITY;
  for (const g of glyphs) if (typeof g === "number" && -g > SPACED_JUMP * 1000) space = Math.min(space, -g);
  return space;
}

/** Draws one showText operation: glyph boxes into `out`, the text position advanced. */
function showText(st: TextState, glyphs: readonly (Glyph | number)[], out: RunBuilder): void {
  const font = st.font;
  if (!font || font.vertical || st.fontSize === 0) return;
  const direction = st.fontSize < 0 ? -1 : 1;
  const size = Math.abs(st.fontSize);
  const widthScale = size * (font.fontMatrix?.[0] ?? 0.001);
  const hScale = st.hScale * direction;
  const trm = multiply(st.tm, st.ctm);
  const upright = isUpright(trm, hScale);
  const deviceSize = size * Math.abs(trm[3]);
  const base = trm[3] * (st.y + st.rise) + trm[5];
  out.show();
  // A font the page draws space glyphs in moves by TJ numbers only to kern, or to jump to the next
  // cell of a table set in one TJ: a wide jump there starts a run, as a new text-showing operator
  // does. (TeX draws no spaces: its numbers are its word spaces, and stay inside a run — but for
  // one from a number to a number, which is the next cell's: "(0.61)-417(0.84)", two columns
  // 0.4 em apart, pdfjs reads as "0.61 0.84"; and one from a label to a number wider than the
  // line's word spaces: cellJump.)
  const spaced = out.spacedFonts.get(font);
  const space = narrowestSpace(glyphs);
  let x = 0;
  for (const [k, g] of glyphs.entries()) {
    if (typeof g === "number") {
      x -= (g * size) / 1000;
      if (cellJump(glyphs, k, spaced, space)) out.show(spaced !== undefined && aboutASpace(glyphs[k - 1], g, glyphs[k + 1], spaced));
      continue;
    }
    const w = (g.width ?? 0) * widthScale;
    const advance = w + ((g.isSpace ? st.wordSpacing : 0) + st.charSpacing) * direction;
    if (upright && g.unicode) {
      const at = (dx: number): number => trm[0] * (st.x + dx * hScale) + trm[4];
      out.add(at(x), at(x + w), at(x + advance), base, deviceSize, g.unicode, st.clip);
    }
    x += advance;
  }
  st.x += x * hScale;
}

function moveText(st: TextState, tx: number, ty: number): void {
  st.x = st.lineX += tx;
  st.y = st.lineY += ty;
}

export type FontLookup = (name: string) => FontMetrics | null;
type TextStateHandler = (st: TextState, a: unknown[], font: FontLookup) => void;

/** The operator's numeric operand `k` (0 when missing or not a number). */
const num = (a: unknown[], k: number): number => Number(a[k]) || 0;

function setFont(st: TextState, font: FontLookup, name: unknown, size: unknown): void {
  st.font = font(String(name));
  st.fontSize = Number(size) || 0;
}

/** A new text object or text matrix puts the position back at the start of the matrix. */
function setTextMatrix(st: TextState, tm: Matrix): void {
  Object.assign(st, { tm, x: 0, y: 0, lineX: 0, lineY: 0 });
}

/** The text-state operators (ISO 32000-1 §9.3, §9.4.2) and what each does to the state. */
const TEXT_STATE_OPS: readonly [keyof TextOpCodes, TextStateHandler][] = [
  ["beginText", (st) => setTextMatrix(st, IDENTITY)],
  ["setTextMatrix", (st, a) => setTextMatrix(st, Array.from((a.length === 1 ? a[0] : a) as ArrayLike<number>) as unknown as Matrix)],
  ["moveText", (st, a) => moveText(st, num(a, 0), num(a, 1))],
  [
    "setLeadingMoveText",
    (st, a) => {
      st.leading = num(a, 1);
      moveText(st, num(a, 0), num(a, 1));
    },
  ],
  ["nextLine", (st) => moveText(st, 0, st.leading)],
  ["setLeading", (st, a) => (st.leading = -num(a, 0))],
  ["setCharSpacing", (st, a) => (st.charSpacing = num(a, 0))],
  ["setWordSpacing", (st, a) => (st.wordSpacing = num(a, 0))],
  ["setHScale", (st, a) => (st.hScale = num(a, 0) / 100)],
  ["setTextRise", (st, a) => (st.rise = num(a, 0))],
  ["setFont", (st, a, font) => setFont(st, font, a[0], a[1])],
  [
    "setGState",
    (st, a, font) => {
      for (const [key, value] of (a[0] ?? []) as [string, unknown][])
        if (key === "Font" && Array.isArray(value)) setFont(st, font, value[0], value[1]);
    },
  ],
];

/** Applies a text-state operator (position, spacing, font) to `st`; other operators change nothing. */
function textStateOp(st: TextState, fn: number | undefined, a: unknown[], OPS: TextOpCodes, font: FontLookup): void {
  const handler = TEXT_STATE_OPS.find(([name]) => fn === OPS[name]);
  handler?.[1](st, a, font);
}

/** Whether `fn` is the operator `code`, which this pdfjs may not have (an optional code never matches). */
const isOp = (fn: number | undefined, code: number | undefined): boolean => code !== undefined && fn === code;

/** The state an annotation's appearance is drawn in: pdfjs draws it from the page's own transform, its matrix, then the placement. */
function annotationState(st: TextState, a: unknown[], view: Matrix): TextState {
  const ctm = multiply(multiply((a[3] ?? IDENTITY) as Matrix, (a[2] ?? IDENTITY) as Matrix), view);
  return { ...st, ctm, tm: IDENTITY, x: 0, y: 0, lineX: 0, lineY: 0 };
}

/** A copy of the state for `q` or a form XObject (whose matrix, if any, applies inside it). */
function nestedState(st: TextState, formMatrix: unknown): TextState {
  return formMatrix ? { ...st, ctm: multiply(formMatrix as Matrix, st.ctm) } : { ...st };
}

/**
 * The fonts a page shows a space glyph in, anywhere, each with its space's width (thousandths of
 * an em). Fonts are followed in the order the operators set them (q/Q aside): it only decides how
 * wide TJ numbers are read (showText).
 */
function spacedFonts(ops: { fnArray: number[]; argsArray: unknown[] }, OPS: TextOpCodes, font: FontLookup): Map<FontMetrics, number> {
  const out = new Map<FontMetrics, number>();
  let current: FontMetrics | null = null;
  for (let i = 0; i < ops.fnArray.length; i++) {
    const fn = ops.fnArray[i];
    const a = (ops.argsArray[i] ?? []) as unknown[];
    if (fn === OPS.setFont) current = font(String(a[0]));
    else if (fn === OPS.showText && current && !out.has(current)) {
      const space = ((a[0] ?? []) as (Glyph | number)[]).find((g): g is Glyph => typeof g !== "number" && g.isSpace === true);
      // In thousandths of an em, as TJ numbers are.
      if (space) out.set(current, (space.width ?? 0) * (current.fontMatrix?.[0] ?? 0.001) * 1000);
    }
  }
  return out;
}

/**
 * The clipping area `clip` narrowed by a clipping path (constructPath's operands: its bounding box,
 * pdfjs' minMax, in user space) drawn under `ctm`; the path's box stands for the path. Null (the
 * whole page) stays null when the path has no box.
 */
function narrowed(clip: Clip | null, a: unknown[], ctm: Matrix): Clip | null {
  const box = a[2] as ArrayLike<number> | undefined;
  if (!box || box.length < 4 || ![0, 1, 2, 3].every((k) => Number.isFinite(box[k]))) return clip;
  const xs = [
    [box[0]!, box[1]!],
    [box[2]!, box[1]!],
    [box[0]!, box[3]!],
    [box[2]!, box[3]!],
  ].map(([x, y]) => ctm[0] * x! + ctm[2] * y! + ctm[4]);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  return { x0: Math.max(x0, clip?.x0 ?? x0), x1: Math.min(x1, clip?.x1 ?? x1) };
}

/**
 * W / W* (the next path clips) or a path (which narrows the clip when one of those came before it);
 * returns whether the next path clips.
 */
function clipOp(st: TextState, fn: number | undefined, a: unknown[], OPS: TextOpCodes, clipping: boolean): boolean {
  if (!isOp(fn, OPS.constructPath)) return true;
  if (clipping) st.clip = narrowed(st.clip, a, st.ctm);
  return false;
}

/** Where the walk of a page's operators is: the state, the states q and forms saved, a pending clip. */
interface Walk {
  st: TextState;
  stack: TextState[];
  /** W or W* seen: the next path is a clipping path. */
  clipping: boolean;
  /** The glyphs being drawn belong to an annotation's appearance. */
  annotation: boolean;
}

/**
 * q/Q, form XObjects and annotations' appearances: the state saved and restored. Returns whether
 * `fn` was one of them.
 */
function nestingOp(walk: Walk, fn: number | undefined, a: unknown[], OPS: TextOpCodes, view: Matrix): boolean {
  const form = fn === OPS.paintFormXObjectBegin;
  if (isOp(fn, OPS.beginAnnotation)) {
    walk.stack.push(walk.st);
    walk.st = annotationState(walk.st, a, view);
    walk.annotation = true;
  } else if (isOp(fn, OPS.endAnnotation)) {
    walk.st = walk.stack.pop() ?? walk.st;
    walk.annotation = false;
  } else if (fn === OPS.save || form) {
    walk.stack.push(walk.st);
    walk.st = nestedState(walk.st, form ? a[0] : undefined);
  } else if (fn === OPS.restore || fn === OPS.paintFormXObjectEnd) walk.st = walk.stack.pop() ?? walk.st;
  else return false;
  return true;
}

/** What a walk of a page's text operators calls for each text-showing operator, in the state it draws in. */
export type ShowVisitor = (st: TextState, glyphs: readonly (Glyph | number)[], annotation: boolean) => void;

/**
 * Walks a page's operators keeping the text and graphics state (see the header), calling `show` for
 * each text-showing operator; `show` advances the text position (st.x) itself. `view` is the
 * viewport transform; `font` resolves a loaded font name.
 */
export function walkText(
  ops: { fnArray: number[]; argsArray: unknown[] },
  OPS: TextOpCodes,
  view: Matrix,
  font: FontLookup,
  show: ShowVisitor,
): void {
  const walk: Walk = {
    st: {
      ctm: view,
      tm: IDENTITY,
      x: 0,
      y: 0,
      lineX: 0,
      lineY: 0,
      leading: 0,
      charSpacing: 0,
      wordSpacing: 0,
      hScale: 1,
      rise: 0,
      font: null,
      fontSize: 0,
      clip: null,
    },
    stack: [],
    clipping: false,
    annotation: false,
  };
  for (let i = 0; i < ops.fnArray.length; i++) {
    const fn = ops.fnArray[i];
    const a = (ops.argsArray[i] ?? []) as unknown[];
    if (isOp(fn, OPS.clip) || isOp(fn, OPS.eoClip) || isOp(fn, OPS.constructPath))
      walk.clipping = clipOp(walk.st, fn, a, OPS, walk.clipping);
    else if (nestingOp(walk, fn, a, OPS, view)) continue;
    else if (fn === OPS.transform) walk.st.ctm = multiply(a as unknown as Matrix, walk.st.ctm);
    else if (fn === OPS.showText) show(walk.st, (a[0] ?? []) as (Glyph | number)[], walk.annotation);
    else textStateOp(walk.st, fn, a, OPS, font);
  }
}

/** The glyph runs of a page. `view` is the viewport transform; `font` resolves a loaded font name. */
export function glyphRuns(ops: { fnArray: number[]; argsArray: unknown[] }, OPS: TextOpCodes, view: Matrix, font: FontLookup): GlyphRun[] {
  const out = new RunBuilder();
  out.spacedFonts = spacedFonts(ops, OPS, font);
  walkText(ops, OPS, view, font, (st, glyphs, annotation) => {
    out.annotation = annotation;
    showText(st, glyphs, out);
  });
  return out.runs;
}

const solid = (s: string): string => s.normalize("NFKC").replace(/\s+/g, "");

/** The runs whose baseline lies within `tol` of `base`, in base order (`runs` sorted by base). */
function runsNear(base: number, tol: number, runs: readonly GlyphRun[]): GlyphRun[] {
  let lo = 0;
  let hi = runs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (runs[mid]!.base < base - tol) lo = mid + 1;
    else hi = mid;
  }
  const out: GlyphRun[] = [];
  for (let i = lo; i < runs.length && runs[i]!.base <= base + tol; i++) out.push(runs[i]!);
  return out;
}

/** The runs lying on an item's baseline within its extent, left to right (`runs` sorted by base). */
function runsUnder(item: TextItem, runs: readonly GlyphRun[]): GlyphRun[] {
  const slack = 1 + 0.1 * item.size;
  return runsNear(item.base, 0.3 * item.size, runs)
    .filter((r) => r.x0 >= item.x0 - slack && r.x1 <= item.x1 + slack)
    .sort((p, q) => p.x0 - q.x0);
}

/**
 * The piece of `item` that run `r` draws, `text` its part of the item's; marked as started by a
 * move about a space wide when the run is (the first piece's start is the item's own).
 */
function runPiece(item: TextItem, text: string, r: GlyphRun, first: boolean): TextItem {
  return { ...item, text, x0: r.x0, x1: r.x1, ...(!first && r.spaceMove ? { spaceMove: true } : {}) };
}

/** One item cut into the runs it is made of, or null when the runs do not spell its text. */
function cut(item: TextItem, runs: readonly GlyphRun[]): TextItem[] | null {
  const text = item.text;
  if (solid(text) !== runs.map((r) => solid(r.text)).join("") || solid(text).length !== text.replace(/\s+/g, "").length) return null;
  const pieces: TextItem[] = [];
  let at = 0;
  for (const [k, r] of runs.entries()) {
    let chars = solid(r.text).length;
    const start = at;
    while (at < text.length && chars > 0) {
      if (!/\s/.test(text[at]!)) chars--;
      at++;
    }
    // pdfjs put a space wherever glyphs jump: a cut anywhere else means the runs are not this item's,
    // unless the next run goes on in a clipping area of its own (the next cell's).
    if (at < text.length && !/\s/.test(text[at]!) && !runs[k + 1]?.clipped) return null;
    pieces.push(runPiece(item, text.slice(start, at).trim(), r, k === 0));
  }
  return pieces;
}

/** Scripts written without spaces between words: a jump there is spacing, not a word gap. */
const SPACELESS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/**
 * An item without spaces cut into the runs it is made of, where each meets the next at a jump: a
 * producer that sets each word with its own text-showing operator and draws no space glyph (forms
 * filled by many tools) leaves pdfjs one run "NameJohnSmith" for "Name John Smith". Null when the
 * runs do not spell the item, or a cut would fall between two characters of a spaceless script.
 */
function cutSpaceless(item: TextItem, runs: readonly GlyphRun[]): TextItem[] | null {
  const chars = [...item.text];
  if (chars.join("") !== runs.map((r) => r.text).join("")) return null;
  const pieces: TextItem[] = [];
  let at = 0;
  for (const r of runs) {
    const n = [...r.text].length;
    if (at > 0 && (SPACELESS.test(chars[at - 1]!) || SPACELESS.test(chars[at]!))) return null;
    pieces.push(runPiece(item, chars.slice(at, at + n).join(""), r, at === 0));
    at += n;
  }
  return pieces;
}

const RTL = new RegExp(`[${RTL_SCRIPTS}]`, "u");
/** A stretch of right-to-left words (letters, their marks, the spaces between them). */
const RTL_STRETCH = new RegExp(`[${RTL_SCRIPTS}\\p{M}]+(?:\\s+[${RTL_SCRIPTS}\\p{M}]+)*`, "gu");

/** A stretch written in visual order, in logical order: backwards, each mark after the letter it sits on. */
function backwards(stretch: string): string {
  return (stretch.match(/\p{M}*\P{M}/gu) ?? [])
    .map((g) => g.slice(-1) + g.slice(0, -1))
    .reverse()
    .join("");
}

/**
 * The right-to-left words a page's glyphs carry whole: a shaped Arabic or Hebrew word that a
 * producer (WeasyPrint, anything on HarfBuzz) draws as one glyph cluster, its ToUnicode giving the
 * word in logical order. pdfjs reads every glyph as drawn in visual order and turns such a word
 * backwards ("يبيبَح" for "حَبيبي"); a word spelled by one glyph each (LibreOffice) it reads right.
 */
export function rtlClusters(ops: { fnArray: number[]; argsArray: unknown[] }, OPS: TextOpCodes): Set<string> {
  const out = new Set<string>();
  ops.fnArray.forEach((fn, i) => {
    if (fn !== OPS.showText) return;
    for (const g of ((ops.argsArray[i] as unknown[] | undefined)?.[0] ?? []) as (Glyph | number)[]) {
      if (typeof g === "number" || !g.unicode || (g.unicode.match(RTL_LETTERS) ?? []).length < 2) continue;
      for (const m of g.unicode.matchAll(RTL_STRETCH)) out.add(m[0]);
    }
  });
  return out;
}

const RTL_LETTERS = new RegExp(`[${RTL_SCRIPTS}]`, "gu");

/** An item's right-to-left words that pdfjs turned backwards (see rtlClusters), in logical order. */
function logicalOrder(item: TextItem, clusters: ReadonlySet<string>): TextItem {
  const text = item.text.replace(RTL_STRETCH, (stretch) => {
    const forwards = backwards(stretch);
    return clusters.has(forwards) ? forwards : stretch;
  });
  return text === item.text ? item : { ...item, text };
}

/**
 * The runs under an item that spell its text, left to right from its start, or all the runs under
 * it when none do. A cell's text its clip cuts at the cell's edge keeps pdfjs' whole width, over
 * the next cells' runs, which are not its own.
 */
function spelling(item: TextItem, under: readonly GlyphRun[]): readonly GlyphRun[] {
  const want = solid(item.text);
  if (!want) return under;
  let got = "";
  for (const [k, r] of under.entries()) {
    got += solid(r.text);
    // A run may go on past the item: pdfjs parts hidden text where it jumps, the clip keeps it one run.
    if (got.startsWith(want)) return under.slice(0, k + 1);
    if (!want.startsWith(got)) break;
  }
  return under;
}

/** An item one run spells (or starts), ending where that run's visible glyphs end (see spelling); else as it is. */
function inkOf(item: TextItem, own: readonly GlyphRun[]): TextItem {
  const run = own.length === 1 ? own[0]! : null;
  // Only a clip cuts an item short by more than a tenth of an em: pdfjs and the walk measure a
  // whole item alike, up to rounding, and its box stays pdfjs' then (a group header's centring
  // can turn on a hundred-thousandth of a point).
  return run && run.x1 < item.x1 - WORD_GAP * item.size && solid(run.text).startsWith(solid(item.text)) ? { ...item, x1: run.x1 } : item;
}

/**
 * Splits pdfjs text items at the gaps between glyph runs (see the header and cutSpaceless), and puts
 * right-to-left words drawn as one glyph cluster back in logical order (`clusters`, rtlClusters).
 */
export function splitAtGaps(items: readonly TextItem[], runs: readonly GlyphRun[], clusters: ReadonlySet<string> = new Set()): TextItem[] {
  const sorted = [...runs].sort((a, b) => a.base - b.base);
  const out: TextItem[] = [];
  for (const item of items) {
    const spaced = /\S\s+\S/.test(item.text);
    const under = !item.opaque && (spaced || item.text.length >= 2) ? runsUnder(item, sorted) : [];
    const own = spelling(item, under);
    const pieces = (own.length > 1 ? (spaced ? cut(item, own) : cutSpaceless(item, own)) : null) ?? [inkOf(item, own)];
    for (const [k, piece] of pieces.entries()) {
      // A space drawn before the item is before its first piece only.
      const p = k > 0 && piece.spaceBefore ? { ...piece, spaceBefore: false } : piece;
      out.push(clusters.size && RTL.test(p.text) ? logicalOrder(p, clusters) : p);
    }
  }
  return out;
}

/**
 * Runs pdfjs parted at a font switch or a wide space only, joined again: the same face at the same
 * size drawn on along one glyph run, without a jump (cairo draws ligatures, "fi" and "ti", from
 * another subset of the face than the letters around them: "statement of" | "fi" | "nancial posi" |
 * "ti" | "on"; a fixed-width report's line parts at every space of its monospaced font, one word
 * an item, or not, as the sum of the widths rounds: ONE_SPACE).
 * Such runs come one after another; each joins the one before it, with a space where the glyphs
 * leave a word space between them, in reading order (right-to-left words drawn word by word read
 * from the right: bidi.ts readingOrder). `items` are in drawing order (splitAtGaps's).
 */
export function joinFontSwitches(items: readonly TextItem[], runs: readonly GlyphRun[]): TextItem[] {
  const sorted = [...runs].sort((a, b) => a.base - b.base);
  const out: TextItem[] = [];
  for (const item of items) {
    const last = out.at(-1);
    if (last && switchedOnly(last, item, sorted)) {
      const space = item.x0 - last.x1 > WORD_GAP * item.size || item.spaceBefore === true;
      const [first, second] = readingOrder([last, item]);
      out[out.length - 1] = { ...last, text: `${first!.text}${space ? " " : ""}${second!.text}`, x1: Math.max(last.x1, item.x1) };
    } else out.push(item);
  }
  return out;
}

/**
 * Whether `b`, drawn next after `a`, goes on with it in the same face along one glyph run
 * (joinFontSwitches), not set back over it (fake bold's copies: overprint.ts). `runs` sorted by base.
 */
function switchedOnly(a: TextItem, b: TextItem, runs: readonly GlyphRun[]): boolean {
  if (a.font !== b.font || !a.font || a.opaque || b.opaque || a.turned || b.turned || a.mcid !== b.mcid) return false;
  if (Math.abs(a.size - b.size) > 0.01 * a.size || Math.abs(a.base - b.base) > 0.1 * a.size) return false;
  const gap = b.x0 - a.x1;
  if (gap < -WORD_GAP * a.size || gap > (monospaced(a.font) ? ONE_SPACE : SHOW_GAP) * a.size) return false;
  return runsNear(a.base, 0.1 * a.size, runs).some(
    (r) => Math.abs(r.base - a.base) < 0.1 * a.size && r.x0 <= a.x0 + 0.5 && r.x1 >= b.x1 - 0.5,
  );
}
