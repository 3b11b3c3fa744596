/**
 * The pure parts of PDF layout analysis (runner/pdf-layout), on hand-made text items and rules:
 * line grouping, reading order across columns, paragraph text, cell typing, lattice grids, stream
 * columns and tables continued across a page break. (Glyph runs: pdf-layout-glyphs.test.ts.)
 */
import { describe, expect, it } from "vitest";
import path from "node:path";
import { bounds, buildBlocks, readingOrder, type Box, type TextBlock } from "../../runner/pdf-layout/blocks.ts";
import { typeCell } from "../../runner/pdf-layout/cells.ts";
import { joinContinuedTables } from "../../runner/pdf-layout/continued.ts";
import { buildGrid, gridCells } from "../../runner/pdf-layout/lattice.ts";
import { groupLines, pageSegments, segmentOf, segmentText, splitLine } from "../../runner/pdf-layout/lines.ts";
import { maxOf, minOf } from "../../runner/pdf-layout/minmax.ts";
import { blockParagraphs, paragraphText } from "../../runner/pdf-layout/paragraphs.ts";
import { streamTable, streamTables } from "../../runner/pdf-layout/stream.ts";
import { withoutBars } from "../../runner/pdf-layout/textrules.ts";
import { atCharColumns } from "../../runner/pdf-layout/charcolumns.ts";
import { buildTable, disjointCells, orientTable } from "../../runner/pdf-layout/tables.ts";
import type { Block, Cell, PageLayout, Table, TextItem } from "../../runner/pdf-layout/types.ts";
import { writeDocx } from "../../runner/ops/convert-docx.ts";
import { writeXlsx } from "../../runner/ops/convert-xlsx.ts";
import { paragraphOf } from "../helpers/layout-blocks.ts";
import { tmpDir } from "../helpers/tools.ts";

/** A text item of `text` at x, baseline `base`, 12 pt, 6 pt per character. */
function item(text: string, x: number, base: number, extra: Partial<TextItem> = {}): TextItem {
  return {
    text,
    x0: x,
    x1: x + 6 * text.length,
    base,
    size: 12,
    font: "Serif",
    bold: false,
    italic: false,
    mcid: null,
    opaque: false,
    ...extra,
  };
}

describe("lines", () => {
  it("groups runs on one baseline (small jitter included) and sorts them left to right", () => {
    const lines = groupLines([item("world", 60, 100.5), item("hello", 20, 100), item("next", 20, 114)]);
    expect(lines.map((l) => l.map((i) => i.text))).toEqual([["hello", "world"], ["next"]]);
  });

  it("splits a line at a gap wider than a word space, but keeps a bullet with its text", () => {
    const line = [item("left", 0, 100), item("right", 200, 100)];
    expect(splitLine(line).map(segmentText)).toEqual(["left", "right"]);
    const bullet = [item("", 0, 100, { opaque: true, x1: 4 }), item("item text", 18, 100)];
    expect(splitLine(bullet)).toHaveLength(1);
  });
});

describe("TeX mathematics on a line", () => {
  /** A run at [x0, x1] on baseline `base` in `size` points. */
  const run = (text: string, x0: number, x1: number, base: number, size = 10.9): TextItem => item(text, x0, base, { x1, size });
  const texts = (items: TextItem[]): string[] => groupLines(items).map((l) => splitLine(l).map(segmentText).join(" | "));

  it('keeps an exponent set in several runs with its base (e^{2πit}: "2" and "πit" in two fonts)', () => {
    // As TeX sets it (GeoTopo): the exponent 4 pt up, "πit" not touching the "e" and 4.4 pt short of "= cos".
    const items = [run(") =", 360.4, 377.2, 265.2), run("e", 381.1, 386.2, 265.2), run("2", 386.2, 390.4, 261.3, 8)];
    items.push(run("πit", 390.4, 401.9, 261.3, 8), run("= cos(2", 406.3, 443.3, 265.2));
    expect(texts(items)).toEqual([") = e2πit = cos(2"]);
  });

  it("puts an accent on its letter when pdfjs joined it to the text before it, or TeX raised it over a capital", () => {
    // "(0) = ˜" then "a" (TeX's \tilde a after an equals sign), and H̃ whose accent sits 2.8 pt up,
    // beside a superscript that starts a line of its own.
    const items = [run("(0) = ˜", 392.5, 426.6, 114.1), run("a", 421, 426.7, 114.1), run(".", 426.7, 429.8, 114.1)];
    items.push(run("(iv)", 114.6, 131.8, 340.6), run("˜", 140.1, 145.6, 337.8), run("H", 137.3, 146.3, 340.6));
    items.push(run("p", 150, 155.5, 340.6), run("−1", 155.5, 163, 336.9, 8), run("(b)", 163.5, 176, 340.6));
    expect(texts(items)).toEqual(["(0) = ã.", "(iv) H̃ p−1(b)"]);
  });
});

