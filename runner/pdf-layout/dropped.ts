/**
 * Glyphs on the page that pdfjs' text content leaves out.
 *
 * pdfjs drops from its text content a glyph whose origin lies outside the page (pdf.js bug
 * 1755201: text a producer set beyond the crop box, which no reader sees). Its test measures the
 * glyph in text space (its advance times the font size), unscaled by the text matrix and the CTM,
 * against the page in user space (pdfjs-dist 6, evaluator.js `compareWithLastPosition`). So:
 *  - under a CTM that shrinks the text, as OCR layers set each glyph (a 46 pt font scaled to 5 pt,
 *    EPSON Scan's invisible text), a glyph set within one unscaled advance of the page's bottom edge
 *    (vertical fonts) or left edge (horizontal ones) is dropped although it stands wholly on the page;
 *  - a glyph of a vertical font whose origin, the middle of its top edge, lies just left of the page
 *    is dropped although half of it is on the page.
 * Poppler and MuPDF read these glyphs (poppler makes the same test in device space), and so must a
 * conversion that loses no text. droppedGlyphs repeats pdfjs' test on every glyph as its text content
 * places it, and returns as text items the glyphs it drops that poppler's test keeps.
 */
import { apply, boxOf, inverse, multiply, type Matrix } from "../pdf/pdf-matrix.ts";
import { baseFontName, fontStyle, walkText, type FontLookup, type Glyph, type TextOpCodes, type TextState } from "./glyphs.ts";
import type { TextItem } from "./types.ts";

/** A box in device space: x0 ≤ x1, y0 ≤ y1 (y grows downwards). */
interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** The page as the walk sees it: pdfjs' view box (user space) and the viewport (device space). */
export interface PageFrame {
  /** pdfjs' `page.view`: [x0, y0, x1, y1] of the crop box within the media box, in user space. */
  viewBox: readonly number[];
  /** The viewport's transform (user space → device space) and size. */
  view: Matrix;
  width: number;
  height: number;
}

/**
 * Whether pdfjs' text content drops a glyph whose origin is at (x, y) in user space, `dim` its
 * advance in text space (negative, downwards, for a vertical font), as compareWithLastPosition does.
 */
export function pdfjsDrops(x: number, y: number, dim: number, vertical: boolean, viewBox: readonly number[]): boolean {
  const [bx0 = 0, by0 = 0, bx1 = 0, by1 = 0] = viewBox;
  if (vertical) return x < bx0 || x > bx1 || y + dim < by0 || y > by1;
  return x + dim < bx0 || x > bx1 || y < by0 || y > by1;
}

/** A text item standing for glyphs drawn within `box` (upright: base 0.2 of its height above its bottom, as glyph boxes sit on a baseline). */
function itemOf(text: string, box: Box, font: string): TextItem {
  const size = box.y1 - box.y0;
  return {
    text,
    x0: box.x0,
    x1: box.x1,
    base: box.y1 - 0.2 * size,
    size,
    font,
    ...fontStyle(font),
    mcid: null,
    opaque: false,
  };
}

/**
 * Whether a reader keeps a glyph: the path its pen takes, from its origin `from` to where its advance
 * ends `to` (device space), meets the page. That is pdfjs' test done in device space, and poppler's
 * (TextPage::addChar): a glyph whose baseline lies below the page is dropped, though its top shows.
 */
const onPage = (from: [number, number], to: [number, number], frame: PageFrame): boolean =>
  Math.max(from[0], to[0]) >= 0 &&
  Math.min(from[0], to[0]) <= frame.width &&
  Math.max(from[1], to[1]) >= 0 &&
  Math.min(from[1], to[1]) <= frame.height;

/** One glyph where the text state draws it: its text-space advance, and in device space its pen's path and its box. */
interface Placed {
  /** Its advance in text space as pdfjs measures it: along x, or along y (negative) in a vertical font. */
  dim: number;
  origin: [number, number];
  end: [number, number];
  box: Box;
}

/**
 * The text position along one text-showing operator (ISO 32000-1 §9.4.4), and where each glyph
 * lands: a horizontal one on its baseline from the pen (ascent 0.8, descent 0.2 of the font size),
 * a vertical one hanging from the pen, the middle of its top edge (§9.7.4.3, the default position
 * vector), by its advance.
 */
class Pen {
  private x: number;
  private y: number;
  private readonly trm: Matrix;
  private readonly scale: number;
  private readonly st: TextState;
  readonly vertical: boolean;

