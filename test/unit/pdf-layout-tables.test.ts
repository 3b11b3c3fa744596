/**
 * The table finders of issue #13 (runner/pdf-layout) on hand-made text items: columns from rivers
 * of whitespace, ruled bands holding several rows, tagged tables that do not match their page,
 * overprinted copies, superscripts and subscripts, right-to-left tables, continued tables that
 * repeat their headers. Each case is a class of document the converter met, not one document.
 */
import { describe, expect, it } from "vitest";
import { splitBands } from "../../runner/pdf-layout/bands.ts";
import { columnGaps, headerAsOne, linePieces, pieceText, spacedValues } from "../../runner/pdf-layout/columns.ts";
import { logicalValue, readingOrder, wordOrder } from "../../runner/pdf-layout/bidi.ts";
import { joinContinuedTables } from "../../runner/pdf-layout/continued.ts";
import { typeCell } from "../../runner/pdf-layout/cells.ts";
import { leaderless, withoutLeader, withoutLeaders, withoutShortLeader } from "../../runner/pdf-layout/leaders.ts";
import { rtlClusters, splitAtGaps, type TextOpCodes } from "../../runner/pdf-layout/glyphs.ts";
import { boxEdges, joinedBits, type FilledBox } from "../../runner/pdf-layout/graphics.ts";
import { buildGrid, gridCells, latticeTables, stackedGrids } from "../../runner/pdf-layout/lattice.ts";
import { groupLines, scriptsMeet, segmentOf, segmentText, splitLine } from "../../runner/pdf-layout/lines.ts";
import { dropOverprints } from "../../runner/pdf-layout/overprint.ts";
import { rowRuledTables } from "../../runner/pdf-layout/rowrules.ts";
import { buildTable, disjointCells, orientTable, tableFromStructure, type CellDraft } from "../../runner/pdf-layout/tables.ts";
import { pageGutter } from "../../runner/pdf-layout/gutter.ts";
import { paragraphOf } from "../helpers/layout-blocks.ts";
import { joinStackedTables } from "../../runner/pdf-layout/stacked.ts";
import { pageStreamTables, streamTables } from "../../runner/pdf-layout/stream.ts";
import { textGrid } from "../../runner/pdf-layout/textgrid.ts";
import type { Block, Cell, PageLayout, Rule, Table, TextItem } from "../../runner/pdf-layout/types.ts";

/** A text item of `text` at x, baseline `base`, 10 pt, 5 pt per character. */
function item(text: string, x: number, base: number, extra: Partial<TextItem> = {}): TextItem {
  return {
    text,
    x0: x,
    x1: x + 5 * [...text].length,
    base,
    size: 10,
    font: "Sans",
    bold: false,
    italic: false,
    mcid: null,
    opaque: false,
    ...extra,
  };
}
const right = (text: string, x1: number, base: number): TextItem => item(text, x1 - 5 * text.length, base);
/**
 * `text` drawn a run a word, each a word space (a quarter em) after the one before, as a producer
 * that draws word spaces as moves draws them (cairo: "(109)-220(Station Street)"): each run after
 * the first started by a move of a space's width.
 */
function words(text: string, x: number, base: number, extra: Partial<TextItem> = {}): TextItem[] {
  const size = extra.size ?? 10;
  const out: TextItem[] = [];
  let at = x;
  for (const word of text.split(" ")) {
    out.push(item(word, at, base, { ...extra, x1: at + (size / 2) * word.length, ...(out.length ? { spaceMove: true } : {}) }));
    at += (size / 2) * word.length + size / 4;
  }
  return out;
}
/** A horizontal rule at y from x0 to x1, and a vertical one at x from y0 to y1. */
const h = (y: number, x0 = 0, x1 = 300): Rule => ({ x0, x1, y0: y, y1: y });
const v = (x: number, y0: number, y1: number): Rule => ({ x0: x, x1: x, y0, y1 });
const lines = (items: TextItem[]): { base: number; size: number; pieces: ReturnType<typeof linePieces> }[] =>
  groupLines(items).map((l) => ({ base: l[0]!.base, size: 10, pieces: linePieces(l) }));
/** The text of each line the items group into, its first segment's (what a reader reads on a line of a formula). */
const lineTexts = (items: TextItem[]): string[] => groupLines(items).map((l) => segmentText(splitLine(l)[0]!));
const rowTexts = (t: Table): string[][] =>
  Array.from({ length: t.rows }, (_, r) =>
    t.cells
      .filter((c) => c.row === r)
      .sort((a, b) => a.col - b.col)
      .map((c) => c.lines.map(segmentText).join(" ")),
  );

describe("columns from whitespace", () => {
  it("keeps '98 452' (a space for thousands) and '$ 0.61' in one column", () => {
    const items = [0, 1, 2, 3].flatMap((r) => [
      item(`State ${r}`, 0, 10 + 12 * r),
      right(["98", "3", "41"][r % 3]!, 100, 10 + 12 * r),
      right("452", 120, 10 + 12 * r),
    ]);
    expect(columnGaps(lines(items)).filter((x) => x > 90)).toEqual([]);
    const money = [0, 1, 2].flatMap((r) => [
      item(`Item ${r}`, 0, 10 + 12 * r),
      item("$", 60, 10 + 12 * r),
      right(["0.61", "12.40", "3.00"][r]!, 110, 10 + 12 * r),
    ]);
    expect(columnGaps(lines(money))).toHaveLength(1);
  });

  it("does not make a column of a word space every line repeats", () => {
    const items = [0, 1, 2, 3].flatMap((r) => [
      item(`Site ${r}`, 0, 10 + 12 * r),
      item("Layoff", 60, 10 + 12 * r),
      item("Permanent", 93, 10 + 12 * r),
    ]);
    expect(columnGaps(lines(items))).toHaveLength(1);
  });

  it("starts a column at a header set inside the gap before right-aligned values", () => {
    const items = [item("Code", 0, 10), item("Shipped", 50, 10)];
    for (let r = 1; r < 5; r++) items.push(item(`AB-${r}`, 0, 10 + 12 * r), right(`0${r}/02/2016`, 110, 10 + 12 * r));
    const grid = textGrid({ items, kind: "stream" })!;
    expect(rowTexts(grid.table)[0]).toEqual(["Code", "Shipped"]);
  });

  it("parts two columns of values that a label crosses in a small table (a total's label over them)", () => {
    // Class | Precision | Recall | F1-score | Support, two rows, then "Overall accuracy" from the
    // Recall column into the F1 column beside its value under Support.
    const at = [0, 80, 160, 240, 320];
    const row = (cells: string[], base: number): TextItem[] => cells.map((w, c) => item(w, at[c]!, base));
    const items = [
      ...row(["Class", "Precision", "Recall", "F1-score", "Support"], 10),
      ...row(["DREB", "0.89", "0.87", "0.88", "500"], 22),
      ...row(["OREB", "0.87", "0.89", "0.88", "500"], 34),
      item("Overall accuracy", 170, 46),
      item("0.881", 320, 46),
    ];
    const grid = textGrid({ items, kind: "stream" })!;
    expect(rowTexts(grid.table).slice(1, 3)).toEqual([
      ["DREB", "0.89", "0.87", "0.88", "500"],
      ["OREB", "0.87", "0.89", "0.88", "500"],
    ]);
    // The label spans the empty columns before it too, from the first, as \multicolumn{4} sets it.
    const total = grid.table.cells.find((c) => c.row === 3 && c.lines.some((l) => segmentText(l) === "Overall accuracy"))!;
    expect([total.col, total.colSpan]).toEqual([0, 4]);
    // A label in one column stays there, however empty the columns before it ("", "Military", …).
    const one = textGrid({ items: [...items.slice(0, -2), item("Army", 170, 46), item("0.881", 320, 46)], kind: "stream" })!;
    const army = one.table.cells.find((c) => c.lines.some((l) => segmentText(l) === "Army"))!;
    expect([army.col, army.colSpan]).toEqual([2, 1]);
    // A value across the river is no label spanning two columns: they stay one.
    const figure = [...items.slice(0, -2), item("1,234.56", 170, 46, { x1: 250 }), item("0.881", 320, 46)];
    expect(columnGaps(lines(figure))).toHaveLength(3);
  });

  it("reads a line of years over the column headers as the header's, not as a row of values", () => {
    // "2025" and "2026" centred over Units | Revenue each, "Item" centred on the header's two lines
    // (a line of its own between them), then the rows: the years' line crosses the rivers
    // between Units and Revenue, as a group header does.
    const at = [0, 90, 140, 190, 240];
    const row = (cells: string[], base: number): TextItem[] => cells.map((w, c) => right(w, at[c]! + 40, base));
    const items = [
      item("2025", 128, 10),
      item("2026", 228, 10),
      item("Item", 4, 16),
      ...row(["", "Units", "Revenue", "Units", "Revenue"], 22).slice(1),
      ...[1, 2, 3].flatMap((r) => [
        item(`Site ${r}`, 4, 22 + 12 * r),
        ...row(["", `${r}.497`, `${r}48,10`, `2.46${r}`, `6${r}.350,57`], 22 + 12 * r).slice(1),
      ]),
    ];
    const grid = textGrid({ items, kind: "stream" })!;
    expect(grid.table.cols).toBe(5);
    expect(rowTexts(grid.table).at(-1)).toEqual(["Site 3", "3.497", "348,10", "2.463", "63.350,57"]);
  });

  it("spans a group header centred over its columns from their first", () => {
    const items = [item("Quarter 2020", 95, 10)];
    for (let r = 1; r < 5; r++)
      items.push(
        item(`Row ${r}`, 0, 10 + 12 * r),
        right("1,000", 100, 10 + 12 * r),
        right("2,000", 140, 10 + 12 * r),
        right("3,000", 180, 10 + 12 * r),
      );
    const grid = textGrid({ items, kind: "stream" })!;
    const header = grid.table.cells.find((c) => c.row === 0)!;
    expect([header.col, header.colSpan]).toEqual([1, 3]);
  });
});

describe("figures of two cells set as one string, a space apart", () => {
  it("reads a string of values a space apart as its values, the longest first", () => {
    expect(spacedValues("15,460.00 141,055.66")).toEqual(["15,460.00", "141,055.66"]);
    expect(spacedValues("$7,567.02 164,338")).toEqual(["$7,567.02", "164,338"]);
    expect(spacedValues("1\u202f234,56 2\u202f345,67 12.5%")).toEqual(["1\u202f234,56", "2\u202f345,67", "12.5%"]);
  });

  it("leaves whole a number grouped by spaces, a date, a currency sign apart, words among figures and bare integers", () => {
    for (const whole of [
      "12 345",
      "1 234 567",
      "15 Mar 2024",
      "$ 1,234",
      "1,150 KT-2229",
      "Total 1,234",
      "4 Orchard Way",
      "103 (1)",
      "2021 2020",
    ])
      expect(spacedValues(whole), whole).toBeNull();
  });

  it("puts each value of such a string in its column of a table", () => {
    const rows = [
      ["Cash at bank", "12,345.67", "250.00", "13,095.67"],
      ["Retained earnings", "845,000.00", "0.00", "845,000.00"],
      ["Sales revenue", "88,123.45", "312,000.00", "399,876.55"],
    ];
    // Figures right-aligned at 200, 260 and 320 (5 pt a character); the last row's last two one string.
    const items = rows.flatMap((row, r) => {
      const y = 100 + 14 * r;
      const [label, a, b, c] = row as [string, string, string, string];
      const joined = r === 2 ? [right(`${b} ${c}`, 320, y)] : [right(b, 260, y), right(c, 320, y)];
      return [item(label, 10, y), right(a, 200, y), ...joined];
    });
    const found = streamTables(items);
    expect(found).toHaveLength(1);
    expect(rowTexts(found[0]!.table)).toEqual(rows);
  });
});

describe("row labels indented under their sections", () => {
  // A report's label column: a section row, an item indented under it, the section's total at an
  // indent of its own; no left edge holds most of the labels (Arizona's registration report:
  // "Legislative District 1", "Coconino", "Total:").
  const texts: [string, number, string[]][] = [];
  for (let d = 1; d <= 4; d++) {
    texts.push(["Legislative District", 36, [`${d}`]]);
    texts.push(["Coconino", 50, ["1", "737", "2,079"]]);
    texts.push(["Total:", 42, ["55", "31,890", "167,703"]]);
  }
  const items = texts.flatMap(([label, x, values], r) => [
    item(label, x, 10 + 12 * r),
    ...values.map((val, k) => right(val, [160, 213, 524][k]!, 10 + 12 * r)),
  ]);

  it("are one column of the table, not a reason to refuse it", () => {
    const found = streamTables(items);
    expect(found).toHaveLength(1);
    expect(rowTexts(found[0]!.table).slice(0, 3)).toEqual([
      ["Legislative District", "1"],
      ["Coconino", "1", "737", "2,079"],
      ["Total:", "55", "31,890", "167,703"],
    ]);
  });

  it("keep a section label's number a word space after it in the label's cell", () => {
    // "Legislative District 1": the number a word space after the label, the counts' column far
    // to the right; only the section rows have text near that word space.
    const rows = [1, 2, 3, 4].flatMap((d) => [
      [item("Legislative District", 36, 0), item(`${d}`, 138.5, 0)],
      [item("Coconino", 50, 0), right("1", 200, 0), right("737", 260, 0)],
      [item("Total:", 42, 0), right("55", 200, 0), right("31,890", 260, 0)],
    ]);
    const placed = rows.flatMap((row, r) => row.map((i) => ({ ...i, base: 10 + 12 * r })));
    const found = streamTables(placed);
    expect(found).toHaveLength(1);
    expect(rowTexts(found[0]!.table).slice(0, 3)).toEqual([
      ["Legislative District 1"],
      ["Coconino", "1", "737"],
      ["Total:", "55", "31,890"],
    ]);
  });

  it("read a report's title lines, dates and page number and all, as its header or as text before it, never as rows", () => {
    // Words a word space apart (2.5 pt at 10 pt): a title, a subtitle with a date, then the
    // header and the rows. The title's "5" and "2024" are no values of the table.
    const words = (texts: string[], x: number, base: number): TextItem[] =>
      texts.map((t, k) => item(t, x + texts.slice(0, k).reduce((n, w) => n + 5 * w.length + 2.5, 0), base));
    const title = [...words(["STATE", "OF", "ARIZONA", "REPORT"], 100, 10), ...words(["Page:", "5"], 400, 10)];
    const subtitle = words(["2024", "Jan", "Voter", "Registration", "-", "January", "02,", "2024"], 60, 20);
    const header = [item("County", 0, 34), right("Active", 150, 34), right("Total", 250, 34)];
    const body = [0, 1, 2].map((r) => [
      item("Apache", 0, 46 + 12 * r),
      right("27,462", 150, 46 + 12 * r),
      right("52,297", 250, 46 + 12 * r),
    ]);
    const all = lines([...title, ...subtitle, ...header, ...body.flat()]);
    // The title, the subtitle and the header read as one header line over the rows…
    expect(headerAsOne(all)).toHaveLength(all.length - 2);
    // …and the table itself starts at its header: the title lines and a label under them ("Active")
    // are text before it.
    const label = item("Active", 0, 27);
    const found = streamTables([...title, ...subtitle, label, ...header, ...body.flat()]);
    expect(found).toHaveLength(1);
    expect(rowTexts(found[0]!.table)[0]).toEqual(["County", "Active", "Total"]);
    expect(found[0]!.table.cols).toBe(3);
    expect([...found[0]!.items].some((i) => i === label || title.includes(i) || subtitle.includes(i))).toBe(false);
  });

  it("do not make lines of prose starting at scattered places a table", () => {
    const prose = [0, 17, 31, 44, 58, 73].map((x, r) => [
      item("some words of a", x, 10 + 12 * r),
      item("sentence here", x + 120, 10 + 12 * r),
    ]);
    expect(streamTables(prose.flat())).toHaveLength(0);
  });
});

describe("group headers side by side", () => {
  it("span each their own columns, never one another's", () => {
    // Two group headers, each centred over three columns, with a label column left of them and a
    // totals column right: the second is centred over both its three columns and all five after
    // the first's, and must take only its own three.
    const items = [item("Handgun", 79, 10), item("Long gun", 182.5, 10)];
    const xs = [75, 110, 145, 180, 215, 250, 285];
    for (let r = 1; r < 6; r++) items.push(item(`State ${r}`, 0, 10 + 12 * r), ...xs.map((x) => right(`${r},00${r}`, x, 10 + 12 * r)));
    const grid = textGrid({ items, kind: "stream" })!;
    const header = grid.table.cells.filter((c) => c.row === 0).map((c) => [segmentText(c.lines[0]!), c.col, c.colSpan]);
    expect(header).toEqual([
      ["Handgun", 1, 3],
      ["Long gun", 4, 3],
    ]);
  });
});

describe("tables whose rules touch", () => {
  // A box round a summary's header, a rule down between its column groups running through the data
  // row below into the box of the next table's header, which its own rules part elsewhere.
  const rules = [
    h(0),
    h(30),
    v(0, 0, 30),
    v(300, 0, 30),
    v(150, 0, 48),
    h(50),
    h(70),
    v(0, 50, 70),
    v(300, 50, 70),
    v(60, 50, 70),
    v(250, 50, 70),
  ];

  it("are read as two grids where their rows share no inner rule", () => {
    const grids = stackedGrids(rules);
    expect(grids.map((g) => [g.ys, g.xs])).toEqual([
      [
        [0, 30, 50],
        [0, 150, 300],
      ],
      [
        [50, 70],
        [0, 60, 250, 300],
      ],
    ]);
  });

  it("leave a header boxed on its own, over unruled columns, to those columns' table", () => {
    const items = [
      item("Rank", 10, 20),
      item("Name", 50, 20),
      item("Nation", 110, 20),
      item("Score", 160, 20),
      item("Total", 250, 20),
      item("1", 10, 42),
      item("Ann Lee", 50, 42),
      item("FRA", 110, 42),
      right("9.50", 185, 42),
      right("-1.00", 275, 42),
      item("#", 5, 62),
      item("Element", 70, 62),
      item("Value", 260, 62),
    ];
    for (let r = 0; r < 4; r++)
      items.push(right(String(r + 1), 15, 82 + 12 * r), item(`E${r}`, 70, 82 + 12 * r), right(`${r}.50`, 290, 82 + 12 * r));
    const lattice = latticeTables(rules, items);
    expect(lattice).toHaveLength(1);
    expect(rowTexts(lattice[0]!)[1]).toEqual(["1", "Ann Lee", "FRA", "9.50", "-1.00"]);
    const rest = items.filter((i) => i.base > 55);
    const [stream] = streamTables(rest);
    expect(rowTexts(stream!.table)[0]).toEqual(["#", "Element", "Value"]);
    // With nothing under it (a ruled table's header row at the foot of a page) the box stays a table.
    expect(latticeTables(rules, items.slice(0, 13))).toHaveLength(2);
  });

  it("leave a header of shaded bands, years and the columns' numbers, to the unruled columns under it", () => {
    // A population projection: a year in a dark band over each group, "Person | Male | Female" in a
    // grey band, a row numbering the columns; the figures under them set by whitespace.
    const bands = [h(0, 0, 300), h(14, 60, 300), h(28, 0, 300), h(42, 0, 300), v(0, 0, 42), v(60, 0, 42), v(180, 0, 42), v(300, 0, 42)];
    const items = [item("Age group", 5, 24), item("2011", 110, 10), item("2016", 230, 10)];
    ["Person", "Male", "Female", "Person", "Male", "Female"].forEach((label, k) => items.push(item(label, 62 + 40 * k, 24)));
    ["1", "2", "3", "4", "5", "6", "7"].forEach((n, k) => items.push(item(n, k ? 75 + 40 * (k - 1) : 10, 38)));
    for (let r = 0; r < 4; r++) {
      items.push(item(`${5 * r}-${5 * r + 4}`, 5, 56 + 12 * r));
      for (let k = 0; k < 6; k++) items.push(right(`${r + 1},${k}${k}${k}`, 95 + 40 * k, 56 + 12 * r));
    }
    expect(latticeTables(bands, items)).toEqual([]);
    const [stream] = streamTables(items);
    const rows = rowTexts(stream!.table).map((r) => r.filter(Boolean));
    expect(rows[1]).toEqual(["Age group", "Person", "Male", "Female", "Person", "Male", "Female"]);
    expect(rows.at(-1)).toEqual(["15-19", "4,000", "4,111", "4,222", "4,333", "4,444", "4,555"]);
  });
});

describe("a page's header box over a body ruled into blocks of columns", () => {
  // Two rows of a header box with no inner rule, then a body whose blocks only a rule parts: inside
  // each block, labels and right-aligned counts set by whitespace, a line a row.
  const rules = [h(0), h(20), h(40), h(200), v(0, 0, 200), v(300, 0, 200), v(150, 40, 200)];
  const body: [string, string, string, string][] = [
    ["GOVERNOR", "", "MEASURE A", ""],
    ["YES", "90", "YES", "109"],
    ["NO", "142", "NO", "105"],
    ["KASHKARI", "247", "", ""],
    ["", "", "MEASURE B", ""],
    ["YES", "86", "YES", "98"],
    ["NO", "148", "NO", "117"],
  ];
  const items = [item("RUN 12/3/2014", 5, 12), item("PAGE 1", 250, 12), item("GROUP 13", 5, 32), item("SERIAL 1", 250, 32)];
  body.forEach(([a, b, c, d], r) => {
    const base = 55 + 12 * r;
    if (a) items.push(item(a, 5, base));
    if (b) items.push(right(b, 140, base));
    if (c) items.push(item(c, 155, base));
    if (d) items.push(right(d, 295, base));
  });

  it("reads the header box apart, and the body a line a row, no header spanning a drawn rule", () => {
    // The body is a grid of its own (the header box's rows, no vertical rule of their own, none).
    expect(stackedGrids(rules).map((g) => g.ys)).toEqual([[40, 200]]);
    // The frame's sides run down both, but are the body's from the line between them down only:
    // they open no row over the header box's text.
    expect(stackedGrids(rules, items).map((g) => g.ys)).toEqual([[40, 200]]);
    const table = latticeTables(rules, items).find((t) => t.cells.some((c) => c.lines.some((l) => segmentText(l) === "GOVERNOR")))!;
    const at = (text: string, row: number, col: number): Cell | undefined =>
      table.cells.find((c) => c.row === row && c.col === col && c.lines.map(segmentText).join(" ") === text);
    expect(table.rows).toBe(body.length);
    body.forEach((line, r) =>
      line.forEach((text, k) => {
        if (!text) return;
        // Each text in a cell of its own: its block's labels (k even) or counts (k odd), one column wide.
        expect(at(text, r, k)?.colSpan, `${text} on row ${r}`).toBe(1);
      }),
    );
  });
});

