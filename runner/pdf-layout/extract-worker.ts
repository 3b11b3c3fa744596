/**
 * The extraction worker: opens the PDF with pdfjs-dist and sends, page by page, everything the
 * layout analysis needs (text runs with fonts and marked-content ids, rules, images, the structure
 * tree's headings and tables) as plain data.
 *
 * It runs in its own worker thread, started per job by extract.ts, so that pdfjs' module state
 * (font caches, global options) never outlives a job, and a hostile PDF that makes pdfjs loop or
 * balloon can be stopped by terminating the thread. pdfjs' own "worker" runs inside this thread
 * (Node has no web workers): that is exactly the isolation we want. pdfjs 6 never compiles code
 * from a PDF (its PostScript functions are interpreted), so there is no `isEvalSupported` to turn off.
 *
 * After each page it waits for the parent's go-ahead (any message), so pages never pile up unread.
 * A page with more than MAX_PAGE_ITEMS text runs ends the extraction with a `limit` error.
 */
import { parentPort, workerData } from "node:worker_threads";
import * as pdfjs from "pdfjs-dist/legacy/build/pdf.mjs";
import {
  baseFontName,
  fontStyle,
  glyphRuns,
  joinFontSwitches,
  rtlClusters,
  splitAtGaps,
  type FontMetrics,
  type GlyphRun,
} from "./glyphs.ts";
import { WORD_GAP } from "./lines.ts";
import { multiply, type Matrix } from "../pdf/pdf-matrix.ts";
import { pageGraphics, type RawImage } from "./graphics.ts";
import { droppedGlyphs } from "./dropped.ts";
import { dropOverprints } from "./overprint.ts";
import { readStructure } from "./structure.ts";
import { joinTurned, unmirrored, type DrawnRun } from "./turned.ts";
import type { PageImage, RawPage, TextItem } from "./types.ts";

/**
 * Text runs one page may hold. A dense page of 8-point text holds about 5,000 words; 50,000 is ten
 * times that (a full-page table of tiny print, a map's labels) and still analyses in a few seconds.
 * Past it a page is not a document to edit, and the analysis could not finish within a deadline.
 */
const MAX_PAGE_ITEMS = 50_000;

export interface WorkerInput {
  data: Uint8Array;
  /** pdfjs' maxImageSize: 0 makes it skip every image without decoding it. */
  maxImagePixels: number;
  imagePixelBudget: number;
  fontsDir: string;
  cmapsDir: string;
}

export type WorkerMessage =
  | { type: "page"; page: RawPage }
  | { type: "done" }
  | { type: "error"; reason: "password" | "invalid" | "limit" | "failed"; message: string };

/** What reading one page needs besides the page itself. */
interface Reading {
  fonts: Map<string, string>;
  images: boolean;
  /** Decoded pixels still allowed for the document's images. */
  budget: number;
}

interface PdfjsTextItem {
  str?: string;
  type?: string;
  id?: string;
  width?: number;
  transform?: number[];
  fontName?: string;
}

/** The PostScript name, without its subset tag, of the font a text item's font id names. */
function fontNameOf(page: pdfjs.PDFPageProxy, id: string, cache: Map<string, string>): string {
  let name = cache.get(id);
  if (name === undefined) {
    try {
      const font = page.commonObjs.get(id) as { name?: string } | null;
      name = baseFontName(font?.name ?? "");
    } catch {
      name = "";
    }
    cache.set(id, name);
  }
  return name;
}

/**
 * The quarter turn a text run is drawn at on the displayed page: 0 upright, 90 turned clockwise
 * (reads downwards), 180 upside down, 270 turned counter-clockwise (reads upwards); null when it is
 * drawn at some other angle. `m` is the run's matrix in display space (y down).
 */
export function quarterTurn(m: Matrix): 0 | 90 | 180 | 270 | null {
  const angle = (Math.atan2(m[1], m[0]) * 180) / Math.PI;
  const q = Math.round(angle / 90) * 90;
  if (Math.abs(angle - q) > 5) return null;
  return ((q + 360) % 360) as 0 | 90 | 180 | 270;
}

