/**
 * Truth at scale, part 3: Word reports. The tables of roundtrip-specs.ts (typed columns, headers on
 * one, several or two grouped rows, labels merged down groups of rows, wrapped text, right-to-left
 * script) set as a Word document sets them — between paragraphs of prose, under a caption, with a
 * source note under some — written as DOCX with the `docx` package and exported to PDF by
 * LibreOffice Writer, untagged (geometry alone) or tagged (a structure tree, as Word's "Save as
 * PDF" writes by default). Borders follow the spec (every cell; none; a rule under the header;
 * horizontal rules only), some headers are shaded, numbers are right-aligned, long tables run over
 * pages (some repeating their header rows), some documents are landscape, some pages turned after.
 * The body font is one of Word's metric twins (Carlito for Calibri, Liberation Serif / Sans).
 *
 * A table's truth is the text each cell shows, a merged cell's text in its top-left cell, checked
 * word by word against poppler's text of the PDF before it is used (roundtrip.ts checkTruth).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  AlignmentType,
  BorderStyle,
  Document,
  Packer,
  PageOrientation,
  Paragraph,
  ShadingType,
  Table,
  TableCell,
  TableRow,
  TextRun,
  type IBorderOptions,
  type ITableBordersOptions,
} from "docx";
import { sofficeToPdf } from "../fixtures/pdf-office-corpus.ts";
import { prng } from "../helpers/prng.ts";
import type { TableClass, TruthTable } from "../helpers/table-truth.ts";
import { exportedTruth, memoisedCorpus } from "./roundtrip.ts";
import { chance, classesOf, pick, tableSpec, words, type ColumnKind, type Rand, type SpecCell, type TableSpec } from "./roundtrip-specs.ts";

export interface ReportSpec {
  name: string;
  split: "tune" | "holdout";
  tables: TableSpec[];
  landscape: boolean;
  tight: boolean;
  fontSize: number;
  font: string;
  tagged: boolean;
  shadedHeader: boolean;
  turn: "none" | "rotate" | "content";
  repeatHeader: boolean;
}

const FONTS = ["Carlito", "Liberation Serif", "Liberation Sans"];
/** Text width of an A4 page with Word's default margins of an inch, in twips. */
const TEXT_WIDTH = { portrait: 11906 - 2 * 1440, landscape: 16838 - 2 * 1440 };
/** Word's default left + right cell margins, in twips. */
const CELL_MARGINS = 2 * 108;
/** More rows than this run over a page (reportSpecs makes long tables of 60 rows or more). */
const LONG_ROWS = 50;
const NUMERIC: ReadonlySet<ColumnKind> = new Set(["int", "decimal", "paren", "percent", "currency"]);

/** The reports of the corpus: `count` of them from `seed`; every third is held out. */
export function reportSpecs(count: number, seed = 29): ReportSpec[] {
  const rand = prng(seed);
  return Array.from({ length: count }, (_, i): ReportSpec => {
    const rtl = chance(rand, 0.15);
    const tight = chance(rand, 0.2);
    const long = chance(rand, 0.15);
    const tables = Array.from({ length: long ? 1 : 1 + Math.floor(rand() * 3) }, () =>
      tableSpec(rand, long ? 60 + Math.floor(rand() * 50) : 3 + Math.floor(rand() * 14), tight, rtl),
    );
    return {
      name: `report-${String(i + 1).padStart(3, "0")}`,
      split: i % 3 === 2 ? "holdout" : "tune",
      tables,
      landscape: chance(rand, 0.25),
      tight,
      fontSize: tight ? 8 : pick(rand, [9, 10, 10, 11]),
      font: pick(rand, FONTS),
      tagged: chance(rand, 0.35),
      shadedHeader: chance(rand, 0.4),
      turn: chance(rand, 0.1) ? pick(rand, ["rotate", "content"] as const) : "none",
      repeatHeader: long && chance(rand, 0.6),
    };
  });
}

/** A table's classes as a round-trip sheet's (roundtrip-specs.ts), "across pages" only for a long table alone in its report (a short one's prose may run onto a second page). */
export function reportClasses(report: ReportSpec, table: TableSpec, pages: number): TableClass[] {
  return classesOf(report, table, pages).filter((c) => c !== "multi-page" || table.rows.length > LONG_ROWS);
}

const line: IBorderOptions = { style: BorderStyle.SINGLE, size: 4, color: "000000" };
const none: IBorderOptions = { style: BorderStyle.NONE, size: 0, color: "FFFFFF" };

