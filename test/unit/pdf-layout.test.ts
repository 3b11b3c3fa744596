/**
 * The pure parts of PDF layout analysis (runner/pdf-layout), on hand-made text items and rules:
 * line grouping, reading order across columns, paragraph text, cell typing, lattice grids and
 * stream columns.
 */
import { describe, expect, it } from "vitest";
import { buildBlocks, readingOrder, type Box, type TextBlock } from "../../runner/pdf-layout/blocks.ts";
import { typeCell } from "../../runner/pdf-layout/cells.ts";
import { buildGrid, gridCells } from "../../runner/pdf-layout/lattice.ts";
import { groupLines, pageSegments, segmentText, splitLine } from "../../runner/pdf-layout/lines.ts";
import { blockParagraphs, paragraphText } from "../../runner/pdf-layout/paragraphs.ts";
import { mergeComplementary, projectColumns, streamTable } from "../../runner/pdf-layout/stream.ts";
import type { TextItem } from "../../runner/pdf-layout/types.ts";

/** A text item of `text` at x, baseline `base`, 12 pt, 6 pt per character. */
function item(text: string, x: number, base: number, extra: Partial<TextItem> = {}): TextItem {
  return { text, x0: x, x1: x + 6 * text.length, base, size: 12, font: "Serif", bold: false, italic: false, mcid: null, opaque: false, ...extra };
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
    const items = [item("the quick brown fox jumps over the exam-", 0, 10), item("ple of a lazy dog which ends here.", 0, 24), item("A second paragraph starts.", 0, 38)];
    const [block] = buildBlocks(pageSegments(items).flat());
    const paras = blockParagraphs(block!, { x0: 0, x1: 240, top: 0, bottom: 100 }, 0);
    expect(paras.map(paragraphText)).toEqual(["the quick brown fox jumps over the example of a lazy dog which ends here.", "A second paragraph starts."]);
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
    ["percentage", "12.5%", 0.125, "0.0%"],
    ["currency prefix", "$1,234.50", 1234.5, '"$"#,##0.00'],
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
    ["03/15/24", "2024-03-15", "mm/dd/yy"],
    ["15/03/2024", "2024-03-15", "dd/mm/yyyy"],
    ["15.03.2024", "2024-03-15", "dd.mm.yyyy"],
    ["15 Mar 2024", "2024-03-15", "d mmm yyyy"],
    ["March 15, 2024", "2024-03-15", "mmmm d, yyyy"],
  ])("reads the date %s as a date cell", (text, iso, numFmt) => {
    const typed = typeCell(text);
    expect(typed.value).toBeInstanceOf(Date);
    expect((typed.value as Date).toISOString().slice(0, 10)).toBe(iso);
    expect("numFmt" in typed && typed.numFmt).toBe(numFmt);
  });

  it("does not take an impossible date for one", () => {
    expect(typeCell("2024-02-30").value).toBe("2024-02-30");
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
});

describe("stream columns", () => {
  it("keeps a left-aligned header over right-aligned numbers in one column", () => {
    const rows = [
      [item("Region", 0, 10), item("Units", 100, 10)],
      [item("North", 0, 24), item("17", 150, 24)],
      [item("South", 0, 38), item("42", 150, 38)],
    ].map((r) => splitLine(r));
    expect(projectColumns(rows)).toHaveLength(3);
    expect(mergeComplementary(rows, projectColumns(rows))).toHaveLength(2);
    const table = streamTable(rows)!;
    expect([table.rows, table.cols]).toEqual([3, 2]);
  });

  it("refuses two columns of prose", () => {
    const rows = [0, 1, 2].map((i) => splitLine([item("several words of running text here", 0, 10 + 14 * i), item("and more words of text over there", 300, 10 + 14 * i)]));
    expect(streamTable(rows)).toBeNull();
  });
});