interface Run {
  item: TextItem;
  turn: 0 | 90 | 180 | 270 | null;
  /** Characters, for weighing a page's directions. */
  weight: number;
}

/** The innermost marked-content id open, as the stack of begin/end operators leaves it. */
function trackMarks(marks: (string | null)[], it: PdfjsTextItem): void {
  if (it.type === "beginMarkedContentProps" || it.type === "beginMarkedContent") marks.push(it.id ?? null);
  else if (it.type === "endMarkedContent") marks.pop();
}

/** One pdfjs text item as drawn (spaces too), or null for one that shows nothing (no text, nothing opaque, or too small to read). */
function drawnRun(
  page: pdfjs.PDFPageProxy,
  it: PdfjsTextItem,
  view: Matrix,
  fonts: Map<string, string>,
  mcid: string | null,
): DrawnRun | null {
  if (it.str === undefined || !it.transform) return null;
  const width = it.width ?? 0;
  // Private-use code points are glyphs without a Unicode meaning (symbol-font bullets); control
  // characters (U+0003 from a broken cmap) are no text a reader sees.
  const text = it.str.replace(/[\p{Co}\p{Cc}]/gu, "");
  const opaque = text === "" && it.str !== "" ? true : it.str === "" && width > 0;
  if (text === "" && !opaque) return null;
  const m = unmirrored(multiply(it.transform as unknown as Matrix, view), width);
  const size = Math.hypot(m[2], m[3]);
  if (!(size > 0.5)) return null;
  return { text: opaque ? "" : text, m, width, size, font: fontNameOf(page, it.fontName ?? "", fonts), mcid, opaque };
}

/** A drawn run placed on the page for the layout analysis. */
function placed(d: DrawnRun): Run {
  const turn = quarterTurn(d.m);
  return {
    item: {
      text: d.text,
      ...extent(d.m, d.width, d.size, turn),
      size: d.size,
      font: d.font,
      ...fontStyle(d.font),
      mcid: d.mcid,
      opaque: d.opaque,
    },
    turn,
    weight: d.text.trim().length,
  };
}

/** A page's text runs; the pieces of text drawn sideways are joined first (turned.ts). */
function textRuns(page: pdfjs.PDFPageProxy, raw: PdfjsTextItem[], view: Matrix, fonts: Map<string, string>): Run[] {
  const drawn: DrawnRun[] = [];
  const marks: (string | null)[] = [];
  for (const it of raw) {
    trackMarks(marks, it);
    const run = drawnRun(page, it, view, fonts, marks.findLast((id) => id !== null) ?? null);
    if (run) drawn.push(run);
  }
  // A space drawn on its own parts the turned pieces around it, and marks the word drawn after it
  // as another word (readers take a space glyph as a word break); then it has done its work.
  const joined = joinTurned(drawn);
  return joined.flatMap((d, k) => {
    if (!d.opaque && d.text.trim() === "") return [];
    const run = placed(d);
    const before = joined[k - 1];
    if (before && spaceBefore(before, d)) run.item.spaceBefore = true;
    return [run];
  });
}

/**
 * Whether `space` is a space glyph drawn just before `run` on its baseline (both upright): from the
 * space's start to a word space past its end. Producers that place each word on its own may start
 * the next word back over the space, too close for a gap to show it.
 */
function spaceBefore(space: DrawnRun, run: DrawnRun): boolean {
  if (space.opaque || space.text === "" || space.text.trim() !== "") return false;
  if (quarterTurn(space.m) !== 0 || quarterTurn(run.m) !== 0) return false;
  const [x, y] = [run.m[4], run.m[5]];
  return Math.abs(y - space.m[5]) < 0.1 * run.size && x >= space.m[4] && x <= space.m[4] + space.width + WORD_GAP * run.size;
}

/**
 * Where a run lies on the page as the layout analysis sees it. An upright run is its baseline and
 * its two ends. A run drawn at any other angle (a vertical column label, a page number set along
 * the edge) is stood in for by its bounding box: ends at the box's sides, and a baseline placed so
 * that the box's middle is where the analysis looks for an upright run's middle (base − 0.3 size),
 * the box's top and bottom kept beside them (`turned`).
 */
