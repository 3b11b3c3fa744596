/**
 * PDF → XLSX on a report under its running head (issue #13): report writers and line printers set
 * the company left, the report's title centred and the page number right over the table on every
 * page, a blank line above its header. Those lines are the page's, not rows of the table: the
 * table must start at its header and go on over the page break as one, the head's phrases must reach the workbook whole (as text, not
 * one word a cell), and a line printer's rules drawn in dashes must be no rows. The head's second
 * line starts with a part narrower than the first column and ends with a date.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { PDFDocument, type PDFFont, type PDFPage, StandardFonts } from "pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readXlsx } from "../helpers/convert-quality.ts";
import { ok, runOp } from "../helpers/runner.ts";
import { run, tmpDir } from "../helpers/tools.ts";

const HEADER = ["Acct", "Description", "Opening", "Debits", "Credits", "Closing"];
const ROWS: [string, string, number, number, number][] = [
  ["1001", "Cash at bank", 12345.67, 1000, 250],
  ["1002", "Petty cash", 150, 20, 0],
  ["1200", "Receivables", 45210.1, 8000.5, 6000],
  ["2001", "Accounts payable", 9876.54, 0, 3210],
  ["3100", "Retained earnings", 845000, 0, 0],
  ["4000", "Sales revenue", 88123.45, 0, 312000],
  ["4100", "Service income", 1204.5, 0, 120.5],
  ["5000", "Cost of sales", 40210, 15000.25, 0],
  ["5100", "Wages", 22000, 7300, 0],
  ["6000", "Rent", 0, 1800, 0],
];
/** The rows each page of the report holds: the table goes on over the page break, under the head again. */
const PAGES = [ROWS.slice(0, 6), ROWS.slice(6)];
const closing = ([, , opening, debits, credits]: (typeof ROWS)[number]): number => Math.round((opening + debits - credits) * 100) / 100;
const TOTAL = ROWS.reduce((s, r) => s + closing(r), 0);
const runningHead = (page: number): string[][] => [
  ["ACME Corporation", "Monthly Account Summary", `Page ${page} of ${PAGES.length}`],
  ["Branch 042", "Northwest region", "30/11/2026"],
];

const money = (n: number): string => n.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const cells = (r: (typeof ROWS)[number]): string[] => [r[0], r[1], ...[r[2], r[3], r[4], closing(r)].map(money)];

/** A report writer's page: every field its own text operator, in Helvetica, the head on the page's margins and centre. */
function reportWriter(page: PDFPage, n: number, font: PDFFont, bold: PDFFont): void {
  const size = 9;
  const at = (text: string, x: number, y: number, align: "left" | "right" | "centre", f = font): void => {
    const w = f.widthOfTextAtSize(text, size);
    page.drawText(text, { x: align === "left" ? x : align === "right" ? x - w : x - w / 2, y, size, font: f });
  };
  let y = 570;
  for (const [left, centre, right] of runningHead(n)) {
    at(left!, 36, y, "left", bold);
    at(centre!, 396, y, "centre", bold);
    at(right!, 756, y, "right");
    y -= 12;
  }
  y -= 12;
  const x = [36, 90, 390, 480, 570, 660];
  const line = (texts: readonly string[], f: PDFFont): void => texts.forEach((t, i) => at(t, x[i]!, y, i < 2 ? "left" : "right", f));
  line(HEADER, bold);
  for (const r of PAGES[n - 1]!) {
    y -= 12;
    line(cells(r), font);
  }
  if (n < PAGES.length) return;
  y -= 14;
  at("Total", 90, y, "left", bold);
  at(money(TOTAL), 660, y, "right", bold);
}

/** A line printer's page: each line one string in Courier, columns set by spaces, rules drawn in dashes, a negative amount signed after ("223,876.55-"). */
function linePrinter(page: PDFPage, n: number, font: PDFFont): void {
  const width = 100;
  const spread = (parts: readonly string[]): string => {
    const gap = width - parts.join("").length;
    const left = Math.floor(gap / 2);
    return parts[0]!.toUpperCase() + " ".repeat(left) + parts[1]!.toUpperCase() + " ".repeat(gap - left) + parts[2]!.toUpperCase();
  };
  const line = (c: readonly string[]): string =>
    c[0]!.padEnd(8) +
    c[1]!.padEnd(24) +
    c
      .slice(2)
      .map((v) => v.padStart(14))
      .join("");
  const text = [
    ...runningHead(n).map(spread),
    "",
    line(HEADER.map((h) => h.toUpperCase())),
    line(HEADER.map((h) => "-".repeat(h.length))),
    ...PAGES[n - 1]!.map((r) => line(cells(r).map((c) => c.toUpperCase().replace(/^-(.*)$/u, "$1-")))),
    ...(n < PAGES.length ? [] : [line(["", "", "", "", "", "-".repeat(12)]), line(["", "TOTAL", "", "", "", money(TOTAL)])]),
  ];
  text.forEach((l, i) => page.drawText(l, { x: 30, y: 570 - i * 11, size: 8.5, font }));
}

