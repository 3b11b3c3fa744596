/**
 * Truth at scale, part 2: the round trip. The sheets of roundtrip-specs.ts are written as XLSX with
 * exceljs (borders, merges, wrapped cells, number formats, page setup, right-to-left views, header
 * rows repeated on every page), exported to PDF by LibreOffice in one run, and some pages turned
 * afterwards (qpdf's --rotate sets /Rotate; or pdf-lib draws the page turned on a new one). Each
 * table's truth is what its cells show.
 *
 * Every truth is checked against the PDF before it is used: each word of each cell must be in
 * poppler's text of the PDF (a column too narrow for its number would print "###" instead), so a
 * generator slip fails loudly instead of lowering a score.
 */
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import ExcelJS from "exceljs";
import { degrees, PDFDocument } from "pdf-lib";
import { sofficeToPdf } from "../fixtures/pdf-office-corpus.ts";
import type { TableClass, TruthTable } from "../helpers/table-truth.ts";
import { recallTokens } from "../helpers/text-recall.ts";
import { classesOf, sheetSpecs, type SheetSpec, type SpecCell, type TableSpec } from "./roundtrip-specs.ts";

const execFileP = promisify(execFile);
const thin = { style: "thin" as const };

/** Where each table of a sheet starts (1-based row and column). */
function origins(sheet: SheetSpec): [number, number][] {
  const out: [number, number][] = [];
  let row = 1;
  let col = 1;
  for (const t of sheet.tables) {
    out.push([row, col]);
    if (sheet.arrangement === "stacked") row += t.rows.length + 3;
    else col += t.kinds.length + 1;
  }
  return out;
}

function borderOf(t: TableSpec, r: number): Partial<ExcelJS.Borders> | undefined {
  if (t.borders === "all") return { top: thin, left: thin, bottom: thin, right: thin };
  if (t.borders === "horizontal") return { top: thin, bottom: thin };
  if (t.borders === "header" && r === t.headerRows - 1) return { bottom: { style: "medium" } };
  if (t.borders === "header" && r === 0) return { top: thin };
  return undefined;
}

function writeTable(ws: ExcelJS.Worksheet, t: TableSpec, [top, left]: [number, number], fontSize: number): void {
  // Stacked tables share columns: each column is as wide as its widest table needs.
  t.widths.forEach((w, c) => (ws.getColumn(left + c).width = Math.max(w, ws.getColumn(left + c).width ?? 0)));
  t.rows.forEach((row, r) =>
    row.forEach((spec, c) => {
      const cell = ws.getCell(top + r, left + c);
      if (spec) {
        cell.value = spec.value;
        if (spec.numFmt) cell.numFmt = spec.numFmt;
      }
      const header = r < t.headerRows;
      cell.font = { size: fontSize, bold: header };
      const wrap = (header && t.header === "wrapped") || t.kinds[c] === "wrap";
      cell.alignment = {
        vertical: "top",
        wrapText: wrap,
        ...(header && t.header === "grouped" && r === 0 ? { horizontal: "center" } : {}),
      };
      const border = borderOf(t, r);
      if (border) cell.border = border;
    }),
  );
  for (const [r0, c0, r1, c1] of t.merges) ws.mergeCells(top + r0, left + c0, top + r1, left + c1);
  // LibreOffice keeps a row's height from the file: a row with wrapped text gets room for its lines.
  t.rows.forEach((row, r) => {
    const lines = Math.max(
      1,
      ...row.map((spec, c) => {
        const wrap = (r < t.headerRows && t.header === "wrapped") || t.kinds[c] === "wrap";
        const perLine = (t.widths[c]! * 11 * 0.85) / fontSize;
        return spec && wrap ? Math.ceil(spec.text.length / perLine) : 1;
      }),
    );
    if (lines > 1) ws.getRow(top + r).height = lines * fontSize * 1.3;
  });
}

async function sheetXlsx(sheet: SheetSpec): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet(sheet.name, {
    // Scaled to the page's width (as a report is printed): columns are never cut over pages.
    pageSetup: { orientation: sheet.landscape ? "landscape" : "portrait", paperSize: 9, fitToPage: true, fitToWidth: 1, fitToHeight: 0 },
    ...(sheet.tables[0]!.rtl ? { views: [{ rightToLeft: true }] } : {}),
  });
  const at = origins(sheet);
  sheet.tables.forEach((t, k) => writeTable(ws, t, at[k]!, sheet.fontSize));
  if (sheet.repeatHeader) ws.pageSetup.printTitlesRow = `1:${sheet.tables[0]!.headerRows}`;
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** Turns every page of a PDF a quarter: by /Rotate, or by drawing each page turned onto a new page. */
async function turn(file: string, how: SheetSpec["turn"]): Promise<void> {
  if (how === "rotate") {
    await execFileP("qpdf", ["--replace-input", file, "--rotate=+90"]);
    return;
  }
  const src = await PDFDocument.load(await readFile(file));
  const out = await PDFDocument.create();
  for (const page of await out.embedPdf(src, src.getPageIndices())) {
    const p = out.addPage([page.height, page.width]);
    p.drawPage(page, { x: page.height, y: 0, rotate: degrees(90) });
  }
  await writeFile(file, await out.save());
}

