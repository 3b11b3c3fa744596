/**
 * PDF → XLSX and PDF → DOCX on real documents nobody here made (issue #13), through the convert
 * operation, on ../shared/corpus/real-pdfs/ (pdfplumber's and py-pdf's test files: government
 * reports, forms, multi-page and rotated tables, TeX, CJK, Arabic).
 *
 * In `make test` (kept short: about a minute unloaded) it converts the PDFs of the hand-made truth
 * tables (test/truth/real/) to XLSX:
 *  - nothing on their pages is missing from the workbook: every word that two independent
 *    extractors, poppler's pdftotext and MuPDF's mutool, both read is in the workbook (a word only
 *    one of them reads is a misreading of one of them: poppler reads TeX's prime ′ as "0");
 *  - each class of table keeps its exact-cell floor in each split (a floor under today's figures, a
 *    ratchet: the goal of 90 % is the benchmark's to report).
 * With FOLIO_REAL_CORPUS=all it takes every PDF of the corpus, to DOCX as well, and checks the
 * issue's goals themselves: no word missing from any workbook, PDF → DOCX ≥ 99.5 % of the words
 * word-weighted, every class ≥ 90 % on the truth tables and on a short round-trip corpus
 * (test/truth/roundtrip.ts). That run takes ten minutes; `make bench-convert` prints the same
 * figures beside camelot, pdfplumber and pdf2docx (bench/pdf-to-office-truth.ts).
 * Files the converter refuses with a stable code are checked to be those expected (no text,
 * passwords, damage beyond repair); any other refusal fails.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobError } from "../../core/errors.ts";
import { readDocx, readXlsx, workbookText } from "../helpers/convert-quality.ts";
import { runOp } from "../helpers/runner.ts";
import { byClass, loadRealTruth, REAL_PDFS, scoreTable, type OutCell, type TableScore, type TruthTable } from "../helpers/table-truth.ts";
import { bestRecall, GLUED_ACROSS_CLIP, mupdfText, referenceTexts, type Recall } from "../helpers/text-recall.ts";
import { tmpDir } from "../helpers/tools.ts";
import { buildRoundTrip } from "../truth/roundtrip.ts";
import { buildReportRoundTrip } from "../truth/roundtrip-docx.ts";
import { buildInvoiceRoundTrip } from "../truth/roundtrip-invoices.ts";
import { buildListingRoundTrip } from "../truth/roundtrip-listings.ts";
import { buildReportlabRoundTrip } from "../truth/roundtrip-reportlab.ts";
import { buildStatementRoundTrip } from "../truth/roundtrip-statements.ts";
import { reprinted } from "../truth/reprint.ts";

/** Files the converter refuses, and why (any other refusal fails the suite). */
const REFUSED: Record<string, string> = {
  "empty.pdf": "unsupported_input",
  "password-example.pdf": "encrypted_input",
  "005-libreoffice-writer-password__libreoffice-writer-password.pdf": "encrypted_input",
  // No text: pages of images only (an OCR job).
  "issue-203-decimalize.pdf": "unsupported_input",
  "issue-297-example.pdf": "unsupported_input",
  "007-imagemagick-images__imagemagick-ASCII85Decode.pdf": "unsupported_input",
  "007-imagemagick-images__imagemagick-CCITTFaxDecode.pdf": "unsupported_input",
  "007-imagemagick-images__imagemagick-images.pdf": "unsupported_input",
  "007-imagemagick-images__imagemagick-lzw.pdf": "unsupported_input",
  "019-grayscale-image__grayscale-image.pdf": "unsupported_input",
  "023-cmyk-image__cmyk-image.pdf": "unsupported_input",
  // A damaged cross-reference table that pdfjs cannot open (issue #13's repair path may mend it: then it is checked like the rest).
  "017-unreadable-meta-data__unreadablemetadata.pdf": "invalid_pdf",
};
/** Word recall of every workbook against pdftotext alone (its misreadings of TeX math and CJK duplicates count here). */
const XLSX_POPPLER_FLOOR = 0.9;
/** PDF → DOCX: the goal, word-weighted over the corpus, and a floor per document. */
const DOCX_GOAL = 0.995;
const DOCX_DOC_FLOOR = 0.95;

interface Converted {
  file: string;
  references: string[];
  /** MuPDF's text (undefined without mutool: pdftotext's words then all count). */
  mupdf: string | undefined;
  xlsx: { grid: (OutCell | undefined)[][] }[];
  xlsxText: string;
  docxText: string;
}

/** The whole corpus and the issue's goals (long), or the truth tables' PDFs and today's floors. */
const ALL = process.env.FOLIO_REAL_CORPUS === "all";