function tableBorders(t: TableSpec): ITableBordersOptions {
  switch (t.borders) {
    case "all":
      return { top: line, bottom: line, left: line, right: line, insideHorizontal: line, insideVertical: line };
    case "horizontal":
      return { top: line, bottom: line, left: none, right: none, insideHorizontal: line, insideVertical: none };
    case "header":
      // The table's top and foot rules; the rule under the header is the header cells' own.
      return { top: line, bottom: line, left: none, right: none, insideHorizontal: none, insideVertical: none };
    case "none":
      return { top: none, bottom: none, left: none, right: none, insideHorizontal: none, insideVertical: none };
  }
}

/** Column widths in twips at `size` points: the spreadsheet widths (character units) scaled to the type. */
const twips = (t: TableSpec, size: number): number[] => t.widths.map((w) => Math.round(w * size * 0.55 * 20) + CELL_MARGINS);

/** The largest type size up to `size` at which the table fits the page's text width. */
function fittingSize(t: TableSpec, size: number, width: number): number {
  let s = size;
  while (s > 6 && twips(t, s).reduce((a, b) => a + b, 0) > width) s -= 0.5;
  return s;
}

type Align = (typeof AlignmentType)[keyof typeof AlignmentType];

/** A cell's alignment as a report sets it: numbers right, categories and dates centred, group headers centred. */
function alignOf(t: TableSpec, row: number, col: number, columnSpan: number): Align {
  const kind = t.kinds[col]!;
  const align =
    row < t.headerRows
      ? columnSpan > 1 || (col > 0 && t.header !== "single")
        ? AlignmentType.CENTER
        : AlignmentType.LEFT
      : NUMERIC.has(kind)
        ? AlignmentType.RIGHT
        : kind === "category" || kind === "date"
          ? AlignmentType.CENTER
          : AlignmentType.LEFT;
  // A right-to-left cell starts at its right edge.
  return t.rtl && align === AlignmentType.LEFT ? AlignmentType.RIGHT : align;
}

function docTable(r: ReportSpec, t: TableSpec, width: number): Table {
  const size = fittingSize(t, r.fontSize, width);
  const cols = twips(t, size);
  const spanOf = (row: number, col: number): [number, number] => {
    const m = t.merges.find(([r0, c0]) => r0 === row && c0 === col);
    return m ? [m[2] - m[0] + 1, m[3] - m[1] + 1] : [1, 1];
  };
  const cell = (spec: SpecCell, ri: number, ci: number): TableCell => {
    const header = ri < t.headerRows;
    const [rowSpan, columnSpan] = spanOf(ri, ci);
    return new TableCell({
      ...(columnSpan > 1 ? { columnSpan } : {}),
      ...(rowSpan > 1 ? { rowSpan } : {}),
      width: { size: cols.slice(ci, ci + columnSpan).reduce((a, b) => a + b, 0), type: "dxa" },
      ...(header && r.shadedHeader ? { shading: { type: ShadingType.CLEAR, fill: "D9D9D9", color: "auto" } } : {}),
      ...(header && t.borders === "header" && ri === t.headerRows - 1 ? { borders: { bottom: line } } : {}),
      children: [
        new Paragraph({
          alignment: alignOf(t, ri, ci, columnSpan),
          ...(t.rtl ? { bidirectional: true } : {}),
          children: [new TextRun({ text: spec.text, size: size * 2, bold: header, ...(t.rtl ? { rightToLeft: true } : {}) })],
        }),
      ],
    });
  };
  const rows = t.rows.map(
    (cells, ri) =>
      new TableRow({
        children: cells.flatMap((spec, ci) => (spec ? [cell(spec, ri, ci)] : [])),
        ...(ri < t.headerRows && r.repeatHeader ? { tableHeader: true } : {}),
        cantSplit: true,
      }),
  );
  return new Table({
    rows,
    columnWidths: cols,
    borders: tableBorders(t),
    alignment: AlignmentType.CENTER,
    ...(t.rtl ? { visuallyRightToLeft: true } : {}),
  });
}

const sentence = (rand: Rand, rtl: boolean): string => `${words(rand, 8 + Math.floor(rand() * 10), rtl)}.`;
const prose = (rand: Rand, rtl: boolean, n: number): string => Array.from({ length: n }, () => sentence(rand, rtl)).join(" ");