let dir: string;
let cleanup: () => Promise<void>;
const pdfs: Record<"report writer" | "line printer", string> = { "report writer": "", "line printer": "" };

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-running-head-"));
  for (const kind of ["report writer", "line printer"] as const) {
    const doc = await PDFDocument.create();
    const [font, bold, courier] = await Promise.all(
      [StandardFonts.Helvetica, StandardFonts.HelveticaBold, StandardFonts.Courier].map((f) => doc.embedFont(f)),
    );
    for (let n = 1; n <= PAGES.length; n++) {
      const page = doc.addPage([792, 612]);
      if (kind === "report writer") reportWriter(page, n, font!, bold!);
      else linePrinter(page, n, courier!);
    }
    pdfs[kind] = path.join(dir, `${kind.replace(" ", "-")}.pdf`);
    await writeFile(pdfs[kind], await doc.save());
  }
});

afterAll(async () => {
  await cleanup?.();
});

describe.each(["report writer", "line printer"] as const)("a %s's report under its running head", (kind) => {
  const caps = kind === "line printer";
  const cased = (s: string): string => (caps ? s.toUpperCase() : s);

  it("is drawn as the test means: the head's three parts on one line, far apart", async () => {
    const { stdout } = await run("pdftotext", ["-layout", pdfs[kind], "-"]);
    const first = stdout.split("\n").find((l) => l.trim())!;
    expect(first).toMatch(new RegExp(`${cased("ACME Corporation")} {10,}${cased("Monthly Account Summary")} {10,}${cased("Page 1 of 2")}`));
    if (caps) expect(stdout).toContain("----");
  });

  it("comes back as one table over both pages, starting at its header, every row's figures numbers, and the head's phrases whole", async () => {
    const res = ok(await runOp("convert", { to: "xlsx" }, [pdfs[kind]], path.join(dir, `out-${kind.replace(" ", "-")}`)));
    const sheets = await readXlsx(res.outputs[0]!.path);
    const grid = sheets[0]!.grid.map((r) => r.map((c) => c?.value));
    const head = grid.findIndex((r) => r.includes(cased("Acct")));
    expect(head, "the header's row").toBeGreaterThanOrEqual(0);
    // Nothing of the running head above the header in the table's sheet…
    expect(
      grid
        .slice(0, head)
        .flat()
        .filter((v) => v !== undefined && v !== null),
    ).toEqual([]);
    expect(grid[head]).toEqual(HEADER.map(cased));
    ROWS.forEach((r, i) => expect(grid[head + 1 + i], `row ${i}`).toEqual([Number(r[0]), cased(r[1]), r[2], r[3], r[4], closing(r)]));
    // …a negative amount shown as the page shows it…
    const negative = ROWS.findIndex((r) => closing(r) < 0);
    const shown = sheets[0]!.grid[head + 1 + negative]![5]!.display;
    expect(shown).toBe(caps ? `${money(-closing(ROWS[negative]!))}-` : money(closing(ROWS[negative]!)));
    // …the header not repeated where the second page goes on, no row of dashes among the rows…
    expect(grid.some((r) => r.some((v) => typeof v === "string" && /^-{3,}$/.test(v)))).toBe(false);
    const total = grid[head + 1 + ROWS.length]!;
    expect(total.filter((v) => v !== undefined && v !== null)).toEqual([cased("Total"), Math.round(TOTAL * 100) / 100]);
    // …and each of the head's phrases in the workbook, one cell each.
    const all = sheets.flatMap((s) => s.grid.flat().map((c) => c?.display));
    for (const phrase of [...runningHead(1), ...runningHead(2)].flat()) expect(all, phrase).toContain(cased(phrase));
  });
});
