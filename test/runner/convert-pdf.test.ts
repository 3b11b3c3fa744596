/**
 * PDF → DOCX and PDF → XLSX through the convert operation, on PDFs made here: a LibreOffice
 * Writer document (headings, a bulleted list, a ruled table, a two-column section), a Calc sheet
 * (text, numbers, dates), a pdf-lib PDF with the cases pdfjs alone gets wrong (a date drawn a
 * fifth of an em before the next cell's text; a ruled table cut by a page break), plus the failure
 * fixtures (password-protected, damaged, scanned). The DOCX is checked by LibreOffice itself: it
 * must reopen and print the source's words.
 */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import ExcelJS from "exceljs";
import { PDFDocument, StandardFonts, type PDFFont, type PDFPage } from "pdf-lib";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobError } from "../../core/errors.ts";
import { analyzePdf } from "../../runner/pdf-layout/index.ts";
import { unzip } from "../helpers/convert-quality.ts";
import { errorCode, ok, runOp } from "../helpers/runner.ts";
import { pdftotext, tmpDir, wordRecall } from "../helpers/tools.ts";

/** The main part of a DOCX, read with the tests' own zip reader (no unzip binary needed). */
const documentXml = (docx: Buffer): string => unzip(docx).get("word/document.xml")?.toString("utf8") ?? "";

const execFileP = promisify(execFile);

const NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" xmlns:number="urn:oasis:names:tc:opendocument:xmlns:datastyle:1.0"';
const td = (v: string): string => `<table:table-cell table:style-name="TC"><text:p>${v}</text:p></table:table-cell>`;
const WRITER = `<?xml version="1.0" encoding="UTF-8"?>
<office:document ${NS} office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text"><office:automatic-styles>
<style:style style:name="Sect1" style:family="section"><style:section-properties><style:columns fo:column-count="2" fo:column-gap="0.5cm"/></style:section-properties></style:style>
<style:style style:name="TC" style:family="table-cell"><style:table-cell-properties fo:border="0.5pt solid #000000" fo:padding="0.1cm"/></style:style>
</office:automatic-styles><office:body><office:text>
<text:h text:outline-level="1">Annual Observatory Summary</text:h>
<text:p>The comet Halloran crossed the meridian at dusk while astronomers recorded its brightness. This paragraph is long enough to wrap over several lines so that the paragraph builder has to join them into one flowing paragraph.</text:p>
<text:h text:outline-level="2">Instruments and methods</text:h>
<text:p>We used three instruments during the campaign, listed below.</text:p>
<text:list><text:list-item><text:p>Refractor with a small aperture</text:p></text:list-item><text:list-item><text:p>Reflector with a medium aperture</text:p></text:list-item></text:list>
<table:table table:name="T1"><table:table-column table:number-columns-repeated="3"/>
<table:table-row>${td("Telescope")}${td("Aperture")}${td("Site")}</table:table-row>
<table:table-row>${td("Refractor")}${td("120")}${td("North dome")}</table:table-row>
<table:table-row>${td("Reflector")}${td("254")}${td("South dome")}</table:table-row></table:table>
<text:h text:outline-level="2">Discussion in two columns</text:h>
<text:section text:style-name="Sect1" text:name="S1"><text:p>The first column talks about the weather on the mountain, which was mostly clear with occasional high clouds drifting from the west over the ridge during the early evening hours.</text:p><text:p>The second part continues about the calibration, which took place every afternoon before sunset using flat fields taken against the twilight sky and dark frames.</text:p></text:section>
<text:p>After the section the text flows again in one column.</text:p>
</office:text></office:body></office:document>`;

const num = (v: number): string =>
  `<table:table-cell office:value-type="float" office:value="${v}"><text:p>${v}</text:p></table:table-cell>`;
const str = (v: string): string => `<table:table-cell office:value-type="string"><text:p>${v}</text:p></table:table-cell>`;
const date = (v: string): string =>
  `<table:table-cell table:style-name="D" office:value-type="date" office:date-value="${v}"><text:p>${v}</text:p></table:table-cell>`;
