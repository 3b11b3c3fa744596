/**
 * PDF → DOCX and PDF → XLSX keep every word a reader sees (issue #13), one test per class of text
 * the converter used to lose on real PDFs, each on a small PDF written here byte by byte so that the
 * drawing operators are exactly those of the real file that showed the loss. Each goes through the
 * convert operation with the real engines, and poppler's pdftotext is the independent reader: every
 * word it reads must be in the document and in the workbook (text-recall.ts).
 */
import { access, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobError } from "../../core/errors.ts";
import { readDocx, readXlsx, workbookText } from "../helpers/convert-quality.ts";
import { runOp } from "../helpers/runner.ts";
import { bestRecall, mupdfText, referenceTexts } from "../helpers/text-recall.ts";
import { REAL_PDFS } from "../helpers/table-truth.ts";
import { run, tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-pdf-words-"));
});

afterAll(async () => {
  await cleanup?.();
});

/** The characters of F3 (CIDs 1, 2, …, through its ToUnicode map). */
const F3_CHARS = "检验报告扎筐";

/** F3's ToUnicode map: CID k + 1 is F3_CHARS[k]. */
function f3ToUnicode(): string {
  const hex = (n: number): string => n.toString(16).toUpperCase().padStart(4, "0");
  const chars = [...F3_CHARS].map((c, k) => `<${hex(k + 1)}> <${hex(c.codePointAt(0)!)}>`);
  const cmap = [
    "/CIDInit /ProcSet findresource begin 12 dict begin begincmap",
    "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def /CMapName /Adobe-Identity-UCS def /CMapType 2 def",
    "1 begincodespacerange <0000> <FFFF> endcodespacerange",
    `${chars.length} beginbfchar`,
    ...chars,
    "endbfchar endcmap CMapName currentdict /CMap defineresource pop end end",
  ].join("\n");
  return `<< /Length ${Buffer.byteLength(cmap, "latin1")} >>\nstream\n${cmap}\nendstream`;
}

/**
 * A one-page US Letter PDF drawing `content` with Helvetica (F1), Helvetica-Bold (F2) and a CJK
 * font written vertically, not embedded (F3: Identity-V, the characters of F3_CHARS).
 */