describe("reading order", () => {
  it("reads two columns column by column, between a full-width heading and footer", () => {
    const items = [item("Heading across the page", 0, 10)];
    for (let i = 0; i < 4; i++) items.push(item(`left column line ${i}`, 0, 40 + 14 * i), item(`right column line ${i}`, 160, 40 + 14 * i));
    items.push(item("Footer line that spans both columns of the page", 0, 120));
    const blocks = buildBlocks(pageSegments(items).flat());
    const region = new Map<TextBlock, Box>();
    const text = readingOrder(blocks, region).map((b) => b.segs.map(segmentText).join(" "));
    expect(text).toEqual([
      "Heading across the page",
      "left column line 0 left column line 1 left column line 2 left column line 3",
      "right column line 0 right column line 1 right column line 2 right column line 3",
      "Footer line that spans both columns of the page",
    ]);
  });

  it("joins a word hyphenated at the end of a line and starts a paragraph after a short line", () => {
    const items = [
      item("the quick brown fox jumps over the exam-", 0, 10),
      item("ple of a lazy dog which ends here.", 0, 24),
      item("A second paragraph starts.", 0, 38),
    ];
    const [block] = buildBlocks(pageSegments(items).flat());
    const paras = blockParagraphs(block!, { x0: 0, x1: 240, top: 0, bottom: 100 }, 0);
    expect(paras.map(paragraphText)).toEqual([
      "the quick brown fox jumps over the example of a lazy dog which ends here.",
      "A second paragraph starts.",
    ]);
  });
});

describe("a right-to-left paragraph drawn word by word", () => {
  it("reads its words from the right end of each line, in DOCX paragraphs as in cells", () => {
    // cairo draws each Arabic word as a run of its own; pdfjs reads each word right, left to right.
    const items = [item("محار", 100, 10), item("سديم", 130, 10), item("كوارتز", 160, 10), item("فلفل", 130, 24), item("مرج", 160, 24)];
    const [block] = buildBlocks(pageSegments(items).flat());
    const paras = blockParagraphs(block!, { x0: 0, x1: 240, top: 0, bottom: 100 }, 0);
    expect(paras.map(paragraphText)).toEqual(["كوارتز سديم محار", "مرج فلفل"]);
  });
});

describe("withoutBars", () => {
  it("cuts a monospaced run at its bars, each part where its characters lie, and maps the parts back to the run", () => {
    const run = item("|Kasse |  1.234,50-|", 30, 100, { font: "ABCDEF+CourierNewPSMT" });
    const { items, drawn, bars } = withoutBars([run, item("|", 200, 100, { font: "Courier" })]);
    expect(items.map((i) => [i.text, i.x0, i.x1])).toEqual([
      ["Kasse", 36, 66],
      ["1.234,50-", 90, 144],
    ]);
    expect(items.every((i) => drawn.get(i) === run)).toBe(true);
    expect(bars.map((b) => b.text)).toEqual(["|"]);
  });

  it("leaves a bar in proportional type, or in a Monotype face, as the text's own", () => {
    const runs = [item("Home | About", 30, 100, { font: "Helvetica" }), item("A | B", 30, 120, { font: "MonotypeCorsiva" })];
    expect(withoutBars(runs).items).toEqual(runs);
  });
});

