/**
 * PDF → XLSX writer: the tables the layout analysis found (runner/pdf-layout: tagged structure,
 * then ruled grids, then whitespace columns), one worksheet per table — named "Page N" when the
 * page holds one table, "Page N Table K" when it holds several; a table continued over pages is one
 * table, named after the page it starts on — written with exceljs. Cells are typed
 * (pdf-layout/cells.ts): numbers and dates are real numeric and date cells with a number format
 * that prints them as the PDF did; spanning cells are merged.
 *
 * A PDF without any table still converts (decision for issue #6): one sheet per page with the
 * page's text, one line per row, cells split where the line has wide gaps; the figures then say
 * `tables: 0` so a client can tell.
 */
import ExcelJS from "exceljs";
import { typeCell } from "../pdf-layout/cells.ts";
import type { DocumentLayout } from "../pdf-layout/index.ts";
import { segmentText } from "../pdf-layout/lines.ts";
import { disjointCells } from "../pdf-layout/tables.ts";
import type { Segment, Table } from "../pdf-layout/types.ts";

/** Points of text width per spreadsheet column-width unit (one "0" in the default font). */
const PT_PER_CHAR = 5.5;

function setCell(ws: ExcelJS.Worksheet, row: number, col: number, text: string): void {
  if (!text) return;
  const cell = ws.getCell(row, col);
  const typed = typeCell(text);
  cell.value = typed.value;
  if ("numFmt" in typed && typed.numFmt) cell.numFmt = typed.numFmt;
}

const cellText = (lines: readonly Segment[]): string => lines.map(segmentText).join(" ").trim();

function writeTable(ws: ExcelJS.Worksheet, table: Table): void {
  // Merged areas never overlap (exceljs throws on an overlapping merge).
  for (const c of disjointCells(table)) {
    setCell(ws, c.row + 1, c.col + 1, cellText(c.lines));
    if (c.header) ws.getCell(c.row + 1, c.col + 1).font = { bold: true };
    if (c.rowSpan > 1 || c.colSpan > 1) ws.mergeCells(c.row + 1, c.col + 1, c.row + c.rowSpan, c.col + c.colSpan);
  }
  table.colEdges.slice(1).forEach((x, i) => {
    ws.getColumn(i + 1).width = Math.max(6, Math.min(80, (x - table.colEdges[i]!) / PT_PER_CHAR + 2));
  });
}

function writeLines(ws: ExcelJS.Worksheet, lines: readonly Segment[][]): void {
  lines.forEach((segments, r) => segments.forEach((seg, c) => setCell(ws, r + 1, c + 1, segmentText(seg))));
}

export interface XlsxFigures {
  tables: number;
  sheets: number;
}

/** Writes the layout's tables (or, with none, its text lines) as an XLSX file. */
export async function writeXlsx(layout: DocumentLayout, out: string, signal: AbortSignal): Promise<XlsxFigures> {
  const wb = new ExcelJS.Workbook();
  wb.creator = "Folio";
  let tables = 0;
  for (const page of layout.pages) {
    signal.throwIfAborted();
    const pageTables = page.blocks.flatMap((b) => (b.type === "table" ? [b.table] : []));
    pageTables.forEach((table, k) => {
      writeTable(wb.addWorksheet(pageTables.length === 1 ? `Page ${page.number}` : `Page ${page.number} Table ${k + 1}`), table);
      tables++;
    });
  }
  if (tables === 0) {
    for (const page of layout.pages) {
      signal.throwIfAborted();
      writeLines(wb.addWorksheet(`Page ${page.number}`), page.segments);
    }
  }
  signal.throwIfAborted();
  await wb.xlsx.writeFile(out);
  return { tables, sheets: wb.worksheets.length };
}