let dir: string;
let cleanup: () => Promise<void>;
const converted: Converted[] = [];
const refused: [string, string][] = [];

async function pdfs(): Promise<string[]> {
  if (!ALL) return [...new Set((await loadRealTruth()).map((t) => t.pdf))].sort();
  const out: string[] = [];
  for (const sub of ["pdfplumber-tests", "py-pdf-sample-files"]) {
    for (const f of (await readdir(path.join(REAL_PDFS, sub))).filter((x) => x.endsWith(".pdf")).sort())
      out.push(path.join(REAL_PDFS, sub, f));
  }
  return out;
}

async function convert(file: string, to: "xlsx" | "docx"): Promise<string | JobError> {
  const out = path.join(dir, to, path.basename(file, ".pdf"));
  const res = await runOp("convert", { to }, [file], out);
  return res instanceof JobError ? res : res.outputs[0]!.path;
}

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-pdf-office-real-"));
  for (const file of await pdfs()) {
    const xlsx = await convert(file, "xlsx");
    if (xlsx instanceof JobError) {
      refused.push([path.basename(file), xlsx.code]);
      continue;
    }
    const docx = ALL ? await convert(file, "docx") : null;
    if (docx instanceof JobError) throw new Error(`${path.basename(file)}: XLSX converts but DOCX fails with ${docx.code}`);
    const sheets = (await readXlsx(xlsx)).map((s) => ({
      grid: s.grid.map((r) => r.map((c) => c && { ...c, display: c.display ?? String(c.value) })),
    }));
    converted.push({
      file,
      references: await referenceTexts(file),
      mupdf: (await mupdfText(file)) ?? undefined,
      xlsx: sheets,
      xlsxText: workbookText(sheets),
      docxText: docx ? readDocx(await readFile(docx)).text : "",
    });
  }
}, 1_800_000);

afterAll(async () => {
  await cleanup?.();
});

const missingList = (r: Recall): string =>
  [...r.missing]
    .slice(0, 30)
    .map(([w, n]) => `${w}×${n}`)
    .join(" ");

describe("real PDFs: the converter refuses only what it should", () => {
  it("refuses exactly the files without text, with passwords or damaged beyond reading, with their codes", () => {
    for (const [name, code] of refused) expect(code, name).toBe(REFUSED[name]);
    // A file on the list that now converts (a repaired file) is checked below like the others.
    expect(converted.length).toBeGreaterThan(ALL ? 60 : 10);
  });
});

describe("real PDFs → XLSX: no text on the page is missing from the workbook", () => {
  it("has every word that pdftotext and mutool both read, in every PDF of the corpus", () => {
    const losses = converted
      .map((c) => ({ c, r: bestRecall(c.references, c.xlsxText, c.mupdf, GLUED_ACROSS_CLIP[path.basename(c.file)]) }))
      .filter(({ r }) => r.found < r.total)
      .map(({ c, r }) => `${path.basename(c.file)}: ${r.total - r.found} words missing: ${missingList(r)}`);
    expect(losses).toEqual([]);
  });

  it(`keeps ≥ ${XLSX_POPPLER_FLOOR * 100} % of pdftotext's words alone in every workbook`, () => {
    for (const c of converted) {
      const r = bestRecall(c.references, c.xlsxText);
      expect(r.recall, `${path.basename(c.file)}: ${missingList(r)}`).toBeGreaterThanOrEqual(XLSX_POPPLER_FLOOR);
    }
  });
});

describe.runIf(ALL)("real PDFs → DOCX: word recall", () => {
  it(`keeps ≥ ${DOCX_GOAL * 100} % of the words, word-weighted over the corpus, and ≥ ${DOCX_DOC_FLOOR * 100} % of every document's`, () => {
    let found = 0;
    let total = 0;
    for (const c of converted) {
      const r = bestRecall(c.references, c.docxText, c.mupdf, GLUED_ACROSS_CLIP[path.basename(c.file)]);
      found += r.found;
      total += r.total;
      expect(r.recall, `${path.basename(c.file)}: ${missingList(r)}`).toBeGreaterThanOrEqual(DOCX_DOC_FLOOR);
    }
    expect(found / total).toBeGreaterThanOrEqual(DOCX_GOAL);
  });
});

/** The goal: exact cells (value and type), mean over each class's tables, in each split. */
const GOAL = 0.9;
/**
 * Today's figures per split and class, rounded down a point: a ratchet that catches a regression in
 * `make test` (measured 2026-11-28; raise them as the finders improve, never lower them to pass).
 */