describe("a body boxed as one band under a ruled header", () => {
  // The header's cells are boxed; the body's rows are set by whitespace inside one box, so the
  // grid's only body cell spans every column (expenditure reports, statements printed by banks).
  const rules = [h(0, 0, 360), h(20, 0, 360), h(120, 0, 360), v(0, 0, 120), v(80, 0, 20), v(160, 0, 20), v(300, 0, 20), v(360, 0, 120)];
  const rows: [string, string, string, string][] = [
    ["DOC NO.", "DATE", "DESCRIPTION", "AMOUNT"],
    ["D001", "05/03/2019", "AIRFARE FOR E JOHNSON KANSAS CITY AND RETURN", "920.68"],
    ["D002", "05/24/2019", "TRAIN FARE", "907.96"],
    ["D003", "06/01/2019", "HOTEL", "1,112.00"],
    ["D004", "06/02/2019", "TAXI FOR K FORD TO AIRPORT", "70.00"],
  ];
  const items = [item("DOC NO.", 5, 14), item("DATE", 85, 14), item("DESCRIPTION", 165, 14), right("AMOUNT", 355, 14)];
  // Rows of the body, a description wrapped to a second line in the first and the last.
  const body: [string, string, string, string][] = [
    ["D001", "05/03/2019", "AIRFARE FOR E JOHNSON", "920.68"],
    ["", "", "KANSAS CITY AND RETURN", ""],
    ["D002", "05/24/2019", "TRAIN FARE", "907.96"],
    ["D003", "06/01/2019", "HOTEL", "1,112.00"],
    ["D004", "06/02/2019", "TAXI FOR K FORD", "70.00"],
    ["", "", "TO AIRPORT", ""],
  ];
  body.forEach(([a, b, c, d], r) => {
    const base = 35 + 12 * r;
    if (a) items.push(item(a, 5, base));
    if (b) items.push(item(b, 85, base));
    if (c) items.push(item(c, 165, base));
    if (d) items.push(right(d, 355, base));
  });

  it("reads the body's rows in the header's columns, not as one cell holding them all", () => {
    const [table] = latticeTables(rules, items);
    expect(rowTexts(table!)).toEqual(rows);
  });
});

describe("tables shaded instead of ruled", () => {
  const box = (x0: number, y0: number, x1: number, y1: number, fill = "#d9d9d9"): FilledBox => ({ x0, y0, x1, y1, fill });
  const sorted = (rules: Rule[]): string[] => rules.map((r) => `${r.x0},${r.y0}-${r.x1},${r.y1}`).sort();

  it("draws the edges of filled boxes where the colour changes, once", () => {
    // Two lines of one paragraph shaded line by line, touching: one area, no rule between them, its
    // sides drawn whole (two pieces would end inside it, where a row's border would be read).
    expect(sorted(boxEdges([box(0, 0, 100, 10), box(0, 10, 100, 20)]))).toEqual(
      sorted([h(0, 0, 100), h(20, 0, 100), v(0, 0, 20), v(100, 0, 20)]),
    );
    // A paragraph's shading inset in its cell's, of the same colour: only the cell's edges; a line's
    // shading flush with its cell's sides adds no piece ending inside the cell.
    expect(sorted(boxEdges([box(0, 0, 100, 30), box(4, 2, 96, 28), box(0, 15, 100, 30)]))).toEqual(
      sorted([h(0, 0, 100), h(30, 0, 100), v(0, 0, 30), v(100, 0, 30)]),
    );
    // Another colour beside it: the edge between them shows.
    expect(sorted(boxEdges([box(0, 0, 100, 10), box(100, 0, 150, 10, "#1d4576")]))).toContain("100,0-100,10");
  });

  it("joins a border stroked as a run of sub-point pieces into one rule, and a lone piece or spaced dots into none", () => {
    // A water bulletin's dashed grid: pieces of 0.81 pt, end to end or 0.2 pt apart, each one a
    // path of its own (too short, alone, to be told from a glyph's stroke).
    const run = (n: number, at: (k: number) => Rule): Rule[] => Array.from({ length: n }, (_, k) => at(k));
    const across = run(50, (k) => h(40, 10 + 0.81 * k, 10 + 0.81 * (k + 1)));
    const down = run(30, (k) => v(60, 20 + k, 20.81 + k));
    const dots = run(10, (k) => h(80, 10 + 2 * k, 10.5 + 2 * k));
    const lone = [h(90, 30, 30.7), v(120, 5, 5.9)];
    expect(sorted(joinedBits([...dots, ...down, ...lone, ...across]))).toEqual(sorted([h(40, 10, 10 + 0.81 * 50), v(60, 20, 49.81)]));
    expect(joinedBits([])).toEqual([]);
  });

  it("reads a grid drawn only in sub-point pieces as a ruled table", () => {
    const pieces = (r: Rule): Rule[] => {
      const horizontal = r.y0 === r.y1;
      const len = horizontal ? r.x1 - r.x0 : r.y1 - r.y0;
      return Array.from({ length: Math.ceil(len / 0.81) }, (_, k) => {
        const [a, b] = [k * 0.81, Math.min(len, (k + 1) * 0.81)];
        return horizontal ? h(r.y0, r.x0 + a, r.x0 + b) : v(r.x0, r.y0 + a, r.y0 + b);
      });
    };
    const grid = [h(0, 0, 200), h(20, 0, 200), h(40, 0, 200), h(60, 0, 200), v(0, 0, 60), v(100, 0, 60), v(200, 0, 60)];
    const items = [
      item("Reservoir", 5, 14),
      item("Level", 105, 14),
      item("Hatnur", 5, 34),
      right("90.59", 195, 34),
      item("Girna", 5, 54),
      right("41.20", 195, 54),
    ];
    const [table] = latticeTables(joinedBits(grid.flatMap(pieces)), items);
    expect(table?.kind).toBe("lattice");
    expect(rowTexts(table!)).toEqual([
      ["Reservoir", "Level"],
      ["Hatnur", "90.59"],
      ["Girna", "41.20"],
    ]);
  });

  // A survey's key indicators as a word processor shades them (a fact sheet): a header band and
  // section bands in one colour, some rows' cells in grey, every other row white with no rule at
  // all; each shaded line's paragraph shading inset in its cell by the cell's margin; a label
  // wrapped over two lines, shaded line by line, its values on its last line; a thin frame around
  // it all; a page that draws some labels as outlines, whose "l" is a thin filled stem.
  const blue = "#1d4576";
  const boxes = [box(27, 60, 467, 86, blue), box(467, 60, 522, 86, blue), box(522, 60, 576, 86, blue), box(27, 86, 576, 98, blue)];
  const items = [
    item("Indicators", 30, 80),
    item("NFHS-5", 476, 72),
    item("(2019-20)", 473, 82),
    item("NFHS-4", 531, 72),
    item("(2015-16)", 528, 82),
    item("Population and household profile", 30, 95),
    item("Total", 485, 95),
    item("Total", 540, 95),
  ];
  const rows: [string, string, string][] = [
    ["1. Female population who attended school (%)", "82.7", "83.8"],
    ["2. Population below age 15 years (%)", "19.8", "22.6"],
    ["3. Sex ratio of the total population", "950", "951"],
    ["4. Households with electricity (%)", "93.2", "92.7"],
    ["5. Households with drinking water (%)", "92.2", "90.3"],
    ["6. Households using iodized salt (%)", "99.9", "99.4"],
  ];
  let y = 98;
  rows.forEach(([label, a, b], r) => {
    items.push(item(label, 34, y + 9), right(a, 512, y + 9), right(b, 566, y + 9));
    // Rows 4 and 5 shaded: their three cells, and each label's paragraph shading inset in its cell.
    if (r >= 3 && r <= 4)
      boxes.push(box(27, y, 467, y + 11), box(467, y, 522, y + 11), box(522, y, 576, y + 11), box(30.6, y + 0.7, 463.4, y + 10.3));
    y += 11;
  });
  // The wrapped label, shaded line by line in its cell; its values on its second line.
  boxes.push(box(27, y, 467, y + 22), box(30.6, y + 0.5, 463.4, y + 11), box(30.6, y + 11, 463.4, y + 21.5));
  items.push(item("7. Children fully vaccinated based on card or", 34, y + 9), item("mother's recall (%)", 49, y + 20));
  items.push(right("*", 512, y + 20), right("(89.1)", 566, y + 20));
  y += 22;
  items.push(item("8. Children who received BCG (%)", 34, y + 9), right("*", 512, y + 9), right("(95.4)", 566, y + 9));
  y += 11;
  // The table's frame, drawn row by row down its sides.
  const frame = [
    h(y, 27, 576),
    ...[60, 86, 98, 109, 120, 131, 142, 153, 164, 186, 197]
      .map((top, k, all) => [v(27, top, all[k + 1] ?? y), v(576, top, all[k + 1] ?? y)])
      .flat(),
  ];
  // The outlined stem of an "l" in the shaded row 5, and the bar of a "-".
  const stems = [v(150.5, 134, 140), h(138, 200, 204)];

  it("reads the columns from the shading and the text, a row a line, a wrapped label one row", () => {
    const tables = latticeTables([...boxEdges(boxes), ...frame, ...stems], items);
    const body = tables.find((t) => t.cells.some((c) => c.lines.map(segmentText).join(" ").startsWith("1.")))!;
    expect(body.cols).toBe(3);
    const texts = rowTexts(body).map((r) => r.filter(Boolean));
    for (const [label, a, b] of rows) expect(texts).toContainEqual([label, a, b]);
    expect(texts).toContainEqual(["7. Children fully vaccinated based on card or mother's recall (%)", "*", "(89.1)"]);
    expect(texts).toContainEqual(["8. Children who received BCG (%)", "*", "(95.4)"]);
  });
});

describe("a ruled grid and scripts", () => {
  it("keeps a subscript in the cell of its letter where it reaches past the grid line under it", () => {
    // A diagram's axis label "e₂" (GeoTopo's geometry): the letter's middle above the line, the
    // subscript's below it.
    const rules = [h(410, 100, 300), h(430.5, 100, 300), h(450, 100, 300), v(100, 410, 450), v(200, 410, 450), v(300, 410, 450)];
    const items = [
      item("e", 120, 432.49, { size: 10.91, x1: 125.08 }),
      item("2", 125.08, 434.13, { size: 7.97, x1: 129.32 }),
      item("axis", 220, 428),
      item("one", 120, 446),
      item("two", 220, 446),
    ];
    const tables = latticeTables(rules, items);
    expect(tables).toHaveLength(1);
    expect(rowTexts(tables[0]!)).toEqual([
      ["e2", "axis"],
      ["one", "two"],
    ]);
  });
});

describe("a drawing's labels set across its lines", () => {
  // A label "(x₁, y₁)" as TeX sets it, in five runs: the letter, its subscript in smaller type and
  // lower, and so on (GeoTopo's figure of a product space, its grid drawn with lines).
  const label = (x: number, base: number, n: string): TextItem[] => [
    item("(", x, base, { x1: x + 4.2 }),
    item("x", x + 4.2, base, { x1: x + 10.4 }),
    item(n, x + 10.4, base + 1.6, { size: 8, x1: x + 14.7 }),
    item(", y", x + 15.2, base, { x1: x + 25.4 }),
    item(n, x + 25.4, base + 1.6, { size: 8, x1: x + 29.6 }),
    item(")", x + 30.1, base, { x1: x + 34.3 }),
  ];
  const square = [h(0, 0, 200), h(60, 0, 200), v(0, 0, 60), v(200, 0, 60)];

  it("keeps a label that a line crosses through a glyph in one cell", () => {
    // The inner line passes through the "x" (94.2–100.4 wide), not between two runs.
    const items = [item("A", 20, 30), ...label(90, 30, "1")];
    const tables = latticeTables([...square, v(98, 0, 60)], items);
    expect(tables).toHaveLength(1);
    expect(rowTexts(tables[0]!)).toEqual([["A", "(x1, y1)"]]);
  });

  it("still parts two cells' figures set against the border between them", () => {
    const items = [item("A", 20, 30), item("12.5", 78, 30), item("13.4", 100, 30)];
    const tables = latticeTables([...square, v(50, 0, 60), v(99.5, 0, 60)], items);
    expect(rowTexts(tables[0]!)).toEqual([["A", "12.5", "13.4"]]);
  });

  it("leaves a drawing whose label runs across its frame to the text", () => {
    // The frame passes through the ", y" (195.2–205.4).
    const items = [item("A", 20, 30), item("B", 120, 30), ...label(180, 45, "2")];
    expect(latticeTables([...square, v(100, 0, 60)], items)).toEqual([]);
    // The same label set apart from the frame, beside it: a table.
    const beside = [item("A", 20, 30), item("B", 120, 30), ...label(205, 45, "2")];
    expect(latticeTables([...square, v(100, 0, 60)], beside)).toHaveLength(1);
  });
});

describe("a grid ruled between its columns but not around them", () => {
  // LaTeX's {l|r|r} with \hline, or a report drawing inner separators only: the row rules reach
  // past the outermost vertical rules, over the row labels and the last column.
  const rules = [h(0, 0, 250), h(20, 0, 250), h(40, 0, 250), h(60, 0, 250), v(70, 0, 60), v(130, 0, 60), v(190, 0, 60)];
  const rows = [
    ["", "mpg", "cyl", "carb"],
    ["Mazda RX4", "21.0", "6", "4"],
    ["Datsun 710", "22.8", "4", "1"],
  ];
  const items = rows.flatMap((row, r) =>
    row.flatMap((text, c) => (text ? [c === 0 ? item(text, 5, 14 + 20 * r) : right(text, [0, 125, 185, 245][c]!, 14 + 20 * r)] : [])),
  );

  it("reads the columns past the outermost vertical rules as the table's", () => {
    const tables = latticeTables(rules, items);
    expect(tables).toHaveLength(1);
    expect(rowTexts(tables[0]!)).toEqual(rows);
  });

  it("adds no empty column where nothing stands past the vertical rules", () => {
    const inner = items.filter((i) => i.x0 > 70 && i.x1 < 190);
    expect(latticeTables(rules, inner).map((t) => t.cols)).toEqual([2]);
  });
});

describe("a grid whose column rules run on past its first and last row rules", () => {
  // A header ruled under but not over, and a totals row under the body's last rule: the column
  // rules reach up over the header and down past the totals.
  const cols = [v(0, 4, 78), v(120, 4, 78), v(200, 4, 78), v(280, 4, 78)];
  const rules = [h(22, 0, 280), h(40, 0, 280), h(58, 0, 280), ...cols];
  const rows = [
    ["Task", "Random", "Task-Level"],
    ["Tying Knots", "41.2", "78.5"],
    ["Pouring", "12.0", "66.1"],
    ["Mean", "26.6", "72.3"],
  ];
  const items = rows.flatMap((row, r) =>
    row.map((text, c) => (c === 0 ? item(text, 5, 17 + 18 * r) : right(text, [0, 195, 275][c]!, 17 + 18 * r))),
  );

  it("reads the header over the first rule and the totals under the last as the table's rows", () => {
    const tables = latticeTables(rules, items);
    expect(tables).toHaveLength(1);
    expect(rowTexts(tables[0]!)).toEqual(rows);
  });

  it("opens no row where only a frame's side runs on, far, or where no text stands", () => {
    // One rule running on three rows' height over a caption: the frame of something else.
    const lone = [h(22, 0, 280), h(40, 0, 280), h(58, 0, 280), v(0, -40, 58), v(120, 22, 58), v(200, 22, 58), v(280, 22, 58)];
    const caption = [item("Table 2: success rates", 5, -20), ...items.slice(3, 9)];
    expect(buildGrid(lone, caption)?.ys).toEqual([22, 40, 58]);
    // Column rules running on over nothing: the grid as drawn.
    expect(buildGrid(rules, items.slice(3, 9))?.ys).toEqual([22, 40, 58]);
  });
});

describe("a header boxed apart from its body by a double rule", () => {
  // LaTeX's {|c|cc|cc|} with \hline\hline under the header: the header's box closes with one
  // stroke, the body's opens 2.4 pt under it; the header rules its groups of columns, the body
  // only the label column off.
  // Column rules drawn row by row, as LaTeX draws them: their ends part the header's two rows.
  const header = [h(0), ...[0, 100, 200, 300].flatMap((x) => [v(x, 0, 20), v(x, 20, 40)]), h(40)];
  const body = (top: number): Rule[] => [h(top), v(0, top, top + 100), v(100, top, top + 100), v(300, top, top + 100), h(top + 100)];
  const rows = [
    ["McPAT", "771", "0.83", "427", "0.86"],
    ["McPAT-Plus", "18.3", "0.83", "22.5", "0.84"],
    ["McPAT-Calib", "5.6", "0.96", "10.0", "0.95"],
    ["McPAT-Comp", "6.2", "0.95", "11.5", "0.94"],
    ["PANDA", "7.2", "0.95", "11.6", "0.92"],
  ];
  const items = (top: number): TextItem[] => [
    item("Model", 5, 24),
    item("BOOM", 130, 14),
    item("XiangShan", 225, 14),
    ...[
      ["MAPE", 105],
      ["R", 185],
      ["MAPE", 205],
      ["R", 285],
    ].map(([t, x]) => item(t as string, x as number, 34)),
    ...rows.flatMap((row, r) =>
      row.map((t, c) => (c === 0 ? item(t, 5, top + 14 + 18 * r) : right(t, [0, 140, 190, 240, 295][c]!, top + 14 + 18 * r))),
    ),
  ];

  it("reads header and body as one table, each value in its own column", () => {
    const tables = latticeTables([...header, ...body(42.4)], items(42.4));
    expect(tables).toHaveLength(1);
    expect(rowTexts(tables[0]!).slice(1)).toEqual([["MAPE", "R", "MAPE", "R"], ...rows]);
    expect(rowTexts(tables[0]!)[0]).toEqual(["Model", "BOOM", "XiangShan"]);
  });

  it("keeps boxes farther apart than a double rule's strokes as two tables", () => {
    const both = (t: Table): boolean => ["BOOM", "McPAT"].every((w) => rowTexts(t).flat().includes(w));
    expect(latticeTables([...header, ...body(42.4)], items(42.4)).some(both)).toBe(true);
    expect(latticeTables([...header, ...body(48)], items(48)).some(both)).toBe(false);
  });
});

describe("a table ruled by rows only, beside the other column's text", () => {
  // A page in two columns: a booktabs table in the left one (rules over the header, under it and
  // at the foot, no vertical rules), a paragraph in the right one on the same baselines.
  const rules = [h(0, 0, 250), h(20, 0, 250), h(80, 0, 250)];
  const rows = [
    ["Method", "Recall", "F1"],
    ["Ours", "0.89", "0.88"],
    ["Baseline", "0.87", "0.81"],
    ["Oracle", "0.99", "0.97"],
    ["Random", "0.10", "0.12"],
  ];
  const table = rows.flatMap((row, r) => [
    item(row[0]!, 5, 14 + 15 * r),
    right(row[1]!, 150, 14 + 15 * r),
    right(row[2]!, 245, 14 + 15 * r),
  ]);
  const prose = rows.map((_, r) => item("words of a paragraph set in the right column", 300, 14 + 15 * r));

  it("is read between its rules' ends, apart from the text beside it", () => {
    const found = rowRuledTables(rules, [...table, ...prose]);
    expect(found).toHaveLength(1);
    expect(rowTexts(found[0]!.table)).toEqual(rows);
    expect(prose.some((i) => found[0]!.items.has(i))).toBe(false);
  });

  it("is no table where the rules hold a paragraph, or are only two", () => {
    const paragraph = [0, 1, 2, 3].map((r) => item("a line of running text that goes on and on", 5, 14 + 15 * r));
    expect(rowRuledTables([h(0, 0, 250), h(70, 0, 250), h(80, 0, 250)], paragraph)).toHaveLength(0);
    expect(rowRuledTables([h(0, 0, 250), h(80, 0, 250)], table)).toHaveLength(0);
  });
});

describe("a page set in two columns", () => {
  // A 600 pt page: a paragraph, a whitespace table and a paragraph in the left column (0–250), a
  // paragraph in the right one (300–550) on the same baselines.
  const rows = [
    ["Method", "Recall", "F1"],
    ["Ours", "0.89", "0.88"],
    ["Baseline", "0.87", "0.81"],
    ["Oracle", "0.99", "0.97"],
  ];
  const table = rows.flatMap((row, r) => [
    item(row[0]!, 5, 70 + 15 * r),
    right(row[1]!, 150, 70 + 15 * r),
    right(row[2]!, 245, 70 + 15 * r),
  ]);
  const leftProse = [14, 28, 42, 140, 154, 168].map((y) => item("a line of running text that goes on in it", 5, y));
  const rightProse = Array.from({ length: 12 }, (_, k) => item("words of a paragraph set in the right column", 300, 14 + 14 * k));
  const page = [...leftProse, ...table, ...rightProse];

  it("finds the gutter between the columns", () => {
    const g = pageGutter(page, 600);
    expect(g).not.toBeNull();
    expect(g!.x0).toBeGreaterThanOrEqual(245);
    expect(g!.x1).toBeLessThanOrEqual(300);
  });

  it("reads the table in its column, apart from the other column's text", () => {
    const found = pageStreamTables(page, [], pageGutter(page, 600));
    expect(found).toHaveLength(1);
    expect(rowTexts(found[0]!.table)).toEqual(rows);
    expect([...leftProse, ...rightProse].some((i) => found[0]!.items.has(i))).toBe(false);
  });

  it("reads a table in one column whole though a heading in the other column parts its rows", () => {
    // A table in the right column, rows 13 pt apart from 80; in the left one a heading between its
    // third and fourth rows, and paragraph lines on the baselines of the rows under it. Over the
    // whole page the heading parts the rows: the three above stand on one side, a table of their
    // own there, unless read again with their column.
    const rows = [
      ["Task", "Flow (1 step)", "Flow (10 step)"],
      ...Array.from({ length: 8 }, (_, r) => [`Robot task ${r}`, `0.${r}1`, `0.${r}9`]),
    ];
    const table = rows.flatMap((row, r) => [
      item(row[0]!, 310, 80 + 13 * r),
      right(row[1]!, 470, 80 + 13 * r),
      right(row[2]!, 560, 80 + 13 * r),
    ]);
    const left = [
      ...[14, 28, 42].map((y) => item("a line of running text that goes on in", 5, y)),
      item("A heading", 5, 112, { size: 14, x1: 75 }),
      ...[132, 145, 158, 171, 184, 197, 210].map((y) => item("a line of running text that goes on in", 5, y)),
    ];
    const rightProse = [14, 28, 42, 220, 234, 248].map((y) => item("words of a paragraph set in the right one", 300, y));
    const page = [...left, ...table, ...rightProse];
    const found = pageStreamTables(page, [], pageGutter(page, 600));
    expect(found.map((f) => rowTexts(f.table))).toEqual([rows]);
  });

  it("finds the gutter of a page of tables in two columns, no paragraph to tell it by", () => {
    // Two tables of 11 rows side by side, on baselines of their own, a page number under them.
    const left = Array.from({ length: 11 }, (_, r) => [
      item(`Case ${r}`, 5, 20 + 15 * r),
      right(`${r}.25`, 200, 20 + 15 * r),
      right(`${r}.75`, 245, 20 + 15 * r),
    ]);
    const rightRows = Array.from({ length: 11 }, (_, r) => [
      item(`Model ${r}`, 300, 26 + 17 * r),
      right(`${r}.5`, 480, 26 + 17 * r),
      right(`${r}0`, 540, 26 + 17 * r),
    ]);
    const page = [...left.flat(), ...rightRows.flat(), item("1", 270, 400)];
    const g = pageGutter(page, 600);
    expect(g).not.toBeNull();
    const found = pageStreamTables(page, [], g);
    expect(found.map((f) => [f.table.rows, f.table.cols]).sort()).toEqual([
      [11, 3],
      [11, 3],
    ]);
  });

  it("keeps whole a wide table whose river stands where a gutter would, its paragraphs in a column", () => {
    // A ledger across the page: labels and amounts left of the middle, a description column
    // wrapped over two lines (sentences) and a ledger number right of it; no line crosses the middle.
    const wide = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].flatMap((r) => {
      const y = 14 + 30 * r;
      return [
        item(`Account ${r}`, 5, y),
        right(`${r},751.80`, 200, y),
        item("shoal lantern estuary quartz raven harbour", 330, y),
        item("willow heron cedar dune cobalt anchor", 330, y + 12),
        item(`GX${r}0`, 620, y),
      ];
    });
    const g = pageGutter(wide, 700);
    expect(g).not.toBeNull();
    const found = pageStreamTables(wide, [], g);
    expect(found).toHaveLength(1);
    expect(found[0]!.table.cols).toBe(4);
    expect(found[0]!.items.size).toBe(wide.length);
  });

  it("sees no gutter on a page in one column, a table's numbers right of its middle", () => {
    const prose = [14, 28, 42].map((y) => item("a line of running text that goes on over the whole width of the page", 5, y));
    const numbers = [70, 85, 100, 115].flatMap((y, r) => [
      item(`Item number ${r} of the list`, 5, y),
      right(`${r}.5`, 500, y),
      right(`${r}.7`, 580, y),
    ]);
    expect(pageGutter([...prose, ...numbers], 600)).toBeNull();
  });
});

