/**
 * PDF → XLSX writer: the tables the layout analysis found (runner/pdf-layout), one worksheet per
 * table — named "Page N" when the page holds one table, "Page N Table K" when it holds several; a
 * table continued over pages is one table, named after the page it starts on — written with
 * exceljs. Cells are typed (pdf-layout/cells.ts): numbers and dates are real numeric and date cells
 * with a number format that prints them as the PDF did; spanning cells are merged; a table read
 * from right-to-left script is laid out from column A and shown right to left, as its page reads.
 *
 * No text of the PDF is left out (issue #13), only a table cell's leader dots (pdf-layout/leaders.ts:
 * tables are found from the runs without them, withoutLeaders takes off those inside a cell's text,
 * and in a column of led labels withoutShortLeader the two or three a short leader leaves).
 * The text outside the tables goes, in reading order, to a last sheet "Text": one row per line
 * (column A its page, the line's stretches in the next columns), and where a table stood, a link
 * to its sheet; where a table's rest on a later page stood, a link to it and the header rows that
 * rest repeated. A PDF without any table still converts (decision for issue #6): one sheet per
 * page with the page's text lines, cells split where a line has wide gaps; the figures then say
 * `tables: 0` so a client can tell.
 */
import ExcelJS from "exceljs";
import { typeCell } from "../pdf-layout/cells.ts";
import { withoutLeaders, withoutShortLeader } from "../pdf-layout/leaders.ts";
import type { DocumentLayout } from "../pdf-layout/index.ts";
import { joinLines, segmentText, splitLine } from "../pdf-layout/lines.ts";
import { disjointCells } from "../pdf-layout/tables.ts";
import type { PageLayout, Segment, Table } from "../pdf-layout/types.ts";

/** Points of text width per spreadsheet column-width unit (one "0" in the default font). */
const PT_PER_CHAR = 5.5;
/** The sheet holding the text outside tables. */
const TEXT_SHEET = "Text";

function setCell(ws: ExcelJS.Worksheet, row: number, col: number, text: string): void {
  if (!text) return;
  const cell = ws.getCell(row, col);
  const typed = typeCell(text);
  cell.value = typed.value;
  if ("numFmt" in typed && typed.numFmt) cell.numFmt = typed.numFmt;
}

/**
 * A table cell's text, without its leader dots (a value, not the dots leading to it); in a `led`
 * column, without the two or three dots a leader the room left short ends it with too.
 */
function cellText(lines: readonly Segment[], led: boolean): string {
  const text = withoutLeaders(joinLines(lines.map(segmentText)));
  return led ? withoutShortLeader(text) : text;
}

/** The columns most of whose cells with text were led to their values by dots (items' `led`, leaders.ts). */
function ledColumns(table: Table): Set<number> {
  const count = new Map<number, { cells: number; led: number }>();
  for (const c of table.cells) {
    const items = c.lines.flatMap((l) => l.items);
    if (!items.length) continue;
    const n = count.get(c.col) ?? { cells: 0, led: 0 };
    n.cells++;
    if (items.some((i) => i.led)) n.led++;
    count.set(c.col, n);
  }
  return new Set([...count].filter(([, n]) => n.led >= 2 && n.led * 2 >= n.cells).map(([col]) => col));
}

function writeTable(ws: ExcelJS.Worksheet, table: Table): void {
  const led = ledColumns(table);
  // Merged areas never overlap (exceljs throws on an overlapping merge).
  for (const c of disjointCells(table)) {
    setCell(ws, c.row + 1, c.col + 1, cellText(c.lines, led.has(c.col)));
    if (c.header) ws.getCell(c.row + 1, c.col + 1).font = { bold: true };
    if (c.rowSpan > 1 || c.colSpan > 1) ws.mergeCells(c.row + 1, c.col + 1, c.row + c.rowSpan, c.col + c.colSpan);
  }
  const widths = table.colEdges.slice(1).map((x, i) => Math.abs(x - table.colEdges[i]!));
  widths.forEach((w, i) => {
    ws.getColumn(i + 1).width = Math.max(6, Math.min(80, w / PT_PER_CHAR + 2));
  });
  if (table.rtl) ws.views = [{ rightToLeft: true }];
}

