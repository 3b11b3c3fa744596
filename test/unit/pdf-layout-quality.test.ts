/**
 * The yardsticks of issue #13 (test/helpers): what a workbook cell shows through its number
 * format, word recall against independent extractors, and exact cells of truth tables. A measure
 * that cannot tell right from wrong would make every figure meaningless: each is checked here on
 * cases whose answer is known.
 */
import { describe, expect, it } from "vitest";
import { byClass, cellAgrees, normText, scoreTable, typeTruth, type OutCell, type TruthTable } from "../helpers/table-truth.ts";
import { bboxText, recallTokens, stextText, textRecall } from "../helpers/text-recall.ts";
import { displayText } from "../helpers/xlsx-display.ts";

describe("what a cell shows", () => {
  it.each([
    [1234.5, "#,##0.00", "1,234.50"],
    [-1234, "#,##0;(#,##0)", "(1,234)"],
    [0.125, "0.0%", "12.5%"],
    [0.61, '"$"#,##0.00', "$0.61"],
    [-12.5, '"€"#,##0.00;("€"#,##0.00)', "(€12.50)"],
    [0, '#,##0.00;(#,##0.00);"-"', "-"],
    [1e-5, "0.00E+00", "1.00E-05"],
    [3e-5, "0E-0", "3E-5"],
    [2e4, "0E-0", "2E4"],
    [1.5e10, "0.00E+0", "1.50E+10"],
    [0.1 + 0.2, undefined, "0.3"],
    [new Date(Date.UTC(2016, 3, 1)), "dd-mmm-yy", "01-Apr-16"],
    [new Date(Date.UTC(2019, 4, 3)), "m/d/yyyy", "5/3/2019"],
    [new Date(Date.UTC(2024, 2, 15)), "mmmm d, yyyy", "March 15, 2024"],
    [new Date(Date.UTC(2024, 2, 15, 14, 5)), "yyyy-mm-dd hh:mm", "2024-03-15 14:05"],
  ] as const)("%s through %s shows %s", (value, fmt, shown) => {
    expect(displayText(value, fmt)).toBe(shown);
  });
});

