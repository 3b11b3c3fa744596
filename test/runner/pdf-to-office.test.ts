/**
 * PDF → DOCX and PDF → XLSX against issue #6's floors, on the generated corpus
 * (test/fixtures/pdf-office-corpus.ts) with the yardstick of test/helpers/convert-quality.ts:
 *  - DOCX: word recall vs pdftotext of the source ≥ 99 %, word order ≥ 98 %, no text in frames or
 *    text boxes, every heading and table of the source found, reopens in LibreOffice (< 20 s here;
 *    bench/pdf-to-office.ts reports the real time);
 *  - XLSX: cell accuracy (value and type) ≥ 95 % ruled, ≥ 90 % unruled, 100 % tagged; numbers are
 *    number cells and dates date cells; a PDF without a table gives sheets of its text lines.
 * First the yardstick is checked against files whose answers are known: the corpus's own sources
 * score as perfect, and LibreOffice's PDF import (every line in a text box) is caught.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPdfOfficeCorpus, type DocPdf, type PdfOfficeCorpus, type SheetPdf } from "../fixtures/pdf-office-corpus.ts";
import { docxQuality, lcsLength, readXlsx, reopenInLibreOffice, sheetRows, xlsxQuality } from "../helpers/convert-quality.ts";
import { ok, runOp } from "../helpers/runner.ts";
import { pdftotext, tmpDir } from "../helpers/tools.ts";

const execFileP = promisify(execFile);
const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
const XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";
/** LibreOffice's own time to reopen a result, on a machine that may be busy: only a hang fails it. */
const REOPEN_SECONDS = 60;

let corpus: PdfOfficeCorpus;
let dir: string;
let cleanup: () => Promise<void>;
let profile: string;
let n = 0;
const out = (): string => path.join(dir, `out-${++n}`);
const doc = (name: string): DocPdf => corpus.docs.find((d) => d.name === name)!;

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-pdf-office-"));
  corpus = await buildPdfOfficeCorpus(path.join(dir, "corpus"));
  // The LibreOffice profile used to time reopening: made once here, so no timing pays for it.
  profile = await mkdtemp(path.join(os.tmpdir(), "folio-reopen-profile-"));
  expect((await reopenInLibreOffice(doc("report").source!, profile)).ok).toBe(true);
}, 600_000);

afterAll(async () => {
  await rm(profile, { recursive: true, force: true });
  await cleanup?.();
});

describe("the yardstick", () => {
  it("scores each source DOCX of the corpus as perfect against its own truth", async () => {
    for (const d of corpus.docs.filter((x) => x.source)) {
      const q = docxQuality(await readFile(d.source!), d.truth, await pdftotext(d.path));
      expect(q, d.name).toMatchObject({
        frameShare: 0,
        headings: { recall: 1, levels: 1, precision: 1 },
        tables: { found: d.truth.tables.length, whole: d.truth.tables.length },
      });
      expect(q.recall, d.name).toBeGreaterThanOrEqual(0.99);
      expect(q.order, d.name).toBe(1);
    }
  });

  it("catches LibreOffice's own PDF import, which puts every line in a text box", async () => {
    const d = doc("report");
    const target = out();
    await execFileP(
      "soffice",
      [
        "--headless",
        "--norestore",
        `-env:UserInstallation=${pathToFileURL(profile).href}`,
        "--infilter=writer_pdf_import",
        "--convert-to",
        "docx:MS Word 2007 XML",
        "--outdir",
        target,
        d.path,
      ],
      { timeout: 120_000 },
    );
    const q = docxQuality(await readFile(path.join(target, "report.docx")), d.truth, await pdftotext(d.path));
    expect(q.frameShare).toBeGreaterThan(0.9);
    expect(q.tables.found).toBe(0);
    expect(q.headings.recall).toBe(0);
  });

  it("scores the source workbooks as perfect against their truth", async () => {
    for (const s of corpus.sheets.filter((x) => x.source?.endsWith(".xlsx"))) {
      expect(xlsxQuality(await readXlsx(s.source!), s.truth.grid), s.name).toMatchObject({ accuracy: 1, numericShare: 1, dateShare: 1 });
    }
  });
});

describe("PDF → DOCX meets the floors", () => {
  it.each(["report", "report-tagged", "long-32", "text-lines"])("%s", async (name) => {
    const d = doc(name);
    const res = ok(await runOp("convert", { to: "docx" }, [d.path], out()));
    expect(res.outputs).toHaveLength(1);
    const file = res.outputs[0]!;
    expect(file).toMatchObject({ filename: `${path.basename(d.path, ".pdf")}.docx`, content_type: DOCX_TYPE });
    const q = docxQuality(await readFile(file.path), d.truth, await pdftotext(d.path));
    expect(q.recall, JSON.stringify(q)).toBeGreaterThanOrEqual(0.99);
    expect(q.order, JSON.stringify(q)).toBeGreaterThanOrEqual(0.98);
    expect(q.frameShare).toBe(0);
    expect(q.headings.recall, JSON.stringify(q.headings)).toBe(1);
    expect(q.tables.found, JSON.stringify(q.tables)).toBe(d.truth.tables.length);
    if (d.truth.tables.length === 0) expect(q.tables.docxTables).toBe(0);
    const reopen = await reopenInLibreOffice(file.path, profile, 120_000);
    expect(reopen.ok).toBe(true);
    expect(reopen.seconds).toBeLessThan(REOPEN_SECONDS);
  });
});

describe("PDF → XLSX meets the floors", () => {
  const floor = (s: SheetPdf): number => (s.tagged ? 1 : s.truth.ruled ? 0.95 : 0.9);
  it.each(["sheet-ruled", "sheet-unruled", "sheet-ruled-tagged", "sheet-unruled-tagged", "grid-lines"])("%s", async (name) => {
    const s = corpus.sheets.find((x) => x.name === name)!;
    const res = ok(await runOp("convert", { to: "xlsx" }, [s.path], out()));
    expect(res.outputs).toHaveLength(1);
    const file = res.outputs[0]!;
    expect(file).toMatchObject({ filename: `${path.basename(s.path, ".pdf")}.xlsx`, content_type: XLSX_TYPE });
    const q = xlsxQuality(await readXlsx(file.path), s.truth.grid);
    expect(q.accuracy, JSON.stringify(q)).toBeGreaterThanOrEqual(floor(s));
    // Numbers are number cells and dates date cells, not text that looks like them.
    expect(q.numericShare, JSON.stringify(q)).toBeGreaterThanOrEqual(floor(s));
    expect(q.dateShare, JSON.stringify(q)).toBeGreaterThanOrEqual(floor(s));
    expect((await reopenInLibreOffice(file.path, profile)).ok).toBe(true);
  });

  it("a PDF without a table gives a workbook whose sheets hold the page's text lines, in order", async () => {
    const t = corpus.textLines;
    const res = ok(await runOp("convert", { to: "xlsx" }, [t.path], out()));
    const file = res.outputs[0]!;
    expect(file.content_type).toBe(XLSX_TYPE);
    const sheets = await readXlsx(file.path);
    expect(sheets.length).toBeGreaterThanOrEqual(1);
    const lines = t.lines.flat().map((l) => l.replace(/\s+/g, " ").trim());
    const rows = sheetRows(sheets);
    expect(lcsLength(lines, rows) / lines.length).toBeGreaterThanOrEqual(0.99);
    expect(rows.length).toBeLessThanOrEqual(lines.length + t.lines.length);
    expect((await reopenInLibreOffice(file.path, profile)).ok).toBe(true);
  });
});