/**
 * The words of poppler's text of `file`, read both ways: its reading order joins a line ending in a
 * dash to the next as a hyphenated word ("47.592,95-" then "2968" read "47.592,952968"), its
 * layout mode does not.
 */
async function pdftotextWords(file: string): Promise<Set<string>> {
  const texts = await Promise.all(
    [[], ["-layout"]].map(async (mode) => (await execFileP("pdftotext", [...mode, file, "-"], { maxBuffer: 64 * 1024 * 1024 })).stdout),
  );
  return new Set(texts.flatMap((t) => recallTokens(t)));
}

async function pageCount(file: string): Promise<number> {
  const { stdout } = await execFileP("pdfinfo", [file]);
  return Number(/^Pages:\s+(\d+)/m.exec(stdout)?.[1] ?? 0);
}

/** Fails when a truth cell's word is not in the PDF (written backwards counts: right-to-left script). */
function checkTruth(name: string, cells: string[][], words: Set<string>): void {
  for (const row of cells) {
    for (const text of row) {
      for (const w of recallTokens(text)) {
        if (!words.has(w) && !words.has([...w].reverse().join("")))
          throw new Error(`round trip ${name}: "${w}" of cell "${text}" is not in the PDF`);
      }
    }
  }
}

/**
 * The truth tables of one exported document (a sheet, a report): its pages turned as the document
 * says, each table's cells checked word by word against the PDF (checkTruth).
 */
export async function exportedTruth<T extends { rows: readonly (readonly (SpecCell | null)[])[] }>(
  pdf: string,
  doc: { name: string; split: TruthTable["split"]; tables: readonly T[]; turn: SheetSpec["turn"] },
  id: (k: number) => string,
  classes: (t: T, pages: number) => TableClass[],
): Promise<TruthTable[]> {
  if (doc.turn !== "none") await turn(pdf, doc.turn);
  const [words, pages] = await Promise.all([pdftotextWords(pdf), pageCount(pdf)]);
  return doc.tables.map((t, k) => {
    const cells = t.rows.map((row) => row.map((c) => c?.text ?? ""));
    checkTruth(`${doc.name} table ${k + 1}`, cells, words);
    return {
      id: id(k),
      pdf,
      split: doc.split,
      pages: Array.from({ length: pages }, (_, i) => i + 1),
      classes: classes(t, pages),
      cells,
    };
  });
}

/** How many documents a generated corpus holds, and the seed they are drawn from. */
export interface CorpusOptions {
  count?: number;
  seed?: number;
}

/**
 * A corpus builder memoised per directory, count and seed (`defaults` when the options leave them
 * out): each corpus is built once per process, however many tests and benches ask for it.
 */
export function memoisedCorpus(
  defaults: Required<CorpusOptions>,
  build: (dir: string, count: number, seed: number) => Promise<TruthTable[]>,
): (dir: string, opts?: CorpusOptions) => Promise<TruthTable[]> {
  const built = new Map<string, Promise<TruthTable[]>>();
  return (dir, opts = {}) => {
    const [count, seed] = [opts.count ?? defaults.count, opts.seed ?? defaults.seed];
    const key = `${dir}:${count}:${seed}`;
    let p = built.get(key);
    if (!p) {
      p = build(dir, count, seed);
      built.set(key, p);
    }
    return p;
  };
}

/** Builds the round-trip corpus in `dir` (60 sheets from seed 13 unless told) and returns its truth tables. */
export const buildRoundTrip = memoisedCorpus({ count: 60, seed: 13 }, build);

async function build(dir: string, count: number, seed: number): Promise<TruthTable[]> {
  const sheets = sheetSpecs(count, seed);
  const xlsxDir = path.join(dir, "xlsx");
  await mkdir(xlsxDir, { recursive: true });
  const sources: string[] = [];
  for (const s of sheets) {
    const file = path.join(xlsxDir, `${s.name}.xlsx`);
    await writeFile(file, await sheetXlsx(s));
    sources.push(file);
  }
  await sofficeToPdf(sources, "pdf", dir);
  const out: TruthTable[] = [];
  for (const s of sheets)
    out.push(
      ...(await exportedTruth(
        path.join(dir, `${s.name}.pdf`),
        s,
        (k) => `roundtrip/${s.name}#t${k + 1}`,
        (t, pages) => classesOf(s, t, pages),
      )),
    );
  return out;
}