function extent(m: Matrix, width: number, size: number, turn: number | null): Pick<TextItem, "x0" | "x1" | "base" | "turned"> {
  if (turn === 0) return { x0: m[4], x1: m[4] + width, base: m[5] };
  const len = Math.hypot(m[0], m[1]) || 1;
  const along: [number, number] = [(m[0] / len) * width, (m[1] / len) * width];
  const up: [number, number] = [(-m[2] / size) * 0.8 * size, (-m[3] / size) * 0.8 * size];
  const xs = [m[4], m[4] + along[0], m[4] - up[0], m[4] + along[0] - up[0]];
  const ys = [m[5], m[5] + along[1], m[5] - up[1], m[5] + along[1] - up[1]];
  const [top, bottom] = [Math.min(...ys), Math.max(...ys)];
  return { x0: Math.min(...xs), x1: Math.max(...xs), base: (top + bottom) / 2 + 0.3 * size, turned: { top, bottom } };
}

/** Text items for the glyph runs annotations draw (pdfjs' text content leaves annotations out). */
function annotationItems(glyphs: readonly GlyphRun[]): TextItem[] {
  return glyphs
    .filter((g) => g.annotation && g.text.trim())
    .map((g) => ({
      text: g.text.trim(),
      x0: g.x0,
      x1: g.x1,
      base: g.base,
      size: g.size,
      font: "",
      bold: false,
      italic: false,
      mcid: null,
      opaque: false,
    }));
}

/** The quarter turn most of a page's text is drawn at (by characters), 0 when none dominates. */
function dominantTurn(runs: readonly Run[]): 0 | 90 | 180 | 270 {
  const weight = new Map<number, number>();
  for (const r of runs) if (r.turn !== null) weight.set(r.turn, (weight.get(r.turn) ?? 0) + r.weight);
  let best: 0 | 90 | 180 | 270 = 0;
  for (const [turn, w] of weight) if (w > (weight.get(best) ?? 0)) best = turn as 0 | 90 | 180 | 270;
  return best;
}

/**
 * Keeps the images the document's pixel budget still allows (each image object counts once, however
 * often it is placed); returns them and how many placements were left out.
 */
function withinBudget(images: PageImage[], reading: Reading): { kept: PageImage[]; omitted: number } {
  const admitted = new Map<Uint8Array, boolean>();
  const kept: PageImage[] = [];
  for (const im of images) {
    let ok = admitted.get(im.pixels);
    if (ok === undefined) {
      ok = im.width * im.height <= reading.budget;
      if (ok) reading.budget -= im.width * im.height;
      admitted.set(im.pixels, ok);
    }
    if (ok) kept.push(im);
  }
  return { kept, omitted: images.length - kept.length };
}

