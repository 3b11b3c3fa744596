/**
 * Draws the marks of an edit plan (runner/ops/edit-plan.ts) as overlay and underlay pages, one per
 * distinct look: qpdf places overlay page k on the pages that map to it (`--to`/`--from`), fitted
 * to each page's TrimBox and upright as the page is displayed, so an overlay page is made exactly
 * the size of the page as displayed and nothing is scaled.
 *
 * A mark drawn before a later `rotate` turns with its page: it is drawn in the coordinates the
 * page had then and carried into the final ones by a quarter-turn matrix.
 */
import { StandardFontEmbedder } from "pdf-lib";
import { gsName, num, type PdfDoc, type PdfImage, type PdfPage } from "../pdf/pdf-writer.ts";
import type { PageBox } from "../pdf/page-boxes.ts";
import type { Mark, PlannedPage } from "./edit-plan.ts";

// pdf-lib's metrics of the standard 14 fonts (the AFM widths); nothing is embedded.
const HELVETICA = StandardFontEmbedder.for("Helvetica" as Parameters<typeof StandardFontEmbedder.for>[0]);
/** Helvetica's cap height (AFM CapHeight 718): text is centred on its capitals. */
const CAP_HEIGHT = 0.718;

export interface Layer {
  doc: PdfDoc;
  /** Output pages (1-based) and, in the same order, the overlay page each gets. */
  to: number[];
  from: number[];
}

/** Size of the box as displayed with a rotation. */
const shownSize = (box: PageBox, rotation: number): [number, number] =>
  rotation % 180 === 0 ? [box.width, box.height] : [box.height, box.width];

/** Maps coordinates of a page shown at `from` degrees (w × h) to the same page shown at `to` degrees. */
function turn(from: number, to: number, w: number, h: number): string {
  switch ((((to - from) % 360) + 360) % 360) {
    case 90:
      return `0 -1 1 0 0 ${num(w)} cm `;
    case 180:
      return `-1 0 0 -1 ${num(w)} ${num(h)} cm `;
    case 270:
      return `0 1 -1 0 ${num(h)} 0 cm `;
    default:
      return "";
  }
}

/** The centre of a mark of w × h (already rotated by its angle) at a named position. */
function anchor(position: string, margin: number, pw: number, ph: number, w: number, h: number): [number, number] {
  const x = position.endsWith("left") ? margin + w / 2 : position.endsWith("right") ? pw - margin - w / 2 : pw / 2;
  const y = position.startsWith("top") ? ph - margin - h / 2 : position.startsWith("bottom") ? margin + h / 2 : ph / 2;
  return [x, y];
}

function rgb(hex: string): string {
  const v = Number.parseInt(hex.slice(1), 16);
  return `${num(((v >> 16) & 255) / 255)} ${num(((v >> 8) & 255) / 255)} ${num((v & 255) / 255)} rg`;
}

/** Content operators for one mark on a page shown as pw × ph. */
function drawMark(mark: Mark, pw: number, ph: number, imageSize: (input: number) => { width: number; height: number }): string {
  const rad = (mark.angle * Math.PI) / 180;
  const cos = Math.cos(rad);
  const sin = Math.sin(rad);
  let w: number;
  let h: number;
  let body: string;
  if (mark.kind === "text") {
    w = HELVETICA.widthOfTextAtSize(mark.text, mark.fontSize);
    h = mark.fontSize * CAP_HEIGHT;
    body = `BT /F1 ${num(mark.fontSize)} Tf ${rgb(mark.color)} ${num(-w / 2)} ${num(-h / 2)} Td ${HELVETICA.encodeText(mark.text).toString()} Tj ET`;
  } else {
    const size = imageSize(mark.input);
    w = mark.widthShare * pw;
    h = (w * size.height) / size.width;
    body = `${num(w)} 0 0 ${num(h)} ${num(-w / 2)} ${num(-h / 2)} cm /Im${mark.input} Do`;
  }
  // The box the turned mark occupies decides how far from the edges its centre must stay.
  const bw = Math.abs(w * cos) + Math.abs(h * sin);
  const bh = Math.abs(w * sin) + Math.abs(h * cos);
  const [cx, cy] = anchor(mark.position, mark.margin, pw, ph, bw, bh);
  return `q /${gsName(mark.opacity)} gs ${num(cos)} ${num(sin)} ${num(-sin)} ${num(cos)} ${num(cx)} ${num(cy)} cm ${body} Q\n`;
}

/**
 * The overlay (`over`) or underlay (`under`) layer of a plan; null when no page has a mark on it.
 * `boxes` are the input's pages (by source page), `images` the stamp images by input index.
 */
export function drawLayer(
  layer: "over" | "under",
  pages: readonly PlannedPage[],
  boxes: readonly PageBox[],
  images: ReadonlyMap<number, { width: number; height: number; load: () => Promise<PdfImage> }>,
): Layer | null {
  const looks = new Map<string, number>();
  const docPages: PdfPage[] = [];
  const opacities = new Set<number>();
  const used = new Set<number>();
  const to: number[] = [];
  const from: number[] = [];
  const imageSize = (input: number): { width: number; height: number } => images.get(input)!;
  for (const [i, page] of pages.entries()) {
    const marks = page.marks.filter((m) => m.layer === layer);
    if (marks.length === 0) continue;
    const box = boxes[page.src - 1]!;
    const shown = (box.rotate + page.added) % 360;
    const [fw, fh] = shownSize(box, shown);
    let content = "";
    for (const mark of marks) {
      const [w, h] = shownSize(box, mark.rotation);
      content += `q ${turn(mark.rotation, shown, w, h)}${drawMark(mark, w, h, imageSize)}Q\n`;
      opacities.add(mark.opacity);
      if (mark.kind === "image") used.add(mark.input);
    }
    const key = `${num(fw)}x${num(fh)}\n${content}`;
    let k = looks.get(key);
    if (k === undefined) {
      docPages.push({ width: fw, height: fh, content });
      k = docPages.length;
      looks.set(key, k);
    }
    to.push(i + 1);
    from.push(k);
  }
  if (to.length === 0) return null;
  const loaders = new Map([...used].sort((a, b) => a - b).map((input) => [`Im${input}`, images.get(input)!.load]));
  return { doc: { pages: docPages, opacities, images: loaders }, to, from };
}