describe("atCharColumns", () => {
  /** A page set in Courier as a line printer sets it: each line one run, 12 pt apart, 6 pt a character. */
  const printed = (lines: readonly string[], font = "Courier"): TextItem[] =>
    lines.flatMap((l, k) => {
      const start = l.length - l.trimStart().length;
      return l.trim() ? [item(l.trim(), 36 + 6 * start, 100 + 12 * k, { font })] : [];
    });
  const texts = (items: readonly TextItem[]): string[][] => {
    const lines = new Map<number, string[]>();
    for (const i of items) lines.set(i.base, [...(lines.get(i.base) ?? []), i.text]);
    return [...lines.values()];
  };
  const LISTING = [
    `${"DOC NO".padEnd(9)}${"Belegnr.".padEnd(9)}${"CUSTOMER NAME".padEnd(26)}AMOUNT`,
    "PO696419 JE974257 Quartz hull meridian  74.821,62-",
    "CM899071 CM264299 Delta fennel meadow    14.859,49",
    "PO862862 JE799295 Orchard bramble reef   67.099,05",
    "INV72711 INV67258 Valley saffron island 119.539,59",
    "JE790611 PO853110 Orchard willow        112.045,62",
  ];

  it("cuts a listing's rows at the single spaces every line leaves blank, each part where its characters lie", () => {
    const runs = printed(LISTING);
    const { items, drawn } = atCharColumns(runs);
    expect(texts(items)[1]).toEqual(["PO696419", "JE974257", "Quartz hull meridian", "74.821,62-"]);
    const quartz = items.find((i) => i.text === "Quartz hull meridian")!;
    expect([quartz.x0, quartz.x1]).toEqual([36 + 6 * 18, 36 + 6 * 38]);
    expect(drawn.get(quartz)).toBe(runs[1]);
  });

  it("leaves a title across the columns, a group heading of one run and proportional type whole", () => {
    const head = ["ACME CORP   GENERAL LEDGER TRIAL BALANCE   PAGE 1", ""];
    const { items } = atCharColumns(printed([...head, ...LISTING.slice(0, 3), "BRANCH 042", ...LISTING.slice(3)]));
    expect(texts(items)[0]).toEqual(["ACME CORP   GENERAL LEDGER TRIAL BALANCE   PAGE 1"]);
    expect(items.some((i) => i.text === "BRANCH 042")).toBe(true);
    const proportional = printed(LISTING, "Helvetica");
    expect(atCharColumns(proportional).items).toEqual(proportional);
  });

  it("cuts no prose set in Courier: a ragged right edge and words that happen to stand over each other are no columns", () => {
    const prose = [
      "Dear customer, we are writing to let you know that your",
      "account statement for November is now ready. It lists",
      "every payment we received and the balance due at the end",
      "of the month. Please call us if any entry looks wrong to",
      "you, or write to the address at the top of this letter.",
    ];
    const runs = printed(prose);
    expect(atCharColumns(runs).items).toEqual(runs);
  });

  it("leaves hostile runs alone: characters a millionth of a point wide, a line wider than any printer's, 200,000 runs", () => {
    const tiny = LISTING.map((l, k) => item(l, 36, 100 + 12 * k, { font: "Courier", x1: 36 + l.length * 1e-6 }));
    expect(atCharColumns(tiny).items).toEqual(tiny);
    const wide = [...printed(LISTING), item(`${"a ".repeat(600_000)}b`, 36, 172, { font: "Courier" })];
    expect(atCharColumns(wide).items).toEqual(wide);
    const many = Array.from({ length: 200_000 }, (_, k) => item("ab cd", 36 + 36 * (k % 10), 100 + 0.01 * k, { font: "Courier" }));
    expect(atCharColumns(many).items).toHaveLength(many.length);
  });

  it("cuts no column whose text stands on one line only (a two-word label longer than the others)", () => {
    const runs = printed([
      "Rent           1,800.00",
      "Wages         22,000.00",
      "Office supplies  150.00",
      "Cash             120.50",
      "Fees              30.00",
    ]);
    expect(texts(atCharColumns(runs).items)[2]).toEqual(["Office supplies  150.00"]);
  });
});