async function contentPdf(name: string, content: string): Promise<string> {
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [ 3 0 R ] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [ 0 0 612 792 ] /Contents 4 0 R /Resources << /Font << /F1 5 0 R /F2 6 0 R /F3 7 0 R >> >> >>",
    `<< /Length ${Buffer.byteLength(content, "latin1")} >>\nstream\n${content}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>",
    "<< /Type /Font /Subtype /Type0 /BaseFont /SimSun /Encoding /Identity-V /DescendantFonts [ 8 0 R ] /ToUnicode 9 0 R >>",
    "<< /Type /Font /Subtype /CIDFontType2 /BaseFont /SimSun /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor 10 0 R /DW 1000 /CIDToGIDMap /Identity >>",
    f3ToUnicode(),
    "<< /Type /FontDescriptor /FontName /SimSun /Flags 4 /FontBBox [ 0 -141 1000 859 ] /ItalicAngle 0 /Ascent 859 /Descent -141 /CapHeight 700 /StemV 80 >>",
  ];
  let body = "%PDF-1.7\n";
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(Buffer.byteLength(body, "latin1"));
    body += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body, "latin1");
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const at of offsets) body += `${String(at).padStart(10, "0")} 00000 n \n`;
  body += `trailer << /Root 1 0 R /Size ${objects.length + 1} >>\nstartxref\n${xref}\n%%EOF\n`;
  const file = path.join(dir, `${name}.pdf`);
  await writeFile(file, body, "latin1");
  return file;
}

/** The text of the DOCX and of the XLSX that `file` converts to. */
async function converted(file: string): Promise<{ docx: string; xlsx: string }> {
  const texts: string[] = [];
  for (const to of ["docx", "xlsx"] as const) {
    const res = await runOp("convert", { to }, [file], path.join(dir, `${path.basename(file, ".pdf")}-${to}`));
    if (res instanceof JobError) throw res;
    const out = res.outputs[0]!.path;
    if (to === "docx") texts.push(readDocx(await readFile(out)).text);
    else texts.push(workbookText(await readXlsx(out)));
  }
  return { docx: texts[0]!, xlsx: texts[1]! };
}

/** PDF string literal escaping. */
const lit = (s: string): string => `(${s.replace(/[()\\]/g, (c) => `\\${c}`)})`;

/** Helvetica-Bold's advance widths (its AFM, thousandths of an em) for the characters the labels use. */
const BOLD_WIDTHS: Record<string, number> = {
  " ": 278,
  ":": 333,
  A: 722,
  S: 667,
  k: 556,
  l: 278,
  C: 722,
  D: 722,
  I: 278,
  N: 722,
  O: 778,
  R: 722,
  a: 556,
  c: 556,
  d: 611,
  e: 556,
  f: 333,
  g: 611,
  h: 611,
  i: 278,
  m: 889,
  n: 611,
  o: 611,
  p: 611,
  r: 389,
  s: 556,
  t: 333,
  u: 611,
  v: 556,
};
const boldWidth = (c: string): number => BOLD_WIDTHS[c] ?? 556;

/**
 * A column label set sideways (reading upwards), one glyph per text matrix, each placed a tenth of
 * an em closer than the font's width (as a producer with a substituted font does), and a footnote
 * mark in smaller type set against its end.
 */
function sidewaysLabel(x: number, y: number, text: string, mark: string): string {
  const size = 9;
  let at = y;
  let ops = `/F2 ${size} Tf\n`;
  for (const c of text) {
    ops += `0 1 -1 0 ${x} ${at.toFixed(2)} Tm ${lit(c)} Tj\n`;
    at += (boldWidth(c) / 1000 - 0.1) * size;
  }
  ops += `/F2 6 Tf 0 1 -1 0 ${x - 4} ${at.toFixed(2)} Tm ${lit(mark)} Tj\n`;
  return ops;
}

describe("text drawn sideways", () => {
  it("keeps a turned column label drawn glyph by glyph whole, with its footnote mark, in the DOCX and the XLSX", async () => {
    const labels = ["Operating Revenue", "Deferred Charges", "Net Income"];
    let content = "BT\n/F1 11 Tf 1 0 0 1 72 720 Tm (Summary of the quarterly statement, as filed with the board) Tj\n";
    content += "1 0 0 1 72 704 Tm (Figures are in thousands of dollars unless stated otherwise.) Tj\n";
    labels.forEach((label, i) => (content += sidewaysLabel(300 + 24 * i, 520, label, String(i + 1))));
    content += "/F1 11 Tf 1 0 0 1 72 500 Tm (Each column is read from the foot of the page upwards.) Tj\nET";
    const file = await contentPdf("sideways", content);
    const refs = await referenceTexts(file);
    // pdftotext reads each label whole, its mark glued to it as a superscript is.
    expect(refs.join("\n")).toMatch(/Operating\s+Revenue1/);
    const { docx, xlsx } = await converted(file);
    for (const text of [docx, xlsx]) {
      const r = bestRecall(refs, text);
      expect([...r.missing], text).toEqual([]);
      for (const label of labels) expect(text).toContain(label);
    }
  });
});

/** Helvetica-Bold's width of `text` at `size` points (BOLD_WIDTHS). */
const boldText = (text: string, size: number): number => ([...text].reduce((w, c) => w + boldWidth(c), 0) * size) / 1000;

describe("words set against each other", () => {
  it("parts a word from a space glyph drawn before it, and from a word drawn over its end; keeps a footnote mark on its word", async () => {
    // As a producer that places each word on its own writes them (a real form, issue-192): a space
    // glyph of its own after "Standard" and "09 of 101" started back over it, a tenth of an em from
    // the word (less than a word space's gap); "and Notes" started back over the last letter of "Remarks";
    // a footnote mark "9" in 6 pt raised over the last letter of "Standards".
    const size = 10;
    const at = (x: number, y: number, text: string, s = size): string => `/F2 ${s} Tf 1 0 0 1 ${x.toFixed(2)} ${y} Tm ${lit(text)} Tj\n`;
    let content = "BT\n/F1 11 Tf 1 0 0 1 72 720 Tm (A form whose producer places every word on its own) Tj\n";
    const standard = 100 + boldText("Standard", size);
    content += at(100, 600, "Standard") + at(standard, 600, " ") + at(standard + 0.9, 600, "09 of 101");
    content += at(100, 570, "Remarks") + at(100 + boldText("Remarks", size) - boldText("s", size) - 0.3, 570, "and Notes");
    content += at(100, 540, "Standards") + at(100 + boldText("Standards", size) - 0.4 * size, 544, "9", 6);
    content += "ET";
    const file = await contentPdf("set-against", content);
    const [refs, mupdf] = [await referenceTexts(file), (await mupdfText(file)) ?? undefined];
    // pdftotext reads them so in both its modes (MuPDF glues "Remarksand", as Folio did).
    for (const ref of refs) expect(ref).toMatch(/Standard\s+09 of 101[\s\S]*Remarks\s+and Notes[\s\S]*Standards9/);
    const { docx, xlsx } = await converted(file);
    for (const text of [docx, xlsx]) {
      expect([...bestRecall(refs, text, mupdf).missing], text).toEqual([]);
      expect(text).toMatch(/Standard 09 of 101/);
      expect(text).toMatch(/Remarks and Notes/);
      expect(text).toMatch(/Standards9/);
    }
  });
});

describe("text near the page's edges", () => {
  it("keeps glyphs pdfjs measures unscaled: a vertical OCR layer by the foot of the page, a word enlarged at its left edge", async () => {
    // As a scanner's OCR layer sets its text (EPSON Scan, pr-136): each glyph of a vertical font in
    // 46 pt, scaled to about 5 pt by the CTM, invisible, in a column near the foot of the page. pdfjs
    // tests a glyph's unscaled 46 pt advance against the page and drops every glyph within 46 pt of
    // the foot; a word scaled up fourfold that starts 8 pt left of the page loses its first letter the
    // same way. pdftotext and MuPDF read them all.
    let content = "BT /F1 11 Tf 1 0 0 1 72 720 Tm (Report of the audit, last page) Tj ET\n";
    [...F3_CHARS].forEach((_, k) => {
      const y = 36 - 6 * k;
      content += `q 0.16 0 0 0.12 36.32 ${y} cm BT 3 Tr 1 0 0 1 0 0 Tm /F3 46 Tf 23 46 Td <${(k + 1).toString(16).padStart(4, "0")}> Tj ET Q\n`;
    });
    content += "q 4 0 0 4 0 0 cm BT /F1 10 Tf -2 150 Td (Hello) Tj ET Q\n";
    const file = await contentPdf("edges", content);
    const [refs, mupdf] = [await referenceTexts(file), (await mupdfText(file)) ?? undefined];
    for (const ref of refs) for (const c of [...F3_CHARS, "Hello"]) expect(ref).toContain(c);
    const { docx, xlsx } = await converted(file);
    for (const text of [docx, xlsx]) {
      expect([...bestRecall(refs, text, mupdf).missing], text).toEqual([]);
      for (const c of F3_CHARS) expect(text).toContain(c);
      expect(text).toMatch(/\bHello\b/);
    }
  });
});

describe("overprinted text", () => {
  it("writes fake bold (each stretch drawn four times a quarter point apart) once, and misses no word both extractors read", async () => {
    // As a Chinese annual report's cover draws it: label, colon and value each drawn four times
    // before the next. poppler files some copies under a line of their own and reads "code" twice,
    // MuPDF reads every copy; a reader sees each word once.
    const lines = [
      ["Stock code", ":", "300218"],
      ["Short name", ":", "Anli"],
    ];
    let content = "BT\n/F1 11 Tf 1 0 0 1 72 720 Tm (Annual report of the company, cover page) Tj\n/F2 18 Tf\n";
    lines.forEach((stretches, i) => {
      let x = 120;
      for (const stretch of stretches) {
        for (const [dx, dy] of [
          [0, 0],
          [0.24, 0],
          [0, 0.24],
          [0.24, 0.24],
        ])
          content += `1 0 0 1 ${(x + dx!).toFixed(2)} ${(600 - 40 * i + dy!).toFixed(2)} Tm ${lit(stretch)} Tj\n`;
        x += ([...stretch].reduce((w, c) => w + boldWidth(c), 0) * 18) / 1000;
      }
    });
    content += "ET";
    const file = await contentPdf("overprint", content);
    const [refs, mupdf] = [await referenceTexts(file), (await mupdfText(file)) ?? undefined];
    expect(mupdf).toBeDefined();
    const { docx, xlsx } = await converted(file);
    for (const text of [docx, xlsx]) {
      expect([...bestRecall(refs, text, mupdf).missing], text).toEqual([]);
      for (const word of ["Stock", "code", "300218", "Short", "name", "Anli"])
        expect(text.split(word).length - 1, `${word} in ${text}`).toBe(1);
    }
  });
});

describe("TeX mathematics", () => {
  const GEOTOPO = path.join(REAL_PDFS, "py-pdf-sample-files/009-pdflatex-geotopo__GeoTopo-komprimiert.pdf");

  /** One page of GeoTopo cut out with qpdf, its reference texts and Folio's DOCX and XLSX text; null without the corpus. */
  async function geotopoPage(page: number) {
    const ok = await access(GEOTOPO).then(
      () => true,
      () => false,
    );
    if (!ok) return null;
    const file = path.join(dir, `geotopo-${page}.pdf`);
    expect((await run("qpdf", ["--empty", "--pages", GEOTOPO, String(page), "--", file])).code).toBe(0);
    const [refs, mupdf] = [await referenceTexts(file), (await mupdfText(file)) ?? undefined];
    return { refs, mupdf, ...(await converted(file)) };
  }

  it.each([52, 60, 61])(
    "keeps every word of a page of lecture notes (exponents in several fonts, accents over letters), GeoTopo page %i",
    async (page) => {
      // A real pdflatex document of the corpus: e^{2πit} (page 52), γ̃ and H̃ with the tilde drawn on
      // its own or joined to the text before it (page 60), a tilde over a capital that pdfjs runs
      // on with ", y₀" (page 61).
      const got = await geotopoPage(page);
      if (!got) return;
      for (const text of [got.docx, got.xlsx]) expect([...bestRecall(got.refs, text, got.mupdf).missing], text).toEqual([]);
    },
  );

  it("reads a ↦ drawn mirrored where it stands, after the formula before it (GeoTopo page 29)", async () => {
    // "(y₁ : ··· : yₙ) ↦ (y₁, …, yₙ)" with the arrow drawn through a mirroring matrix: read as
    // text turned upside down from its right end, it landed between "y" and its subscript "n".
    const got = await geotopoPage(29);
    if (!got) return;
    for (const text of [got.docx, got.xlsx]) {
      expect(text).toMatch(/: yn\) →7? ?\(y1, \. \. \. , yn\)/);
      expect(bestRecall(got.refs, text, got.mupdf).missing.has("yn"), text).toBe(false);
    }
  });
});