describe("cells wrapped over many lines", () => {
  // A spreadsheet's remarks column wrapped over five lines in each row (Calc's wrapped text): the
  // next lines stand under the cell's start, one line apart, however many there are.
  const rows = ["Keel", "Falcon", "Cedar"].map((label, r) => {
    const top = 14 + 80 * r;
    const remarks = ["dune cobalt beacon", "island hazel almond", "cedar jasmine heron", "lantern keel barley", "willow heron"];
    return [
      item(label, 5, top),
      right(`${r + 1},751.80`, 120, top),
      ...remarks.map((text, k) => item(text, 140, top + 12 * k)),
      right(`${r + 1}9,156.00`, 330, top),
    ];
  });

  it("keep their rows in one table, every line in its cell", () => {
    const found = streamTables(rows.flat());
    expect(found).toHaveLength(1);
    expect(rowTexts(found[0]!.table)).toEqual(
      ["Keel", "Falcon", "Cedar"].map((label, r) => [
        label,
        `${r + 1},751.80`,
        "dune cobalt beacon island hazel almond cedar jasmine heron lantern keel barley willow heron",
        `${r + 1}9,156.00`,
      ]),
    );
  });
});

describe("row labels wrapped beside their values", () => {
  // A fact sheet's indicators in a frame: numbered labels in a wide key column, a long one wrapped
  // at a hanging indent (or going on in lower case), its values on its last line or centred between
  // its lines; a section's heading, and a sub-heading in bold, rows of their own.
  const values = (a: string, b: string, base: number): TextItem[] => [right(a, 560, base), right(b, 620, base)];
  const items: TextItem[] = [
    item("Blood pressure among adults (age 15 years and above)", 5, 10),
    item("Women", 5, 21, { bold: true, font: "Sans-Bold" }),
    item("81. Mildly elevated blood pressure (Systolic 140-159 mm of Hg) (%)", 9, 32),
    ...values("6.7", "12.1", 32),
    // Values on the label's last line.
    item("82. Moderately or severely elevated blood pressure (Systolic 160 mm of Hg and/or", 9, 43),
    item("Diastolic 100 mm of Hg) (%)", 24, 54),
    ...values("4.6", "8.5", 54),
    // Values centred between the label's two lines.
    item("83. Elevated blood pressure (Systolic 140 mm of Hg and/or Diastolic 90 mm of Hg) or", 9, 65),
    ...values("16.6", "23.4", 70),
    item("control blood pressure (%)", 24, 76),
    item("Men", 5, 87, { bold: true, font: "Sans-Bold" }),
    item("84. Mildly elevated blood pressure (Systolic 140-159 mm of Hg) (%)", 9, 98),
    ...values("8.6", "16.2", 98),
    // Flush pieces of one label read as one: "85" and ". Men" drawn by two operators.
    item("85", 9, 109),
    item(". Men age 15 years and above who use any kind of tobacco (%)", 19, 109),
    ...values("17.6", "20.5", 109),
  ];

  it("read each indicator on one row, its wrapped label whole, the headings rows of their own", () => {
    // The table's frame and its section's band: its columns and rows are the text's.
    const found = latticeTables([h(0, 0, 640), h(13, 0, 640), h(115, 0, 640), v(0, 0, 115), v(640, 0, 115)], items);
    expect(found).toHaveLength(1);
    const texts = rowTexts(found[0]!).map((r) => r.filter(Boolean));
    expect(texts).toEqual([
      ["Blood pressure among adults (age 15 years and above)"],
      ["Women"],
      ["81. Mildly elevated blood pressure (Systolic 140-159 mm of Hg) (%)", "6.7", "12.1"],
      ["82. Moderately or severely elevated blood pressure (Systolic 160 mm of Hg and/or Diastolic 100 mm of Hg) (%)", "4.6", "8.5"],
      ["83. Elevated blood pressure (Systolic 140 mm of Hg and/or Diastolic 90 mm of Hg) or control blood pressure (%)", "16.6", "23.4"],
      ["Men"],
      ["84. Mildly elevated blood pressure (Systolic 140-159 mm of Hg) (%)", "8.6", "16.2"],
      ["85. Men age 15 years and above who use any kind of tobacco (%)", "17.6", "20.5"],
    ]);
  });

  it("start a row at a heading set in another size or weight under a row's label", () => {
    // A reservoir bulletin: a state's name in bold, larger, a line under the last reservoir of the
    // state before it; words in lower case in a column of words stay rows of their own.
    const rows = [
      [item("*1", 5, 10), item("GOBIND SAGAR", 20, 10), right("512.06", 200, 10), right("491.78", 260, 10)],
      [item("*2", 5, 21), item("PONG DAM", 20, 21), right("423.67", 200, 21), right("405.91", 260, 21)],
      [item("PUNJAB", 20, 31, { bold: true, font: "Sans-Bold", size: 11 })],
      [item("*3", 5, 44), item("THEIN", 20, 44), right("527.91", 200, 44), right("496.58", 260, 44)],
      [item("*4", 5, 55), item("RANJIT SAGAR", 20, 55), right("527.91", 200, 55), right("496.58", 260, 55)],
    ];
    const found = streamTables(rows.flat());
    expect(rowTexts(found[0]!.table).map((r) => r.filter(Boolean))).toContainEqual(["PUNJAB"]);
  });

  it("read lines of figures a band boxes together as rows of their own", () => {
    // Deaths by cause and sex: "M", "F", "T" of one cause under one grey band, its label wrapped.
    const rules = [h(0, 0, 400), h(36, 0, 400), v(0, 0, 36), v(400, 0, 36), h(36, 0, 400), h(72, 0, 400), v(0, 36, 72), v(400, 36, 72)];
    const group = (top: number, label: string[], n: number): TextItem[] =>
      ["M", "F", "T"].flatMap((sex, k) => [
        ...(label[k] ? [item(label[k], 5, top + 10 + 11 * k)] : []),
        item(sex, 200, top + 10 + 11 * k),
        right(`${n + k}`, 260, top + 10 + 11 * k),
        right(`${2 * n + k}`, 320, top + 10 + 11 * k),
        right(`${3 * n + k}`, 380, top + 10 + 11 * k),
      ]);
    const items = [
      ...group(0, ["Whooping cough", "(A37)"], 16),
      ...group(36, ["Infections with a predominantly", "sexual mode (A50-A64)"], 231),
    ];
    const [table] = latticeTables(rules, items);
    const texts = rowTexts(table!).map((r) => r.filter(Boolean).slice(-4));
    expect(texts).toEqual([
      ["M", "16", "32", "48"],
      ["F", "17", "33", "49"],
      ["T", "18", "34", "50"],
      ["M", "231", "462", "693"],
      ["F", "232", "463", "694"],
      ["T", "233", "464", "695"],
    ]);
  });
});

describe("a paragraph between two whitespace tables", () => {
  const first = [
    ["Parameter", "Value"],
    ["Rate", "0.1"],
    ["Epochs", "8"],
  ].flatMap((row, r) => [item(row[0]!, 40, 14 + 14 * r), right(row[1]!, 260, 14 + 14 * r)]);
  const paragraph = item("Try town knowledge road newspaper somebody meeting", 20, 62);
  const second = [
    ["Model", "Raw", "Q80", "Q60"],
    ["ResNet", "0.57", "0.56", "0.56"],
    ["DINOv2", "0.67", "0.67", "0.67"],
  ].flatMap((row, r) => [
    item(row[0]!, 40, 90 + 14 * r),
    right(row[1]!, 130, 90 + 14 * r),
    right(row[2]!, 200, 90 + 14 * r),
    right(row[3]!, 260, 90 + 14 * r),
  ]);

  it("ends the first: its line reaches across the rows, as no cell of theirs does", () => {
    const found = streamTables([...first, paragraph, ...second]);
    expect(found.map((f) => [f.table.rows, f.table.cols])).toEqual([
      [3, 2],
      [3, 4],
    ]);
    expect(found.some((f) => f.items.has(paragraph))).toBe(false);
  });
});

describe("lookalikes of a whitespace table", () => {
  it("refuses prose set in three columns whose lines share their baselines (the Federal Register's pages)", () => {
    const columns = [
      ["on those procedures, see this", "information at the docket by", "searching for and locating the", "number of the docket itself."],
      [
        "The agency, through an operational",
        "evaluation, will assess the impact",
        "of the proposed design changes",
        "on pilot training this year.",
      ],
      [
        "In addition, the service bulletin",
        "specifies reporting and coordinating",
        "any deviations from the instructions",
        "with the manufacturer directly.",
      ],
    ];
    const items = columns.flatMap((col, c) => col.map((text, r) => item(text, 20 + 190 * c, 100 + 12 * r, { x1: 20 + 190 * c + 170 })));
    expect(streamTables(items)).toHaveLength(0);
    // A table with one column of descriptions beside its values is still one.
    const table = [
      ["Install the new flight software", "1 hour", "$85"],
      ["Revise the existing flight manual", "2 hours", "$170"],
      ["Test the angle of attack sensors", "40 hours", "$3,400"],
      ["Fly an operational readiness flight", "8 hours", "$680"],
    ].flatMap((row, r) => [item(row[0]!, 20, 100 + 12 * r), item(row[1]!, 220, 100 + 12 * r), right(row[2]!, 400, 100 + 12 * r)]);
    expect(streamTables(table).map((f) => [f.table.rows, f.table.cols])).toEqual([[4, 3]]);
  });

  it("refuses a letterhead: a top line and a phone number apart, the address lines across between them", () => {
    const items = [
      item("Page 1092", 20, 50),
      item("Gazette 2008", 220, 50),
      item("PUBLISHER:", 20, 70),
      item("Federal Ministry of the Interior", 20, 78),
      item("11014 Berlin (postal address)", 20, 86),
      item("Alt-Moabit 101 D, 10559 Berlin", 20, 94),
      item("Fax: 0 18 88/6 81-29", 20, 102),
      item("26", 124, 102),
    ];
    expect(streamTables(items)).toHaveLength(0);
    // Two rows of cells on their own are a (small) table.
    const pair = [item("Width", 20, 50), item("Height", 220, 50), item("120 mm", 20, 62), item("80 mm", 220, 62)];
    expect(streamTables(pair).map((f) => [f.table.rows, f.table.cols])).toEqual([[2, 2]]);
  });
});

describe("leader dots", () => {
  it("drops the dots leading from a label to its value, keeping an ellipsis and dots that stand for a value", () => {
    expect(withoutLeaders("FCC OPS installation and verification ..")).toBe("FCC OPS installation and verification");
    expect(withoutLeaders("AFM revisions.......")).toBe("AFM revisions");
    expect(withoutLeaders("$85 ......")).toBe("$85");
    expect(typeCell(withoutLeaders("$85 ......")).value).toBe(85);
    expect(withoutLeaders("Total . . . . . 12")).toBe("Total 12");
    expect(withoutLeaders("Total …… 5")).toBe("Total 5");
    expect(withoutLeaders("..........................")).toBe("");
    // An ellipsis ending a word, a value not given, numbering and abbreviations stay.
    for (const kept of ["chicagodetours...", "y1, . . . , yn", "...", "..", "…", "1.2.3 Scope", "U.S.A.", "$6,205.", "e.g. the"])
      expect(withoutLeaders(kept)).toBe(kept);
  });
});

describe("an invoice's boxes set by whitespace, their rules an image", () => {
  // One item with its quantity, unit price and amount; adjustments with an amount only.
  const adjustments = ["Street lighting", "Tariff rebate", "Red flag", "Yellow flag", "Consumption", "Amber", "Red", "Green"];
  const body = (top: number, size = 10): TextItem[] => [
    item("Energy kWh", 10, top, { size }),
    item("5,253", 180, top, { size }),
    item("17,880", 230, top, { size }),
    item("0.9638", 285, top, { size }),
    { ...right("17,233.37", 400, top), size },
    ...adjustments.flatMap((label, k) => [
      item(label, 10, top + 14 * (k + 1), { size }),
      { ...right(`${k + 1}61.60`, 400, top + 14 * (k + 1)), size },
    ]),
  ];

  it("gives the values of a sparse row, set apart, columns of their own, whatever the lines under them hold", () => {
    const found = streamTables(body(20));
    expect(found).toHaveLength(1);
    const t = found[0]!.table;
    expect([t.rows, t.cols]).toEqual([9, 5]);
    expect(rowTexts(t)[0]).toEqual(["Energy kWh", "5,253", "17,880", "0.9638", "17,233.37"]);
    // Every amount in the last column.
    const amounts = t.cells.filter((c) => c.col === 4).map((c) => c.lines.map(segmentText).join(" "));
    expect(amounts).toEqual(["17,233.37", ...adjustments.map((_, k) => `${k + 1}61.60`)]);
  });

  it("keeps a table whose column of two cells shares no edge (the next box's text on two of its lines)", () => {
    // Check boxes drawn at two places before their labels.
    const panel = [item("X", 430, 48), item("DECEMBER", 470, 48), item("X", 450, 62), item("NOVEMBER - RED", 470, 62)];
    const found = streamTables([...body(20), ...panel]);
    expect(found).toHaveLength(1);
    expect(found[0]!.items.size).toBe(body(20).length + panel.length);
    expect(rowTexts(found[0]!.table)[2]!.at(-1)).toBe("X DECEMBER");
  });

  it("ends a run of rows at a line of cells set in other type: the next box of the form", () => {
    // A meter box in 4 pt, its rows 5 pt apart, then the items in 10 pt a line and a half below.
    const meter = [0, 1, 2].flatMap((r) => [0, 1, 2, 3].map((c) => item(`${r}.0${c}`, 20 + 30 * c, 4 + 5 * r, { size: 4 })));
    const found = streamTables([...meter, ...body(28)]);
    expect(found.map((f) => [f.table.rows, f.table.cols])).toEqual([
      [3, 4],
      [9, 5],
    ]);
  });
});

describe("a statistics table set by whitespace, one row boxed on its own", () => {
  // Sl. No. | State | three counts; row 31's label wrapped over two lines, its figures between them.
  const row = (n: string, label: string, base: number, figures: string[]): TextItem[] => [
    right(n, 20, base),
    item(label, 40, base),
    ...figures.map((f, k) => right(f, 200 + 50 * k, base)),
  ];
  const items = [
    ...row("29", "A & N ISLANDS", 20, ["1", "183", "184"]),
    ...row("30", "CHANDIGARH", 35, ["0", "312", "312"]),
    item("D & N HAVELI AND", 40, 47),
    right("31", 20, 51.5),
    ...["3", "242", "245"].map((f, k) => right(f, 200 + 50 * k, 51.5)),
    item("DAMAN & DIU", 40, 56),
    ...row("32", "DELHI (UT)", 71, ["0", "3508", "3508"]),
  ];
  // The tall row boxed: its number's cell and the rest, no rules between the figures.
  const box = [h(39, 0, 310), h(60, 0, 310), v(0, 39, 60), v(30, 39, 60), v(310, 39, 60)];

  it("leaves a one-row box whose cell holds figures set apart to the columns around it", () => {
    expect(latticeTables(box, items)).toEqual([]);
    // A one-row ruled table with a figure a cell stays one.
    const ruled = [h(0, 0, 100), h(20, 0, 100), v(0, 0, 20), v(50, 0, 20), v(100, 0, 20)];
    expect(latticeTables(ruled, [item("Total", 5, 14), right("3508", 95, 14)])).toHaveLength(1);
  });

  it("reads a label wrapped around its row's figures, and the row's number, as one row", () => {
    const grid = textGrid({ items, kind: "stream" })!;
    expect(rowTexts(grid.table)).toEqual([
      ["29", "A & N ISLANDS", "1", "183", "184"],
      ["30", "CHANDIGARH", "0", "312", "312"],
      ["31", "D & N HAVELI AND DAMAN & DIU", "3", "242", "245"],
      ["32", "DELHI (UT)", "0", "3508", "3508"],
    ]);
  });
});

describe("a table ruled by its columns only, row by row", () => {
  // tables-014's geometry: LaTeX draws each row's column rules on their own, and the last row
  // holds only its first cell, so only the first rule goes on beside it.
  const words = [
    ["authblk", "babel", "cjk", "dvips"],
    ["epsf", "epsfig", "euler", "float"],
    ["pstricks", "t1enc", "titlesec", "tocbind"],
  ];
  const xs = [181.6, 241.6, 317.3, 372];
  const cells = words.flatMap((row, r) => row.map((w, c) => item(w, xs[c]!, 80 + 14.4 * r, { size: 11.5 })));
  const last = item("ulem", 181.6, 80 + 14.4 * 3, { size: 11.5 });
  const ruleRows = (n: number, x: number): Rule[] => Array.from({ length: n }, (_, r) => v(x, 69.7 + 14.4 * r, 84.1 + 14.4 * r));
  const rules = [...ruleRows(4, 235.3), ...ruleRows(3, 311), ...ruleRows(3, 365.7)];

  it("keeps a last row of one cell that the first column rule runs beside", () => {
    const found = streamTables([...cells, last], rules);
    expect(found.map((f) => rowTexts(f.table))).toEqual([[...words, ["ulem"]]]);
  });

  it("leaves a line under the rows that no rule runs beside to the text", () => {
    const found = streamTables(
      [...cells, last],
      rules.filter((r) => r.y0 < 110 || r.x0 !== 235.3),
    );
    expect(found.map((f) => rowTexts(f.table))).toEqual([words]);
  });
});

describe("a few cells of a whitespace table boxed row by row", () => {
  // A reservoirs report (CWC, page 6): the name and level of three reservoirs boxed, each row's
  // number left of the box and its other figures right of it, set by whitespace.
  const rows = [
    ["43", "UPPER WARDHA", "342.50", "339.78", "61"],
    ["44", "BHATSA", "142.07", "130.95", "71"],
    ["45", "DHOM", "747.70", "742.81", "69"],
  ];
  const items = rows.flatMap(([n, name, frl, level, pct], r) => [
    right(n!, 93, 333 + 13 * r),
    item(name!, 98, 333 + 13 * r, { size: 7 }),
    right(frl!, 222, 333 + 13 * r),
    right(level!, 262, 333 + 13 * r),
    right(pct!, 300, 333 + 13 * r),
  ]);
  const boxes = [h(322, 97, 223), h(335, 97, 223), h(348, 97, 223), h(361, 97, 223), v(97, 322, 361), v(194, 322, 361), v(223, 322, 361)];

  it("leaves the boxed cells to the rows around them", () => {
    expect(latticeTables(boxes, items)).toEqual([]);
    expect(streamTables(items, boxes).map((f) => rowTexts(f.table))).toEqual([rows]);
  });

  it("keeps a grid with text beside it that is no figure of its rows", () => {
    // The page's other column beside the grid: prose on the same lines.
    const prose = rows.map((_, r) => item("and so the text goes on", 226, 333 + 13 * r, { x1: 330 }));
    const inBox = items.filter((i) => i.x0 >= 97 && i.x1 <= 223);
    expect(latticeTables(boxes, [...inBox, ...prose])).toHaveLength(1);
  });
});

describe("a whitespace table with its totals boxed by rules under it", () => {
  const rows = [
    ["29", "A & N ISLANDS", "1", "183", "184"],
    ["30", "CHANDIGARH", "0", "312", "312"],
    ["32", "DELHI (UT)", "0", "3508", "3508"],
  ].flatMap((r, k) => [
    right(r[0]!, 20, 20 + 15 * k),
    item(r[1]!, 40, 20 + 15 * k),
    ...r.slice(2).map((f, c) => right(f, 200 + 50 * c, 20 + 15 * k)),
  ]);
  const totals = [
    ["TOTAL (UTs)", "110", "6934", "7044"],
    ["TOTAL (ALL INDIA)", "6444", "437660", "444104"],
  ].flatMap((r, k) => [item(r[0]!, 5, 69 + 15 * k), ...r.slice(1).map((f, c) => right(f, 200 + 50 * c, 69 + 15 * k))]);
  // The totals' box: the label's cell over the number and name columns, one cell per figure.
  const box = [h(58, 0, 310), h(73, 0, 310), h(88, 0, 310), ...[0, 120, 220, 270, 310].map((x) => v(x, 58, 88))];
  const upper = streamTables(rows)[0]!.table;
  const lower = latticeTables(box, totals)[0]!;

  it("reads the totals as the table's last rows, each figure under its column", () => {
    expect([upper.cols, lower.cols]).toEqual([5, 4]);
    const [table, ...others] = joinStackedTables([lower, upper], []);
    expect(others).toEqual([]);
    expect([table!.rows, table!.cols]).toEqual([5, 5]);
    const at = (r: number): string[] =>
      table!.cells
        .filter((c) => c.row === r)
        .sort((a, b) => a.col - b.col)
        .map((c) => `${c.col}+${c.colSpan}:${c.lines.map(segmentText).join(" ")}`);
    expect(at(2)).toEqual(["0+1:32", "1+1:DELHI (UT)", "2+1:0", "3+1:3508", "4+1:3508"]);
    expect(at(3)).toEqual(["0+2:TOTAL (UTs)", "2+1:110", "3+1:6934", "4+1:7044"]);
  });

  it("keeps them apart with text between, and never joins two tables of one finder", () => {
    const note = { items: [], x0: 40, x1: 200, base: 55, top: 47, bottom: 57.5, size: 10 };
    expect(joinStackedTables([upper, lower], [note])).toHaveLength(2);
    const below = streamTables(rows.map((i) => ({ ...i, base: i.base + 50 })))[0]!.table;
    expect(joinStackedTables([upper, below], [])).toHaveLength(2);
  });
});

describe("rows that rules part without a horizontal rule", () => {
  it("part a header row where the boxes of its lower labels begin", () => {
    // Group rules at 0, 150, 300 down the whole table; label boxes (no top edge drawn) from y 12
    // in the header, at 50, 100, 200, 250; the same rules down the body from y 20.
    const sub = [50, 100, 200, 250];
    const grid = buildGrid([
      h(0),
      h(20),
      h(40),
      ...[0, 150, 300].map((x) => v(x, 0, 40)),
      ...sub.map((x) => v(x, 12, 20)),
      ...sub.map((x) => v(x, 20, 40)),
    ])!;
    expect(grid.ys).toEqual([0, 12, 20, 40]);
    // The group row: two cells of three columns; the label row and the body: six cells each.
    expect(gridCells(grid).map((c) => c.row)).toEqual([0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2]);
  });
});

