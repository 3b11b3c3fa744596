/**
 * PDF → XLSX on a ledger whose long descriptions are clipped at their cell's edge (issue #13's
 * clipped cells, runner/pdf-layout/glyphs.ts): a spreadsheet written here, exported to PDF by the
 * real LibreOffice — which draws a cell's text too long for it under a clipping path as wide as
 * the cell when the next cell holds a value — and converted back by the convert operation. The
 * header sits right of where the clipped text's last glyph ends, so the clip alone tells the
 * columns apart: every cell must come back in its column, the numbers as numbers, each
 * description as the start of its source text.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sofficeToPdf } from "../fixtures/pdf-office-corpus.ts";
import { readXlsx } from "../helpers/convert-quality.ts";
import { ok, runOp } from "../helpers/runner.ts";
import { run, tmpDir } from "../helpers/tools.ts";

const HEADER = ["Date", "Particulars", "Debit", "Credit", "Balance"];
/** Date, description (too long for its 5 cm column), debit, credit, balance. */
const ROWS: [string, string, number, number, number][] = [
  ["11/03/2024", "VIDE PAYMENT RECEIVED REFUND TRANSFER QUARTER 524", 0, 5014, 105014],
  ["03/07/2024", "RECEIVED INVOICE RECEIVED SERVICES RENDERED DURING QUARTER 118", 0, 75742, 180756],
  ["19/07/2024", "INVOICE PAYMENT 670", 17555, 0, 163201],
  ["14/03/2024", "RECEIVED QUARTER NUMBER AGAINST INVOICE NUMBER 332", 24724, 0, 138477],
  ["04/09/2024", "QUARTER PAYMENT QUARTER CHEQUE TRANSFER VIDE 907", 65166, 0, 73311],
  ["25/06/2024", "REFUND 210", 0, 28700, 102011],
];

const cell = (v: string | number): string =>
  typeof v === "number"
    ? `<table:table-cell office:value-type="float" office:value="${v}"><text:p>${v}</text:p></table:table-cell>`
    : `<table:table-cell office:value-type="string"><text:p>${v}</text:p></table:table-cell>`;

/** A flat ODF spreadsheet: narrow columns, the description's 5 cm, every row filled to Balance. */
function ledgerFods(): string {
  const rows = [HEADER, ...ROWS].map((r) => `<table:table-row>${r.map(cell).join("")}</table:table-row>`).join("");
  return `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:automatic-styles>
<style:style style:name="narrow" style:family="table-column"><style:table-column-properties style:column-width="2.2cm"/></style:style>
<style:style style:name="text" style:family="table-column"><style:table-column-properties style:column-width="5cm"/></style:style>
</office:automatic-styles>
<office:body><office:spreadsheet><table:table table:name="Ledger">
<table:table-column table:style-name="narrow"/><table:table-column table:style-name="text"/><table:table-column table:style-name="narrow" table:number-columns-repeated="3"/>
${rows}
</table:table></office:spreadsheet></office:body></office:document>`;
}

let dir: string;
let cleanup: () => Promise<void>;
let pdf: string;

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-clipped-"));
  const source = path.join(dir, "ledger.fods");
  await writeFile(source, ledgerFods());
  await sofficeToPdf([source], "pdf", dir);
  pdf = path.join(dir, "ledger.pdf");
}, 600_000);

afterAll(async () => {
  await cleanup?.();
});

describe("a ledger whose descriptions LibreOffice clips at the cell's edge", () => {
  it("is drawn as the test means: the descriptions under a clipping path as wide as their cell", async () => {
    const qdf = path.join(dir, "qdf.pdf");
    await run("qpdf", ["--qdf", "--object-streams=disable", pdf, qdf]);
    // A rectangle made the clipping path (re W n) before the descriptions are drawn.
    expect((await readFile(qdf, "latin1")).match(/ re\s+W\*? n/g)?.length ?? 0).toBeGreaterThan(ROWS.length);
  });

  it("comes back cell by cell in its columns: dates, the start of each description, numbers as numbers", async () => {
    const res = ok(await runOp("convert", { to: "xlsx" }, [pdf], path.join(dir, "out")));
    const sheets = await readXlsx(res.outputs[0]!.path);
    const grid = sheets[0]!.grid.map((r) => r.map((c) => c?.value));
    const shown = sheets[0]!.grid.map((r) => r.map((c) => (c ? (c.display ?? String(c.value)) : "")));
    const header = grid.findIndex((r) => r.includes("Date"));
    expect(grid[header]).toEqual(HEADER);
    ROWS.forEach(([date, text, debit, credit, balance], i) => {
      const row = grid[header + 1 + i]!;
      expect(row, `row ${i}`).toHaveLength(5);
      expect(String(row[1]).length, `row ${i}: the visible start of "${text}"`).toBeGreaterThan(5);
      expect(text.startsWith(String(row[1])), `row ${i}: "${String(row[1])}" starts "${text}"`).toBe(true);
      expect([row[2], row[3], row[4]], `row ${i}`).toEqual([debit, credit, balance]);
      // The date shows as the page shows it (a date cell or text, whichever its form allows).
      expect(shown[header + 1 + i]![0], `row ${i}`).toBe(date);
    });
  });
});