const CALC = `<?xml version="1.0" encoding="UTF-8"?>
<office:document ${NS} office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:automatic-styles><number:date-style style:name="N1"><number:year number:style="long"/><number:text>-</number:text><number:month number:style="long"/><number:text>-</number:text><number:day number:style="long"/></number:date-style>
<style:style style:name="D" style:family="table-cell" style:data-style-name="N1"/></office:automatic-styles>
<office:body><office:spreadsheet><table:table table:name="Sales">
<table:table-row>${str("Region")}${str("Revenue")}${str("Units")}${str("Date")}</table:table-row>
<table:table-row>${str("Northwind")}${num(1234.5)}${num(17)}${date("2024-03-15")}</table:table-row>
<table:table-row>${str("Southbay")}${num(-987)}${num(42)}${date("2024-04-01")}</table:table-row>
<table:table-row>${str("Eastgate")}${num(4567)}${num(8)}${date("2024-05-20")}</table:table-row>
</table:table></office:spreadsheet></office:body></office:document>`;

/**
 * Page 1: an unruled table whose dates end 2 pt (a fifth of an em) before the region's text, as
 * Calc prints them; pages 2–3: a ruled table that starts at the foot of page 2 and goes on at the
 * top of page 3. Returns the ruled table's rows.
 */
async function trickyTablesPdf(): Promise<{ bytes: Uint8Array; ruled: string[][] }> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const text = (page: PDFPage, s: string, x: number, y: number, f: PDFFont = font): void => page.drawText(s, { x, y, size: 10, font: f });
  const first = doc.addPage([595, 842]);
  text(first, "Shipments by product", 60, 780);
  // Headers left-aligned in their cells, dates right-aligned in theirs (cells from 240 to 300).
  [
    ["Product", 60],
    ["Shipped", 240],
    ["Region", 302],
  ].forEach(([h, x]) => text(first, String(h), Number(x), 750));
  const rows = [
    ["Osprey Sail", "2024-05-30", "East"],
    ["Tide Margin", "2023-11-09", "West"],
    ["Have Yarrow", "2023-08-02", "Central"],
    ["Budget They", "2023-01-24", "North"],
  ];
  rows.forEach(([name, date, region], r) => {
    const y = 734 - 16 * r;
    text(first, name!, 60, y);
    text(first, date!, 300 - font.widthOfTextAtSize(date!, 10), y);
    text(first, region!, 302, y);
  });

  const ruled = [
    ["Berth", "Vessel", "Tonnage", "Crew"],
    ...Array.from({ length: 7 }, (_, i) => [`B${i + 1}`, `Vessel ${String.fromCharCode(65 + i)}`, String(1000 + 137 * i), String(10 + i)]),
  ];
  const xs = [60, 160, 300, 400, 500];
  const grid = (page: PDFPage, top: number, part: string[][]): void => {
    part.forEach((row, r) => row.forEach((cell, c) => text(page, cell, xs[c]! + 4, top - 18 * (r + 1) + 5)));
    for (let r = 0; r <= part.length; r++)
      page.drawLine({ start: { x: xs[0]!, y: top - 18 * r }, end: { x: xs.at(-1)!, y: top - 18 * r }, thickness: 0.7 });
    for (const x of xs) page.drawLine({ start: { x, y: top }, end: { x, y: top - 18 * part.length }, thickness: 0.7 });
  };
  const second = doc.addPage([595, 842]);
  for (let i = 0; i < 30; i++) text(second, `Line ${i + 1} of the text that fills this page before the table begins.`, 60, 780 - 20 * i);
  grid(second, 160, ruled.slice(0, 5));
  const third = doc.addPage([595, 842]);
  grid(third, 780, ruled.slice(5));
  text(third, "The text after the table.", 60, 700);
  return { bytes: await doc.save(), ruled };
}

let ruledRows: string[][];
let dir: string;
let cleanup: () => Promise<void>;
const file = (name: string): string => path.join(dir, name);