describe("multi-line headers over unruled columns", () => {
  /** A header over "#", four judges' columns and a total; the judges' marks in eight rows. */
  const marks = (header: TextItem[]): TextItem[] => {
    const items = [item("#", 0, 10), item("Total", 200, 10), ...header];
    for (let r = 0; r < 8; r++)
      items.push(
        right(String(r + 1), 5, 34 + 12 * r),
        ...[0, 1, 2, 3].map((k) => right(String((r + k) % 3), 90 + 25 * k, 34 + 12 * r)),
        right(`${r}.25`, 225, 34 + 12 * r),
      );
    return items;
  };
  const cellOf = (t: Table, text: string): Cell => t.cells.find((c) => c.lines.some((l) => segmentText(l) === text))!;

  it("keep the columns that a group header set on two lines runs across", () => {
    const grid = textGrid({
      items: marks([item("The Judges Panel", 75, 10), item("No.", 0, 20), item("(in random order)", 72.5, 20), item("Sum", 205, 20)]),
      kind: "stream",
    })!;
    expect(grid.table.cols).toBe(6);
    expect([cellOf(grid.table, "The Judges Panel").col, cellOf(grid.table, "The Judges Panel").colSpan]).toEqual([1, 4]);
  });

  it("give a label over a column the body leaves empty a column of its own, a label set lower in the row too", () => {
    const items = [
      item("#", 0, 10),
      item("Name", 20, 10),
      item("Info", 68, 14),
      item("Base", 90, 10),
      item("Ref", 128, 10),
      item("Total", 150, 10),
    ];
    items.push(item("Item", 20, 18), item("Value", 90, 18), item("Score", 150, 18));
    for (let r = 0; r < 6; r++)
      items.push(
        right(String(r + 1), 5, 34 + 12 * r),
        item(`E${r}`, 20, 34 + 12 * r),
        right(`${r}.50`, 110, 34 + 12 * r),
        right(`${r}.25`, 175, 34 + 12 * r),
      );
    const grid = textGrid({ items, kind: "stream" })!;
    expect(rowTexts(grid.table)[0]).toEqual(["#", "Name Item", "Info", "Base Value", "Ref", "Total Score"]);
    expect(rowTexts(grid.table)[1]).toEqual(["1", "E0", "0.50", "0.25"]);
    // Without a label of its own over the column right of it, a label heads that column.
    const qty = textGrid({ items: items.filter((i) => !["Total", "Score"].includes(i.text)), kind: "stream" })!;
    expect(rowTexts(qty.table)[0]).toEqual(["#", "Name Item", "Info", "Base Value", "Ref"]);
    expect(qty.table.cols).toBe(5);
  });

  it("keep the columns under group headers centred over them (LaTeX's \\multicolumn over a \\cmidrule)", () => {
    // "Easy" and "Medium" each centred over "Seq. | Token", "Model" set between the header's lines;
    // the columns stand 11 pt apart, less than the group headers are wide.
    const items = [item("Easy", 57.5, 10), item("Medium", 118.5, 10), item("Model", 0, 15)];
    items.push(item("Seq.", 40, 20), item("Token", 70, 20), item("Seq.", 106, 20), item("Token", 136, 20));
    for (let r = 0; r < 4; r++)
      items.push(item(`M${r}`, 0, 32 + 12 * r), ...[60, 95, 126, 161].map((x1) => right(`${r}.5`, x1, 32 + 12 * r)));
    const grid = textGrid({ items, kind: "stream" })!;
    expect(grid.table.cols).toBe(5);
    expect(rowTexts(grid.table).at(-1)).toEqual(["M3", "3.5", "3.5", "3.5", "3.5"]);
    expect([cellOf(grid.table, "Easy").col, cellOf(grid.table, "Easy").colSpan]).toEqual([1, 2]);
    // Column labels that are numbers ("20 | 50", the first line of values, its first column empty).
    const labels = [47.5, 82.5, 113.5, 148.5].map((x, k) => item(k % 2 ? "50" : "20", x, 20));
    const numeric = [item("Easy", 60, 10), item("Medium", 116, 10), ...labels, ...items.filter((i) => i.base > 30)];
    const withNumbers = textGrid({ items: numeric, kind: "stream" })!;
    expect(withNumbers.table.cols).toBe(5);
    expect(cellOf(withNumbers.table, "Easy").colSpan).toBe(2);
    // Numbers as column labels beside a label of their own ("Method | 35% 45% | 10% 20%"), each group
    // header running over its labels: the columns stay apart.
    const pct = [item("Speckle", 58, 10), item("Patchy", 118, 10), item("Method", 0, 20)];
    pct.push(...[45, 75, 106, 136].map((x, k) => item(["35%", "45%", "10%", "20%"][k]!, x, 20)));
    const beside = textGrid({ items: [...pct, ...items.filter((i) => i.base > 30)], kind: "stream" })!;
    expect(beside.table.cols).toBe(5);
    expect(rowTexts(beside.table)[1]).toEqual(["Method", "35%", "45%", "10%", "20%"]);
  });

  it("never cut a value under its column's header where its sign is set in a font of its own", () => {
    // A journal's table (issue-316, page 11, its geometry): "+108%" and "-100%", each sign a glyph
    // of a font of its own flush before the figure, under "Site C before/after": the header runs
    // over no row of column labels there, and each value stays whole.
    const rows: [number, [string, number, number][]][] = [
      [
        518.7,
        [
          ["Site A before/after", 246.8, 310.2],
          ["Site B before/after", 323.8, 386.3],
          ["Site C before/after", 399.9, 462],
        ],
      ],
      [
        528.1,
        [
          ["no. of comments", 250.1, 306.8],
          ["no. of comments", 326.7, 383.3],
          ["no. of comments", 402.6, 459.3],
        ],
      ],
      [545.5, [["FWC – positive:", 116.2, 172.5]]],
      [
        555,
        [
          ["Table IV.", 19.8, 56.9],
          ["Family supports and understands", 116.2, 233.2],
          ["25/30", 272.1, 290.4],
          ["31/46", 339.1, 357.3],
          ["36/75", 426.6, 444.8],
        ],
      ],
      [
        564.5,
        [
          ["Frequencies and changes", 19.8, 106.5],
          ["Change in %", 116.2, 161.5],
          ["þ", 271, 277.7],
          ["5%", 278.5, 290.4],
          ["þ", 342, 348.6],
          ["48.4%", 349.4, 371],
          ["þ", 417.5, 424.2],
          ["108%", 425, 444.8],
        ],
      ],
      [
        573.9,
        [
          ["in WFC-related", 19.8, 72.2],
          ["FWC – negative:", 116.2, 175.3],
        ],
      ],
      [
        583.4,
        [
          ["comments before and", 19.8, 93.7],
          ["Fights about work schedule", 116.2, 212.4],
          ["60/51", 272.1, 290.4],
          ["44/20", 339.1, 357.3],
          ["48/0", 430.5, 444.8],
        ],
      ],
      [
        592.9,
        [
          ["after the interventions", 19.8, 96.3],
          ["Change in %", 116.2, 159.4],
          ["2", 266.6, 273.7],
          ["15%", 274.5, 290.4],
          ["2", 341.5, 348.6],
          ["54.6%", 349.4, 371],
          ["2", 417.1, 424.1],
          ["100%", 425, 444.8],
        ],
      ],
    ];
    const items = rows.flatMap(([base, runs]) =>
      runs.map(([text, x0, x1]) => item(text, x0, base, { x1, size: 8.5, font: text === "þ" || text === "2" ? "Math" : "Serif" })),
    );
    const [found] = streamTables(items);
    const texts = rowTexts(found!.table).flat();
    for (const value of ["þ5%", "þ48.4%", "þ108%", "215%", "254.6%"]) expect(texts).toContain(value);
    // "-100%" under "Site C" in one cell too (its sign a word space before it: "2 100%").
    expect(texts.filter((t) => t === "þ" || t === "2")).toEqual([]);
  });

  it("leave a label flush with its own column's values in that column", () => {
    const items = [item("#", 0, 10), item("Mark", 20, 10)];
    for (let r = 0; r < 6; r++)
      items.push(
        right(String(r + 1), 5, 22 + 12 * r),
        item(`E${r}`, 20, 22 + 12 * r),
        right(`${r}.50`, 110, 22 + 12 * r),
        right(`${r}`, 140, 22 + 12 * r),
        right(`${r}`, 170, 22 + 12 * r),
      );
    items.push(item("Factor", 80, 94));
    for (let r = 0; r < 3; r++)
      items.push(
        item(`Skill ${r}`, 20, 106 + 12 * r),
        right(`0.${r}0`, 110, 106 + 12 * r),
        right("7", 140, 106 + 12 * r),
        right("6", 170, 106 + 12 * r),
      );
    const grid = textGrid({ items, kind: "stream" })!;
    const factor = grid.table.cells.find((c) => c.lines.some((l) => segmentText(l) === "Factor"))!;
    expect([factor.col, factor.colSpan]).toEqual([2, 1]);
  });

  it("span a year centred over its columns though one value of them shares an edge with it", () => {
    // "2011" centred over Person, Male and Female, right-aligned; one of Male's values (its
    // total, wider) happens to start where the year starts: no alignment, one value of six.
    const items = [
      item("2011", 123.75, 10),
      item("Age", 0, 22),
      right("Person", 110, 22),
      right("Male", 150, 22),
      right("Female", 190, 22),
    ];
    for (let r = 0; r < 5; r++)
      items.push(
        item(`Age ${r * 5}-${r * 5 + 4} yrs.`, 0, 34 + 12 * r),
        right("1,234", 110, 34 + 12 * r),
        right("567", 150, 34 + 12 * r),
        right("89", 190, 34 + 12 * r),
      );
    items.push(item("All ages, total", 0, 94), right("6,170", 110, 94), item("2,835", 123.75, 94, { x1: 150 }), right("445", 190, 94));
    const grid = textGrid({ items, kind: "stream" })!;
    const year = grid.table.cells.find((c) => c.lines.some((l) => segmentText(l) === "2011"))!;
    expect([year.col, year.colSpan]).toEqual([1, 3]);
  });

  it("span a header cell wrapped over two lines across the columns it is centred over", () => {
    const grid = textGrid({ items: marks([item("Judges", 100, 10), item("Panel", 102.5, 20), item("Sum", 205, 20)]), kind: "stream" })!;
    const panel = grid.table.cells.find((c) => c.row === 0 && c.col > 0 && c.col < 5)!;
    expect(panel.lines.map(segmentText)).toEqual(["Judges", "Panel"]);
    expect([panel.col, panel.colSpan]).toEqual([1, 4]);
  });
});

describe("rows a producer sets off their line", () => {
  it("reads a section's heading drawn in one band with the first row over its numbers as a row of its own", () => {
    // NCRB's "STATES:" over "1 | Andhra Pradesh | …", no rule between them.
    const items = [
      item("SL", 34, 20),
      item("State/UT", 60, 20),
      right("2019", 220, 20),
      item("STATES:", 32, 38, { x1: 69 }),
      right("1", 49, 55),
      item("Andhra Pradesh", 60, 55),
      right("119229", 220, 55),
      right("2", 49, 70),
      item("Arunachal Pradesh", 60, 70),
      right("2590", 220, 70),
    ];
    const grid = textGrid({ items, drawnXs: [50], drawnYs: [25, 60], kind: "lattice", box: { x0: 30, x1: 230, top: 5, bottom: 75 } })!;
    expect(rowTexts(grid.table)).toEqual([
      ["SL", "State/UT", "2019"],
      ["STATES:"],
      ["1", "Andhra Pradesh", "119229"],
      ["2", "Arunachal Pradesh", "2590"],
    ]);
  });

  it("reads a label that stops at a conjunction on with the next line, its capital letter notwithstanding", () => {
    const labels = ["Chandigarh", "Dadra and Nagar Haveli and", "Daman and Diu", "Delhi", "Ladakh"];
    const base = [10, 24, 34, 48, 62];
    const values = [["0", "252"], ["84", "75"], null, ["84", "72"], ["0", "0"]];
    const items = labels.flatMap((l, r) => [item(l, 5, base[r]!), ...(values[r] ?? []).map((v, c) => right(v, 220 + 50 * c, base[r]!))]);
    const grid = textGrid({ items, kind: "stream" })!;
    expect(rowTexts(grid.table)).toEqual([
      ["Chandigarh", "0", "252"],
      ["Dadra and Nagar Haveli and Daman and Diu", "84", "75"],
      ["Delhi", "84", "72"],
      ["Ladakh", "0", "0"],
    ]);
  });

  it("puts a value set a little higher than its row on that row", () => {
    const rows = [
      ["Name of dam", "Live", "Today", "Last year"],
      ["Bhandardara", "304.10", "100 %", "100.00 %"],
      ["Upper Tapi Hatnur", "255.00", "100 %", "90.59 %"],
      ["Waghur", "248.21", "70.72 %", "100 %"],
    ];
    const base = [10, 28, 48, 66];
    // The third row's "100 %" is drawn 4 pt over its baseline.
    const items = rows.flatMap((row, r) =>
      row.map((t, c) => (c === 0 ? item(t, 5, base[r]!) : right(t, 120 + 60 * c, r === 2 && c === 2 ? base[r]! - 4 : base[r]!))),
    );
    const grid = textGrid({ items, kind: "stream" })!;
    expect(rowTexts(grid.table)).toEqual(rows);
  });
});

describe("ruled bands holding several rows", () => {
  const draft = (col: number, items: TextItem[]): CellDraft => ({ row: 0, col, rowSpan: 1, colSpan: 1, items });

  it("splits a band of five states with their figures into five rows", () => {
    const states = ["Alabama", "Alaska", "Arizona", "Arkansas", "California"];
    const drafts = [
      draft(
        0,
        states.map((s, i) => item(s, 0, 10 + 8 * i)),
      ),
      draft(
        1,
        states.map((_, i) => right(String(100 * i), 90, 10 + 8 * i)),
      ),
    ];
    const { rows, drafts: split } = splitBands(drafts, 1);
    expect(rows).toBe(5);
    expect(split.find((d) => d.row === 4 && d.col === 1)!.items.map((i) => i.text)).toEqual(["400"]);
  });

  it("splits a band whose first column has a line only now and then at the rows of its figures", () => {
    const drafts = [
      draft(0, [item("Acton", 0, 10), item("Agoura", 0, 34)]),
      draft(
        1,
        [0, 1, 2, 3, 4].map((i) => right(`${11 + i},062.6`, 90, 10 + 8 * i)),
      ),
      draft(
        2,
        [0, 1, 2, 3, 4].map((i) => right(String(40 * i), 130, 10 + 8 * i)),
      ),
    ];
    const { rows, drafts: split } = splitBands(drafts, 1);
    expect(rows).toBe(5);
    expect(split.filter((d) => d.col === 0 && d.items.length).map((d) => [d.row, d.items[0]!.text])).toEqual([
      [0, "Acton"],
      [3, "Agoura"],
    ]);
    expect(split.find((d) => d.row === 2 && d.col === 1)!.items.map((i) => i.text)).toEqual(["13,062.6"]);
  });

  it("keeps a header band whose cells stack their lines differently as one row", () => {
    const drafts = [
      draft(0, [item("Summary by", 0, 10), item("Month", 0, 18)]),
      draft(1, [item("Notices", 60, 10)]),
      draft(2, [item("Employees", 110, 10), item("Affected", 110, 18)]),
    ];
    expect(splitBands(drafts, 1).rows).toBe(1);
  });
});

describe("tagged tables", () => {
  it("are not used when their tags put cells out of the order they stand in", () => {
    const byMcid = new Map<string, TextItem[]>([
      ["a", [item("Date", 0, 10)]],
      ["b", [item("Closure", 200, 10)]],
      ["c", [item("City", 100, 10)]],
    ]);
    const st = {
      rows: [
        [
          { mcids: ["a"], header: true },
          { mcids: ["b"], header: true },
          { mcids: ["c"], header: true },
        ],
      ],
    };
    expect(tableFromStructure(st, byMcid)).toBeNull();
    const ordered = {
      rows: [
        [
          { mcids: ["a"], header: true },
          { mcids: ["c"], header: true },
          { mcids: ["b"], header: true },
        ],
      ],
    };
    expect(tableFromStructure(ordered, byMcid)).not.toBeNull();
  });

  it("put the cells of a row an earlier cell spans into under their own columns, not slid left", () => {
    // HTML's rowspan, as Chromium tags it: the rows under "Sales" have no cell for its column.
    const byMcid = new Map<string, TextItem[]>(
      [
        ["h1", item("Department", 0, 10)],
        ["h2", item("Name", 80, 10)],
        ["h3", item("Salary", 160, 10)],
        ["a1", item("Sales", 0, 22)],
        ["a2", item("Maria Garcia", 80, 22)],
        ["a3", right("74,500", 190, 22)],
        ["b2", item("John Smith", 80, 34)],
        ["b3", right("52,300", 190, 34)],
        ["c1", item("Support", 0, 46)],
        ["c2", item("Priya Patel", 80, 46)],
        ["c3", right("48,900", 190, 46)],
      ].map(([id, it]) => [id as string, [it as TextItem]]),
    );
    const row = (...ids: string[]): { mcids: string[]; header: boolean }[] =>
      ids.map((id) => ({ mcids: [id], header: id.startsWith("h") }));
    const table = tableFromStructure(
      { rows: [row("h1", "h2", "h3"), row("a1", "a2", "a3"), row("b2", "b3"), row("c1", "c2", "c3")] },
      byMcid,
    )!;
    expect(rowTexts(table)[2]).toEqual(["John Smith", "52,300"]);
    expect(table.cells.filter((c) => c.row === 2).map((c) => c.col)).toEqual([1, 2]);
  });
});

describe("text as a reader sees it", () => {
  it("shows overprinted copies once, a copy straddling two originals too", () => {
    // CJK characters a full em (10 pt) wide, digits 5.5 pt, a space 2.8 pt.
    const cjk = (text: string, x: number, base: number, width: number): TextItem => item(text, x, base, { x1: x + width });
    const fakeBold = [
      cjk("本科", 100, 50, 20),
      cjk("本科", 100.3, 50, 20),
      cjk("2011 年年度报告", 20, 80, 74.8),
      cjk("2011", 20.2, 80, 22),
      cjk("年年度报告", 45.1, 80, 50),
    ];
    expect(dropOverprints(fakeBold).map((i) => i.text)).toEqual(["本科", "2011 年年度报告"]);
    // A zero under a long line that holds zeros elsewhere is its own text.
    expect(dropOverprints([item("Chq. No. 085900 BILL NO.133, 140, 142", 0, 50), item("0", 120, 50)])).toHaveLength(2);
  });

  it("ends a cell's text that runs on under the next cells where they start, and never glues them", () => {
    // A ledger's particulars drawn whole (clipped on the page at the cell's edge) under the amounts
    // of the same line: "192," ends at 255 on the page, the amount starts at 200.
    const row = [item("Chq. No. 085900 BILL NO.187, 192,", 50, 50), item("26406576", 200, 50), item("0", 300, 50)];
    const pieces = linePieces(row);
    expect(pieces.map((p) => [pieceText(p), p.x1 < 200])).toEqual([
      ["Chq. No. 085900 BILL NO.187, 192,", true],
      ["26406576", false],
      ["0", false],
    ]);
    // Read as one stretch of text, the amount is a word of its own, not "192,26406576".
    expect(segmentText(splitLine(row, 100)[0]!)).toBe("Chq. No. 085900 BILL NO.187, 192, 26406576 0");
    // Kerning (a run starting a little inside the one before) still joins without a space.
    expect(segmentText(splitLine([item("Wa", 0, 50), item("ve", 9, 50)])[0]!)).toBe("Wave");
  });

  it("reads a superscript stacked over a subscript as two words, the upper first, and the text after the stack as another", () => {
    // TeX's x ∈ T^1_s S: the superscript shifted right by T's italic correction, S set right after the stack.
    const ts = [
      item("T", 288.59, 67.09, { size: 10.91, x1: 294.97 }),
      item("1", 296.48, 62.58, { size: 7.97, x1: 300.72 }),
      item("s", 294.97, 69.78, { size: 7.97, x1: 298.88 }),
      item("S", 301.21, 67.09, { size: 10.91, x1: 307.9 }),
    ];
    // (The italic correction before the "1" is wider than a word space of its size.)
    expect(lineTexts(ts)).toEqual(["T 1 s S"]);
    // κ^{−n}_{Nor}(s): "−" and "n" above in two fonts, "Nor" below from the same x; not "κ−Norn".
    const kappa = [
      item("κ", 139.07, 67.09, { size: 10.91, x1: 145.36 }),
      item("−", 145.36, 62.58, { size: 7.97, x1: 151.94 }),
      item("n", 151.94, 62.58, { size: 7.97, x1: 157.08 }),
      item("Nor", 145.36, 69.82, { size: 7.97, x1: 159.24 }),
      item("(s)", 159.74, 67.09, { size: 10.91, x1: 172.5 }),
    ];
    expect(lineTexts(kappa)).toEqual(["κ−n Nor (s)"]);
  });

  it("puts an accent drawn over the first letter of a run on that letter", () => {
    // "z̃, γ": pdfjs runs the letter on with the text after it; the tilde is drawn over the z.
    const line = [
      item("(0) =", 451.32, 342.12, { x1: 477.89 }),
      item("˜", 482.24, 342.12, { x1: 487.7 }),
      item("z, γ", 481.59, 342.12, { x1: 497.64 }),
    ];
    expect(lineTexts(line)).toEqual(["(0) = z̃, γ"]);
    // "X̃, y₀" (GeoTopo page 61): a capital before a comma and a space takes most of its run's
    // width, so the tilde over it, 3 pt in, is on the X and not left to fall after the y.
    const capital = [
      item("∈", 189.3, 393.6, { size: 10.9, x1: 196.5 }),
      item("˜", 202.7, 390.9, { size: 10.9, x1: 208.1 }),
      item("X, y", 199.6, 393.6, { size: 10.9, x1: 219.7 }),
      item("0", 219.7, 395.3, { size: 8, x1: 223.9 }),
    ];
    expect(lineTexts(capital)).toEqual(["∈ X̃, y0"]);
  });

  it("joins a subscript of a subscript set in the same smallest size to it", () => {
    // "=V_{i_j}" under a brace (GeoTopo page 19): "V" in 8 pt, "i" and "j" both in 6 pt, each
    // lower than the last. Folio read "=Vi" and left the "j" on a line of its own.
    const label = [
      item("=", 220.1, 584.1, { size: 8, x1: 226.7 }),
      item("V", 226.7, 584.1, { size: 8, x1: 231.6 }),
      item("i", 231.6, 585.4, { size: 6, x1: 234.3 }),
      item("j", 234.3, 587.3, { size: 6, x1: 237.3 }),
    ];
    expect(lineTexts(label)).toEqual(["=Vij"]);
    // A run in the size of the line's largest type is no script, however it is shifted.
    const small = [item("note", 100, 500, { size: 6, x1: 112 }), item("two", 112, 502.8, { size: 6, x1: 121 })];
    expect(groupLines(small)).toHaveLength(2);
  });

  it("joins superscripts and subscripts to the run they touch", () => {
    // The charge is set after the subscript, where it ends.
    const hco = [
      item("(HCO", 0, 100),
      item("3", 20, 103.3, { size: 5.8, x1: 23.2 }),
      item("–", 23.2, 96.7, { size: 5.8, x1: 26.6 }),
      item(")", 26.6, 100),
    ];
    expect(groupLines(hco).map((l) => l.map((i) => i.text).join(""))).toEqual(["(HCO3–)"]);
    // Small type below a big line, not touching it, is a line of its own.
    expect(groupLines([item("Big", 0, 100, { size: 116, x1: 178 }), item("Small", 0, 145, { size: 12 })])).toHaveLength(2);
  });

  it("joins a footnote mark set over the last letter of its word to its end (issue-192's geometry)", () => {
    const items = [
      item("Wabgbb", 28.1, 451.4, { size: 9, x1: 58.5 }),
      item("3", 54.5, 447.5, { size: 6, x1: 57.5 }),
      item("A", 120, 451.4, { size: 9 }),
    ];
    expect(groupLines(items).map((l) => splitLine(l).map(segmentText))).toEqual([["Wabgbb3", "A"]]);
    // A small run over the middle of a word is no mark of its end, nor a diagram's dot (a Type3
    // glyph "b" of no width in 3 pt, GeoTopo page 40) at a label's corner.
    expect(groupLines([item("Wabgbb", 28.1, 451.4, { size: 9, x1: 58.5 }), item("3", 38, 447.5, { size: 6, x1: 41 })])).toHaveLength(2);
    expect(
      groupLines([item("M", 182.6, 305.2, { size: 10.21, x1: 191.9 }), item("b", 187.8, 309.7, { size: 3.06, x1: 187.8 })]),
    ).toHaveLength(2);
    // Nor is such a dot a subscript of the label it touches ("d" set against it was read "bd").
    expect(
      groupLines([item("b", 216.9, 331.4, { size: 3.06, x1: 216.9 }), item("d", 217.7, 328.8, { size: 10.21, x1: 223.4 })]),
    ).toHaveLength(2);
  });

  it("parts a word started back over the last letter of the one before, or after a space glyph drawn on its own", () => {
    const line = (...items: TextItem[]): string => segmentText(splitLine(items)[0]!);
    // "ab/Abaaaba" drawn from 0.78 em inside "Aabbabaabm" (a producer placing each word on its own).
    expect(line(item("Aabbabaabm", 321.6, 172, { size: 9.96, x1: 373.8 }), item("ab/Abaaaba", 366, 172, { size: 9.96, x1: 412.6 }))).toBe(
      "Aabbabaabm ab/Abaaaba",
    );
    // A tenth of an em from the word before (less than a word space's gap), after a space glyph.
    const next = item("09 ab 101", 727, 550, { size: 9.96, x1: 765.3 });
    expect(line(item("Aaga", 705, 550, { size: 9.96, x1: 726.1 }), { ...next, spaceBefore: true })).toBe("Aaga 09 ab 101");
    expect(line(item("Aaga", 705, 550, { size: 9.96, x1: 726.1 }), next)).toBe("Aaga09 ab 101");
  });

  it("keeps a subscript on its own line when it also touches a big operator of the line below", () => {
    // TeX: "… überdecken {x₀} × y." over a display "⋃ᵢ₌₁^{m(x₀)}" whose top reaches the line; the
    // "₀" touches both its "x" and the "⋃" (the geometry of GeoTopo's page 20, rounded).
    const items = [
      item("{", 460.7, 272.3, { size: 10.9, x1: 466.2 }),
      item("x", 468.6, 272.3, { size: 10.9, x1: 474.8 }),
      item("0", 474.8, 274, { size: 8, x1: 479 }),
      item("} ×", 482, 272.3, { size: 10.9, x1: 498.3 }),
      item("⋃", 467.1, 280, { size: 10.9, x1: 476.2 }),
      item("m", 476.2, 282.5, { size: 8, x1: 483.7 }),
    ];
    expect(groupLines(items).map((l) => l.map((i) => i.text).join(""))).toEqual(["{x0} ×", "⋃m"]);
  });

  it("joins a subscript's subscript to its line when a big delimiter without text starts the line higher", () => {
    // TeX: "( U_{i_j} ∪ …" in a display, its "(" a CMEX glyph without text set 2.3 pt higher than the
    // line (the geometry of GeoTopo's page 19): the line's baseline is its first text's, so "i" and
    // then "j" join it.
    const items = [
      item("", 191.1, 524.6, { size: 10.9, x1: 200.6, opaque: true }),
      item("U", 217.1, 526.9, { size: 10.9, x1: 224.6 }),
      item("i", 224.6, 528.5, { size: 8, x1: 227.5 }),
      item("j", 227.5, 529.7, { size: 6, x1: 230.5 }),
      item("∪ (X", 234.3, 526.9, { size: 10.9, x1: 257.3 }),
    ];
    expect(groupLines(items).map((l) => l.map((i) => i.text).join(""))).toEqual(["Uij∪ (X"]);
  });
});