const FLOORS: Record<"tune" | "holdout", Record<string, number>> = {
  tune: {
    all: 0.99,
    "multi-line": 0.98,
    "multi-page": 0.99,
    "multi-table": 0.98,
    "partly-ruled": 0.99,
    rotated: 0.99,
    ruled: 0.99,
    spanning: 0.98,
    tight: 0.99,
    unruled: 0.98,
  },
  holdout: {
    all: 0.99,
    "multi-line": 0.99,
    "multi-table": 0.99,
    "partly-ruled": 0.99,
    rotated: 0.99,
    ruled: 0.99,
    spanning: 0.99,
    tight: 0.99,
    unruled: 0.99,
  },
};

/**
 * The 12 Word reports' figures per class, rounded down a point (measured 2026-12-02: all 98.4 %,
 * right-to-left 93.8 %: dates such as "07-Dec-16" in a right-to-left cell are drawn "Dec-16-07"
 * and cannot be read back unambiguously).
 */
const REPORT_FLOORS: Record<string, number> = {
  all: 0.97,
  "multi-line": 0.98,
  "multi-page": 0.99,
  "multi-table": 0.97,
  "partly-ruled": 0.98,
  rotated: 0.93,
  rtl: 0.92,
  ruled: 0.99,
  spanning: 0.95,
  tight: 0.96,
  unruled: 0.94,
};

/**
 * The 12 financial statements' (seed 43) figures per class, rounded down a point (measured
 * 2026-12-07: all 99.7 %; the sparse note column once read with the first year's amounts is a
 * column of its own).
 */
const STATEMENT_FLOORS: Record<string, number> = {
  all: 0.98,
  "multi-line": 0.98,
  "multi-table": 0.99,
  "partly-ruled": 0.99,
  spanning: 0.98,
  statement: 0.98,
  unruled: 0.98,
};

/**
 * The 12 invoices' (seed 61) figures per class, rounded down a point (measured 2026-12-07: all
 * 100 %, printed by Chromium and printed again by cairo; before, a long invoice's totals box on
 * its last page, its labels starting where the repeated header's "Qty" does, read as rows of the
 * items, 97.4 %, and 95.1 % via cairo, whose word spaces drawn as moves made its addresses cells).
 */
const INVOICE_FLOORS: Record<string, number> = {
  all: 0.99,
  invoice: 0.99,
  "multi-line": 0.99,
  "multi-page": 0.99,
  "multi-table": 0.99,
  "partly-ruled": 0.99,
  ruled: 0.99,
  unruled: 0.99,
};

/**
 * The 12 ReportLab reports' (seed 83) figures per class, rounded down a point (measured
 * 2026-12-03: all 99.9 %; a label spanning the two header rows, set at their foot, is read on the
 * lower one).
 */
const REPORTLAB_FLOORS: Record<string, number> = {
  all: 0.98,
  reportlab: 0.98,
  "multi-line": 0.99,
  "multi-page": 0.98,
  "multi-table": 0.98,
  "partly-ruled": 0.98,
  ruled: 0.99,
  spanning: 0.98,
  tight: 0.98,
  unruled: 0.99,
};

/**
 * The 12 listings' (seed 101) figures per class, rounded down a point (measured 2026-12-08: all
 * 99.9 %; an SAP list's two header lines, "OPENING" over "BALANCE" between bars, are read as two).
 */
const LISTING_FLOORS: Record<string, number> = {
  all: 0.98,
  listing: 0.98,
  "multi-line": 0.98,
  "multi-page": 0.99,
  "multi-table": 0.98,
  "partly-ruled": 0.99,
  "text-ruled": 0.98,
  tight: 0.99,
  unruled: 0.99,
};

function score(
  tables: readonly TruthTable[],
  sheetsOf: (pdf: string) => { grid: (OutCell | undefined)[][] }[] | undefined,
): { table: TruthTable; score: TableScore }[] {
  return tables.map((table) => {
    const sheets = sheetsOf(table.pdf);
    return {
      table,
      score: sheets
        ? scoreTable(
            table.cells,
            sheets.map((s) => s.grid),
          )
        : { cells: 0, exact: 0, exactText: 0 },
    };
  });
}

/** Each truth table's PDF converted to XLSX and read back, by PDF (generated corpora: every PDF converts). */
async function workbooks(tables: readonly TruthTable[]): Promise<Map<string, { grid: (OutCell | undefined)[][] }[]>> {
  const sheets = new Map<string, { grid: (OutCell | undefined)[][] }[]>();
  for (const pdf of new Set(tables.map((t) => t.pdf))) {
    const xlsx = await convert(pdf, "xlsx");
    if (xlsx instanceof JobError) throw new Error(`${path.basename(pdf)}: ${xlsx.code}`);
    sheets.set(
      pdf,
      (await readXlsx(xlsx)).map((s) => ({
        grid: s.grid.map((r) => r.map((c) => c && { ...c, display: c.display ?? String(c.value) })),
      })),
    );
  }
  return sheets;
}