describe("word recall", () => {
  it("counts each script's words: CJK characters one by one, ligatures and full-width forms unfolded", () => {
    expect(recallTokens("Ofﬁce ＜２０＞ 股票代码 R²")).toEqual(["office", "20", "股", "票", "代", "码", "r2"]);
  });

  it("finds a word hyphenated at a line end either whole or in halves", () => {
    expect(textRecall("a well-\nknown fact", "a wellknown fact").recall).toBe(1);
    expect(textRecall("a well-\nknown fact", "a well- known fact").recall).toBe(1);
  });

  it("takes a soft hyphen inside a line for no break, and at a line end for a hyphenated break", () => {
    expect(recallTokens("hyper\u00adkaliémique (type 4)")).toEqual(["hyperkaliemique", "type", "4"]);
    expect(textRecall("diabète phospho\u00ad\ngluco-aminé", "diabète phosphogluco-aminé").recall).toBe(1);
    expect(textRecall("hyper\u00adkaliémique", "hyper kaliémique").recall).toBe(0);
  });

  it("reads a letter with a TeX accent alike wherever an extractor puts the accent, and nothing else alike", () => {
    // poppler puts the tilde after the letter, MuPDF before it, a converter on it.
    expect(textRecall("mit γ˜1 (0) = ã", "mit γ̃1(0) = ˜a", "mit ˜γ1(0) = ˜a").recall).toBe(1);
    expect(textRecall("mit γ˜1 (0) = ã", "mit γ(0) = a").recall).toBeLessThan(1);
  });

  it("reads MuPDF's structured text with each glyph once: an overprinted copy is one glyph, the same text elsewhere is not", () => {
    const char = (c: string, x: number, y: number): string => `<char quad="" x="${x}" y="${y}" color="#000000" c="${c}"/>`;
    const line = (chars: string[]): string => `<line bbox="" wmode="0" dir="1 0"><font name="F" size="18">${chars.join("")}</font></line>`;
    const word = (text: string, x: number, y: number): string[] => [...text].map((c, i) => char(c, x + 18 * i, y));
    const xml = `<document><page id="page1"><block bbox="">${[
      line(word("股票", 225.12, 543)),
      // Fake bold: the same glyphs a quarter point off, filed by MuPDF as a line of their own.
      line(word("股票", 225.36, 543.24)),
      line([...word("AB", 100, 600), char(" ", 136, 600), ...word("AB", 146, 600)]),
    ].join("")}</block></page></document>`;
    expect(stextText(xml).split("\n")).toEqual(["股票", "", "AB AB", ""]);
  });

  it("reads pdftotext's word boxes with a word drawn again at its place once, and the same word elsewhere twice", () => {
    const word = (text: string, x: number, y: number): string =>
      `<word xMin="${x}" yMin="${y}" xMax="${x + 90}" yMax="${y + 4.59}">${text}</word>`;
    const line = (...words: string[]): string => `<line xMin="0" yMin="0" xMax="0" yMax="0">${words.join("")}</line>`;
    // issue-842's cover: the label drawn four times a quarter point apart, poppler filing one copy
    // as a word of its own (without the colon); and the same label further down the page.
    const page = (...lines: string[]): string => `<page width="595" height="842"><flow><block>${lines.join("")}</block></flow></page>`;
    const xhtml = `<doc>${page(
      line(word("股票代码：", 225.12, 538.94)),
      line(word("股票代码", 225.12, 539.18), word("300218", 315.6, 538.94)),
      line(word("股票代码", 225.12, 600)),
    )}${page(line(word("股票代码", 225.12, 539.18)))}</doc>`;
    expect(bboxText(xhtml).split("\n")).toEqual(["股票代码：", "300218", "股票代码", "股票代码"]);
  });

  it("finds a word an extractor read backwards (right-to-left script in visual order)", () => {
    expect(textRecall("habibi يبيبَح", "habibi حَبيبي").recall).toBe(1);
  });

  it("does not forgive two words glued or one split (a split at punctuation is for exact cells to catch)", () => {
    expect(textRecall("info value", "infovalue").recall).toBe(0);
    expect(textRecall("total 110626", "total 1106 26").recall).toBe(0.5);
  });

  it("finds a word both readers glue across a clip, named for its file, as its two halves side by side only", () => {
    const glued = ["20161074935"];
    expect(textRecall("dated 20161074935 0 Dr", "dated 2016 1074935 0 Dr", undefined, glued).recall).toBe(1);
    // Not apart, not for another word, and not without the file's list.
    expect(textRecall("dated 20161074935 0 Dr", "2016 dated 1074935 0 Dr", undefined, glued).recall).toBe(0.75);
    expect(textRecall("total 110626", "total 1106 26", undefined, glued).recall).toBe(0.5);
    expect(textRecall("dated 20161074935 0 Dr", "dated 2016 1074935 0 Dr").recall).toBe(0.75);
  });

  it("with a second extractor, counts only the words both read", () => {
    // poppler reads TeX's prime as "0"; MuPDF reads ′: the "0" is no evidence either way.
    const r = textRecall("Seien (U 0 , ϕ0 )", "Seien (U′, ϕ′)", "Seien (U′, ϕ′)");
    expect(r).toMatchObject({ recall: 1, total: 2 });
    expect(textRecall("Seien (U 0 , ϕ0 )", "Seien (U′, ϕ′)").recall).toBeLessThan(1);
  });
});