/** soffice --convert-to in a throwaway profile (never the pool Folio uses). */
async function soffice(target: string, inputs: string[], outdir: string): Promise<void> {
  await execFileP(
    "soffice",
    [`-env:UserInstallation=file://${dir}/profile`, "--headless", "--convert-to", target, "--outdir", outdir, ...inputs],
    { timeout: 120_000 },
  );
}

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-convert-pdf-"));
  await writeFile(file("report.fodt"), WRITER);
  await writeFile(file("sales.fods"), CALC);
  await soffice("pdf", [file("report.fodt"), file("sales.fods")], dir);
  await execFileP("qpdf", ["--encrypt", "secret", "owner", "256", "--", file("report.pdf"), file("locked.pdf")]);
  await writeFile(file("damaged.pdf"), Buffer.concat([Buffer.from("%PDF-1.7\n1 0 obj\n<< /Type /Catalog"), Buffer.alloc(2000, 0x41)]));
  const scan = await PDFDocument.create();
  const png = await sharp({ create: { width: 400, height: 500, channels: 3, background: { r: 240, g: 240, b: 230 } } })
    .png()
    .toBuffer();
  const page = scan.addPage([400, 500]);
  page.drawImage(await scan.embedPng(png), { x: 0, y: 0, width: 400, height: 500 });
  await writeFile(file("scan.pdf"), await scan.save());
  const tricky = await trickyTablesPdf();
  await writeFile(file("tricky.pdf"), tricky.bytes);
  ruledRows = tricky.ruled;
}, 180_000);

afterAll(async () => {
  await cleanup();
});

describe("convert PDF → DOCX", () => {
  it("writes flowing paragraphs, Heading styles, a list and a real table, which LibreOffice reopens with every word", async () => {
    const out = file("docx-out");
    const res = ok(await runOp("convert", { to: "docx" }, [file("report.pdf")], out));
    expect(res.outputs[0]!.filename).toBe("report.docx");
    expect(res.figures).toMatchObject({ pages: 1, headings: 3, tables: 1 });
    const docx = path.join(out, "report.docx");
    const xml = documentXml(await readFile(docx));
    expect(xml).toContain('w:pStyle w:val="Heading1"');
    expect(xml).toContain('w:pStyle w:val="Heading2"');
    expect(xml).toContain("<w:tbl>");
    expect(xml).toContain("<w:numPr>");
    expect(xml).not.toMatch(/wp:anchor|w:txbxContent|w:framePr/);

    const started = performance.now();
    await soffice("pdf", [docx], path.join(dir, "reopened"));
    // LibreOffice's own time, on a machine that may be busy: only a hang fails this.
    expect(performance.now() - started).toBeLessThan(60_000);
    const source = await pdftotext(file("report.pdf"));
    const back = await pdftotext(path.join(dir, "reopened", "report.pdf"));
    expect(wordRecall(source, back)).toBeGreaterThanOrEqual(0.99);
    // Column text is read column by column: the left column's sentence comes before the right one's.
    expect(back.replace(/\s+/g, " ")).toMatch(/early evening hours\. The second part continues/);
  }, 120_000);
});

describe("convert PDF → XLSX", () => {
  it("puts the sheet's table in a worksheet with numbers and dates as typed cells", async () => {
    const out = file("xlsx-out");
    const res = ok(await runOp("convert", { to: "xlsx" }, [file("sales.pdf")], out));
    // The table's sheet, and the "Text" sheet with Calc's page header and footer (issue #13: no text left out).
    expect(res.figures).toMatchObject({ tables: 1, sheets: 2 });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(out, "sales.xlsx"));
    const ws = wb.worksheets[0]!;
    expect(ws.getRow(1).values).toEqual([undefined, "Region", "Revenue", "Units", "Date"]);
    expect(ws.getCell("B2").value).toBe(1234.5);
    expect(ws.getCell("B3").value).toBe(-987);
    expect(ws.getCell("C4").value).toBe(8);
    expect(ws.getCell("D2").value).toEqual(new Date(Date.UTC(2024, 2, 15)));
    expect(ws.getCell("D2").numFmt).toBe("yyyy-mm-dd");
  }, 60_000);

  it("cuts a date from the next cell's text drawn close to it, and joins a table cut by a page break", async () => {
    const out = file("xlsx-tricky");
    const res = ok(await runOp("convert", { to: "xlsx" }, [file("tricky.pdf")], out));
    expect(res.figures).toMatchObject({ tables: 2, sheets: 3 });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(out, "tricky.xlsx"));
    const [dates, ruled, text] = wb.worksheets;
    // The text outside the tables is in the "Text" sheet, in reading order, with its page numbers.
    expect(text!.name).toBe("Text");
    const lines = text!.getSheetValues().flatMap((row) => (Array.isArray(row) ? [row.slice(1)] : []));
    expect(lines).toContainEqual([1, "Shipments by product"]);
    expect(lines).toContainEqual([3, "The text after the table."]);
    expect(dates!.getRow(2).values).toEqual([undefined, "Osprey Sail", new Date(Date.UTC(2024, 4, 30)), "East"]);
    expect(dates!.getCell("B5").value).toEqual(new Date(Date.UTC(2023, 0, 24)));
    expect(dates!.getCell("C4").value).toBe("Central");
    expect(ruled!.name).toBe("Page 2");
    expect(ruled!.rowCount).toBe(ruledRows.length);
    expect(ruled!.getRow(8).values).toEqual([undefined, "B7", "Vessel G", 1822, 16]);
  }, 60_000);

  it("gives a PDF without tables one sheet of text lines per page, and says tables: 0", async () => {
    const out = file("xlsx-text");
    await writeFile(
      file("letter.fodt"),
      WRITER.replace(/<table:table .*<\/table:table>/s, "").replace(/<text:section .*<\/text:section>/s, ""),
    );
    await soffice("pdf", [file("letter.fodt")], dir);
    const res = ok(await runOp("convert", { to: "xlsx" }, [file("letter.pdf")], out));
    expect(res.figures).toMatchObject({ tables: 0, sheets: 1 });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(path.join(out, "letter.xlsx"));
    expect(wb.worksheets[0]!.getCell("A1").value).toBe("Annual Observatory Summary");
  }, 60_000);
});

