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
 */
import { parentPort, workerData } from "node:worker_threads";
import * as pdfjs from "pdfjs-dist/legacy/build/pdf.mjs";
import { glyphRuns, splitAtGaps, type FontMetrics } from "./glyphs.ts";
import { multiply, pageGraphics, type Matrix, type RawImage } from "./graphics.ts";
import { readStructure } from "./structure.ts";
import type { RawPage, TextItem } from "./types.ts";

export interface WorkerInput {
  data: Uint8Array;
  maxImagePixels: number;
  fontsDir: string;
  cmapsDir: string;
}

export type WorkerMessage =
  | { type: "page"; page: RawPage }
  | { type: "done" }
  | { type: "error"; reason: "password" | "invalid" | "failed"; message: string };

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
    const m = multiply(view, it.transform as Matrix);
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

async function readPage(doc: pdfjs.PDFDocumentProxy, n: number, fonts: Map<string, string>): Promise<{ page: RawPage; transfer: ArrayBuffer[] }> {
  const page = await doc.getPage(n);
  const viewport = page.getViewport({ scale: 1 });
  const view = viewport.transform as Matrix;
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
  const { rules, images } = pageGraphics(ops, pdfjs.OPS, view, image);
  const structure = readStructure((await page.getStructTree().catch(() => null)));
  const metrics = (id: string): FontMetrics | null => {
    try {
      return page.commonObjs.has(id) ? (page.commonObjs.get(id) as FontMetrics | null) : null;
    } catch {
      return null;
    }
  };
  // pdfjs joins glyphs across gaps of up to 0.6 em: cut its runs where the glyphs jump (glyphs.ts).
  const items = splitAtGaps(textItems(page, text.items, view, fonts), glyphRuns(ops, pdfjs.OPS, view, metrics));
  page.cleanup();
  return {
    page: { number: n, width: viewport.width, height: viewport.height, items, rules, images, headings: structure.headings, structTables: structure.tables },
    transfer: images.map((im) => im.pixels.buffer as ArrayBuffer),
  };
}

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
  const fonts = new Map<string, string>();
  for (let n = 1; n <= doc.numPages; n++) {
    const { page, transfer } = await readPage(doc, n, fonts);
    send({ type: "page", page }, transfer);
  }
  await doc.loadingTask.destroy();
  send({ type: "done" });
}

main(workerData as WorkerInput).catch((err: unknown) => {
  parentPort!.postMessage({ type: "error", reason: "failed", message: String(err) } satisfies WorkerMessage);
});