describe("text as a reader sees it, accents, scripts and codes", () => {
  it("joins an accent drawn over a one-letter run to it (TeX's \\tilde{x}), as poppler does", () => {
    const line = groupLines([item("f(", 0, 50), item("x", 10, 50), item("\u02dc", 10, 50), item(")", 15, 50)]);
    expect(line.map((l) => l.map((i) => i.text).join(""))).toEqual(["f(x\u0303)"]);
    // An accent over a word of several letters is left as it is.
    expect(groupLines([item("word", 0, 50), item("\u02dc", 5, 50)]).flat()).toHaveLength(2);
  });

  it("puts a space where right-to-left letters meet left-to-right ones, however close", () => {
    const seg = splitLine([item("שלום", 0, 50), item("Folio", 20, 50)])[0]!;
    expect(segmentText(seg)).toBe("שלום Folio");
    expect(segmentText(splitLine([item("12", 0, 50), item("34", 10, 50)])[0]!)).toBe("1234");
  });

  it("turns back a right-to-left word its producer drew as one glyph cluster, and only such a word", () => {
    const OPS = { showText: 1 } as TextOpCodes;
    const clusters = rtlClusters({ fnArray: [1], argsArray: [[[{ unicode: "حَبيبي" }, 12, { unicode: "a" }]]] }, OPS);
    expect([...clusters]).toEqual(["حَبيبي"]);
    // pdfjs reads the cluster in visual order: the mark before the letter it sits on, the word backwards.
    const [fixed, other] = splitAtGaps([item("يبيبَح", 0, 50), item("سلام", 0, 70)], [], clusters);
    expect(fixed!.text).toBe("حَبيبي");
    expect(other!.text).toBe("سلام");
  });

  it("takes three capitals before a number for a currency only when they are an ISO 4217 code", () => {
    expect(typeCell("EUR 1,234.50")).toEqual({ value: 1234.5, numFmt: '"EUR "#,##0.00' });
    expect(typeCell("1,234.50 EUR")).toEqual({ value: 1234.5, numFmt: '#,##0.00" EUR"' });
    expect(typeCell("ABN 48 123 123 124")).toEqual({ value: "ABN 48 123 123 124" });
  });

  it("reads an amount ending a sentence ('$6,205.', US Government tables) as the amount, and an item's number '12.' as text", () => {
    expect(typeCell("$6,205.")).toEqual({ value: 6205, numFmt: '"$"#,##0' });
    expect(typeCell("$248,200.")).toEqual({ value: 248200, numFmt: '"$"#,##0' });
    expect(typeCell("1,250.")).toEqual({ value: 1250, numFmt: "#,##0" });
    expect(typeCell("$85.")).toEqual({ value: 85, numFmt: '"$"0' });
    for (const kept of ["12.", "3.1.", "1.234.", "$6,205..", "Up to $766,865."]) expect(typeCell(kept)).toEqual({ value: kept });
  });

  it("keeps a currency sign where it was printed: before or after the digits, against them or a space apart", () => {
    expect(typeCell("1.418,86 €")).toEqual({ value: 1418.86, numFmt: '#,##0.00" €"' });
    expect(typeCell("12,50€")).toEqual({ value: 12.5, numFmt: '0.00"€"' });
    expect(typeCell("€1,418.86")).toEqual({ value: 1418.86, numFmt: '"€"#,##0.00' });
    expect(typeCell("€ 1,418.86")).toEqual({ value: 1418.86, numFmt: '"€ "#,##0.00' });
    expect(typeCell("CHF 1'234.50")).toEqual({ value: 1234.5, numFmt: '"CHF "#,##0.00' });
    expect(typeCell("(1.234,00 €)")).toEqual({ value: -1234, numFmt: '#,##0.00" €";(#,##0.00" €")' });
  });

  it("keeps the text of a cell whose place a merged cell covers, in the covering cell", () => {
    const cell = (row: number, col: number, rowSpan: number, text: string): Cell => ({
      row,
      col,
      rowSpan,
      colSpan: 1,
      lines: splitLine([item(text, col * 100, 10 + 20 * row)]),
      header: false,
    });
    const table: Table = {
      kind: "lattice",
      rows: 2,
      cols: 2,
      cells: [cell(0, 0, 1, "A"), cell(0, 1, 2, "Merged"), cell(1, 0, 1, "B"), cell(1, 1, 1, "Stray")],
      x0: 0,
      x1: 200,
      top: 0,
      bottom: 40,
      colEdges: [0, 100, 200],
    };
    const out = disjointCells(table);
    expect(out).toHaveLength(3);
    expect(out.find((c) => c.col === 1)!.lines.map(segmentText)).toEqual(["Merged", "Stray"]);
    // The input table is left as it was.
    expect(table.cells[1]!.lines).toHaveLength(1);
  });
});

describe("tables continued over pages", () => {
  /** A page holding one table of `rows`, under a line of `caption` when given. */
  function page(n: number, rows: string[][], caption?: string): PageLayout {
    const drafts = rows.flatMap((r, ri) =>
      r.flatMap((text, col): CellDraft[] =>
        text ? [{ row: ri, col, rowSpan: 1, colSpan: 1, items: [item(text, col * 100 + 4, 100 + 14 * ri)] }] : [],
      ),
    );
    const table = buildTable("stream", drafts, [0, 100, 200], { x0: 0, x1: 200, top: 90, bottom: 100 + 14 * rows.length });
    const blocks: Block[] = [{ type: "table", table, top: 90, bottom: 300 }];
    if (caption) blocks.unshift(paragraphOf([segmentOf([item(caption, 40, 70)])]));
    return {
      number: n,
      width: 600,
      height: 800,
      blocks,
      frame: { x0: 0, x1: 200, top: caption ? 70 : 90, bottom: 300 },
      segments: [],
      continued: false,
    };
  }

  it("puts back a section's heading the page break left under the table, before the rows of the next page", () => {
    const head = ["Item", "Units"];
    const withHeading = (top: number): PageLayout[] => {
      const first = page(1, [head, ["Anchor", "12"]]);
      first.blocks.push(paragraphOf([segmentOf([item("Operating activities", 4, top)])]));
      return [first, page(2, [head, ["Beacon", "7"]])];
    };
    const pages = withHeading(312);
    joinContinuedTables(pages);
    const table = (pages[0]!.blocks[0] as { table: Table }).table;
    expect(rowTexts(table).map((r) => r.join("|"))).toEqual(["Item|Units", "Anchor|12", "Operating activities", "Beacon|7"]);
    expect(pages[0]!.blocks.map((b) => b.type)).toEqual(["table"]);
    expect(pages[1]!.continued).toBe(true);
    // Text further down the page is the page's, and so is a note right under the table: the
    // table ends there, the next page's is its own.
    const apart = withHeading(400);
    joinContinuedTables(apart);
    expect(apart[0]!.blocks.map((b) => b.type)).toEqual(["table", "paragraph"]);
    expect(apart[1]!.continued).toBe(false);
    for (const note of ["Source: Bureau of Statistics", "Note: in thousands", "* Provisional", "Figures are provisional."]) {
      const pages = [page(1, [head, ["Anchor", "12"]]), page(2, [head, ["Beacon", "7"]])];
      pages[0]!.blocks.push(paragraphOf([segmentOf([item(note, 4, 312)])]));
      joinContinuedTables(pages);
      expect(pages[1]!.continued, note).toBe(false);
    }
  });

  it("drops every header row a page repeats (a group header and the column headers)", () => {
    const head = [
      ["", "Quarter 2020"],
      ["Item", "Units"],
    ];
    const pages = [page(1, [...head, ["Anchor", "12"]]), page(2, [...head, ["Beacon", "7"]])];
    joinContinuedTables(pages);
    const table = (pages[0]!.blocks[0] as { table: Table }).table;
    expect(rowTexts(table).map((r) => r.join("|"))).toEqual(["Quarter 2020", "Item|Units", "Anchor|12", "Beacon|7"]);
    expect(pages[1]!.continued).toBe(true);
    // What the page repeated is kept beside the table, for the XLSX Text sheet: no word is lost.
    expect(pages[1]!.rest).toEqual({ table, at: 0, header: [["Quarter 2020"], ["Item", "Units"]] });
  });

  it("joins a part that repeats the header row over as many columns, its edges moved by a wide total's label", () => {
    const pages = [
      page(1, [
        ["Item", "Units"],
        ["Anchor", "12"],
      ]),
      page(2, [
        ["Item", "Units"],
        ["Beacon", "7"],
        ["", "Total units 19"],
      ]),
    ];
    // The last page's total widens its second column to the left, past the first column's middle.
    (pages[1]!.blocks[0] as { table: Table }).table.colEdges = [0, 40, 200];
    joinContinuedTables(pages);
    const table = (pages[0]!.blocks[0] as { table: Table }).table;
    expect(rowTexts(table).map((r) => r.join("|"))).toEqual(["Item|Units", "Anchor|12", "Beacon|7", "Total units 19"]);
    expect(pages[1]!.continued).toBe(true);
    // A next page's table with other header text and those edges stays a table of its own.
    const other = [
      page(1, [
        ["Item", "Units"],
        ["Anchor", "12"],
      ]),
      page(2, [
        ["Port", "Calls"],
        ["Beacon", "7"],
      ]),
    ];
    (other[1]!.blocks[0] as { table: Table }).table.colEdges = [0, 40, 200];
    joinContinuedTables(other);
    expect(other[1]!.continued).toBe(false);
  });

  it("joins the part under 'ESTIMATED COSTS—Continued' or '(continued)', and keeps the caption as text", () => {
    const costs = (caption: string): PageLayout[] => [
      page(1, [
        ["Action", "Cost"],
        ["Revision", "$85"],
      ]),
      page(
        2,
        [
          ["Action", "Cost"],
          ["Wiring", "$6,715"],
        ],
        caption,
      ),
    ];
    for (const caption of ["ESTIMATED COSTS—Continued", "Table 3 (continued)", "Table 3 (cont'd)", "Tabelle 2 (Fortsetzung)"]) {
      const pages = costs(caption);
      joinContinuedTables(pages);
      expect(pages[1]!.continued, caption).toBe(true);
      const table = (pages[0]!.blocks[0] as { table: Table }).table;
      expect(rowTexts(table).map((r) => r.join("|"))).toEqual(["Action|Cost", "Revision|$85", "Wiring|$6,715"]);
      expect(pages[1]!.blocks.map((b) => b.type)).toEqual(["paragraph"]);
    }
    // Any other line before the next page's table starts something else.
    const pages = costs("Costs of the second phase");
    joinContinuedTables(pages);
    expect(pages[1]!.continued).toBe(false);
  });
});

describe("a table continued over pages, its part on the next page read in its columns", () => {
  const at = (n: number, table: Table): PageLayout => ({
    number: n,
    width: 600,
    height: 800,
    blocks: [{ type: "table", table, top: table.top, bottom: table.bottom }],
    frame: { x0: table.x0, x1: table.x1, top: table.top, bottom: table.bottom },
    segments: [],
    continued: false,
  });
  const draft = (row: number, col: number, items: TextItem[]): CellDraft => ({ row, col, rowSpan: 1, colSpan: 1, items });
  const placed = (t: Table): string[] =>
    [...t.cells].sort((a, b) => a.row - b.row || a.col - b.col).map((c) => `${c.row}:${c.col}:${c.lines.map(segmentText).join(" ")}`);

  it("parts a label merged down the rows, set once on the page, from the column beside it", () => {
    // Page 1: Group | Date | Units. Page 2 goes on with a group label set once, on its second row:
    // over two rows its column left no river, and the page's part read it into the dates' column.
    const open = buildTable(
      "stream",
      [
        draft(0, 0, [item("Group", 4, 100)]),
        draft(0, 1, [item("Date", 104, 100)]),
        draft(0, 2, [item("Units", 204, 100)]),
        draft(1, 0, [item("Harbour", 4, 114)]),
        draft(1, 1, [item("2021-04-01", 104, 114)]),
        draft(1, 2, [item("5", 204, 114)]),
      ],
      [0, 100, 200, 300],
      { x0: 0, x1: 300, top: 90, bottom: 120 },
    );
    const rest = buildTable(
      "stream",
      [
        draft(0, 0, [item("2021-05-15", 104, 100)]),
        draft(0, 1, [item("12", 204, 100)]),
        draft(1, 0, [item("Meadow", 4, 114), item("2021-06-01", 104, 114)]),
        draft(1, 1, [item("7", 204, 114)]),
      ],
      [0, 190, 300],
      { x0: 0, x1: 300, top: 90, bottom: 120 },
    );
    const pages = [at(1, open), at(2, rest)];
    joinContinuedTables(pages);
    expect(pages[1]!.continued).toBe(true);
    expect(pages[1]!.blocks).toHaveLength(0);
    expect(placed(open).slice(6)).toEqual(["2:1:2021-05-15", "2:2:12", "3:0:Meadow", "3:1:2021-06-01", "3:2:7"]);
  });

  it("keeps a next page's table apart when its words reach over the first table's column edges", () => {
    const open = buildTable(
      "stream",
      [draft(0, 0, [item("Group", 4, 100)]), draft(0, 1, [item("Date", 104, 100)]), draft(0, 2, [item("Units", 204, 100)])],
      [0, 100, 200, 300],
      { x0: 0, x1: 300, top: 90, bottom: 110 },
    );
    // "Quarterly figures by station" runs from the first column over the second's edge.
    const other = buildTable(
      "stream",
      [draft(0, 0, [item("Quarterly figures by station", 4, 100)]), draft(0, 1, [item("12", 254, 100)])],
      [0, 240, 300],
      { x0: 0, x1: 300, top: 90, bottom: 110 },
    );
    const pages = [at(1, open), at(2, other)];
    joinContinuedTables(pages);
    expect(pages[1]!.continued).toBe(false);
    expect(pages[1]!.blocks).toHaveLength(1);
  });

  it("joins a right-to-left table's parts (its column edges run right to left)", () => {
    const part = (label: string, value: string): Table => {
      const t = buildTable("stream", [draft(0, 0, [item(value, 4, 100)]), draft(0, 1, [item(label, 104, 100)])], [0, 100, 200], {
        x0: 0,
        x1: 200,
        top: 90,
        bottom: 110,
      });
      // As orientTable leaves it: column 0 is the rightmost.
      return { ...t, rtl: true, cells: t.cells.map((c) => ({ ...c, col: 1 - c.col })), colEdges: [200, 100, 0] };
    };
    const pages = [at(1, part("ميناء", "12")), at(2, part("منارة", "7"))];
    joinContinuedTables(pages);
    expect(pages[1]!.continued).toBe(true);
    const joined = (pages[0]!.blocks[0] as { table: Table }).table;
    expect(placed(joined)).toEqual(["0:0:ميناء", "0:1:12", "1:0:منارة", "1:1:7"]);
  });
});

/** A 600 × 800 page of `blocks`, for joining tables over pages. */
const page = (n: number, blocks: Block[]): PageLayout => ({
  number: n,
  width: 600,
  height: 800,
  blocks,
  frame: { x0: 0, x1: 600, top: 40, bottom: 760 },
  segments: [],
  continued: false,
});
const tableBlock = (t: Table): Block => ({ type: "table", table: t, top: t.top, bottom: t.bottom });

describe("a table's last rows cut off by a page break, read as text on the next page", () => {
  // The table: Date | Details | Amount, down to 740 of an 800-point page.
  const table = (bottom: number): Table =>
    buildTable(
      "stream",
      [
        ["Date", "Details", "Amount"],
        ["09/12/2026", "Oyster freight", "1,204.50"],
      ].flatMap((r, ri) =>
        r.map((text, col): CellDraft => ({
          row: ri,
          col,
          rowSpan: 1,
          colSpan: 1,
          items: [item(text, [4, 104, 304][col]!, bottom - 30 + 14 * ri)],
        })),
      ),
      [0, 100, 300, 400],
      { x0: 0, x1: 400, top: bottom - 40, bottom },
    );
  const paragraph = (...lines: TextItem[][]): Block => paragraphOf(lines.map((l) => segmentOf(l)));
  // Page 2 begins with the last row, set bottom-aligned as ReportLab sets it: its description's
  // first line alone, then the line with the date and the amount (a figure in the page's top band,
  // no page number), then prose that runs over the table's column edges.
  const lastRow = (): Block[] => [
    paragraph([item("Anchor prairie bramble", 104, 48)]),
    paragraph([item("01/10/2026", 4, 60), item("crane granite", 104, 60)]),
    paragraph([item("42,907.20", 304, 60)]),
    paragraph([item("Harbour calls rose in every quarter of the year", 0, 74)]),
  ];

  it("appends the page's top lines in the table's columns as its last row", () => {
    const open = table(740);
    const pages = [page(1, [tableBlock(open)]), page(2, lastRow())];
    joinContinuedTables(pages);
    expect(rowTexts(open).at(-1)).toEqual(["01/10/2026", "Anchor prairie bramble crane granite", "42,907.20"]);
    expect(pages[1]!.continued).toBe(true);
    expect(pages[1]!.blocks.map((b) => (b.type === "paragraph" ? b.lines.map(segmentText).join(" ") : b.type))).toEqual([
      "Harbour calls rose in every quarter of the year",
    ]);
  });

  it("looks past a running head that the pages repeat, their numbers aside", () => {
    const head = (n: number): Block => paragraph([item(`Harbour report 2024, page ${n}`, 4, 30)]);
    const open = table(740);
    const pages = [page(1, [head(1), tableBlock(open)]), page(2, [head(2), ...lastRow()])];
    joinContinuedTables(pages);
    expect(rowTexts(open).at(-1)).toEqual(["01/10/2026", "Anchor prairie bramble crane granite", "42,907.20"]);
    expect(pages[1]!.blocks).toHaveLength(2);
    // A line of its own in the band is the page's first block.
    const alone = table(740);
    const other = [page(1, [head(1), tableBlock(alone)]), page(2, [paragraph([item("Harbour calls by quarter", 4, 30)]), ...lastRow()])];
    joinContinuedTables(other);
    expect(alone.rows).toBe(2);
  });

  it("leaves the page alone when the table ends high on its page, or no line is across two columns", () => {
    const high = table(300);
    const pages = [page(1, [tableBlock(high)]), page(2, lastRow())];
    joinContinuedTables(pages);
    expect(high.rows).toBe(2);
    expect(pages[1]!.blocks).toHaveLength(4);
    expect(pages[1]!.continued).toBe(false);
    // A heading that fits the first column, then prose.
    const open = table(740);
    const other = [page(1, [tableBlock(open)]), page(2, [paragraph([item("Notes", 4, 60)]), lastRow().at(-1)!])];
    joinContinuedTables(other);
    expect(open.rows).toBe(2);
    expect(other[1]!.blocks).toHaveLength(2);
  });

  it("gives a line in one column to the row above unless the space under it is wider (wrapped down, not bottom-aligned)", () => {
    for (const [base, row] of [
      [84, 0],
      [90, 0],
    ] as const) {
      const open = table(740);
      const rows = [
        paragraph([item("02/10/2026", 4, 60), item("Cedar thistle", 104, 60), item("1.00", 304, 60)], [item("meadow", 104, 72)]),
        paragraph([item("03/10/2026", 4, base), item("Fjord", 104, base), item("2.00", 304, base)]),
      ];
      joinContinuedTables([page(1, [tableBlock(open)]), page(2, rows)]);
      expect(rowTexts(open).slice(2)[row]).toEqual(["02/10/2026", "Cedar thistle meadow", "1.00"]);
      expect(rowTexts(open)).toHaveLength(4);
    }
    // Space under it wider than over it, and no row above on the page: the next row's first line.
    const open = table(740);
    const rows = [
      paragraph([item("02/10/2026", 4, 60), item("Cedar", 104, 60), item("1.00", 304, 60)]),
      paragraph([item("Fjord lagoon", 104, 80)], [item("03/10/2026", 4, 92), item("keel", 104, 92), item("2.00", 304, 92)]),
    ];
    joinContinuedTables([page(1, [tableBlock(open)]), page(2, rows)]);
    expect(rowTexts(open).slice(2)).toEqual([
      ["02/10/2026", "Cedar", "1.00"],
      ["03/10/2026", "Fjord lagoon keel", "2.00"],
    ]);
  });
});

