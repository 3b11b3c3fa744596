/**
 * Truth at scale, printed again: a generated corpus's PDFs run through another PDF producer, the
 * truth of each original standing for its reprint (the page is the same; only how its text is
 * drawn changes). poppler's pdftocairo writes what cairo's PDF surface writes (Inkscape, GTK's
 * print dialog, Firefox on Linux): fonts re-subset, ligatures from a second subset of the face,
 * a row of cells set in one TJ. Ghostscript's pdfwrite distils it as a PostScript printer driver
 * would: fonts re-encoded, text positioned glyph by glyph; its ToUnicode for ligatures
 * ("ti" → "琀椀", Ghostscript 10.0) is wrong for every reader, poppler's too. LibreOffice Draw
 * opens a PDF as a drawing, each run of text a text box of its own, and exports it again, as a
 * user who edits a PDF in Draw does: untagged, every line and fragment placed on its own.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { sofficeToPdf } from "../fixtures/pdf-office-corpus.ts";
import type { TruthTable } from "../helpers/table-truth.ts";

const execFileP = promisify(execFile);

export type Producer = "cairo" | "gs" | "draw";

export const PRODUCERS: readonly Producer[] = ["cairo", "gs", "draw"];

/** `pdf` printed again by `producer` into `dir`; returns the reprint's path. */
export async function reprint(pdf: string, producer: Producer, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const out = path.join(dir, `${path.basename(pdf, ".pdf")}-${producer}.pdf`);
  if (producer === "cairo") await execFileP("pdftocairo", ["-pdf", pdf, out]);
  else if (producer === "gs")
    await execFileP("gs", ["-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=pdfwrite", `-sOutputFile=${out}`, pdf]);
  else await drawAgain(pdf, out);
  return out;
}

/** `pdf` opened in LibreOffice Draw and exported again as `out`. */
async function drawAgain(pdf: string, out: string): Promise<void> {
  // Beside `out`, so that the export is renamed on one file system.
  const work = await mkdtemp(path.join(path.dirname(out), "draw-"));
  try {
    await sofficeToPdf([pdf], "pdf:draw_pdf_Export", work, "draw_pdf_import");
    await rename(path.join(work, path.basename(pdf)), out);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The tables of a corpus, each PDF printed again once by `producer` into `dir`, ids marked with it ("statement/statement-003#t1@cairo"). */
export async function reprinted(tables: readonly TruthTable[], producer: Producer, dir: string): Promise<TruthTable[]> {
  const done = new Map<string, string>();
  for (const pdf of new Set(tables.map((t) => t.pdf))) done.set(pdf, await reprint(pdf, producer, dir));
  return tables.map((t) => ({ ...t, id: `${t.id}@${producer}`, pdf: done.get(t.pdf)! }));
}