function writeLines(ws: ExcelJS.Worksheet, lines: readonly Segment[][]): void {
  lines.forEach((segments, r) => segments.forEach((seg, c) => setCell(ws, r + 1, c + 1, segmentText(seg))));
}

type TextRow = { cells: string[]; link?: string };

/**
 * The "Text" sheet's rows of one page: its text lines in reading order, and links to its tables;
 * where the rest of an earlier page's table stood, a link to that table's sheet and the header
 * rows the rest repeated (the table holds its header once).
 */
function textRows(page: PageLayout, sheetOf: Map<Table, string>): TextRow[] {
  const rows: TextRow[] = [];
  const link = (table: Table): void => {
    const sheet = sheetOf.get(table);
    if (sheet) rows.push({ cells: [], link: sheet });
  };
  const rest = (): void => {
    if (!page.rest) return;
    link(page.rest.table);
    for (const cells of page.rest.header) rows.push({ cells });
  };
  page.blocks.forEach((block, i) => {
    if (i === page.rest?.at) rest();
    if (block.type === "paragraph") for (const line of block.lines) rows.push({ cells: splitLine(line.items).map(segmentText) });
    else if (block.type === "table") link(block.table);
  });
  if (page.rest && page.rest.at >= page.blocks.length) rest();
  return rows;
}

function writeTextSheet(ws: ExcelJS.Worksheet, pages: readonly PageLayout[], sheetOf: Map<Table, string>): void {
  ws.addRow(["Page", "Text"]).font = { bold: true };
  ws.views = [{ state: "frozen", ySplit: 1 }];
  ws.getColumn(1).width = 6;
  ws.getColumn(2).width = 60;
  for (const page of pages) {
    for (const row of textRows(page, sheetOf)) {
      const r = ws.rowCount + 1;
      ws.getCell(r, 1).value = page.number;
      if (row.link) {
        // A pointer to where the table went, so the sheet reads as the document does.
        ws.getCell(r, 2).value = { text: `→ ${row.link}`, hyperlink: `#'${row.link}'!A1` };
        ws.getCell(r, 2).font = { italic: true, color: { argb: "FF0563C1" }, underline: true };
      } else row.cells.forEach((text, c) => setCell(ws, r, c + 2, text));
    }
  }
}

export interface XlsxFigures {
  tables: number;
  sheets: number;
}

/** Writes the layout's tables and the text around them (or, with no table, its text lines) as an XLSX file. */
export async function writeXlsx(layout: DocumentLayout, out: string, signal: AbortSignal): Promise<XlsxFigures> {
  const wb = new ExcelJS.Workbook();
  wb.creator = "Folio";
  const sheetOf = new Map<Table, string>();
  for (const page of layout.pages) {
    signal.throwIfAborted();
    const pageTables = page.blocks.flatMap((b) => (b.type === "table" ? [b.table] : []));
    pageTables.forEach((table, k) => {
      const name = pageTables.length === 1 ? `Page ${page.number}` : `Page ${page.number} Table ${k + 1}`;
      writeTable(wb.addWorksheet(name), table);
      sheetOf.set(table, name);
    });
  }
  if (sheetOf.size === 0) {
    for (const page of layout.pages) {
      signal.throwIfAborted();
      writeLines(wb.addWorksheet(`Page ${page.number}`), page.segments);
    }
  } else if (layout.pages.some((p) => p.blocks.some((b) => b.type === "paragraph"))) {
    writeTextSheet(wb.addWorksheet(TEXT_SHEET), layout.pages, sheetOf);
  }
  signal.throwIfAborted();
  await wb.xlsx.writeFile(out);
  return { tables: sheetOf.size, sheets: wb.worksheets.length };
}
