/**
 * The PDF → Office yardstick itself (test/helpers/convert-quality.ts), on hand-made DOCX and XLSX
 * files whose right answers are known: before a converter is judged by these figures, the figures
 * are shown to be right.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { AlignmentType, Document, HeadingLevel, LevelFormat, Packer, Paragraph, Table, TableCell, TableRow } from "docx";
import ExcelJS from "exceljs";
import yazl from "yazl";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TruthCell } from "../fixtures/pdf-office-corpus.ts";
import {
  cellMatches,
  docxQuality,
  gridAgreement,
  headingRecall,
  lcsLength,
  readDocx,
  readXlsx,
  sheetRows,
  tableRecall,
  typedCell,
  unzip,
  wordOrder,
  xlsxQuality,
} from "../helpers/convert-quality.ts";

function zip(entries: Record<string, string>): Promise<Buffer> {
  const z = new yazl.ZipFile();
  for (const [name, data] of Object.entries(entries)) z.addBuffer(Buffer.from(data), name);
  z.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    z.outputStream.on("data", (c: Buffer) => chunks.push(c));
    z.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
    z.outputStream.on("error", reject);
  });
}

/** A document as Word-like tools write it: styles, a numbered and a bulleted list, a table. */
async function handMadeDocx(): Promise<Buffer> {
  const cell = (t: string): TableCell => new TableCell({ children: [new Paragraph(t)] });
  const doc = new Document({
    numbering: {
      config: [
        {
          reference: "num",
          levels: [
            { level: 0, format: LevelFormat.DECIMAL, text: "%1.", alignment: AlignmentType.START },
            { level: 1, format: LevelFormat.LOWER_LETTER, text: "(%2)", alignment: AlignmentType.START },
          ],
        },
      ],
    },
    sections: [
      {
        children: [
          new Paragraph({ text: "Annual Review", heading: HeadingLevel.TITLE }),
          new Paragraph({ text: "Harbour Results", heading: HeadingLevel.HEADING_1 }),
          new Paragraph("The pilots berthed forty vessels & two tankers."),
          new Paragraph({ text: "First step", numbering: { reference: "num", level: 0 } }),
          new Paragraph({ text: "Inner step", numbering: { reference: "num", level: 1 } }),
          new Paragraph({ text: "Second step", numbering: { reference: "num", level: 0 } }),
          new Paragraph({ text: "Loose item", bullet: { level: 0 } }),
          new Paragraph({ text: "Outlined But Unstyled", outlineLevel: 2 }),
          new Table({
            rows: [
              ["Berth", "Tonnage"],
              ["B1", "1,200"],
            ].map((r) => new TableRow({ children: r.map(cell) })),
          }),
          new Paragraph("Closing words."),
        ],
      },
    ],
  });
  return Packer.toBuffer(doc);
}

const W =
  'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" xmlns:v="urn:schemas-microsoft-com:vml"';
const run = (t: string): string => `<w:r><w:t xml:space="preserve">${t}</w:t></w:r>`;
const textBox = (t: string): string =>
  `<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><wps:wsp><wps:txbx><w:txbxContent><w:p>${run(t)}</w:p></w:txbxContent></wps:txbx></wps:wsp></wp:anchor></w:drawing></mc:Choice>` +
  `<mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent><w:p>${run(t)}</w:p></w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>`;

/** What LibreOffice's PDF import writes: lines in text boxes (with a VML fallback) and a frame. */
function framedDocx(): Promise<Buffer> {
  const body =
    `<w:p>${textBox("boxed one two")}</w:p><w:p>${textBox("boxed three")}</w:p>` +
    `<w:p><w:pPr><w:framePr w:w="2000" w:x="100" w:y="100"/></w:pPr>${run("framed four")}</w:p>` +
    `<w:p>${run("flowing five six seven eight")}</w:p>`;
  return zip({
    "[Content_Types].xml": '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
    "word/document.xml": `<?xml version="1.0" encoding="UTF-8"?><w:document ${W}><w:body>${body}<w:sectPr/></w:body></w:document>`,
  });
}