describe("values of a right-to-left table drawn in visual order", () => {
  it("reads a negative in parentheses and a minus sign back in logical order", () => {
    // LibreOffice Writer draws "(30,329)" in a right-to-left cell as ")" "30,329" "(", each bracket
    // mapped to its logical character; "-25" as "25-".
    expect(logicalValue(")30,329(")).toBe("(30,329)");
    expect(logicalValue("25-")).toBe("-25");
    expect(logicalValue("12.5%-")).toBe("-12.5%");
  });

  it("leaves values that read as they are drawn, and text, alone", () => {
    // A producer mapping each bracket to the glyph drawn: already right.
    expect(logicalValue("(30,329)")).toBe("(30,329)");
    // With Latin letters: a date drawn in a right-to-left paragraph, its day after its year.
    expect(logicalValue("Dec-16-07")).toBe("07-Dec-16");
    expect(logicalValue("Mar 2024 12")).toBe("12 Mar 2024");
    for (const kept of ["Mar 15, 2024", "ABC-123", "kg 3", "Dec-16-07 x"]) expect(logicalValue(kept)).toBe(kept);
    for (const text of ["1 234", "10 - 20", "2021-05-15", "47.0%", "AB-3841"]) expect(logicalValue(text)).toBe(text);
  });
});

describe("words where a right-to-left script meets a left-to-right one", () => {
  it("parts two runs where the scripts meet, in every right-to-left script, however close", () => {
    // Hebrew, Arabic, Syriac ("ܫܠܡܐ"), Thaana ("ދިވެހި") and N'Ko ("ߒߞߏ") words beside a Latin one.
    for (const rtl of ["שלום", "سلام", "ܫܠܡܐ", "ދިވެހި", "ߒߞߏ"]) {
      expect(scriptsMeet(rtl, "Folio"), rtl).toBe(true);
      expect(scriptsMeet("Folio", rtl), rtl).toBe(true);
    }
    expect(scriptsMeet("Fol", "io")).toBe(false);
    expect(scriptsMeet("ܫܠ", "ܡܐ")).toBe(false);
  });
});

describe("booktabs tables among justified text (LaTeX pages)", () => {
  it("takes the header between the head rule and the rule under it, though its labels read like a line of prose", () => {
    // tables-062's geometry: "Flow (1 step)" and "Flow (10 step)" a justified space apart (six
    // words, one em between them) over two columns of figures, the second label running past the
    // figures to the rules' end. Read as prose, the header was left out as the table's title.
    const t = { size: 10.4 };
    const header = [item("Flow (1 step)", 425, 394.2, { ...t, x1: 480 }), item("Flow (10 step)", 490.3, 394.2, { ...t, x1: 550.5 })];
    const rows = [
      ["Adroit Hammer", "1.00", "0.91"],
      ["Adroit Door", "0.53", "0.50"],
      ["DexArt Faucet", "0.38", "0.37"],
      ["Average", "0.64", "0.59"],
    ];
    const body = rows.flatMap((row, r) => [
      item(row[0]!, 333, 411.9 + 12.5 * r, { ...t, x1: 333 + 5 * row[0]!.length }),
      item(row[1]!, 443.4, 411.9 + 12.5 * r, { ...t, x1: 461.6 }),
      item(row[2]!, 511.3, 411.9 + 12.5 * r, { ...t, x1: 529.4 }),
    ]);
    const booktabs = [h(382.1, 317.6, 550.5), h(400, 317.6, 550.5), h(460, 317.6, 550.5)];
    const found = streamTables([...header, ...body], booktabs);
    expect(found.map((f) => rowTexts(f.table))).toEqual([[["Flow (1 step)", "Flow (10 step)"], ...rows]]);
    // Each label over its column of figures, the corner left empty.
    expect(found[0]!.table.cells.filter((c) => c.row === 0).map((c) => c.col)).toEqual([1, 2]);
    // Without the rule under it, the same line over the table is not known for its header.
    const unruled = streamTables([...header, ...body], [booktabs[0]!, booktabs[2]!]);
    expect(unruled.map((f) => rowTexts(f.table))).toEqual([rows]);
  });

  it("keeps a justified line above a table, its word spaces wide enough to part it, out of the table's width", () => {
    // The paragraph's first line parts at its stretched word spaces; the tables stand narrower, and
    // the paragraph between them reaches across their rows: it ends the first.
    const justified = [
      item("Mouth everything total reflect", 45, 80, { x1: 223 }),
      item("Become body seek information.", 230, 80, { x1: 364 }),
      item("Story right information message.", 371, 80, { x1: 512 }),
      item("None", 518, 80, { x1: 540 }),
    ];
    const words = [
      ["authblk", "babel", "cjk", "dvips"],
      ["epsf", "epsfig", "euler", "float"],
      ["fullpage", "geometry", "graphics", "hyperref"],
      ["layout", "linespread", "lmodern", "maltepaper"],
    ];
    const first = words.flatMap((row, r) => row.map((w, c) => item(w, 187 + 55 * c, 110 + 20 * r)));
    const between = item("Operation each grow enter. Per friend prepare young. Quite phone provide only bed finally.", 45, 200, {
      x1: 459,
    });
    const figures = [
      ["Models", "P", "R"],
      ["Qwen3-4B", "95.1", "99.3"],
      ["Mistral-7B", "99.3", "96.8"],
    ];
    const second = figures.flatMap((row, r) => [
      item(row[0]!, 164, 230 + 20 * r),
      right(row[1]!, 290, 230 + 20 * r),
      right(row[2]!, 330, 230 + 20 * r),
    ]);
    const found = streamTables([...justified, item("assume wear less create. Peace seek it.", 45, 95), ...first, between, ...second]);
    expect(found.map((f) => rowTexts(f.table))).toEqual([words, figures]);
  });

  it("ends a table at its foot rule where larger type goes on, and reads two justified lines of prose as no table", () => {
    const small = { size: 8.9 };
    const rows = [
      ["Train", "8,547", "48,140", "43,221"],
      ["Test", "950", "8,472", "4,557"],
    ];
    const table = [
      ...["Data", "CADB", "GAIC", "AVA"].map((w, c) => item(w, 320 + 50 * c, 622, small)),
      ...rows.flatMap((row, r) => row.map((w, c) => item(w, 320 + 50 * c, 637 + 11 * r, small))),
    ];
    const text = { size: 12 };
    const prose = [
      item("Compare billion grow", 315, 673, { ...text, x1: 408 }),
      item("parent work", 418, 673, { ...text, x1: 526 }),
      item("down husband remain.", 315, 687, { ...text, x1: 441 }),
      item("But collection", 450, 687, { ...text, x1: 526 }),
    ];
    const found = streamTables([...table, ...prose], [h(612, 315, 526), h(626, 315, 526), h(653, 315, 526)]);
    expect(found.map((f) => rowTexts(f.table))).toEqual([[["Data", "CADB", "GAIC", "AVA"], ...rows]]);
  });

  it("starts a table at its head rule where the column's text above runs past the rule's ends", () => {
    const t = { size: 12 };
    const prose = [
      item("Entire myself hundred pretty.", 82, 81.7, { ...t, x1: 245 }),
      item("Run", 256, 81.7, { ...t, x1: 278 }),
      item("claim traditional east they.", 70, 105.6, { ...t, x1: 209 }),
    ];
    const rows = [
      ["Method", "250", "1000"],
      ["Default", "0.175", "0.110"],
      ["Intra-tissue", "0.177", "0.105"],
    ];
    const table = rows.flatMap((row, r) => [
      item(row[0]!, 105, 140.9 + 24 * r, { ...t, x1: 105 + 5 * row[0]!.length }),
      right(row[1]!, 204, 140.9 + 24 * r),
      right(row[2]!, 243, 140.9 + 24 * r),
    ]);
    const rules = [h(120.4, 98.9, 248.6), h(150.5, 98.9, 248.6), h(205, 98.9, 248.6)];
    const found = streamTables([...prose, ...table], rules);
    expect(found.map((f) => rowTexts(f.table))).toEqual([rows]);
    expect(prose.some((i) => found[0]!.items.has(i))).toBe(false);
  });

  it("starts a table at its head rule under its heading, a previous table's last row over the heading", () => {
    // The top of a ReportLab page: the last row of the previous page's table, cut off by the page
    // break (its columns near the next table's), the next table's heading in 11-point bold, then
    // the table between its head rules.
    const nine = { size: 9 };
    const row = (cells: string[], base: number, bold = false): TextItem[] =>
      cells.map((w, c) => item(w, [63, 121, 177, 420][c]!, base, { ...nine, bold }));
    const cut = row(["6 Jul 2026", "CR-92427", "Pier indigo", "1,931.77"], 79.8);
    const heading = item("Activity log", 57, 115.6, { size: 11, bold: true, x1: 116 });
    const rows = [
      ["Shipped", "Ref.", "Details", "Revenue"],
      ["03/16/2026", "INV-76858", "Crane falcon", "29,853.69"],
      ["04/18/2026", "PO-58446", "Grove granite", "11.33"],
      ["11/05/2026", "PO-54413", "Island saffron", "909.97"],
    ];
    const table = rows.flatMap((r, k) => row(r, 136.4 + 16.8 * k, k === 0));
    const rules = [h(124, 57, 517), h(141, 57, 517)];
    const found = streamTables([...cut, heading, ...table], rules);
    expect(found.map((f) => rowTexts(f.table))).toEqual([rows]);
    // A label in the rows' type over the rule is the table's (a row and a section's label).
    const near = row(["6 Jul 2026", "CR-92427", "Pier indigo", "1,931.77"], 98);
    const plain = streamTables([...near, { ...heading, size: 9, bold: false }, ...table], rules);
    expect(plain[0]!.items.has(near[0]!)).toBe(true);
  });

  it("takes a header label wider than the row labels under it when a head rule spans it", () => {
    // \multirow{2}{*}{Houses} beside \multicolumn{5}{c}{Number of Features} over the header's
    // digits, all under a \toprule; "Houses" reaches 17 pt past the row labels' column ("2", "3").
    const s = { size: 12 };
    const cols = [401.8, 433.1, 464.4, 495.6, 526.9];
    const row = (base: number, label: string, values: string[]): TextItem[] => [
      item(label, 360, base, { ...s, x1: 366.2 }),
      ...values.map((v, k) => item(v, cols[k]! - 5, base, { ...s, x1: cols[k]! + 13 })),
    ];
    const items = [
      item("Number of Features", 413.7, 61.7, { ...s, x1: 521.1 }),
      item("Houses", 343.3, 70.6, { ...s, x1: 382.9 }),
      ...cols.map((x, k) => item(String(k + 2), x, 79.6, { ...s, x1: x + 6.2 })),
      ...row(103.5, "2", ["100", "100", "100", "97.5", "97.5"]),
      ...row(121.4, "3", ["92.5", "90.0", "90.0", "77.5", "65.0"]),
      ...row(139.4, "4", ["97.5", "80.0", "72.5", "70.0", "0"]),
    ];
    const rules = [h(45.3, 337.4, 545.6), h(87.3, 337.4, 545.6), h(150, 337.4, 545.6)];
    const found = streamTables(items, rules);
    expect(found.map((f) => rowTexts(f.table).slice(0, 3))).toEqual([
      [
        ["Houses", "Number of Features"],
        ["2", "3", "4", "5", "6"],
        ["2", "100", "100", "100", "97.5", "97.5"],
      ],
    ]);
    // Without the head rule the labels over the table are text before it.
    expect(
      streamTables(items, rules.slice(1)).map((f) => f.table.cells.some((c) => c.lines.some((l) => segmentText(l) === "Houses"))),
    ).toEqual([false]);
  });

  it("takes the labels between a table's head rule and its first line of cells, a label centred on two lines in its own column", () => {
    // \multicolumn{3}{c}{MME} over a \cmidrule, \multirow{2}{*}{Choice of Loss} beside it.
    const s = { size: 7.8 };
    const items = [
      item("MME-RealWorld-Lite", 201, 651.3, { ...s, x1: 275 }),
      item("Choice of Loss", 104, 659.4, { ...s, x1: 156 }),
      item("Perception", 181, 667.5, { ...s, x1: 216 }),
      item("Reasoning", 226, 667.5, { ...s, x1: 261 }),
      item("Overall", 271, 667.5, { ...s, x1: 295 }),
      item("cosine similarity loss", 95, 688, { ...s, x1: 165 }),
      ...["56.1", "48.5", "53.1"].map((w, c) => item(w, 191 + 45 * c, 688, { ...s, x1: 206 + 45 * c })),
      item("mean squared error loss", 90, 704.2, { ...s, x1: 171 }),
      ...["56.6", "50.2", "54.1"].map((w, c) => item(w, 191 + 45 * c, 704.2, { ...s, x1: 206 + 45 * c })),
    ];
    const rules = [h(641, 88, 297), h(654, 180, 296), h(672, 88, 297), h(709, 88, 297)];
    const found = streamTables(items, rules);
    expect(found.map((f) => rowTexts(f.table))).toEqual([
      [
        ["Choice of Loss", "MME-RealWorld-Lite"],
        ["Perception", "Reasoning", "Overall"],
        ["cosine similarity loss", "56.1", "48.5", "53.1"],
        ["mean squared error loss", "56.6", "50.2", "54.1"],
      ],
    ]);
    expect(found[0]!.table.cells.find((c) => c.lines.map(segmentText).join(" ") === "Perception")!.col).toBe(1);
    // Without the head rule the lines above the first line of cells are text before the table.
    expect(streamTables(items, rules.slice(1))[0]!.table.rows).toBe(3);
  });
});

describe("row labels centred on two rows (LaTeX's \\multirow)", () => {
  // "Activity" and "Gen. Type" centred between a group header and the labels under it; each
  // activity centred between its two rows, in a column no row of values fills.
  const at = (text: string, x0: number, x1: number, base: number): TextItem => item(text, x0, base, { x1 });
  const values = (base: number, xs: number[], texts: string[]): TextItem[] => texts.map((t, k) => at(t, xs[k]!, xs[k]! + 25, base));
  const xs = [186, 221, 255, 290];
  const items = [
    at("Task 01", 198, 233, 564),
    at("Task 02", 267, 302, 564),
    at("Activity", 60, 97, 571.5),
    at("Gen. Type", 129, 176, 571.5),
    ...values(583.8, xs, ["Ant.", "Det.", "Ant.", "Det."]),
    at("Random", 129, 167, 603.8),
    ...values(603.8, xs, ["52.62", "52.22", "52.02", "52.50"]),
    at("Tying Knots", 60, 113, 611.3),
    at("Task-Level", 129, 176, 618.8),
    ...values(618.8, xs, ["70.18", "74.52", "70.65", "74.28"]),
    at("Random", 129, 167, 638.9),
    ...values(638.9, xs, ["50.36", "49.33", "48.07", "48.28"]),
    at("Shuffle Cards", 60, 119, 646.4),
    at("Task-Level", 129, 176, 653.9),
    ...values(653.9, xs, ["74.46", "75.91", "81.53", "83.61"]),
  ];

  it("read each label in its own column, on the first of its rows, the group's labels on a row under its label", () => {
    const grid = textGrid({ items, kind: "stream" })!;
    expect(rowTexts(grid.table)).toEqual([
      ["Activity", "Gen. Type", "Task 01", "Task 02"],
      ["Ant.", "Det.", "Ant.", "Det."],
      ["Tying Knots", "Random", "52.62", "52.22", "52.02", "52.50"],
      ["Task-Level", "70.18", "74.52", "70.65", "74.28"],
      ["Shuffle Cards", "Random", "50.36", "49.33", "48.07", "48.28"],
      ["Task-Level", "74.46", "75.91", "81.53", "83.61"],
    ]);
    const cell = (text: string): Cell => grid.table.cells.find((c) => c.lines.map(segmentText).join(" ") === text)!;
    expect([cell("Shuffle Cards").col, cell("Gen. Type").col, cell("Ant.").col]).toEqual([0, 1, 2]);
  });
});

describe("a column holding one label only, centred on its two rows (LaTeX's \\multirow)", () => {
  // A confusion matrix: "Actual Class" centred between the rows "Official" and "Unofficial", the
  // only text of its column; a rule parts the labels from the counts, one under the header.
  const s = { size: 9.6 };
  const at = (text: string, x0: number, x1: number, base: number): TextItem => item(text, x0, base, { ...s, x1 });
  const header = [at("Official", 425, 454, 233), at("Unofficial", 466.5, 505, 233)];
  const upper = [at("Official", 378.7, 407.5, 247.8), at("92 (TP)", 424.2, 455, 247.8), at("8 (FN)", 472.7, 498.6, 247.8)];
  const label = at("Actual Class", 310.9, 362.4, 255);
  const lower = [at("Unofficial", 374, 412, 262.2), at("7 (FP)", 427, 452, 262.2), at("93 (TN)", 470, 502, 262.2)];
  const box = { x0: 305, x1: 511, top: 223, bottom: 267 };

  it("parts the label's column from the rows' labels", () => {
    const grid = textGrid({ items: [...header, ...upper, label, ...lower], drawnXs: [418.3], drawnYs: [237.5], kind: "lattice", box })!;
    const col = (text: string): number | undefined => grid.table.cells.find((c) => c.lines.some((l) => segmentText(l) === text))?.col;
    expect([col("Actual Class"), col("92 (TP)"), col("8 (FN)")]).toEqual([0, 2, 3]);
    expect(grid.table.cells.filter((c) => c.col === 1).flatMap((c) => c.lines.map(segmentText))).toEqual(["Official", "Unofficial"]);
  });

  it("does not part a label beside one row only", () => {
    const gaps = columnGaps(lines([...header, ...upper, label]));
    expect(gaps.filter((x) => x > 362.4 && x < 378.7)).toEqual([]);
  });
});

describe("a label centred on its group of rows between two rules (LaTeX's \\multirow between \\hline)", () => {
  // Two groups of three rows, a rule across under the header and between the groups; the column
  // rules drawn row by row (as LaTeX draws them), so every row has a grid line. "Left" stands on
  // its group's middle line, "Right" on its group's first.
  const xs = [0, 50, 150, 200];
  const bands = [0, 12, 48, 84];
  const rowLines = [0, 12, 24, 36, 48, 60, 72, 84];
  const rules = [...bands.map((y) => h(y, 0, 200)), ...xs.flatMap((x) => rowLines.slice(1).map((y, k) => v(x, rowLines[k]!, y)))];
  const group = (label: string, base: number, at: number, themes: string[], values: string[]): TextItem[] => [
    item(label, 2, at),
    ...themes.map((t, k) => item(t, 52, base + 12 * k)),
    ...values.map((n, k) => right(n, 190, base + 12 * k)),
  ];
  const items = [
    item("Orient.", 2, 9),
    item("Theme", 52, 9),
    item("Value", 160, 9),
    ...group("Left", 21, 33, ["War", "Army", "Union"], ["41", "152", "307"]),
    ...group("Right", 57, 57, ["Farm", "Vote", "Land"], ["12", "82", "16"]),
  ];
  const cellOf = (t: Table, text: string): Cell => t.cells.find((c) => c.lines.some((l) => segmentText(l) === text))!;

  it("reads the centred label as one cell over its group's rows, from the first", () => {
    const [table] = latticeTables(rules, items);
    const left = cellOf(table!, "Left");
    expect([left.row, left.rowSpan]).toEqual([1, 3]);
    expect(table!.cells.filter((c) => c.col === 0 && c.row >= 1 && c.row <= 3)).toEqual([left]);
    expect(rowTexts(table!).slice(1, 3)).toEqual([
      ["Left", "War", "41"],
      ["Army", "152"],
    ]);
    // A label on its group's first line stays a cell of that row.
    const rightCell = cellOf(table!, "Right");
    expect([rightCell.row, rightCell.rowSpan]).toEqual([4, 1]);
  });

  it("reads it so where the rows come from the text between the rules", () => {
    const box = { x0: 0, x1: 200, top: 0, bottom: 84 };
    const grid = textGrid({ items, drawnXs: [50, 150], drawnYs: rowLines.slice(1, -1), crossYs: [12, 48], kind: "lattice", box })!;
    const left = cellOf(grid.table, "Left");
    expect([left.row, left.rowSpan]).toEqual([1, 3]);
    // Without a rule across between the groups, "Left" is in the middle of no band: it stays.
    const open = textGrid({ items, drawnXs: [50, 150], drawnYs: rowLines.slice(1, -1), crossYs: [12], kind: "lattice", box })!;
    expect(cellOf(open.table, "Left").rowSpan).toBe(1);
  });
});

describe("a label centred on its group of rows between booktabs rules", () => {
  // "SkipCat" centred on its four rows (between the second and the third), \midrule over them.
  const row = (base: number, cells: string[]): TextItem[] => cells.map((c, k) => item(c, [70, 130, 190][k]!, base));
  const items = [
    ...row(10, ["Rate", "TTFT", "Speedup"]),
    item("Method", 2, 10),
    item("Dense", 2, 26),
    ...row(26, ["-", "1.14", "-"]),
    ...row(42, ["20%", "0.99", "1.15x"]),
    ...row(54, ["40%", "0.79", "1.44x"]),
    item("SkipCat", 2, 60),
    ...row(66, ["60%", "0.57", "2.00x"]),
    ...row(78, ["80%", "0.35", "3.26x"]),
  ];
  const rules = [h(-2, 0, 240), h(14, 0, 240), h(30, 0, 240), h(82, 0, 240)];
  const skipCat = (rs: Rule[]): Cell => {
    const [found] = streamTables(items, rs);
    return found!.table.cells.find((c) => c.lines.some((l) => segmentText(l) === "SkipCat"))!;
  };

  it("reads it as one cell over its group's rows, from the first", () => {
    const cell = skipCat(rules);
    expect([cell.row, cell.rowSpan]).toEqual([2, 4]);
  });

  it("leaves it in its row when no rule parts its group from the row above", () => {
    expect(skipCat(rules.filter((r) => r.y0 !== 30)).rowSpan).toBe(1);
  });
});

describe("a group header centred over its columns' text", () => {
  // An arXiv table's header (pdf-parse-bench's tables-098): "ILIAS" centred over mAP | LocScore,
  // its left end just right of the river between the two, so that the separator there lies at
  // the river's left bank; over the separators "ILIAS" is off the two columns' middle, over their
  // text it is on it.
  const at = (text: string, x0: number, x1: number, base: number): TextItem => item(text, x0, base, { x1, size: 8.6 });
  const row = (base: number, label: string | null, type: string, values: string[]): TextItem[] => [
    ...(label ? [at(label, 319.6, 319.6 + 5 * label.length, base + 6.7)] : []),
    at(type, 361.4, 361.4 + 4 * type.length, base),
    ...values.map((v, k) => at(v, [393.5, 431.3, 469.2, 507.1][k]!, [415.1, 453, 490.8, 528.7][k]!, base)),
  ];
  const items = [
    at("Encoder", 319.6, 352.4, 208.8),
    at("Type", 361.4, 379.9, 208.8),
    at("INSTRE", 411.6, 442, 199.8),
    at("ILIAS", 491.9, 513.3, 199.8),
    at("mAP", 395.1, 413.5, 217.9),
    at("LocScore", 424.1, 460.2, 217.9),
    at("mAP", 470.8, 489.2, 217.9),
    at("LocScore", 499.8, 536, 217.9),
    ...row(236.2, "DINOv2", "global", ["57.70", "15.07", "40.56", "12.18"]),
    ...row(249.7, null, "local", ["72.54", "22.22", "57.52", "18.49"]),
    ...row(267.8, "CLIP", "global", ["73.84", "18.10", "31.60", "17.30"]),
    ...row(281.3, null, "local", ["87.57", "30.37", "53.35", "17.95"]),
  ];

  it("spans the columns it is centred over", () => {
    const grid = textGrid({ items, kind: "stream" })!;
    const span = (text: string): number[] => {
      const cell = grid.table.cells.find((c) => c.lines.some((l) => segmentText(l) === text))!;
      return [cell.col, cell.colSpan];
    };
    expect([span("INSTRE"), span("ILIAS")]).toEqual([
      [2, 2],
      [4, 2],
    ]);
  });
});