describe("convert PDF → DOCX, a table cut by a page break", () => {
  it("writes one Word table holding the rows of both pages, and no page break inside it", async () => {
    const out = file("docx-tricky");
    const res = ok(await runOp("convert", { to: "docx" }, [file("tricky.pdf")], out));
    expect(res.figures).toMatchObject({ pages: 3, tables: 2 });
    const xml = documentXml(await readFile(path.join(out, "tricky.docx")));
    const tables = xml
      .split("<w:tbl>")
      .slice(1)
      .map((t) => t.slice(0, t.indexOf("</w:tbl>")));
    expect(tables).toHaveLength(2);
    expect(tables[1]!.match(/<w:tr[ >]/g)).toHaveLength(ruledRows.length);
    // The page break comes before the table's page (2), not before the text after it (page 3).
    const after = xml.slice(xml.lastIndexOf("</w:tbl>"));
    expect(after).toContain("The text after the table.");
    expect(after).not.toMatch(/w:pageBreakBefore|w:br w:type="page"/);
  }, 60_000);
});

describe("convert PDF → DOCX, images", () => {
  it("keeps an image at no more than 150 DPI of its size on the page", async () => {
    const pdf = await PDFDocument.create();
    const page = pdf.addPage([612, 792]);
    const jpg = await sharp({ create: { width: 2400, height: 1200, channels: 3, background: { r: 200, g: 40, b: 40 } } })
      .jpeg()
      .toBuffer();
    page.drawImage(await pdf.embedJpg(jpg), { x: 72, y: 400, width: 288, height: 144 });
    page.drawText("A figure above this caption.", { x: 72, y: 380, size: 12, font: await pdf.embedFont(StandardFonts.Helvetica) });
    await writeFile(file("figure.pdf"), await pdf.save());
    const res = ok(await runOp("convert", { to: "docx" }, [file("figure.pdf")], file("docx-figure")));
    expect(res.figures).toMatchObject({ images: 1, images_omitted: 0 });
    const media = [...unzip(await readFile(path.join(file("docx-figure"), "figure.docx")))].filter(([name]) =>
      name.startsWith("word/media/"),
    );
    expect(media).toHaveLength(1);
    // 288 × 144 pt at 150 DPI is 600 × 300 pixels (the source has 2400 × 1200).
    expect(await sharp(media[0]![1]).metadata()).toMatchObject({ format: "png", width: 600, height: 300 });
  }, 60_000);
});