describe("DOCX reading", () => {
  it("reads paragraphs in body order with list labels, headings and table cells", async () => {
    const doc = readDocx(await handMadeDocx());
    const texts = doc.paragraphs.map((p) => p.text);
    expect(texts).toEqual([
      "Annual Review",
      "Harbour Results",
      "The pilots berthed forty vessels & two tankers.",
      "1. First step",
      "(a) Inner step",
      "2. Second step",
      expect.stringMatching(/ Loose item$/),
      "Outlined But Unstyled",
      "Berth",
      "Tonnage",
      "B1",
      "1,200",
      "Closing words.",
    ]);
    expect(doc.paragraphs.map((p) => p.heading)).toEqual([
      0,
      1,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      3,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(doc.tables).toEqual([
      [
        ["Berth", "Tonnage"],
        ["B1", "1,200"],
      ],
    ]);
    expect(doc.paragraphs.filter((p) => p.table === 0)).toHaveLength(4);
    expect(doc.paragraphs.some((p) => p.inFrame)).toBe(false);
  });

  it("counts text boxes, VML fallbacks once, and framePr paragraphs as framed", async () => {
    const doc = readDocx(await framedDocx());
    expect(doc.paragraphs.map((p) => [p.text, p.inFrame])).toEqual([
      ["boxed one two", true],
      ["", false],
      ["boxed three", true],
      ["", false],
      ["framed four", true],
      ["flowing five six seven eight", false],
    ]);
    const q = docxQuality(
      await framedDocx(),
      { text: "boxed one two boxed three framed four flowing five six seven eight", headings: [], tables: [] },
      "boxed one two three framed four five six seven eight",
    );
    expect(q.frameShare).toBeCloseTo(7 / 12, 10); // boxed one two, boxed three, framed four
    expect(q.order).toBe(1);
    expect(q.recall).toBe(1);
  });

  it("unzips stored and deflated entries, and refuses what is not a zip", async () => {
    const z = unzip(await zip({ "a.txt": "alpha ".repeat(100), "b.txt": "" }));
    expect(z.get("a.txt")!.toString()).toBe("alpha ".repeat(100));
    expect(z.get("b.txt")!.length).toBe(0);
    expect(() => unzip(Buffer.from("plain text"))).toThrow(/not a zip/);
  });
});

describe("word metrics", () => {
  it("lcsLength is the longest common subsequence", () => {
    expect(lcsLength("abcbdab".split(""), "bdcaba".split(""))).toBe(4);
    expect(lcsLength(["x"], [])).toBe(0);
    expect(lcsLength("aaaa".split(""), "aa".split(""))).toBe(2);
  });

  it("wordOrder is 1 in order, lower when paragraphs swap, and ignores extra words", () => {
    const ref = "one two three four five six seven eight";
    expect(wordOrder(ref, `header ${ref} 1`)).toBe(1);
    expect(wordOrder(ref, "five six seven eight one two three four")).toBe(0.5);
    expect(wordOrder(ref, "one two three four")).toBe(0.5);
  });

  it("wordOrder stays fast on a 100-page text", () => {
    const vocab = Array.from({ length: 200 }, (_, i) => `w${i}`);
    const words = Array.from({ length: 50_000 }, (_, i) => vocab[(i * 7919) % 200]!);
    const t = performance.now();
    expect(wordOrder(words.join(" "), words.join(" "))).toBe(1);
    expect(performance.now() - t).toBeLessThan(20_000);
  });

  it("headingRecall finds headings by text, checks levels and precision", async () => {
    const doc = readDocx(await handMadeDocx());
    expect(
      headingRecall(
        [
          { text: "Harbour Results", level: 1 },
          { text: "Outlined but unstyled", level: 3 },
        ],
        doc,
      ),
    ).toEqual({ recall: 1, levels: 1, precision: 2 / 3 });
    expect(
      headingRecall(
        [
          { text: "Harbour Results", level: 2 },
          { text: "Missing", level: 1 },
        ],
        doc,
      ),
    ).toMatchObject({ recall: 0.5, levels: 0 });
  });

  it("tableRecall finds a table shifted inside a bigger one, not one with other cells", async () => {
    const doc = readDocx(await handMadeDocx());
    expect(tableRecall([[["B1", "1,200"]]], doc)).toEqual({ found: 1, whole: 1, cellShare: [1] });
    expect(
      tableRecall(
        [
          [
            ["B1", "999"],
            ["B2", "1"],
          ],
        ],
        doc,
      ),
    ).toEqual({ found: 0, whole: 0, cellShare: [0.25] });
  });

  it("tableRecall finds a table a page break cut in two, but not whole", () => {
    const truth = [
      ["Berth", "Crew"],
      ["B1", "12"],
      ["B2", "14"],
      ["B3", "9"],
    ];
    const doc = { paragraphs: [], text: "", tables: [[["Other", "table"]], truth.slice(0, 2), truth.slice(2)] };
    expect(tableRecall([truth], doc)).toEqual({ found: 1, whole: 0, cellShare: [1] });
    const apart = { ...doc, tables: [truth.slice(0, 2), [["Other", "table"]], truth.slice(2)] };
    expect(tableRecall([truth], apart).found).toBe(0);
  });
});

describe("XLSX cell accuracy", () => {
  let dir: string;
  beforeAll(async () => (dir = await mkdtemp(path.join(os.tmpdir(), "folio-quality-"))));
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const n = (value: number, text = String(value), alt?: number[]): TruthCell => ({ type: "number", value, text, ...(alt ? { alt } : {}) });
  const d = (value: string): TruthCell => ({ type: "date", value, text: value });
  const s = (value: string): TruthCell => ({ type: "text", value, text: value });
  const truth: TruthCell[][] = [
    [s("Item"), s("Units"), s("Margin"), s("Shipped")],
    [s("Anchor"), n(1200, "1,200"), n(0.125, "12.5%", [12.5]), d("2024-03-05")],
    [s("Beacon"), n(-35.5, "-35.50"), n(0.5, "50.0%", [50]), d("2025-12-31")],
  ];

  async function workbook(file: string, fill: (ws: ExcelJS.Worksheet, wb: ExcelJS.Workbook) => void): Promise<string> {
    const wb = new ExcelJS.Workbook();
    fill(wb.addWorksheet("One"), wb);
    await wb.xlsx.writeFile(path.join(dir, file));
    return path.join(dir, file);
  }

  it("scores 100 % on a faithful workbook placed anywhere, with percentages either way", async () => {
    const file = await workbook("good.xlsx", (ws) => {
      ws.getCell("A1").value = "A title above the table";
      ws.addRow([]);
      ws.getRow(3).values = [undefined, "Item", "Units", "Margin", "Shipped"];
      ws.getRow(4).values = [undefined, "Anchor", 1200, 0.125, new Date("2024-03-05T00:00:00Z")];
      ws.getRow(5).values = [
        undefined,
        { richText: [{ text: "Bea" }, { text: "con" }] },
        { formula: "-71/2", result: -35.5 },
        50,
        new Date("2025-12-31T00:00:00Z"),
      ];
      ws.getCell("E4").numFmt = "yyyy-mm-dd";
      ws.getCell("E5").numFmt = "yyyy-mm-dd";
    });
    const q = xlsxQuality(await readXlsx(file), truth);
    expect(q).toEqual({ accuracy: 1, textAccuracy: 1, numericShare: 1, dateShare: 1, sheets: 1 });
  });

  it("counts text-typed numbers and dates as wrong values of the right text, and missing cells as wrong", async () => {
    const file = await workbook("strings.xlsx", (ws, wb) => {
      ws.addRow(["Item", "Units", "Margin", "Shipped"]);
      ws.addRow(["Anchor", "1,200", "12.5%", "2024-03-05"]);
      wb.addWorksheet("Two").addRow(["Beacon", -35.5]);
    });
    const q = xlsxQuality(await readXlsx(file), truth);
    // Typed right: the 4 headers, both names, -35.5. Text right: also the three strings of row 2.
    expect(q.accuracy).toBeCloseTo(7 / 12, 10);
    expect(q.textAccuracy).toBeCloseTo(10 / 12, 10);
    expect(q.numericShare).toBeCloseTo(1 / 4, 10);
    expect(q.dateShare).toBe(0);
    expect(q.sheets).toBe(2);
  });

  it("typed cells: numbers, dates, rich text, formula results, hyperlinks, blanks", () => {
    expect(typedCell(3)).toEqual({ type: "number", value: 3 });
    expect(typedCell(new Date("2024-01-02T00:00:00Z"))).toEqual({ type: "date", value: "2024-01-02" });
    expect(typedCell({ formula: "1+1", result: 2 })).toEqual({ type: "number", value: 2 });
    expect(typedCell({ text: "site", hyperlink: "https://example.org" })).toEqual({ type: "text", value: "site" });
    expect(typedCell("  ")).toBeUndefined();
    expect(typedCell(null)).toBeUndefined();
    expect(cellMatches(n(0.1 + 0.2), { type: "number", value: 0.3 })).toBe(true);
    expect(cellMatches(s("North  East"), { type: "text", value: "North East" })).toBe(true);
    expect(cellMatches(n(7), { type: "text", value: "7" })).toBe(false);
  });

  it("gridAgreement finds the offset, negative ones included", () => {
    const eq = (a: string, b: string | undefined): boolean => a === b;
    expect(
      gridAgreement(
        [
          ["a", "b"],
          ["c", "d"],
        ],
        [
          ["x", "x", "x"],
          ["x", "a", "b"],
          ["x", "c", "d"],
        ],
        eq,
      ),
    ).toEqual({ share: 1, dr: 1, dc: 1 });
    expect(
      gridAgreement(
        [
          ["a", "b"],
          ["c", "d"],
        ],
        [["c", "d"]],
        eq,
      ),
    ).toEqual({ share: 0.5, dr: -1, dc: 0 });
  });

  it("sheetRows lists non-empty rows as text", async () => {
    const file = await workbook("lines.xlsx", (ws) => {
      ws.addRow(["first line of text"]);
      ws.addRow([]);
      ws.addRow(["second", "line", 2]);
    });
    expect(sheetRows(await readXlsx(file))).toEqual(["first line of text", "second line 2"]);
  });
});