describe("header labels centred on a header's two rows", () => {
  // A header whose cells are one or two lines tall, each centred in the header's height: "BigCity"
  // over "Street" and over "Aerial", the one-line labels halfway between those two lines.
  const at = (text: string, x0: number, x1: number, base: number): TextItem => item(text, x0, base, { x1 });
  const header = (labelsAt: number): TextItem[] => [
    at("Scene", 140, 167, labelsAt),
    at("Rubble", 200, 234, labelsAt),
    at("Campus", 300, 338, labelsAt),
    at("BigCity", 350, 385, 122.5),
    at("Sci-Art", 396, 429, labelsAt),
    at("BigCity", 441, 476, 122.5),
    at("Street", 354, 380, 137.4),
    at("Aerial", 444, 472, 137.4),
  ];
  const body = [157.3, 172.3].flatMap((base, r) => [
    at(["METIS Time (s)", "Total Time (s)"][r]!, 120, 188, base),
    ...[210, 310, 358, 406, 452].map((x, c) => at((r * 10 + c + 1.5).toFixed(1), x, x + 13, base)),
  ]);
  const cellOf = (t: Table, text: string): Cell | undefined => t.cells.find((c) => c.lines.map(segmentText).join(" ") === text);

  it("reads them on the upper row, their cells spanning both, and the second lines on the lower one", () => {
    const table = textGrid({ items: [...header(129.9), ...body], kind: "stream" })!.table;
    expect(rowTexts(table).slice(0, 2)).toEqual([
      ["Scene", "Rubble", "Campus", "BigCity", "Sci-Art", "BigCity"],
      ["Street", "Aerial"],
    ]);
    for (const label of ["Scene", "Rubble", "Campus", "Sci-Art"]) expect(cellOf(table, label)).toMatchObject({ row: 0, rowSpan: 2 });
    // Each "BigCity" over its own column only (the tall labels beside it close it in).
    expect(cellOf(table, "Street")!.col).toBe(cellOf(table, "BigCity")!.col);
    expect(table.cells.filter((c) => c.lines.map(segmentText).join(" ") === "BigCity").map((c) => c.colSpan)).toEqual([1, 1]);
    expect(rowTexts(table)[2]).toEqual(["METIS Time (s)", "1.5", "2.5", "3.5", "4.5", "5.5"]);
  });

  it("leaves labels set on the lower line (bottom-aligned) on the lower row", () => {
    const table = textGrid({ items: [...header(137.4), ...body], kind: "stream" })!.table;
    expect(cellOf(table, "Scene")).toMatchObject({ row: 1, rowSpan: 1 });
    expect(cellOf(table, "Street")!.row).toBe(1);
  });
});

describe("row-ruled tables stacked in a column", () => {
  it("part at a band of justified text between them, and at a tall band holding no text", () => {
    const row = (texts: string[], base: number): TextItem[] => texts.map((t, c) => item(t, 5 + 80 * c, base));
    // The first table's text is another finder's already but for its last line, left over.
    const leftover = item("NANOGrav 12.5-year data.", 60, 70);
    const second = [
      ...row(["Action", "Pre", "Post"], 114),
      ...row(["move", "reached", "max"], 134),
      ...row(["pick", "holding", "max"], 148),
    ];
    const paragraph = [0, 1, 2].map((k) => item("Second everyone Congress game.", 0, 174 + 14 * k, { x1: 250 }));
    const third = [...row(["Train", "8,547", "48,140"], 224), ...row(["Test", "950", "8,472"], 238)];
    const rules = [0, 20, 76, 100, 120, 155, 210, 228, 245].map((y) => h(y, 0, 250));
    const found = rowRuledTables(rules, [leftover, ...second, ...paragraph, ...third]);
    expect(found.map((f) => rowTexts(f.table))).toEqual([
      [
        ["Action", "Pre", "Post"],
        ["move", "reached", "max"],
        ["pick", "holding", "max"],
      ],
      [
        ["Train", "8,547", "48,140"],
        ["Test", "950", "8,472"],
      ],
    ]);
  });
});

describe("financial statements: sections, indented items, subtotals, currency signs, notes", () => {
  // A statement as annual reports set it: labels at three indents (sections at 80, items at 92,
  // details at 104) in a wide column, two years of amounts right-aligned at 400 and 500, a
  // currency sign flush left in each amount's cell (at 340 and 440) on the first item and the total.
  type Line = [label: string, indent: number, values: string[] | null, sign?: boolean];
  const statement = (rows: Line[], top: number, size = 10): TextItem[] =>
    rows.flatMap(([label, indent, values, sign], r) => {
      const base = top + 1.4 * size * r;
      const out = [item(label, 80 + 12 * indent, base, { size })];
      values?.forEach((v, c) => {
        out.push(right(v, 400 + 100 * c, base));
        if (sign) out.push(item("$", 340 + 100 * c, base));
      });
      return out;
    });
  const body: Line[] = [
    ["Current assets", 0, null],
    ["Inventories", 1, ["70,590", "87,543"], true],
    ["Trade receivables", 1, ["832", "(15,588)"]],
    ["Cash", 1, ["20,614", "—"]],
    ["Total current assets", 0, ["92,036", "71,955"]],
    ["Net assets", 0, ["92,036", "71,955"], true],
  ];
  const header = (top: number, years: string[]): TextItem[] => years.map((y, c) => right(y, 400 + 100 * c, top));

  it("reads a currency sign set flush left in an amount's cell as that cell's", () => {
    const grid = textGrid({ items: [...header(10, ["2025", "2024"]), ...statement(body, 24)], kind: "stream" })!;
    expect(grid.table.cols).toBe(3);
    expect(rowTexts(grid.table)[2]).toEqual(["Inventories", "$ 70,590", "$ 87,543"]);
    expect(typeCell("$ 70,590").value).toBe(70590);
  });

  it("keeps a sign that stands among a column's figures in that column (a bulletin's mark)", () => {
    // "$" marks a value in the irrigation column, where the other rows have figures; "80" is the next column's.
    const rows = [
      ["TENUGHAT", "48", "342", "10"],
      ["MAITHON", "100", "$", "80"],
      ["KONAR", "52", "75", "11"],
    ].flatMap(([name, a, b, c], r) => [
      item(name!, 0, 10 + 14 * r),
      right(a!, 100, 10 + 14 * r),
      right(b!, 150, 10 + 14 * r),
      right(c!, 200, 10 + 14 * r),
    ]);
    expect(rowTexts(textGrid({ items: rows, kind: "stream" })!.table)[1]).toEqual(["MAITHON", "100", "$", "80"]);
  });

  it("keeps a footnote mark raised after a label in the label's piece", () => {
    const label = item("Goodwill", 80, 100);
    const mark = item("(a)", label.x1 + 1, 96.7, { size: 5.8, x1: label.x1 + 10 });
    expect(linePieces([label, mark, right("2,594", 400, 100)]).map(pieceText)).toEqual(["Goodwill (a)", "2,594"]);
  });

  it("parts two statements at the title between them, each read in its own columns", () => {
    const second = statement(
      [
        ["Revenue", 0, null],
        ["Sale of goods", 1, ["12,391", "15,248"]],
        ["Rental income", 1, ["79,804", "16,655"]],
        ["Total revenue", 0, ["92,195", "31,903"]],
      ],
      154,
    ).map((i) => (/\d/.test(i.text) ? { ...i, x0: i.x0 - 60, x1: i.x1 - 60 } : i));
    // Set at line spacing, so that the lines run on as one run of the page's lines.
    const items = [
      ...header(10, ["2025", "2024"]),
      ...statement(body, 24),
      item("The notes on pages 10 to 40 form part of these statements.", 80, 106, { size: 8 }),
      item("Statement of profit or loss", 80, 124, { size: 14, bold: true }),
      item("Note", 250, 140),
      ...header(140, ["2022", "2021"]).map((i) => ({ ...i, x0: i.x0 - 60, x1: i.x1 - 60 })),
      ...second,
      // The second statement's note column: notes on its items.
      item("4", 260, 168),
      item("5", 260, 182),
    ];
    const found = streamTables(items);
    expect(found.map((f) => f.table.cols)).toEqual([3, 4]);
    expect(found.flatMap((f) => [...f.items]).some((i) => i.text.startsWith("Statement of"))).toBe(false);
  });

  it("reads a label wrapped in its column with its values on its last line, a dash among them, as one row", () => {
    const rows: Line[] = [
      ...body.slice(0, 3),
      ["Assets classified as held for sale, net of", 1, null],
      ["impairment", 1, ["—", "61,115"]],
      ...body.slice(3),
    ];
    // The long label's first line ends in the room the right-aligned amounts leave on their left.
    const items = statement(rows, 24).map((i) => (i.text.startsWith("Assets") ? { ...i, x1: 325 } : i));
    const table = textGrid({ items: [...header(10, ["2025", "2024"]), ...items], kind: "stream" })!.table;
    expect(rowTexts(table)).toContainEqual(["Assets classified as held for sale, net of impairment", "—", "61,115"]);
    expect(table.cells.find((c) => c.lines.map(segmentText).join(" ").startsWith("Assets"))!.colSpan).toBe(1);
  });

  it("reads a label continued by a bracket opened in lower case as one row", () => {
    const rows: Line[] = [
      ...body.slice(0, 3),
      ["Royalties and licence fees paid to others", 1, ["412", "5,220"]],
      ["(including amounts due)", 1, null],
      ...body.slice(3),
    ];
    const table = textGrid({ items: [...header(10, ["2025", "2024"]), ...statement(rows, 24)], kind: "stream" })!.table;
    expect(rowTexts(table)).toContainEqual(["Royalties and licence fees paid to others (including amounts due)", "412", "5,220"]);
  });

  it("keeps one table over a section whose first item is wrapped over three lines with no values", () => {
    const rows: Line[] = [
      ...body.slice(0, 5),
      ["Equity", 0, null],
      ["Hedging reserve measured at fair", 1, null],
      ["value through other comprehensive", 1, null],
      ["income", 1, null],
      ["Land and buildings", 2, ["1,394", "9,557"]],
      ["Software", 2, ["8,793", "49,252"]],
      ["Total equity", 0, ["10,187", "58,809"]],
    ];
    const found = streamTables([...header(10, ["2025", "2024"]), ...statement(rows, 24)]);
    expect(found).toHaveLength(1);
    expect(found[0]!.table.cols).toBe(3);
  });

  it("reads labels at three indents, one of them used once, under a header label in a column the body leaves empty", () => {
    const rows: Line[] = [
      ["Plant and machinery", 2, ["81,325.3", "82,596.0"]],
      ["Work in progress", 2, ["5,376.3", "77,933.3"]],
      ["Share premium", 1, ["39,252.4", "—"]],
      ["Total equity", 0, ["125,954.0", "160,529.3"]],
      ["Balance at end of year", 0, ["346,074.2", "391,741.2"]],
    ];
    const items = [item("Note", 300, 10), ...header(10, ["2024", "2023"]), ...statement(rows, 24)];
    const found = streamTables(items);
    expect(found).toHaveLength(1);
    expect(found[0]!.items.size).toBe(items.length);
  });

  it("keeps a statement whole whose wide label column leaves a gutter no line crosses, a few labels wrapped in it", () => {
    // Fourteen rows: the labels end by 250, the amounts start at 330; three labels run over two lines.
    const rows: Line[] = Array.from({ length: 14 }, (_, r): Line[] =>
      r % 5 === 1
        ? [
            ["Purchase of property, plant and equipment, net", 1, null],
            ["of accumulated depreciation", 1, [`${r},751`, `${r}0,156`]],
          ]
        : [[`Item number ${r}`, 1, [`${r},422`, `${r}1,005`]]],
    ).flat();
    const items = statement(rows, 24).map((i) => (i.text.startsWith("Purchase") ? { ...i, x1: 250 } : i));
    const gutter = pageGutter(items, 600);
    const found = pageStreamTables(items, [], gutter);
    expect(found).toHaveLength(1);
    expect(found[0]!.items.size).toBe(items.length);
  });
});

describe("invoices printed from HTML: detail lines, address blocks over the items, a totals box", () => {
  // Line items as an invoice template sets them: a description at 60 (a detail line under some in
  // smaller type), a quantity right-aligned at 300, a price at 400, an amount at 500; rows 24 pt apart.
  type Item = [description: string, detail: string | null, qty: string, price: string, amount: string];
  const items = (rows: Item[], top: number): TextItem[] =>
    rows.flatMap(([description, detail, qty, price, amount], r) => {
      const base = top + 24 * r;
      return [
        item(description, 60, base),
        ...(detail ? [item(detail, 60, base + 10, { size: 8.5, x1: 60 + 4.2 * detail.length })] : []),
        right(qty, 300, base),
        right(price, 400, base),
        right(amount, 500, base),
      ];
    });
  const header = (top: number): TextItem[] => [
    item("Description", 60, top),
    right("Qty", 300, top),
    right("Price", 400, top),
    right("Amount", 500, top),
  ];
  const body: Item[] = [
    ["Harbour crane", "Serial: 29741", "12", "$146.15", "$1,753.80"],
    ["Quay fenders", null, "4", "$90.00", "$360.00"],
    ["Mooring lines", "Batch: 54556", "26", "$12.08", "$314.08"],
    ["Anchor chain", "Order: 74148", "3", "$1,933.31", "$5,799.93"],
  ];

  // A totals box: each label where `labelAt` puts it, its amount right-aligned at 500, 16 pt apart from `top`.
  const totals = (labelAt: (t: string) => number, top: number): TextItem[] =>
    [
      ["Subtotal", "$8,227.81"],
      ["VAT 20%", "$1,645.56"],
      ["Total due", "$9,873.37"],
    ].flatMap(([l, v], r) => [item(l!, labelAt(l!), top + 16 * r), right(v!, 500, top + 16 * r)]);

  it("joins a description's detail line in smaller type, the last row's too, to its cell", () => {
    const found = streamTables([...header(100), ...items(body, 124)]);
    expect(found).toHaveLength(1);
    const rows = rowTexts(found[0]!.table);
    expect(rows).toHaveLength(5);
    expect(rows[1]).toEqual(["Harbour crane Serial: 29741", "12", "$146.15", "$1,753.80"]);
    expect(rows[4]).toEqual(["Anchor chain Order: 74148", "3", "$1,933.31", "$5,799.93"]);
  });

  it("keeps a line in the same type under a label a row of its own", () => {
    const plain = items(body, 124).map((i) => (i.size === 8.5 ? { ...i, size: 10, x1: i.x0 + 5 * i.text.length } : i));
    const rows = rowTexts(streamTables([...header(100), ...plain])[0]!.table);
    expect(rows[1]).toEqual(["Harbour crane", "12", "$146.15", "$1,753.80"]);
    expect(rows[2]).toEqual(["Serial: 29741"]);
  });

  it("reads the address blocks one margin over the items apart from them, the items in their own columns", () => {
    // Seller and invoice number (a block of three columns), "Bill to" and "Ship to" side by side from x = 46, 28 pt over the
    // items' header (less than a run's widest row pitch, more than twice its usual one); the items
    // numbered right-aligned at 56, 9 pt left of their descriptions: the addresses cross that river.
    const addresses = [
      [item("Harbour Supplies Ltd", 46, 8), item("Invoice no.", 330, 8), item("INV-2026-0042", 400, 8)],
      [item("12 Quay Side", 46, 20), item("Date", 330, 20), item("4 Oct 2026", 400, 20)],
      [item("4540 Aarhus", 46, 32), item("Due date", 330, 32), item("3 Nov 2026", 400, 32)],
      [item("Bill to", 46, 52), item("Ship to", 200, 52)],
      [item("Dock Works B.V.", 46, 64), item("Pier Seven Oy", 200, 64)],
    ].flat();
    const numbered = [
      right("#", 56, 92),
      ...header(92),
      ...items(body, 116),
      ...body.map((_, r) => right(String(r + 1), 56, 116 + 24 * r)),
    ];
    const found = streamTables([...addresses, ...numbered]);
    const table = found.find((f) => f.table.cols === 5)!;
    expect(table).toBeDefined();
    expect(rowTexts(table.table)[0]).toEqual(["#", "Description", "Qty", "Price", "Amount"]);
    expect(rowTexts(table.table)[1]).toEqual(["1", "Harbour crane Serial: 29741", "12", "$146.15", "$1,753.80"]);
    expect([...table.items].some((i) => i.text === "Pier Seven Oy")).toBe(false);
  });

  it("reads a last page's totals as a box of their own under a repeated header and one row, the header's label starting where theirs do", () => {
    // The header's "Qty" set flush left in its cell at 270, over quantities right-aligned at 300;
    // the totals' labels flush left at 270 too, their amounts under the amounts.
    const lastPage = [
      item("Description", 60, 100),
      item("Qty", 270, 100),
      right("Price", 400, 100),
      right("Amount", 500, 100),
      ...items([["Anchor chain", "Order: 74148", "3", "$1,933.31", "$5,799.93"]], 124),
      ...totals(() => 270, 160),
    ];
    const found = streamTables(lastPage);
    expect(found.map((f) => f.table.cols)).toEqual([4, 2]);
    expect(rowTexts(found[1]!.table)[2]).toEqual(["Total due", "$9,873.37"]);
  });

  it("joins a detail line drawn a run a word (a label, then its number) to its description", () => {
    const split = items(body, 124).flatMap((i) => (i.size === 8.5 ? words(i.text, i.x0, i.base, { size: 8.5 }) : [i]));
    const found = streamTables([...header(100), ...split]);
    expect(found).toHaveLength(1);
    const rows = rowTexts(found[0]!.table);
    expect(rows).toHaveLength(5);
    expect(rows[1]).toEqual(["Harbour crane Serial: 29741", "12", "$146.15", "$1,753.80"]);
    expect(rows[4]).toEqual(["Anchor chain Order: 74148", "3", "$1,933.31", "$5,799.93"]);
  });

  it("reads addresses and a bank line drawn a run a word as phrases, not as cells over the items", () => {
    const addresses = [
      [item("Harbour Supplies Ltd", 46, 8), item("Invoice no.", 330, 8), item("INV-2026-0042", 400, 8)],
      [...words("12 Quay Side", 46, 20), item("Date", 330, 20), item("4 Oct 2026", 400, 20)],
      [...words("4540 Aarhus", 46, 32), item("Due date", 330, 32), item("3 Nov 2026", 400, 32)],
      [item("Bill to", 46, 52), item("Ship to", 200, 52)],
      [item("Dock Works B.V.", 46, 64), item("Pier Seven Oy", 200, 64)],
      [...words("7 Mill Lane", 46, 76), ...words("2073 Graz", 200, 76)],
    ].flat();
    const under = [
      ...words("IBAN GB29 8960 5758 2642 BIC NWBKGB2L", 46, 240),
      ...words("Payment terms: 30 days net, quote the invoice number", 46, 254),
    ];
    const found = streamTables([...addresses, ...header(110), ...items(body, 134), ...under]);
    const table = found.find((f) => f.table.cols === 4);
    expect(table).toBeDefined();
    expect(rowTexts(table!.table)[0]).toEqual(["Description", "Qty", "Price", "Amount"]);
    expect(rowTexts(table!.table)).toHaveLength(5);
    expect(found.some((f) => [...f.items].some((i) => i.text === "8960"))).toBe(false);
  });

  it("keeps apart the cells of a tight table a word space apart, the lines beside parted there too", () => {
    const rows = [
      ["Cash and cash equivalents", "150,453"],
      ["Receivables", "12,345"],
      ["Inventories", "88,120"],
      ["Prepaid expenses", "1,204"],
    ];
    // The longest label ends 2.5 pt (a word space, drawn as a move) before its amount, right-aligned at 160.
    const amount = (v: string, base: number): TextItem => ({ ...right(v, 160, base), spaceMove: true });
    const found = streamTables(rows.flatMap(([l, v], r) => [item(l!, 12, 100 + 14 * r), amount(v!, 100 + 14 * r)]));
    expect(found).toHaveLength(1);
    expect(rowTexts(found[0]!.table)).toEqual(rows);
  });

  it("reads the address blocks apart from the items when the run as one reads as many columns, other ones", () => {
    // "Bill to" and "Ship to" side by side at 46 and 200, one margin over the numbered items: over
    // the whole run their lines close the river between the items' numbers and descriptions, and
    // part the one between the descriptions and the quantities, so the run as one reads five
    // columns too; the addresses' own are none of the items'.
    const addresses = ["Bill to|Ship to", "Dock Works B.V.|Pier Seven Oy", "12 Quay Side|4 Mill Lane", "4540 Aarhus|2073 Graz"].flatMap(
      (l, r) => {
        const [a, b] = l.split("|");
        return [item(a!, 46, 8 + 12 * r), item(b!, 200, 8 + 12 * r)];
      },
    );
    const numbered = [right("#", 56, 72), ...header(72), ...items(body, 96), ...body.map((_, r) => right(String(r + 1), 56, 96 + 24 * r))];
    const found = streamTables([...addresses, ...numbered]);
    expect(found.map((f) => f.table.cols).sort()).toEqual([2, 5]);
    const table = found.find((f) => f.table.cols === 5)!;
    expect(rowTexts(table.table)[0]).toEqual(["#", "Description", "Qty", "Price", "Amount"]);
    expect([...table.items].some((i) => addresses.includes(i))).toBe(false);
  });

  it("reads a totals box under the amounts as a table of its own, totals set in the table's columns as its rows", () => {
    // A box of its own: labels flush left at 330, in no column of the items.
    const boxed = streamTables([...header(100), ...items(body, 124), ...totals(() => 330, 232)]);
    expect(boxed.map((f) => f.table.cols)).toEqual([4, 2]);
    expect(rowTexts(boxed[1]!.table)).toEqual([
      ["Subtotal", "$8,227.81"],
      ["VAT 20%", "$1,645.56"],
      ["Total due", "$9,873.37"],
    ]);
    // Labels right-aligned under the prices: rows of the items table.
    const inline = streamTables([...header(100), ...items(body, 124), ...totals((l) => 400 - 5 * l.length, 232)]);
    expect(inline).toHaveLength(1);
    const total = inline[0]!.table.cells.find((c) => c.lines.map(segmentText).join(" ") === "Total due")!;
    expect([total.row, total.col, total.colSpan]).toEqual([inline[0]!.table.rows - 1, 2, 1]);
  });
});