function reportDocx(r: ReportSpec, rand: Rand): Document {
  const rtl = r.tables[0]!.rtl;
  const width = r.landscape ? TEXT_WIDTH.landscape : TEXT_WIDTH.portrait;
  const para = (text: string, opts: { bold?: boolean; italics?: boolean; size?: number; justify?: boolean } = {}): Paragraph =>
    new Paragraph({
      ...(rtl ? { bidirectional: true } : {}),
      alignment: opts.justify ? AlignmentType.JUSTIFIED : rtl ? AlignmentType.RIGHT : AlignmentType.LEFT,
      spacing: { after: 120 },
      children: [
        new TextRun({
          text,
          bold: opts.bold ?? false,
          italics: opts.italics ?? false,
          size: (opts.size ?? 11) * 2,
          ...(rtl ? { rightToLeft: true } : {}),
        }),
      ],
    });
  const children: (Paragraph | Table)[] = [
    para(`${words(rand, 4, rtl)}`, { bold: true, size: 16 }),
    para(prose(rand, rtl, 4), { justify: chance(rand, 0.5) }),
  ];
  r.tables.forEach((t, k) => {
    if (k > 0) children.push(para(prose(rand, rtl, 2 + Math.floor(rand() * 3)), { justify: chance(rand, 0.5) }));
    children.push(para(`Table ${k + 1}. ${words(rand, 5, rtl)}`, { bold: true, size: 10 }));
    children.push(docTable(r, t, width));
    if (chance(rand, 0.5)) children.push(para(`Source: ${words(rand, 6, rtl)}.`, { italics: true, size: 8 }));
    else children.push(para(""));
  });
  children.push(para(prose(rand, rtl, 3)));
  return new Document({
    styles: { default: { document: { run: { font: r.font, size: 22 } } } },
    sections: [
      {
        properties: {
          page: {
            size: { width: 11906, height: 16838, orientation: r.landscape ? PageOrientation.LANDSCAPE : PageOrientation.PORTRAIT },
            margin: { top: 1440, bottom: 1440, left: 1440, right: 1440 },
          },
        },
        children,
      },
    ],
  });
}

const TAGGED = 'pdf:writer_pdf_Export:{"UseTaggedPDF":{"type":"boolean","value":"true"}}';

/** A Word document of a corpus: its tables, whether it is exported tagged, and how its pages are turned. */
export interface WordDoc<T> {
  name: string;
  split: TruthTable["split"];
  tables: readonly T[];
  tagged: boolean;
  turn: ReportSpec["turn"];
}

/**
 * A corpus of Word documents built in `dir`: each written as DOCX (`docx`, drawing its prose from
 * `rand` in the documents' order), exported by Writer in two runs (untagged, tagged), and its
 * tables' truth read back (roundtrip.ts exportedTruth), ids "<prefix>/<name>#t<k>[-tagged]".
 */
export async function wordCorpus<T extends { rows: readonly (readonly (SpecCell | null)[])[] }, D extends WordDoc<T>>(
  dir: string,
  docs: readonly D[],
  corpus: { rand: Rand; docx: (d: D, rand: Rand) => Document; prefix: string; classes: (d: D, t: T, pages: number) => TableClass[] },
): Promise<TruthTable[]> {
  const docxDir = path.join(dir, "docx");
  await mkdir(docxDir, { recursive: true });
  const sources = { tagged: [] as string[], untagged: [] as string[] };
  for (const d of docs) {
    const file = path.join(docxDir, `${d.name}.docx`);
    await writeFile(file, await Packer.toBuffer(corpus.docx(d, corpus.rand)));
    sources[d.tagged ? "tagged" : "untagged"].push(file);
  }
  if (sources.untagged.length) await sofficeToPdf(sources.untagged, "pdf", dir);
  if (sources.tagged.length) await sofficeToPdf(sources.tagged, TAGGED, dir);
  const out: TruthTable[] = [];
  for (const d of docs)
    out.push(
      ...(await exportedTruth(
        path.join(dir, `${d.name}.pdf`),
        d,
        (k) => `${corpus.prefix}/${d.name}#t${k + 1}${d.tagged ? "-tagged" : ""}`,
        (t, pages) => corpus.classes(d, t, pages),
      )),
    );
  return out;
}

/** Builds the Word-report corpus in `dir` (30 reports from seed 29 unless told) and returns its truth tables. */
export const buildReportRoundTrip = memoisedCorpus({ count: 30, seed: 29 }, (dir, count, seed) =>
  wordCorpus(dir, reportSpecs(count, seed), { rand: prng(seed + 1), docx: reportDocx, prefix: "report", classes: reportClasses }),
);
