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
import { glyphRuns, splitAtGaps, type FontMetrics } from "./glyphs.ts";
import { multiply, type Matrix } from "../engines/pdf-matrix.ts";
import { pageGraphics, type RawImage } from "./graphics.ts";
import { readStructure } from "./structure.ts";
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

/** A font's PostScript name without the six-letter subset tag ("BAAAAA+LiberationSans-Bold"). */
function fontNameOf(page: pdfjs.PDFPageProxy, id: string, cache: Map<string, string>): string {
  let name = cache.get(id);
  if (name === undefined) {
    try {
      const font = page.commonObjs.get(id) as { name?: string } | null;
      name = (font?.name ?? "").replace(/^[A-Z]{6}\+/, "");
    } catch {
      name = "";
    }
    cache.set(id, name);
  }
  return name;
}

function textItems(page: pdfjs.PDFPageProxy, raw: PdfjsTextItem[], view: Matrix, fonts: Map<string, string>): TextItem[] {
  const items: TextItem[] = [];
  const marks: (string | null)[] = [];
  for (const it of raw) {
    if (it.type === "beginMarkedContentProps" || it.type === "beginMarkedContent") marks.push(it.id ?? null);
    else if (it.type === "endMarkedContent") marks.pop();
    if (it.str === undefined || !it.transform) continue;
    const width = it.width ?? 0;
    // Private-use code points are glyphs without a Unicode meaning (symbol-font bullets).
    const text = it.str.replace(/\p{Co}/gu, "");
    const opaque = text === "" && it.str !== "" ? true : it.str === "" && width > 0;
    if (text.trim() === "" && !opaque) continue;
    const m = multiply(it.transform as unknown as Matrix, view);
    const size = Math.hypot(m[2], m[3]);
    if (!(size > 0.5)) continue;
    const font = fontNameOf(page, it.fontName ?? "", fonts);
    const mcid = marks.findLast((id) => id !== null) ?? null;
    items.push({
      text: opaque ? "" : text,
      x0: m[4],
      x1: m[4] + width,
      base: m[5],
      size,
      font,
      bold: /bold|black|heavy|semibold|demi/i.test(font),
      italic: /italic|oblique/i.test(font),
      mcid,
      opaque,
    });
  }
  return items;
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
  const viewport = page.getViewport({ scale: 1 });
  const view = viewport.transform as unknown as Matrix;
  const ops = await page.getOperatorList();
  const text = await page.getTextContent({ includeMarkedContent: true });
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
  // pdfjs joins glyphs across gaps of up to 0.6 em: cut its runs where the glyphs jump (glyphs.ts).
  const runs = textItems(page, text.items, view, reading.fonts);
  if (runs.length > MAX_PAGE_ITEMS) throw new PageLimit(n, runs.length);
  const items = splitAtGaps(runs, glyphRuns(ops, pdfjs.OPS, view, metrics));
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
