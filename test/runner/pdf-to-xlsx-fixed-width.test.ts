/**
 * PDF → XLSX on a fixed-width report (issue #13): a ledger printed as lines of text in Courier,
 * each line one string drawn by one text operator, its columns set by spaces, as line-printer
 * reports, mainframe and ERP exports and `enscript` write them. Where two figures are wide, one
 * space is all that parts their columns ("15,460.00 141,055.66"): the convert operation must
 * still put every figure in its column, as a number.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readXlsx } from "../helpers/convert-quality.ts";
import { ok, runOp } from "../helpers/runner.ts";
import { run, tmpDir } from "../helpers/tools.ts";

const HEADER = ["ACCOUNT", "DESCRIPTION", "OPENING", "DEBITS", "CREDITS", "CLOSING"];
const ROWS: [string, string, number, number, number, number][] = [
  ["1001", "Cash at bank", 12345.67, 1000, 250, 13095.67],
  ["1002", "Petty cash", 150, 20, 0, 170],
  ["2001", "Accounts payable", 9876.54, 0, 3210, 6666.54],
  ["3100", "Retained earnings", 845000, 0, 0, 845000],
  ["4000", "Sales revenue", 88123.45, 0, 312000, 399876.55],
  ["4100", "Service income", 1204.5, 0, 120.5, 1084],
];

const money = (n: number): string => n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/** One line of the report: the account and description left-aligned, each figure right-aligned in 11 characters. */
const line = (cells: readonly string[]): string =>
  cells[0]!.padEnd(10) +
  cells[1]!.padEnd(20) +
  cells
    .slice(2)
    .map((c) => c.padStart(11))
    .join("");

let dir: string;
let cleanup: () => Promise<void>;
let pdf: string;

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-fixed-width-"));
  const doc = await PDFDocument.create();
  const page = doc.addPage([612, 792]);
  const font = await doc.embedFont(StandardFonts.Courier);
  const text = ["GENERAL LEDGER SUMMARY", "", line(HEADER), ...ROWS.map(([a, d, ...figures]) => line([a, d, ...figures.map(money)]))];
  text.forEach((l, i) => page.drawText(l, { x: 36, y: 740 - i * 12, size: 9, font }));
  pdf = path.join(dir, "ledger.pdf");
  await writeFile(pdf, await doc.save());
});

afterAll(async () => {
  await cleanup?.();
});

describe("a fixed-width report whose widest figures leave one space between columns", () => {
  it("is drawn as the test means: a line a string, one space between two figures on some", async () => {
    const { stdout } = await run("pdftotext", ["-raw", pdf, "-"]);
    expect(stdout).toContain("845,000.00 0.00");
    expect(stdout).toContain("312,000.00 399,876.55");
  });

  it("comes back with every figure in its column, as a number", async () => {
    const res = ok(await runOp("convert", { to: "xlsx" }, [pdf], path.join(dir, "out")));
    const grid = (await readXlsx(res.outputs[0]!.path))[0]!.grid.map((r) => r.map((c) => c?.value));
    const header = grid.findIndex((r) => r.includes("ACCOUNT"));
    expect(grid[header]).toEqual(HEADER);
    ROWS.forEach(([account, description, ...figures], i) => {
      expect(grid[header + 1 + i], `row ${i}`).toEqual([Number(account), description, ...figures]);
    });
  });
});
