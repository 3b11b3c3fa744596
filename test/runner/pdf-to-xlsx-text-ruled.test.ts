/**
 * PDF → XLSX on tables ruled in text (issue #13): a list printed in Courier with its cells between
 * bars and its rows under lines of dashes, as SAP prints a list to PDF ("|Kasse   |  1.234,50-|",
 * negative amounts signed after), and a table boxed by "+----+" and "|" as psql and ASCII tables
 * are. The bars and dashes are the table's rules, not text of its cells; every amount is a number.
 * A bar in proportional type is punctuation and stays ("Home | About").
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readXlsx } from "../helpers/convert-quality.ts";
import { ok, runOp } from "../helpers/runner.ts";
import { run, tmpDir } from "../helpers/tools.ts";

const HEADER = ["Konto", "Bezeichnung", "Saldo Vortrag", "Soll", "Haben"];
const ROWS: [number, string, number, number, number][] = [
  [100000, "Kasse", 1234.5, -200, 300],
  [113100, "Bank", -98765.43, 12000, -5000.1],
  [140000, "Forderungen", 45210.1, 8000.5, -6000],
  [160000, "Verbindlichkeiten", -9876.54, 0, -3210],
];

/** An amount as SAP prints it: German groups and decimal comma, a negative signed after ("9.876,54-"), a positive a space after. */
const sap = (n: number): string => Math.abs(n).toLocaleString("de-DE", { minimumFractionDigits: 2 }) + (n < 0 ? "-" : " ");

/** The SAP list's lines: its title and page number over it, then the list between rules of dashes. */
function sapList(): string[] {
  const row = (c: readonly string[]): string =>
    `|${c[0]!.padEnd(10)}|${c[1]!.padEnd(24)}|${c
      .slice(2)
      .map((x) => x.padStart(14))
      .join("|")}|`;
  const width = row(["", "", "", "", ""]).length;
  const title = "07.12.2026";
  const name = "Saldenliste Sachkonten";
  return [
    title + " ".repeat(26) + name + " ".repeat(width - title.length - 26 - name.length - 1) + "1",
    "",
    "-".repeat(width),
    row(HEADER),
    `|${"-".repeat(width - 2)}|`,
    ...ROWS.map(([konto, name, ...amounts]) => row([String(konto), name, ...amounts.map(sap)])),
    "-".repeat(width),
  ];
}

const PSQL_HEADER = ["id", "name", "amount"];
const PSQL_ROWS: [number, string, number][] = [
  [1, "alpha", 12.5],
  [2, "beta gamma", 1024],
  [3, "delta", -7.25],
];

/** A table as psql's "\pset border 2" prints it. */
function asciiTable(): string[] {
  const widths = [4, 12, 9];
  const rule = `+${widths.map((w) => "-".repeat(w + 2)).join("+")}+`;
  const line = (c: readonly string[], right: readonly boolean[]): string =>
    `| ${c.map((x, i) => (right[i] ? x.padStart(widths[i]!) : x.padEnd(widths[i]!))).join(" | ")} |`;
  return [
    rule,
    line(PSQL_HEADER, [false, false, false]),
    rule,
    ...PSQL_ROWS.map((r) => line([String(r[0]), r[1], r[2].toFixed(2)], [true, false, true])),
    rule,
  ];
}

let dir: string;
let cleanup: () => Promise<void>;
let sapPdf: string;
let asciiPdf: string;

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-text-ruled-"));
  const write = async (name: string, lines: string[], footer?: string): Promise<string> => {
    const doc = await PDFDocument.create();
    const page = doc.addPage([842, 595]);
    const courier = await doc.embedFont(StandardFonts.Courier);
    lines.forEach((l, i) => page.drawText(l, { x: 30, y: 550 - i * 11, size: 8.5, font: courier }));
    if (footer) page.drawText(footer, { x: 30, y: 40, size: 9, font: await doc.embedFont(StandardFonts.Helvetica) });
    const file = path.join(dir, name);
    await writeFile(file, await doc.save());
    return file;
  };
  sapPdf = await write("sap-list.pdf", sapList());
  asciiPdf = await write("ascii-table.pdf", asciiTable(), "Home | About | Contact");
});

afterAll(async () => {
  await cleanup?.();
});

/** The first sheet's values, and every cell's shown text of the workbook. */
async function converted(pdf: string, out: string): Promise<{ grid: unknown[][]; shown: (string | undefined)[] }> {
  const res = ok(await runOp("convert", { to: "xlsx" }, [pdf], path.join(dir, out)));
  const sheets = await readXlsx(res.outputs[0]!.path);
  return {
    grid: sheets[0]!.grid.map((r) => r.map((c) => c?.value)),
    shown: sheets.flatMap((s) => s.grid.flat().map((c) => c?.display)),
  };
}

const barsOrDashes = (grid: unknown[][]): unknown[] => grid.flat().filter((v) => typeof v === "string" && /[|]|-{3}|\+-/u.test(v));

describe("a list printed as SAP prints one, ruled by bars and dashes", () => {
  it("is drawn as the test means: bars between the cells, amounts signed after", async () => {
    const { stdout } = await run("pdftotext", ["-layout", sapPdf, "-"]);
    expect(stdout).toContain("|Kasse");
    expect(stdout).toContain("98.765,43-|");
  });

  it("comes back as its table: no bar or dash in a cell, every amount a number, negatives negative", async () => {
    const { grid, shown } = await converted(sapPdf, "out-sap");
    const head = grid.findIndex((r) => r.includes("Konto"));
    expect(grid[head]).toEqual(HEADER);
    ROWS.forEach((r, i) => expect(grid[head + 1 + i], `row ${i}`).toEqual(r));
    expect(barsOrDashes(grid)).toEqual([]);
    // The list's title is the page's text, whole.
    expect(shown).toContain("Saldenliste Sachkonten");
  });
});

describe("a table boxed in text as psql prints one", () => {
  it("comes back as its table, the boxes no cells' text", async () => {
    const { grid } = await converted(asciiPdf, "out-ascii");
    const head = grid.findIndex((r) => r.includes("id"));
    expect(grid[head]).toEqual(PSQL_HEADER);
    PSQL_ROWS.forEach((r, i) => expect(grid[head + 1 + i], `row ${i}`).toEqual(r));
    expect(barsOrDashes(grid)).toEqual([]);
  });

  it("keeps a bar set in proportional type as the text's own", async () => {
    const { shown } = await converted(asciiPdf, "out-ascii-footer");
    expect(shown).toContain("Home | About | Contact");
  });
});