describe("typeCell", () => {
  const cases: [string, string, unknown, string | undefined][] = [
    ["plain integer", "42", 42, undefined],
    ["US thousands and decimals", "1,234,567.89", 1234567.89, "#,##0.00"],
    ["European thousands and decimal comma", "1.234,5", 1234.5, "#,##0.0"],
    ["decimal comma alone", "3,75", 3.75, "0.00"],
    ["spaces as thousands separators", "1 234 567", 1234567, "#,##0"],
    ["negative with a minus sign", "−987", -987, undefined],
    ["negative in parentheses", "(1,200.00)", -1200, "#,##0.00;(#,##0.00)"],
    ["negative signed after (SAP lists, mainframe reports)", "1,234.56-", -1234.56, "#,##0.00;#,##0.00-"],
    ["negative signed after, German groups", "1.234,56-", -1234.56, "#,##0.00;#,##0.00-"],
    ["negative signed after, a currency before", "$120.00-", -120, '"$"0.00;"$"0.00-'],
    ["a year and a dash after it stays text", "2019-", "2019-", undefined],
    ["percentage", "12.5%", 0.125, "0.0%"],
    ["currency prefix", "$1,234.50", 1234.5, '"$"#,##0.00'],
    ["grouped by narrow no-break spaces, a decimal comma and the euro after", "2\u202f238,77 €", 2238.77, '#,##0.00" €"'],
    ["a local sign of letters after (Polish złoty)", "2 076,00 zł", 2076, '#,##0.00" zł"'],
    ["a local sign of letters after (Swedish krona), negative in parentheses", "(1 136,33 kr)", -1136.33, '#,##0.00" kr";(#,##0.00" kr")'],
    ["a local sign of letters before (Brazilian real)", "R$ 1.234,56", 1234.56, '"R$ "#,##0.00'],
    ["a local sign before, a period after it (rupees)", "Rs. 1,200", 1200, '"Rs. "#,##0'],
    ["a one-character sign glued before (rouble)", "₽100", 100, '"₽"0'],
    ["a unit that is no currency stays text", "12 ft", "12 ft", undefined],
    ["scientific notation, as printed", "3e-5", 3e-5, "0E-0"],
    ["scientific notation with decimals and a signed exponent", "1.50E+10", 1.5e10, "0.00E+0"],
    ["scientific notation with an unsigned exponent", "2e4", 20000, "0E-0"],
    ["negative scientific notation", "-2.5e-3", -0.0025, "0.0E-0"],
    ["leading zeros stay text", "007", "007", undefined],
    ["words stay text", "North dome", "North dome", undefined],
  ];
  it.each(cases)("%s: %s", (_name, text, value, numFmt) => {
    const typed = typeCell(text);
    expect(typed.value).toEqual(value);
    expect("numFmt" in typed ? typed.numFmt : undefined).toBe(numFmt);
  });

  it.each([
    ["2024-03-15", "2024-03-15", "yyyy-mm-dd"],
    ["2024/03/15", "2024-03-15", "yyyy/mm/dd"],
    ["03/15/24", "2024-03-15", "mm/dd/yy"],
    ["3/5/2024", "2024-03-05", "m/d/yyyy"],
    ["05/03/2019", "2019-05-03", "mm/dd/yyyy"],
    ["15/03/2024", "2024-03-15", "dd/mm/yyyy"],
    ["15.03.2024", "2024-03-15", "dd.mm.yyyy"],
    ["15 Mar 2024", "2024-03-15", "d mmm yyyy"],
    ["15 March 2024", "2024-03-15", "d mmmm yyyy"],
    ["15-Mar-24", "2024-03-15", "d-mmm-yy"],
    ["01-Apr-16", "2016-04-01", "dd-mmm-yy"],
    ["Mar 15, 2024", "2024-03-15", "mmm d, yyyy"],
    ["March 15, 2024", "2024-03-15", "mmmm d, yyyy"],
  ])("reads the date %s as a date cell", (text, iso, numFmt) => {
    const typed = typeCell(text);
    expect(typed.value).toBeInstanceOf(Date);
    expect((typed.value as Date).toISOString().slice(0, 10)).toBe(iso);
    expect("numFmt" in typed && typed.numFmt).toBe(numFmt);
  });

  it.each([
    ["two numbers a space apart, one grouped with dots", "7.497 948,10"],
    ["two grouped numbers", "139.868 19.733,75"],
    ["groups under different separators", "1,234.567 890"],
  ])("keeps %s as text, never a number that is not one: %s", (_what, text) => {
    expect(typeCell(text).value).toBe(text);
  });

  it("does not take an impossible date for one", () => {
    expect(typeCell("2024-02-30").value).toBe("2024-02-30");
  });

  it.each([
    ["a year alone", "2024", 2024],
    ["a compact date-like number", "20240315", 20240315],
    ["a decimal", "15.03", 15.03],
    ["a range of years", "2020-2021", "2020-2021"],
    ["a range of numbers", "10-12", "10-12"],
    ["a month and year", "03/2024", "03/2024"],
    ["a word that starts like a month", "15 Marble 2024", "15 Marble 2024"],
  ])("does not take %s for a date: %s", (_what, text, value) => {
    expect(typeCell(text).value).toEqual(value);
  });
});

describe("lattice grid", () => {
  const h = (y: number, x0 = 0, x1 = 300): { x0: number; x1: number; y0: number; y1: number } => ({ x0, x1, y0: y, y1: y });
  const v = (x: number, y0 = 0, y1 = 40): { x0: number; x1: number; y0: number; y1: number } => ({ x0: x, x1: x, y0, y1 });

  it("builds a 2×3 grid from its rules", () => {
    const grid = buildGrid([h(0), h(20), h(40), v(0), v(100), v(200), v(300)])!;
    expect(grid.xs).toEqual([0, 100, 200, 300]);
    expect(grid.ys).toEqual([0, 20, 40]);
    expect(gridCells(grid)).toHaveLength(6);
  });

  it("merges cells across a border that is not drawn", () => {
    // The border between columns 0 and 1 is drawn in the second row only: row one spans two columns.
    const grid = buildGrid([h(0), h(20), h(40), v(0), v(100, 20, 40), v(200), v(300)])!;
    const cells = gridCells(grid);
    expect(cells).toContainEqual({ row: 0, col: 0, rowSpan: 1, colSpan: 2 });
    expect(cells).toHaveLength(5);
  });

  it("is not a table when the rules draw a single box", () => {
    expect(buildGrid([h(0), h(40), v(0), v(300)])).toBeNull();
  });

  it("never lets a column span run into a row span from above (an L-shaped grid)", () => {
    // The middle rule stops at x 100 and the rule at x 100 stops at y 20: the top-right cell spans
    // down, and the bottom-left cell would span right into it.
    const cells = gridCells(buildGrid([h(0, 0, 200), h(20, 0, 100), h(40, 0, 200), v(0), v(100, 0, 20), v(200)])!);
    expect(cells).toEqual([
      { row: 0, col: 0, rowSpan: 1, colSpan: 1 },
      { row: 0, col: 1, rowSpan: 2, colSpan: 1 },
      { row: 1, col: 0, rowSpan: 1, colSpan: 1 },
    ]);
  });
});