describe("reports generated by ReportLab: wrapped cells set bottom-aligned or centred, headers on two lines", () => {
  // A listing as ReportLab's Table sets it: a date at 40, a code at 110, a description at 180
  // wrapped at 410, an amount right-aligned at 520; 10 pt type at 12 pt leading, 6 pt of padding
  // between rows. `lead` lines of a description stand over the line holding the row's other cells
  // (VALIGN BOTTOM), or around it (MIDDLE: `mid`).
  const header = (top: number): TextItem[] => [
    item("Date", 40, top),
    item("Ref.", 110, top),
    item("Description", 180, top),
    right("Amount", 520, top),
  ];
  const row = (date: string, ref: string, description: string | null, amount: string, base: number): TextItem[] => [
    item(date, 40, base),
    item(ref, 110, base),
    ...(description ? [item(description, 180, base)] : []),
    right(amount, 520, base),
  ];
  const first = "Harbour crane hire with operator and rigging at"; // 47 characters: x1 = 415
  const second = "Mooring lines, fenders and pilot boat for the";
  it("joins a description's first lines over its row's line (bottom-aligned) to that row", () => {
    const found = streamTables([
      ...header(100),
      item(first, 180, 118),
      ...row("12 Mar 2026", "INV-20417", "berth seven", "$1,753.80", 130),
      ...row("14 Mar 2026", "CR-77120", "Quay fenders", "$360.00", 148),
      item(second, 180, 166),
      ...row("15 Mar 2026", "PO-41003", "night watch", "$314.08", 178),
    ]);
    expect(found).toHaveLength(1);
    expect(rowTexts(found[0]!.table)).toEqual([
      ["Date", "Ref.", "Description", "Amount"],
      ["12 Mar 2026", "INV-20417", `${first} berth seven`, "$1,753.80"],
      ["14 Mar 2026", "CR-77120", "Quay fenders", "$360.00"],
      ["15 Mar 2026", "PO-41003", `${second} night watch`, "$314.08"],
    ]);
  });

  it("joins a description's lines around its row's line (centred) to that row", () => {
    const found = streamTables([
      ...header(100),
      ...row("14 Mar 2026", "CR-77120", "Quay fenders", "$360.00", 118),
      item(first, 180, 136),
      ...row("12 Mar 2026", "INV-20417", null, "$1,753.80", 142),
      item("berth seven", 180, 148),
      ...row("15 Mar 2026", "PO-41003", "Night watch", "$314.08", 166),
    ]);
    expect(rowTexts(found[0]!.table)).toEqual([
      ["Date", "Ref.", "Description", "Amount"],
      ["14 Mar 2026", "CR-77120", "Quay fenders", "$360.00"],
      ["12 Mar 2026", "INV-20417", `${first} berth seven`, "$1,753.80"],
      ["15 Mar 2026", "PO-41003", "Night watch", "$314.08"],
    ]);
  });

  it("keeps a top-aligned cell's next line on its row, and a heading that stops short of its column's width a row of its own", () => {
    const found = streamTables([
      ...header(100),
      ...row("12 Mar 2026", "INV-20417", first, "$1,753.80", 118),
      item("berth seven", 180, 130),
      item("Outer harbour works", 180, 148),
      ...row("14 Mar 2026", "CR-77120", "quay fenders", "$360.00", 160),
    ]);
    expect(rowTexts(found[0]!.table)).toEqual([
      ["Date", "Ref.", "Description", "Amount"],
      ["12 Mar 2026", "INV-20417", `${first} berth seven`, "$1,753.80"],
      ["Outer harbour works"],
      ["14 Mar 2026", "CR-77120", "quay fenders", "$360.00"],
    ]);
  });

  it("takes a description's first line over the first row at a page's top into the table", () => {
    // The rest of a listing a page break cut: no header, the first row's description set
    // bottom-aligned, its first line the page's first line (a long line of words, as running text looks).
    const found = streamTables([
      item(first, 180, 60),
      ...row("12 Mar 2026", "INV-20417", "berth seven", "$1,753.80", 72),
      ...row("14 Mar 2026", "CR-77120", "Quay fenders", "$360.00", 90),
      ...row("15 Mar 2026", "PO-41003", "Night watch", "$314.08", 108),
    ]);
    expect(found).toHaveLength(1);
    expect(rowTexts(found[0]!.table)[0]).toEqual(["12 Mar 2026", "INV-20417", `${first} berth seven`, "$1,753.80"]);
  });

  it("joins a header's first line set over the header's line ('Gross' over 'margin') to it", () => {
    const rows = [0, 1, 2, 3].flatMap((r) => [
      item(["Rudder", "Dune indigo", "Pier", "Granite heron"][r]!, 40, 130 + 14 * r),
      right(["756.33", "4,802.57", "18.12", "1,864.80"][r]!, 300, 130 + 14 * r),
      right(["18,129", "55,323", "235,584", "88"][r]!, 400, 130 + 14 * r),
    ]);
    const found = streamTables([
      right("Gross", 300, 100),
      item("Branch", 40, 112),
      right("margin", 300, 112),
      right("Orders", 400, 112),
      ...rows,
    ]);
    expect(rowTexts(found[0]!.table).slice(0, 2)).toEqual([
      ["Branch", "Gross margin", "Orders"],
      ["Rudder", "756.33", "18,129"],
    ]);
  });
});

describe("leader dots in table finding (leaders.ts)", () => {
  it("takes the leader off a run's end or start, its words' extent estimated; a leader alone is nothing", () => {
    const led = withoutLeader(item("Intangible assets......", 0, 50, { x1: 200 }))!;
    expect(led.text).toBe("Intangible assets");
    expect(led.led).toBe(true);
    expect(led.x0).toBe(0);
    expect(led.x1).toBeCloseTo(200 - 6 * 0.27 * 10);
    const value = withoutLeader(item("........ 12", 100, 50, { x1: 140 }))!;
    expect(value.text).toBe("12");
    expect(value.x0).toBeCloseTo(100 + (8 * 0.27 + 0.25) * 10);
    expect(withoutLeader(item("..........", 0, 50))).toBeNull();
    for (const kept of ["e.g. the", "y1, . . . , yn", "Total . . . . . 12", "U.S.A."]) {
      const i = item(kept, 0, 50);
      expect(withoutLeader(i)).toBe(i);
    }
  });

  it("drops the two or three dots a short leader leaves at a label's end, in a column of led labels; a sentence's period stays", () => {
    expect(withoutShortLeader("Assets classified as held for sale..")).toBe("Assets classified as held for sale");
    expect(withoutShortLeader("Trade and other receivables...")).toBe("Trade and other receivables");
    expect(withoutShortLeader("(including amounts due from related parties). .")).toBe("(including amounts due from related parties)");
    for (const kept of ["INOP marker removal.", "U.S.", "...", "Total"]) expect(withoutShortLeader(kept)).toBe(kept);
  });

  it("reads a label wrapped onto a second line, its leader running to the cell's end, as one cell beside its values", () => {
    // A statement: labels led to their values by dots; one label wrapped, its values at its foot.
    const size = 10;
    const rows: [string[], string, string][] = [
      [["Inventories......................"], "87,731", "18,089"],
      [["Contract assets, net of accumulated", "impairment losses................"], "1,756", "88,126"],
      [["Trade receivables................."], "35,460", "12,001"],
      [["Current tax assets................"], "19,918", "65,982"],
    ];
    const items: TextItem[] = [];
    let base = 100;
    for (const [label, a, b] of rows) {
      for (const [k, text] of label.entries()) {
        // The leader (the last line's) runs to 300; a wrapped first line ends where its words do.
        const x1 = k === label.length - 1 ? 300 : 20 + 5 * text.length;
        items.push(item(text, 20, base + 12 * k, { x1, size }));
      }
      base += 12 * (label.length - 1);
      items.push(right(a, 400, base), right(b, 480, base));
      base += 14;
    }
    const read = (found: ReturnType<typeof streamTables>): string[] => (found[0] ? rowTexts(found[0].table).map((r) => r.join("|")) : []);
    // From the runs as drawn, the wrapped label's first line (short of the others' leaders) was a row of its own.
    expect(read(streamTables(items.map((i) => withoutLeader(i)!)))).toEqual([
      "Inventories|87,731|18,089",
      "Contract assets, net of accumulated impairment losses|1,756|88,126",
      "Trade receivables|35,460|12,001",
      "Current tax assets|19,918|65,982",
    ]);
  });
});

describe("leaders drawn as runs of their own (leaders.ts leaderless)", () => {
  it("leaves out a leader between a label and its value, keeps one that starts its line as a stub, and maps every run back", () => {
    const label = item("Inventories", 20, 100, { x1: 75 });
    const between = item("..............", 77, 100, { x1: 300 });
    const wrappedLabel = item("Employee benefits expense", 20, 112, { x1: 300 });
    const wrapped = item("................................................", 20, 124, { x1: 300 });
    const values = [right("87,731", 400, 100), right("10,935", 400, 124)];
    const { items, drawn, leaders } = leaderless([label, between, wrappedLabel, wrapped, ...values]);
    expect(leaders).toEqual([between]);
    const stub = items.find((i) => i.base === 124 && i.x0 === 20)!;
    expect(stub.x1).toBeLessThan(40);
    expect(drawn.get(stub)).toBe(wrapped);
    // Read as a table, the wrapped label's leader line carries its values.
    const found = streamTables([...items, right("Total", 60, 136), right("98,666", 400, 136)]);
    expect(found[0] && rowTexts(found[0].table).map((r) => r.join("|"))).toEqual([
      "Inventories|87,731",
      "Employee benefits expense ................................................|10,935",
      "Total|98,666",
    ]);
  });
});

describe("two statements one over the other, in the same columns", () => {
  it("parts them at the second's title when its header repeats the first's; a region's heading inside one table parts nothing", () => {
    const statement = (top: number, labels: string[]): TextItem[] => [
      item("Note", 250, top),
      right("2020", 360, top),
      right("2019", 460, top),
      ...labels.flatMap((label, k) => [
        item(label, 20, top + 14 * (k + 1)),
        right(`${k + 1},204`, 360, top + 14 * (k + 1)),
        right(`${k + 3},118`, 460, top + 14 * (k + 1)),
      ]),
    ];
    const title = (text: string, base: number): TextItem => item(text, 20, base, { size: 14, bold: true });
    const first = statement(100, ["Inventories", "Contract assets", "Current tax assets"]);
    const second = statement(225, ["Receipts from customers", "Interest paid", "Interest received"]);
    const between = [
      item("The notes on pages 10 to 40 form part of these statements.", 20, 160, { size: 8 }),
      title("Statement of cash flows", 185),
      item("For the year ended 31 December", 20, 202),
    ];
    const shapes = (found: ReturnType<typeof streamTables>): number[][] => found.map((f) => [f.table.rows, f.table.cols]);
    expect(shapes(streamTables([...first, ...between, ...second]))).toEqual([
      [4, 3],
      [4, 3],
    ]);
    // Without a header of its own under the heading, the rows go on: a region of one table.
    const region = statement(225, ["Receipts from customers", "Interest paid", "Interest received"]).slice(3);
    expect(shapes(streamTables([...first, title("Cash flows", 185), ...region]))).toEqual([[8, 3]]);
    // 12 pt over 10 pt, the sizes come back rounded (the page printed again through a scaled
    // matrix: 11.98 over 9.99): still a heading, alone between the two.
    const rounded = (items: TextItem[], size: number): TextItem[] => items.map((i) => ({ ...i, size }));
    const next = statement(170, ["Receipts from customers", "Interest paid", "Interest received"]);
    const scaled = [...rounded(first, 9.99), { ...title("Statement of cash flows", 156), size: 11.98 }, ...rounded(next, 9.99)];
    expect(shapes(streamTables(scaled))).toEqual([
      [4, 3],
      [4, 3],
    ]);
  });
});

describe("a statement's Note column, filled on one row only", () => {
  it("keeps the Note column apart from the first year's, among many rows crossing its river", () => {
    // statement-007's geometry: "Note" left of the years over a column that holds one "4"; the
    // rows are many, so a line or two may cross a river (CROSSING): the Note line and the "4" line
    // did, the river ran from the labels to the amounts, and "Note 2021" and "4 24,085.0" were read
    // as one cell each. The header line holds "Note" and years: a header, not the first row.
    const t = { size: 8 };
    const at = (text: string, x0: number, x1: number, base: number): TextItem => item(text, x0, base, { ...t, x1 });
    const header = [at("Note", 241, 256.9, 131.8), at("2021", 310.4, 326.4, 131.8), at("2020", 374.3, 390.3, 131.8)];
    const units = [at("£'000", 308.2, 326.4, 144.5), at("£'000", 372, 390.2, 144.5)];
    const labels = Array.from({ length: 18 }, (_, r) => `Line item number ${r + 1}`);
    const body = labels.flatMap((label, r) => {
      const base = 170 + 12.6 * r;
      const note = r === 9 ? [at("4", 247, 251, base)] : [];
      return [
        at(label, 89.5, 89.5 + 4 * label.length, base),
        ...note,
        at("24,085.0", 298.4, 326.4, base),
        at("(5,098.3)", 358.3, 390.3, base),
      ];
    });
    const found = streamTables([...header, ...units, ...body]);
    expect(found).toHaveLength(1);
    const rows = rowTexts(found[0]!.table);
    expect(rows[0]).toEqual(["Note", "2021", "2020"]);
    expect(found[0]!.table.cols).toBe(4);
    const row = found[0]!.table.cells.filter((c) => c.lines.some((l) => segmentText(l) === "4"));
    expect(row.map((c) => c.col)).toEqual([1]);
    expect(rows.find((r) => r[0] === "Line item number 10")).toEqual(["Line item number 10", "4", "24,085.0", "(5,098.3)"]);
  });
});

describe("a right-to-left Word table's group header and wrapped cells", () => {
  const t = { size: 8 };
  const at = (text: string, x0: number, x1: number, base: number): TextItem => item(text, x0, base, { ...t, x1 });

  it("reads a header centred on two cells whose labels keep to other sides of them as spanning both", () => {
    // report-024's second table: "منارة كوارتز" centred on the two value columns' cells; under it
    // "ميناء" sits at the left of its cell (its values at the right), "مرج" over its values. Read as
    // a header line of its own, the group closed the river between the two columns' labels.
    const items = [
      at("منارة كوارتز", 357.5, 404.9, 389),
      at("مرج", 335.8, 351.4, 401.7),
      at("ميناء", 393.2, 411.7, 401.7),
      at("بوصلة", 490.4, 514.3, 401.7),
      ...[
        ["5.0%", "20.5%", "مرساة فسيفساء", 459.5],
        ["99.9%", "31.3%", "زعفران", 489.1],
        ["98.5%", "31.7%", "شعير", 496.9],
      ].flatMap(([a, b, label, x], r) => [
        at(a as string, 359.6 - 4 * (a as string).length, 359.6, 411.4 + 9.2 * r),
        at(b as string, 413.9, 434.6, 411.4 + 9.2 * r),
        at(label as string, x as number, 514.2, 411.4 + 9.2 * r),
      ]),
    ];
    const found = streamTables(items);
    expect(found).toHaveLength(1);
    const table = orientTable(found[0]!.table);
    expect(rowTexts(table).slice(1)).toEqual([
      ["بوصلة", "ميناء", "مرج"],
      ["مرساة فسيفساء", "20.5%", "5.0%"],
      ["زعفران", "31.3%", "99.9%"],
      ["شعير", "31.7%", "98.5%"],
    ]);
    expect(table.cells.find((c) => c.row === 0)).toMatchObject({ col: 1, colSpan: 2 });
  });

  it("takes the last row's wrapped line, set flush right in its cell, into the table", () => {
    // report-024's first table ends with a row whose text cell wraps: its second line is longer
    // than the first and ends at the cell's right edge, reaching left past the first line's start.
    const row = (base: number, text: string, x0: number): TextItem[] => [
      at("11,466", 262.6, 284.6, base),
      at(text, x0, 401.1, base),
      at("1,987,786", 430.2, 462.2, base),
      at("10,472.57", 500.7, 532.7, base),
      at("مرساة", 590.4, 612.4, base),
    ];
    const items = [
      ...row(243.5, "منارة فلفل جرانيت", 317.2),
      ...row(271.1, "بوصلة منارة كوارتز", 298),
      ...row(289.5, "بستان بوصلة جرانيت فانوس", 308.4),
      at("مخمل كوبالت كثبان محار كثبان", 300.4, 401, 298.7),
    ];
    const found = streamTables(items);
    expect(found).toHaveLength(1);
    const last = rowTexts(orientTable(found[0]!.table)).at(-1);
    expect(last).toEqual(["مرساة", "10,472.57", "1,987,786", "بستان بوصلة جرانيت فانوس مخمل كوبالت كثبان محار كثبان", "11,466"]);
  });
});

describe("a line's runs in reading order (bidi.ts readingOrder)", () => {
  it("reads a right-to-left phrase drawn word by word from its right end, numbers and Latin in it left to right", () => {
    // cairo draws "بستان كثبان" as two runs, "كثبان" left of "بستان"; pdfjs reads each word right.
    expect(segmentText(segmentOf([item("كثبان", 503.9, 77.8), item("بستان", 523.2, 77.8)]))).toBe("بستان كثبان");
    // A number and a Latin word inside a right-to-left line keep their own order.
    const mixed = [item("ZX-12", 100, 50), item("2024", 140, 50), item("سديم", 170, 50), item("محار", 200, 50)];
    expect(readingOrder(mixed).map((i) => i.text)).toEqual(["محار", "سديم", "ZX-12", "2024"]);
    // A right-to-left word inside a left-to-right line is read where it stands; Latin lines stay.
    const latin = [item("Total assets", 100, 50), item("مرج", 170, 50), item("ميناء", 190, 50), item("2024", 220, 50)];
    expect(readingOrder(latin).map((i) => i.text)).toEqual(["Total assets", "ميناء", "مرج", "2024"]);
    const plain = [item("Net", 100, 50), item("assets", 120, 50)];
    expect(readingOrder(plain)).toBe(plain);
    // A run holding both directions was ordered by pdfjs: the line stays as drawn (a PDF whose
    // cmap gives "habibi حَبيبي" one run, its glyphs' other reading "ϲΒϴΒ ˴" the next).
    const mixed2 = [item("habibi حَبيبي", 62, 73), item("ϲΒϴΒ ˴", 100, 73), item(" حَبيبي", 119, 73)];
    expect(readingOrder(mixed2)).toBe(mixed2);
    expect(segmentText(segmentOf(mixed2))).toBe("habibi حَبيبي ϲΒϴΒ ˴ حَبيبي");
    // A word drawn in two touching runs reads right to left only when both are right-to-left letters.
    expect(wordOrder([item("بان", 100, 50), item("كث", 115, 50)]).map((i) => i.text)).toEqual(["كث", "بان"]);
    expect(wordOrder([item("ϲΒϴΒ", 100, 50), item("حَبيبي", 120, 50)]).map((i) => i.text)).toEqual(["ϲΒϴΒ", "حَبيبي"]);
  });
});

describe("a spreadsheet's group label a row over its header", () => {
  it("heads the columns under it when it stands as far over the header as the rows stand apart", () => {
    // sheet-002's geometry: rows 15 pt apart in 8 pt type (1.9 font sizes, past a cell's line
    // spacing); "Marble 2020" centred over the Code and Variance columns one row over the header.
    const t = { size: 7.99 };
    const at = (text: string, x0: number, x1: number, base: number): TextItem => item(text, x0, base, { ...t, x1 });
    const rows = [
      ["Fjord barley", "001943", "(5,434)"],
      ["Thistle marble", "004636", "53,600"],
      ["Beacon pier", "007035", "(30,008)"],
      ["Grove", "KT-9060", "(654)"],
    ];
    const items = [
      at("Marble 2020", 187.31, 231.5, 62.19),
      at("Station", 51.39, 76.69, 77.19),
      at("Code", 144.11, 161.4, 77.19),
      at("Variance", 219.29, 251.36, 77.19),
      ...rows.flatMap(([label, code, value], r) => [
        at(label!, 51.39, 51.39 + 4 * label!.length, 92.21 + 15 * r),
        at(code!, 144.11, 144.11 + 4 * code!.length, 92.21 + 15 * r),
        at(value!, 274.8 - 4 * value!.length, 274.8, 92.21 + 15 * r),
      ]),
    ];
    const found = streamTables(items);
    expect(found).toHaveLength(1);
    const table = found[0]!.table;
    expect(rowTexts(table).slice(1)).toEqual([["Station", "Code", "Variance"], ...rows]);
    expect(table.cells.find((c) => c.row === 0)).toMatchObject({ col: 1, colSpan: 2 });
  });
});

describe("a listing continued over pages under its running head, borders and header", () => {
  // A listing's part: Acct | Name | Amount, its first row `top` down an 800-point page.
  const part = (rows: string[][], top: number): Table =>
    buildTable(
      "stream",
      rows.flatMap((r, ri) =>
        r.map((text, col): CellDraft => ({
          row: ri,
          col,
          rowSpan: 1,
          colSpan: 1,
          items: [item(text, [4, 104, 304][col]!, top + 14 * ri)],
        })),
      ),
      [0, 100, 300, 400],
      { x0: 0, x1: 400, top: top - 10, bottom: top + 14 * rows.length },
    );
  const HEADER = ["Acct", "Name", "Amount"];
  const text = (y: number, ...runs: [string, number][]): Block => paragraphOf([segmentOf(runs.map(([t, x]) => item(t, x, y)))]);
  const first = (): Table => part([HEADER, ...Array.from({ length: 40 }, (_, k) => [String(1000 + k), `Item ${k}`, `${k},000.00`])], 160);

  it("looks past a running head over the first table below the margin band, repeated page to page", () => {
    // Three lines of head down to 150 of 800 (the band is the top 80): a listing's small type.
    const head = (n: number): Block[] => [
      text(110, ["ACME CORP", 4], ["TRIAL BALANCE", 200], [`PAGE ${n}`, 360]),
      text(124, ["RPT0042", 4], ["PERIOD 11/2026", 200]),
      text(138, ["Currency: USD", 200], ["TIME 23:41", 360]),
    ];
    const open = first();
    const pages = [
      page(1, [...head(1), tableBlock(open)]),
      page(2, [...head(2), tableBlock(part([HEADER, ["2000", "Rest", "1.00"]], 160))]),
    ];
    joinContinuedTables(pages);
    expect(pages[1]!.continued).toBe(true);
    expect(rowTexts(open).at(-1)).toEqual(["2000", "Rest", "1.00"]);
    expect(rowTexts(open).filter((r) => r[0] === "Acct")).toHaveLength(1);
  });

  it("looks past an ASCII table's border over its part on the next page", () => {
    const border = (y: number): Block => text(y, ["+------------+------------------+------------+", 0]);
    const open = first();
    // Below the margin band, and the first page's border stands elsewhere: no running head.
    const pages = [
      page(1, [border(148), tableBlock(open), border(740)]),
      page(2, [border(98), tableBlock(part([HEADER, ["2000", "Rest", "1.00"]], 110))]),
    ];
    joinContinuedTables(pages);
    expect(pages[1]!.continued).toBe(true);
    expect(rowTexts(open).at(-1)).toEqual(["2000", "Rest", "1.00"]);
  });

  it("takes a header read as a table of its own over the rest (a rule between them) for the header repeated", () => {
    // The page's header lines alone, their few words parted into other columns: "Acct Name" | "Amount".
    const alone = buildTable(
      "stream",
      [
        { row: 0, col: 0, rowSpan: 1, colSpan: 1, items: [item("Acct", 4, 60), item("Name", 104, 60)] },
        { row: 0, col: 1, rowSpan: 1, colSpan: 1, items: [item("Amount", 304, 60)] },
      ],
      [0, 250, 400],
      { x0: 0, x1: 400, top: 50, bottom: 64 },
    );
    const open = first();
    const rest = part(
      [
        ["2000", "Rest", "1.00"],
        ["2001", "More", "2.00"],
      ],
      100,
    );
    const pages = [page(1, [tableBlock(open)]), page(2, [tableBlock(alone), tableBlock(rest)])];
    joinContinuedTables(pages);
    expect(pages[1]!.continued).toBe(true);
    expect(pages[1]!.blocks).toHaveLength(0);
    expect(rowTexts(open).slice(-2)).toEqual([
      ["2000", "Rest", "1.00"],
      ["2001", "More", "2.00"],
    ]);
  });
});