async function readPage(doc: pdfjs.PDFDocumentProxy, n: number, reading: Reading): Promise<{ page: RawPage; transfer: ArrayBuffer[] }> {
  const page = await doc.getPage(n);
  // The operator list first: it loads the fonts whose names the text runs carry. Annotations'
  // appearances are in it (form fields' values, stamps, free text): text a reader sees on the page.
  const ops = await page.getOperatorList({ annotationMode: pdfjs.AnnotationMode.ENABLE });
  const text = await page.getTextContent({ includeMarkedContent: true });
  // A page whose text mostly runs sideways or upside down (a /Rotate the content does not make up
  // for, or a table set turned on the sheet) is read turned so that its text runs left to right:
  // rows are rows and columns columns again (ISO 32000-1 §8.3.2.3 and Table 30, /Rotate).
  let viewport = page.getViewport({ scale: 1 });
  let runs = textRuns(page, text.items, viewport.transform as unknown as Matrix, reading.fonts);
  const turn = dominantTurn(runs);
  if (turn !== 0) {
    viewport = page.getViewport({ scale: 1, rotation: (page.rotate - turn + 360) % 360 });
    runs = textRuns(page, text.items, viewport.transform as unknown as Matrix, reading.fonts);
  }
  const view = viewport.transform as unknown as Matrix;
  const image = (id: string): RawImage | null => {
    const store = id.startsWith("g_") ? page.commonObjs : page.objs;
    try {
      return store.has(id) ? (store.get(id) as RawImage | null) : null;
    } catch {
      return null;
    }
  };
  const graphics = pageGraphics(ops, pdfjs.OPS, view, reading.images ? image : null);
  const structure = readStructure(await page.getStructTree().catch(() => null));
  const metrics = (id: string): FontMetrics | null => {
    try {
      return page.commonObjs.has(id) ? (page.commonObjs.get(id) as FontMetrics | null) : null;
    } catch {
      return null;
    }
  };
  if (runs.length > MAX_PAGE_ITEMS) throw new PageLimit(n, runs.length);
  // pdfjs joins glyphs across gaps of up to 0.6 em: cut its runs where the glyphs jump, and join
  // those it parted at a font switch only (glyphs.ts); then drop the copies of overprinted text
  // (overprint.ts).
  // Then add the glyphs pdfjs' text content drops though they are on the page (dropped.ts).
  const glyphs = glyphRuns(ops, pdfjs.OPS, view, metrics);
  const frame = { viewBox: page.view, view, width: viewport.width, height: viewport.height };
  const items = dropOverprints([
    ...joinFontSwitches(
      splitAtGaps(
        runs.map((r) => r.item),
        glyphs,
        rtlClusters(ops, pdfjs.OPS),
      ),
      glyphs,
    ),
    ...annotationItems(glyphs),
    ...droppedGlyphs(ops, pdfjs.OPS, frame, metrics),
  ]);
  if (items.length > MAX_PAGE_ITEMS) throw new PageLimit(n, items.length);
  page.cleanup();
  const { kept, omitted } = withinBudget(graphics.images, reading);
  return {
    page: {
      number: n,
      width: viewport.width,
      height: viewport.height,
      items,
      rules: graphics.rules,
      images: kept,
      imagesOmitted: omitted + graphics.skipped,
      headings: structure.headings,
      structTables: structure.tables,
    },
    // Placements of one image share its pixels: transfer each buffer once.
    transfer: [...new Set(kept.map((im) => im.pixels.buffer as ArrayBuffer))],
  };
}

class PageLimit extends Error {
  constructor(page: number, items: number) {
    super(`Page ${page} holds ${items} text runs; at most ${MAX_PAGE_ITEMS} per page can be converted.`);
  }
}

/** Resolves with the parent's go-ahead for the next page. */
const nextPage = (): Promise<void> => new Promise((resolve) => parentPort!.once("message", () => resolve()));

async function main(input: WorkerInput): Promise<void> {
  const port = parentPort!;
  const send = (msg: WorkerMessage, transfer: ArrayBuffer[] = []): void => port.postMessage(msg, transfer);
  let doc: pdfjs.PDFDocumentProxy;
  try {
    doc = await pdfjs.getDocument({
      data: input.data,
      disableFontFace: true,
      useSystemFonts: false,
      fontExtraProperties: true,
      isOffscreenCanvasSupported: false,
      isImageDecoderSupported: false,
      maxImageSize: input.maxImagePixels,
      standardFontDataUrl: input.fontsDir,
      cMapUrl: input.cmapsDir,
      verbosity: 0,
    }).promise;
  } catch (err) {
    const name = (err as { name?: string }).name;
    send({ type: "error", reason: name === "PasswordException" ? "password" : "invalid", message: String(err) });
    return;
  }
  const reading: Reading = { fonts: new Map(), images: input.maxImagePixels !== 0, budget: input.imagePixelBudget };
  for (let n = 1; n <= doc.numPages; n++) {
    let read;
    try {
      read = await readPage(doc, n, reading);
    } catch (err) {
      if (!(err instanceof PageLimit)) throw err;
      send({ type: "error", reason: "limit", message: err.message });
      return;
    }
    const next = nextPage();
    send({ type: "page", page: read.page }, read.transfer);
    await next;
  }
  await doc.loadingTask.destroy();
  send({ type: "done" });
}

main(workerData as WorkerInput).catch((err: unknown) => {
  parentPort!.postMessage({ type: "error", reason: "failed", message: String(err) } satisfies WorkerMessage);
});