describe("exact cells", () => {
  const cell = (
    display: string,
    value: number | string = display,
    type: OutCell["type"] = typeof value === "number" ? "number" : "text",
  ): OutCell => ({
    type,
    value,
    display,
  });

  it("types truth text independently: grouped numbers, parentheses, currency, percent, dates, identifiers", () => {
    expect(typeTruth("98 452")).toMatchObject({ kind: "number", value: 98452 });
    expect(typeTruth("(1,234)")).toMatchObject({ kind: "number", value: -1234 });
    expect(typeTruth("27.083.460")).toMatchObject({ kind: "number", value: 27083460 });
    expect(typeTruth("$ 10.000,00")).toMatchObject({ kind: "number", value: 10000 });
    expect(typeTruth("2\u202f238,77 €")).toMatchObject({ kind: "number", value: 2238.77 });
    expect(typeTruth("1 136,33 kr")).toMatchObject({ kind: "number", value: 1136.33 });
    expect(typeTruth("(39 023,33 zł)")).toMatchObject({ kind: "number", value: -39023.33 });
    expect(typeTruth("R$ 1.234,56")).toMatchObject({ kind: "number", value: 1234.56 });
    expect(typeTruth("(3,5 %)")).toMatchObject({ kind: "number", value: -0.035 });
    expect(typeTruth("1,234.56-")).toMatchObject({ kind: "number", value: -1234.56 });
    expect(typeTruth("1.234,56-")).toMatchObject({ kind: "number", value: -1234.56 });
    expect(typeTruth("2019-")).toMatchObject({ kind: "text" });
    expect(typeTruth("3e-5")).toMatchObject({ kind: "number", value: 3e-5 });
    expect(typeTruth("−1.5E+10")).toMatchObject({ kind: "number", value: -1.5e10 });
    expect(typeTruth("e-5")).toMatchObject({ kind: "text" });
    // One "." group is the English decimal point, as before.
    expect(typeTruth("1.234")).toMatchObject({ kind: "number", value: 1.234 });
    expect(typeTruth("$ 0.61")).toMatchObject({ kind: "number", value: 0.61 });
    expect(typeTruth("12.5%")).toMatchObject({ kind: "number", value: 0.125 });
    expect(typeTruth("01-Apr-16")).toMatchObject({ kind: "date", value: "2016-04-01" });
    expect(typeTruth("0085648100300")).toMatchObject({ kind: "text" });
    // A sign or code after the digits (European invoices), Swiss apostrophes; other capitals stay text.
    expect(typeTruth("1.418,86 €")).toMatchObject({ kind: "number", value: 1418.86 });
    expect(typeTruth("-12,50 €")).toMatchObject({ kind: "number", value: -12.5 });
    expect(typeTruth("CHF 1'234.50")).toMatchObject({ kind: "number", value: 1234.5 });
    expect(typeTruth("12.50 EUR")).toMatchObject({ kind: "number", value: 12.5 });
    expect(typeTruth("ABN 48 123 123 124")).toMatchObject({ kind: "text" });
  });

  it("agrees on value for numbers and dates, on shown text for the rest; typed asks for the cell type", () => {
    expect(cellAgrees(typeTruth("1,234.50"), cell("1,234.50", 1234.5), true)).toBe(true);
    // A number written with a decimal comma is the same value, whatever the locale shows it as…
    expect(cellAgrees(typeTruth("1.234,50"), cell("1,234.50", 1234.5), true)).toBe(true);
    // …and a misread one is not ("1.234,50" read as 1.2345).
    expect(cellAgrees(typeTruth("1.234,50"), cell("1.2345", 1.2345), true)).toBe(false);
    expect(cellAgrees(typeTruth("1,234.50"), cell("1,234.50"), true)).toBe(false);
    expect(cellAgrees(typeTruth("1,234.50"), cell("1,234.50"), false)).toBe(true);
    expect(normText("以公允价值计量 当期损益")).toBe("以公允价值计量当期损益");
    expect(normText("main- d’œuvre")).toBe("main-d’œuvre");
  });

  it("finds a table wherever it sits across sheets, and counts only the truth's non-empty cells", () => {
    const truth = [
      ["Region", "Units"],
      ["North", "17"],
      ["", "42"],
    ];
    const title: (OutCell | undefined)[][] = [[cell("Report")]];
    const body: (OutCell | undefined)[][] = [
      [undefined, cell("Region"), cell("Units")],
      [undefined, cell("North"), cell("17", 17)],
      [undefined, cell("South"), cell("42", 42)],
    ];
    expect(scoreTable(truth, [title, body])).toEqual({ cells: 5, exact: 1, exactText: 1 });
    const shifted = body.map((r, i) => (i === 2 ? [undefined, cell("42", 42)] : r));
    expect(scoreTable(truth, [shifted]).exact).toBeCloseTo(4 / 5, 10);
  });

  it("aggregates per class, each table once in each of its classes", () => {
    const t = (classes: TruthTable["classes"]): TruthTable => ({ id: "x", pdf: "x.pdf", split: "tune", pages: [1], classes, cells: [] });
    const s = byClass([
      { table: t(["ruled"]), score: { cells: 10, exact: 1, exactText: 1 } },
      { table: t(["ruled", "rtl"]), score: { cells: 30, exact: 0.5, exactText: 0.5 } },
    ]);
    expect(s.get("ruled")).toMatchObject({ tables: 2, meanExact: 0.75, cellExact: (10 + 15) / 40 });
    expect(s.get("rtl")).toMatchObject({ tables: 1, meanExact: 0.5 });
    expect(s.get("all")!.tables).toBe(2);
  });
});