/** A generated corpus converted and scored: every class of `floors` present and at its floor (the goal too under FOLIO_REAL_CORPUS=all). */
async function expectFloors(tables: readonly TruthTable[], floors: Record<string, number>): Promise<void> {
  const sheets = await workbooks(tables);
  const classes = byClass(score(tables, (pdf) => sheets.get(pdf)));
  // Every floor is checked: a class the corpus no longer holds fails instead of passing unseen.
  expect([...classes.keys()].sort()).toEqual(Object.keys(floors).sort());
  for (const [cls, s] of classes) {
    const floor = floors[cls];
    expect(floor, `${cls}: a class without a floor`).toBeDefined();
    expect(s.meanExact, `${cls}: ${JSON.stringify(s)}`).toBeGreaterThanOrEqual(ALL ? Math.max(GOAL, floor!) : floor!);
  }
}

describe("truth tables: exact cells per class", () => {
  it.each(["tune", "holdout"] as const)("real documents, %s split: every class keeps its floor", async (split) => {
    const tables = (await loadRealTruth()).filter((t) => t.split === split);
    const rows = score(tables, (pdf) => converted.find((c) => c.file === pdf)?.xlsx);
    for (const [cls, s] of byClass(rows)) {
      const floor = ALL ? GOAL : FLOORS[split][cls];
      expect(floor, `${split} ${cls}: a class without a floor`).toBeDefined();
      expect(s.meanExact, `${split} ${cls}: ${JSON.stringify(s)}`).toBeGreaterThanOrEqual(floor!);
    }
  });

  it("Word reports (a short corpus of test/truth/roundtrip-docx.ts): every class keeps its floor", async () => {
    await expectFloors(await buildReportRoundTrip(path.join(dir, "reports"), { count: 12 }), REPORT_FLOORS);
  }, 600_000);

  it("financial statements (a short corpus of test/truth/roundtrip-statements.ts): every class keeps its floor", async () => {
    await expectFloors(await buildStatementRoundTrip(path.join(dir, "statements"), { count: 12, seed: 43 }), STATEMENT_FLOORS);
  }, 600_000);

  // Printed again by cairo (test/truth/reprint.ts) they keep the originals' floors (measured
  // 2026-12-07: all 99.7 %; before cairo's ligatures and word spaces drawn as TJ numbers were read,
  // 98.7 %, and 85.7 % for one statement whose wrapped label fell apart).
  it("the same statements printed again by cairo: every class keeps its floor", async () => {
    const tables = await buildStatementRoundTrip(path.join(dir, "statements"), { count: 12, seed: 43 });
    await expectFloors(await reprinted(tables, "cairo", path.join(dir, "statements-cairo")), STATEMENT_FLOORS);
  }, 600_000);

  it("invoices printed by Chromium (a short corpus of test/truth/roundtrip-invoices.ts): every class keeps its floor", async () => {
    await expectFloors(await buildInvoiceRoundTrip(path.join(dir, "invoices"), { count: 12 }), INVOICE_FLOORS);
  }, 600_000);

  // Printed again by cairo, untagged: the geometric reading of the tagged half too.
  it("the same invoices printed again by cairo: every class keeps its floor", async () => {
    const tables = await buildInvoiceRoundTrip(path.join(dir, "invoices"), { count: 12 });
    await expectFloors(await reprinted(tables, "cairo", path.join(dir, "invoices-cairo")), INVOICE_FLOORS);
  }, 600_000);

  it("reports rendered by ReportLab (a short corpus of test/truth/roundtrip-reportlab.ts): every class keeps its floor", async () => {
    await expectFloors(await buildReportlabRoundTrip(path.join(dir, "reportlab"), { count: 12 }), REPORTLAB_FLOORS);
  }, 600_000);

  it("listings printed by line printers, enscript and report writers (a short corpus of test/truth/roundtrip-listings.ts): every class keeps its floor", async () => {
    await expectFloors(await buildListingRoundTrip(path.join(dir, "listings"), { count: 12 }), LISTING_FLOORS);
  }, 600_000);

  it.runIf(ALL)(
    "round trips (a short corpus): every class reaches the goal",
    async () => {
      const tables = await buildRoundTrip(path.join(dir, "roundtrip"), { count: 18, seed: 1313 });
      const sheets = await workbooks(tables);
      const rows = score(tables, (pdf) => sheets.get(pdf));
      for (const [cls, s] of byClass(rows)) expect(s.meanExact, `${cls}: ${JSON.stringify(s)}`).toBeGreaterThanOrEqual(GOAL);
    },
    600_000,
  );
});