describe("overlapping merged cells", () => {
  const cell = (row: number, col: number, rowSpan: number, colSpan: number): Cell => ({
    row,
    col,
    rowSpan,
    colSpan,
    lines: [],
    header: false,
  });
  const table: Table = {
    kind: "lattice",
    rows: 2,
    cols: 2,
    cells: [cell(0, 0, 1, 1), cell(0, 1, 2, 1), cell(1, 0, 1, 2)],
    x0: 0,
    x1: 200,
    top: 0,
    bottom: 40,
    colEdges: [0, 100, 200],
  };

  it("drops the span of a cell that runs into an earlier one", () => {
    expect(disjointCells(table).map((c) => [c.row, c.col, c.rowSpan, c.colSpan])).toEqual([
      [0, 0, 1, 1],
      [0, 1, 2, 1],
      [1, 0, 1, 1],
    ]);
  });

  it("writes such a table to XLSX and DOCX without throwing", async () => {
    const { dir, cleanup } = await tmpDir("folio-overlap-");
    try {
      const page: PageLayout = {
        number: 1,
        width: 300,
        height: 300,
        blocks: [{ type: "table", table, top: 0, bottom: 40 }],
        frame: { x0: 0, x1: 200, top: 0, bottom: 40 },
        segments: [],
        continued: false,
      };
      const layout = { pages: [page], chars: 3, imagesOmitted: 0 };
      await expect(writeXlsx(layout, path.join(dir, "t.xlsx"), AbortSignal.timeout(10_000))).resolves.toMatchObject({ tables: 1 });
      await expect(writeDocx(layout, path.join(dir, "t.docx"), AbortSignal.timeout(10_000))).resolves.toMatchObject({ tables: 1 });
    } finally {
      await cleanup();
    }
  });
});