describe("convert PDF → DOCX, a page of 40,000 scattered words", () => {
  beforeAll(async () => {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const page = pdf.addPage([14400, 14400]);
    for (let r = 0; r < 200; r++)
      for (let c = 0; c < 200; c++) page.drawText(`w${(r * 200 + c) % 97}`, { x: 20 + c * 70, y: 14380 - r * 70, size: 8, font });
    await writeFile(file("words.pdf"), await pdf.save());
  }, 60_000);

  it("converts within a bounded time", async () => {
    const started = performance.now();
    const res = ok(await runOp("convert", { to: "docx" }, [file("words.pdf")], file("docx-words")));
    expect(res.figures).toMatchObject({ pages: 1 });
    expect(performance.now() - started).toBeLessThan(30_000);
  }, 60_000);

  it.each([
    // Reading the page takes pdfjs about 2 s: this deadline passes during extraction.
    [1000, 3000],
    // This one passes during analysis or writing (where the analysis used to run on for 4–9 s).
    // Packing the DOCX is the one step that cannot stop halfway: about 2 s for this page on an
    // idle machine, up to three times that on a loaded 2-core CI machine.
    [3000, 8000],
  ])(
    "returns by a deadline of %i ms (converted or timed out), at most %i ms after it",
    async (timeout_ms, slack) => {
      const started = performance.now();
      const res = await runOp("convert", { to: "docx" }, [file("words.pdf")], file(`docx-words-${timeout_ms}`), { limits: { timeout_ms } });
      if (res instanceof JobError) expect(res.code).toBe("timeout");
      expect(performance.now() - started).toBeLessThan(timeout_ms + slack);
    },
    60_000,
  );

  it("refuses a page of more than 50,000 text runs as limit_exceeded", async () => {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const page = pdf.addPage([14400, 14400]);
    for (let r = 0; r < 230; r++)
      for (let c = 0; c < 230; c++) page.drawText(`w${(r * 230 + c) % 97}`, { x: 20 + c * 60, y: 14380 - r * 60, size: 8, font });
    await writeFile(file("too-many-words.pdf"), await pdf.save());
    const res = await runOp("convert", { to: "xlsx" }, [file("too-many-words.pdf")], file("xlsx-too-many"));
    expect(errorCode(res)).toBe("limit_exceeded");
    expect((res as JobError).message).toMatch(/Page 1 holds 52900 text runs; at most 50000/);
  }, 180_000); // 45 s at load 12: pdfjs reads the whole page's text before it can be counted

  it("does not start the worker when the deadline passed while the file was read", async () => {
    const controller = new AbortController();
    const started = performance.now();
    const analysis = analyzePdf(file("words.pdf"), { signal: controller.signal, maxImagePixels: 1e8, images: true });
    controller.abort(new DOMException("The job ran out of time", "TimeoutError"));
    await expect(analysis).rejects.toMatchObject({ name: "TimeoutError" });
    expect(performance.now() - started).toBeLessThan(500);
  }, 60_000);
});

describe("convert PDF input that cannot be converted", () => {
  it.each([
    ["a password-protected PDF", "locked.pdf", "docx", "encrypted_input"],
    ["a damaged PDF", "damaged.pdf", "docx", "invalid_pdf"],
    ["a scan without a text layer", "scan.pdf", "docx", "unsupported_input"],
    ["a scan without a text layer, to XLSX", "scan.pdf", "xlsx", "unsupported_input"],
  ])(
    "refuses %s",
    async (_what, name, to, code) => {
      expect(errorCode(await runOp("convert", { to }, [file(name)], file(`out-${name}-${to}`)))).toBe(code);
    },
    60_000,
  );

  it("has the converter itself tell a password-protected PDF from a damaged one", async () => {
    // run.ts refuses both before the converter runs (qpdf); the converter must not rely on it.
    const analyze = (name: string): Promise<unknown> =>
      analyzePdf(file(name), { signal: AbortSignal.timeout(30_000), maxImagePixels: 1e8, images: true });
    await expect(analyze("locked.pdf")).rejects.toMatchObject({ code: "encrypted_input" });
    await expect(analyze("damaged.pdf")).rejects.toMatchObject({ code: "invalid_pdf" });
  }, 60_000);

  it("says what to do with a scan", async () => {
    const err = await runOp("convert", { to: "docx" }, [file("scan.pdf")], file("out-scan-msg"));
    expect(String((err as Error).message)).toMatch(/OCR/);
  });

  it("refuses an Office document asked to become Word", async () => {
    await writeFile(file("plain.fodt"), WRITER);
    const docx = file("plain.docx");
    await soffice("docx", [file("plain.fodt")], dir);
    expect((await readFile(docx)).subarray(0, 2).toString("latin1")).toBe("PK");
    expect(errorCode(await runOp("convert", { to: "docx" }, [docx], file("out-plain")))).toBe("unsupported_input");
  }, 60_000);
});