  constructor(st: TextState, vertical: boolean, fontMatrix: readonly number[] | undefined) {
    this.st = st;
    this.vertical = vertical;
    [this.x, this.y] = [st.x, st.y];
    this.trm = multiply(st.tm, st.ctm);
    this.scale = st.fontSize * (fontMatrix?.[0] ?? 0.001);
  }

  /** A TJ number: a move against the writing direction, in thousandths of the font size. */
  jump(n: number): void {
    const d = (n * this.st.fontSize) / 1000;
    if (this.vertical) this.y -= d;
    else this.x -= d * this.st.hScale;
  }

  /** Where `g` lands, then the pen moved past it. */
  draw(g: Glyph): Placed {
    const { st, trm, x } = this;
    const width = (g.width ?? 0) * this.scale;
    const base = this.y + st.rise;
    const spacing = st.charSpacing + (g.isSpace ? st.wordSpacing : 0);
    if (this.vertical) {
      const dim = (g.vmetric?.[0] ?? -1000) * this.scale;
      this.y += dim + spacing;
      return {
        dim,
        origin: apply(trm, x, base),
        end: apply(trm, x, base + dim),
        box: boxOf(trm, x - width / 2, base + dim, x + width / 2, base),
      };
    }
    const w = width * st.hScale;
    this.x += (width + spacing) * st.hScale;
    return {
      dim: width,
      origin: apply(trm, x, base),
      end: apply(trm, x + w, base),
      box: boxOf(trm, x, base - 0.2 * st.fontSize, x + w, base + 0.8 * st.fontSize),
    };
  }

  /** The operator is done: the text position is where the pen stands. */
  done(): void {
    if (this.vertical) this.st.y = this.y;
    else this.st.x = this.x;
  }
}

const union = (a: Box, b: Box): Box => ({
  x0: Math.min(a.x0, b.x0),
  y0: Math.min(a.y0, b.y0),
  x1: Math.max(a.x1, b.x1),
  y1: Math.max(a.y1, b.y1),
});

/** Consecutive lost glyphs (null: a glyph not lost) joined into stretches; in a vertical font each glyph is one. */
function stretches(lost: readonly ({ text: string; box: Box } | null)[], vertical: boolean): { text: string; box: Box }[] {
  const out: { text: string; box: Box }[] = [];
  let open = false;
  for (const g of lost) {
    const last = out.at(-1);
    if (g && open && last && !vertical) out[out.length - 1] = { text: last.text + g.text, box: union(last.box, g.box) };
    else if (g) out.push(g);
    open = g !== null;
  }
  return out;
}

/**
 * Glyphs of one text-showing operator that pdfjs drops though they are on the page, into `out`: one
 * item per stretch of them. Advances the text position as the operator does.
 */
function showDropped(st: TextState, glyphs: readonly (Glyph | number)[], frame: PageFrame, toUser: Matrix, out: TextItem[]): void {
  const font = st.font;
  if (!font || st.fontSize === 0) return;
  const pen = new Pen(st, Boolean(font.vertical), font.fontMatrix);
  const lost: ({ text: string; box: Box } | null)[] = [];
  for (const g of glyphs) {
    if (typeof g === "number") {
      pen.jump(g);
      continue;
    }
    const p = pen.draw(g);
    const text = g.unicode?.trim() ?? "";
    const [ux, uy] = apply(toUser, ...p.origin);
    const isLost = text !== "" && pdfjsDrops(ux, uy, p.dim, pen.vertical, frame.viewBox) && onPage(p.origin, p.end, frame);
    lost.push(isLost ? { text, box: p.box } : null);
  }
  pen.done();
  for (const s of stretches(lost, pen.vertical)) out.push(itemOf(s.text, s.box, baseFontName(font.name ?? "")));
}

/**
 * The glyphs of a page that pdfjs' text content drops though a reader sees them (see the header),
 * as text items in device space. Annotations' appearances are not pdfjs' text content at all (the
 * extraction worker reads those on its own).
 */
export function droppedGlyphs(
  ops: { fnArray: number[]; argsArray: unknown[] },
  OPS: TextOpCodes,
  frame: PageFrame,
  font: FontLookup,
): TextItem[] {
  const out: TextItem[] = [];
  const toUser = inverse(frame.view);
  walkText(ops, OPS, frame.view, font, (st, glyphs, annotation) => {
    if (!annotation) showDropped(st, glyphs, frame, toUser, out);
  });
  return out;
}