describe("pages with very many text runs", () => {
  it("finds the smallest and largest of more values than a call can take as arguments", () => {
    const xs = Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 300_000);
    expect(minOf(xs, (x) => x)).toBe(0);
    expect(maxOf(xs, (x) => x)).toBe(299_999);
    expect(minOf([], (x: number) => x, 5)).toBe(5);
  });

  it("makes a segment, a table and a block of 200,000 runs", () => {
    const items = Array.from({ length: 200_000 }, (_, i) => item("w", i * 7, 100));
    const seg = segmentOf(items);
    expect([seg.x0, seg.x1]).toEqual([0, 199_999 * 7 + 6]);
    const t = buildTable("stream", [{ row: 0, col: 0, rowSpan: 1, colSpan: 1, items }], [0, 10], { x0: 0, x1: 10, top: 0, bottom: 10 });
    expect(t.x1).toBe(199_999 * 7 + 6);
    expect(bounds(items.map((i) => ({ x0: i.x0, x1: i.x1, top: 0, bottom: 1 }))).x1).toBe(199_999 * 7 + 6);
  });

  it("groups 40,000 scattered words into blocks in well under a second", () => {
    // A 200 × 200 grid of words 70 pt apart: no two are lines of one block.
    const segs = Array.from({ length: 40_000 }, (_, i) => splitLine([item("w", (i % 200) * 70, Math.floor(i / 200) * 70 + 20)])[0]!);
    const started = performance.now();
    expect(buildBlocks(segs)).toHaveLength(40_000);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe("stream columns", () => {
  const texts = (t: Table, row: number): string[] =>
    t.cells
      .filter((c) => c.row === row)
      .sort((a, b) => a.col - b.col)
      .map((c) => c.lines.map(segmentText).join(" "));

  it("keeps a left-aligned header over right-aligned numbers in one column", () => {
    const lines = [
      [item("Region", 0, 10), item("Units", 100, 10)],
      [item("North", 0, 24), item("17", 150, 24)],
      [item("South", 0, 38), item("42", 150, 38)],
    ];
    const table = streamTable(lines)!;
    expect([table.rows, table.cols]).toEqual([3, 2]);
    expect(texts(table, 0)).toEqual(["Region", "Units"]);
  });

  it("keeps a header set a blank line over its rows, one label reaching over a gap, as its header (no running head)", () => {
    const rows = [
      [item("ITEM", 0, 100), item("QUANTITY", 60, 100), item("PRICE", 132, 100)],
      [item("Apple", 0, 128), item("3", 108, 128), item("1.50", 138, 128)],
      [item("Pear", 0, 142), item("12", 102, 142), item("0.75", 138, 142)],
      [item("Plum", 0, 156), item("7", 108, 156), item("2.25", 138, 156)],
    ];
    const [found] = streamTables(rows.flat());
    expect(texts(found!.table, 0)).toEqual(["ITEM", "QUANTITY", "PRICE"]);
  });

  /** A listing's rows under its header: Acct | Name | Amount (right-aligned to 300), 14 pt apart from `top`. */
  const listing = (top: number): TextItem[][] => [
    [item("Acct", 0, top), item("Name", 60, top), item("Amount", 264, top)],
    ...["1,234.50", "98.00", "12,000.75", "310.20"].map((amount, k) => [
      item(String(1001 + k), 0, top + 14 * (k + 1)),
      item(["Cash at bank", "Petty cash", "Receivables", "Wages"][k]!, 60, top + 14 * (k + 1)),
      item(amount, 300 - 6 * amount.length, top + 14 * (k + 1)),
    ]),
  ];

  it("leaves a printer's page header out of the table: left, centred and right parts, the page's number set apart from its word", () => {
    const head = [
      [item("ACME CORP", 0, 100), item("TRIAL BALANCE", 111, 100), item("PAGE", 264, 100), item("1", 294, 100)],
      [item("Currency: USD", 111, 114), item("TIME 23:41", 240, 114)],
    ];
    const [found] = streamTables([...head, ...listing(142)].flat());
    expect(texts(found!.table, 0)).toEqual(["Acct", "Name", "Amount"]);
    expect(found!.table.rows).toBe(5);
  });

  it("leaves a printer's page header out over an ASCII table's top border right under it", () => {
    // enscript's header line, then the border a line and a half below it, then the header.
    const head = [[item("listing-014", 0, 100), item("26-12-08", 126, 100), item("Page 1 of 3", 234, 100)]];
    const border = [item("+------+---------+--------+", 0, 120)];
    const [found] = streamTables([...head, border, ...listing(134)].flat());
    expect(texts(found!.table, 0)).toEqual(["Acct", "Name", "Amount"]);
  });

  it("reads a centred line that is a column's header over its rows as the header, not a page header", () => {
    // Three columns, the middle one's label centred over the page: as many parts as columns, its label flush with its rows.
    const rows = [
      [item("Code", 0, 100), item("Description", 117, 100), item("Total", 270, 100)],
      ...[0, 1, 2, 3].map((k) => [
        item(`C${k}`, 0, 128 + 14 * k),
        item(`Item number ${k}`, 117, 128 + 14 * k),
        item(`${k}.50`, 276, 128 + 14 * k),
      ]),
    ];
    const [found] = streamTables(rows.flat());
    expect(texts(found!.table, 0)).toEqual(["Code", "Description", "Total"]);
  });

  it("reads a rule drawn in text, a run of dashes a column, a space between them, as no row", () => {
    const rule = [item("---- ---------- --------", 0, 128)];
    const rows = listing(114);
    const [found] = streamTables(
      [...rows.slice(0, 1), rule, ...rows.slice(1).map((l) => l.map((i) => ({ ...i, base: i.base + 14 })))].flat(),
    );
    expect(found!.table.rows).toBe(5);
    expect(texts(found!.table, 1)).toEqual(["1001", "Cash at bank", "1,234.50"]);
  });

  it("joins a header's lines in capitals set flush over each other above the rows, not a group's label centred over its columns", () => {
    const rows = [
      [item("ITEM", 60, 100), item("OVER 90", 258, 100)],
      [item("Acct", 0, 114), item("DESCRIPTION", 60, 114), item("DAYS", 276, 114)],
      ...listing(114).slice(1),
    ];
    const [found] = streamTables(rows.flat());
    expect(texts(found!.table, 0)).toEqual(["Acct", "ITEM DESCRIPTION", "OVER 90 DAYS"]);
  });

  it("reads two listings stacked two lines apart, their columns set apart differently, as two tables", () => {
    const upper = listing(100);
    // The second: Date | Ref | Qty | Value, its gaps where the first has text.
    const lower = [
      [item("Date", 0, 198), item("Ref", 90, 198), item("Qty", 174, 198), item("Value", 270, 198)],
      ...[0, 1, 2, 3].map((k) => [
        item(`0${k + 1}.12.2026`, 0, 212 + 14 * k),
        item(`PO-${k}`, 90, 212 + 14 * k),
        item(String(10 * k + 5), 192 - 6 * String(10 * k + 5).length, 212 + 14 * k),
        item(`${k + 1}.00`, 300 - 24, 212 + 14 * k),
      ]),
    ];
    const found = streamTables([...upper, ...lower].flat());
    expect(found.map((f) => [f.table.rows, f.table.cols])).toEqual([
      [5, 3],
      [5, 4],
    ]);
  });

  it("refuses two columns of prose", () => {
    const lines = [0, 1, 2].map((i) => [
      item("several words of running text here", 0, 10 + 14 * i),
      item("and more words of text over there", 300, 10 + 14 * i),
    ]);
    expect(streamTable(lines)).toBeNull();
  });

  it("cuts a date from the text of the next cell, though less than a word space apart", () => {
    // Calc: dates right-aligned in their cell, the region left-aligned 2 pt after.
    const lines = [
      [item("Product", 0, 10), item("Shipped", 102, 10), item("Region", 162, 10)],
      [item("Osprey Sail", 0, 24), item("2024-05-30", 100, 24), item("East", 162, 24)],
      [item("Tide Margin", 0, 38), item("2023-11-09", 100, 38), item("West", 162, 38)],
      [item("Have Yarrow", 0, 52), item("2023-08-02", 100, 52), item("Central", 162, 52)],
    ];
    const table = streamTable(lines)!;
    expect([table.rows, table.cols]).toEqual([4, 3]);
    expect(texts(table, 1)).toEqual(["Osprey Sail", "2024-05-30", "East"]);
  });

  it("parts columns set a fraction of an em apart when the gap runs down every line", () => {
    // A tight ledger: numbers right-aligned to 118, codes left-aligned from 121 (3 pt, a quarter em).
    const lines = [0, 1, 2, 3].map((r) => [
      item(`Account ${r}`, 0, 10 + 14 * r),
      item(["7", "1,234", "56", "98,765"][r]!, 118 - 6 * ["7", "1,234", "56", "98,765"][r]!.length, 10 + 14 * r),
      item(`AB-${1000 + r}`, 121, 10 + 14 * r),
    ]);
    const table = streamTable(lines)!;
    expect(table.cols).toBe(3);
    expect(texts(table, 3)).toEqual(["Account 3", "98,765", "AB-1003"]);
  });

  it("joins a wrapped cell's lines and a wrapped header's lines into their rows", () => {
    const lines = [
      [item("Item", 0, 10), item("Notes on the", 80, 10), item("Units", 200, 10)],
      [item("notes", 80, 20)],
      [item("Anchor", 0, 34), item("Kept in the", 80, 34), item("12", 212, 34)],
      [item("north dock", 80, 44)],
      [item("Beacon", 0, 58), item("Lit", 80, 58), item("7", 218, 58)],
    ];
    const table = streamTable(lines)!;
    expect([table.rows, table.cols]).toEqual([3, 3]);
    expect(texts(table, 0)).toEqual(["Item", "Notes on the notes", "Units"]);
    expect(texts(table, 1)).toEqual(["Anchor", "Kept in the north dock", "12"]);
  });

  it("does not take a bulleted or numbered list for a table", () => {
    // The marker sits far enough from its text to be a piece of its own.
    const bullets = ["Apples", "Pears", "Plums"].map((t, i) => [item("•", 0, 10 + 14 * i), item(t, 60, 10 + 14 * i)]);
    const numbers = ["Apples", "Pears", "Plums"].map((t, i) => [item(`${i + 1}.`, 0, 10 + 14 * i), item(t, 60, 10 + 14 * i)]);
    for (const list of [bullets, numbers]) expect(streamTables(list.flat())).toEqual([]);
  });

  it("needs two rows of two cells", () => {
    const lines = [[item("Region", 0, 10), item("Units", 100, 10)], [item("North", 0, 24), item("17", 118, 24)], [item("Total", 0, 38)]];
    expect(streamTable(lines)).not.toBeNull();
    expect(streamTable([lines[0]!, lines[2]!])).toBeNull();
  });

  it("does not make a column of a gap that a single row has", () => {
    // A producer that places every word: "8" and "bits" are two runs, but no other row is cut there.
    const lines = [
      [item("4", 0, 10), item("LITERAL_OFFSET", 60, 10)],
      [item("4", 0, 24), item("MIME_TYPE_OFFSET", 60, 24)],
      [item("4", 0, 38), item("WEIGHT in lower 8", 60, 38), item("bits", 166, 38)],
    ];
    const table = streamTable(lines)!;
    expect([table.rows, table.cols]).toEqual([3, 2]);
    expect(texts(table, 2)).toEqual(["4", "WEIGHT in lower 8 bits"]);
  });

  it("reads a table in right-to-left script from its rightmost column", () => {
    const lines = [0, 1, 2].map((r) => [item(String(10 * (r + 1)), 0, 10 + 14 * r), item(["ميناء", "منارة", "مرج"][r]!, 100, 10 + 14 * r)]);
    const table = orientTable(streamTable(lines)!);
    expect(table.rtl).toBe(true);
    expect(texts(table, 0)).toEqual(["ميناء", "10"]);
  });
});

describe("tables across a page break", () => {
  /** A 4-column table of `rows` (row texts), its columns at x = 0, 100, 200, 300, 400 (+ shift). */
  function table(rows: string[][], base: number, shift = 0): Table {
    const edges = [0, 100, 200, 300, 400].map((x) => x + shift);
    const drafts = rows.flatMap((r, ri) =>
      r.map((text, col) => ({ row: ri, col, rowSpan: 1, colSpan: 1, items: [item(text, edges[col]! + 4, base + 14 * ri)] })),
    );
    return buildTable("stream", drafts, edges, { x0: edges[0]!, x1: edges[4]!, top: base - 12, bottom: base + 14 * rows.length });
  }
  const tableBlock = (t: Table): Block => ({ type: "table", table: t, top: t.top, bottom: t.bottom });
  const para = (text: string, base: number): Block => paragraphOf([splitLine([item(text, 0, base)])[0]!]);
  const page = (number: number, blocks: Block[]): PageLayout => ({
    number,
    width: 595,
    height: 842,
    blocks,
    frame: { x0: 0, x1: 400, top: 0, bottom: 800 },
    segments: [],
    continued: false,
  });
  const header = ["Berth", "Vessel", "Tonnage", "Crew"];
  const texts = (t: Table): string[] =>
    t.cells.sort((a, b) => a.row - b.row || a.col - b.col).map((c) => c.lines.map(segmentText).join(" "));

  it("appends the rows that continue on the next page to the table, and the page flows on", () => {
    const first = table([header, ["B1", "Delta Fjord", "5,207", "26"]], 740);
    // Whitespace columns shift with their widest cell: these start 12 pt further right.
    const rest = table(
      [
        ["B2", "Sail They", "1,936", "28"],
        ["B3", "Pilot Prairie", "40,963", "44"],
      ],
      72,
      12,
    );
    const pages = [
      page(1, [para("Some text above the table.", 700), tableBlock(first)]),
      page(2, [tableBlock(rest), para("Text after it.", 120)]),
    ];
    joinContinuedTables(pages);
    expect(first.rows).toBe(4);
    expect(texts(first).slice(8)).toEqual(["B2", "Sail They", "1,936", "28", "B3", "Pilot Prairie", "40,963", "44"]);
    expect(pages[1]!.blocks.map((b) => b.type)).toEqual(["paragraph"]);
    expect(pages[1]!.continued).toBe(true);
  });

  it("drops a repeated header row, passes over page numbers and follows a table over three pages", () => {
    const first = table([header, ["B1", "Delta Fjord", "5,207", "26"]], 740);
    const middle = table([header, ["B2", "Sail They", "1,936", "28"]], 72);
    const last = table([header, ["B3", "Pilot Prairie", "40,963", "44"]], 72);
    const pages = [
      page(1, [tableBlock(first), para("1", 820)]),
      page(2, [tableBlock(middle), para("2", 820)]),
      page(3, [tableBlock(last)]),
    ];
    joinContinuedTables(pages);
    expect(first.rows).toBe(4);
    expect(texts(first).filter((t) => t === "Berth")).toHaveLength(1);
    expect(first.cells.filter((c) => c.row === 0).every((c) => c.header)).toBe(true);
    expect(pages.map((p) => p.blocks.filter((b) => b.type === "table").length)).toEqual([1, 0, 0]);
  });

  it("keeps two tables apart when text comes between them or their columns differ", () => {
    const a = table([header, ["B1", "Delta Fjord", "5,207", "26"]], 740);
    const b = table([header, ["B2", "Sail They", "1,936", "28"]], 72);
    const pages = [page(1, [tableBlock(a), para("A closing paragraph of the chapter.", 780)]), page(2, [tableBlock(b)])];
    joinContinuedTables(pages);
    expect([a.rows, pages[1]!.continued]).toEqual([2, false]);

    const narrow = buildTable(
      "lattice",
      [0, 1].map((col) => ({ row: 0, col, rowSpan: 1, colSpan: 1, items: [item("x", 150 * col + 4, 80)] })),
      [0, 150, 300],
      { x0: 0, x1: 300, top: 70, bottom: 90 },
    );
    const pages2 = [page(1, [tableBlock(a)]), page(2, [tableBlock(narrow)])];
    joinContinuedTables(pages2);
    expect([a.rows, pages2[1]!.blocks.length]).toEqual([2, 1]);
  });
});
