/**
 * The truth-corpus part of `make bench-convert` (issue #13): PDF → XLSX exact cells per class of
 * table, Folio beside camelot and pdfplumber run with their default settings on the same files, on
 * the hand-made truth of real documents (test/truth/real/) and on round trips of generated
 * spreadsheets (test/truth/roundtrip.ts), each in its tune and held-out split, and on the same
 * generated PDFs printed again by another producer when asked (`via`: test/truth/reprint.ts);
 * PDF → DOCX word recall on every real PDF, Folio beside pdf2docx; and Folio's silent losses
 * (words on the page missing from the workbook). Called by bench/pdf-to-office.ts, which owns the
 * peers' virtualenv.
 *
 * Scoring is test/helpers/table-truth.ts (exact cells: the truth's non-empty cells found with the
 * same text at the same places; "typed" also asks numbers to be number cells, which only Folio
 * writes) and test/helpers/text-recall.ts (words both poppler and MuPDF read; pdftotext alone beside).
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { readDocx, readXlsx, workbookText } from "../test/helpers/convert-quality.ts";
import {
  byClass,
  loadRealTruth,
  REAL_PDFS,
  scoreTable,
  type OutCell,
  type TableScore,
  type TruthTable,
} from "../test/helpers/table-truth.ts";
import { bestRecall, GLUED_ACROSS_CLIP, mupdfText, referenceTexts } from "../test/helpers/text-recall.ts";
import { ROOT } from "../test/helpers/tools.ts";
import { buildRoundTrip } from "../test/truth/roundtrip.ts";
import { buildReportRoundTrip } from "../test/truth/roundtrip-docx.ts";
import { buildInvoiceRoundTrip } from "../test/truth/roundtrip-invoices.ts";
import { buildListingRoundTrip } from "../test/truth/roundtrip-listings.ts";
import { buildReportlabRoundTrip } from "../test/truth/roundtrip-reportlab.ts";
import { buildStatementRoundTrip } from "../test/truth/roundtrip-statements.ts";
import { PRODUCERS, reprinted, type Producer } from "../test/truth/reprint.ts";

const execFileP = promisify(execFile);
const TIMEOUT_MS = 900_000;

/**
 * camelot with its default settings on every page: lattice (its default flavor), and stream (its
 * flavor for tables without lines) when lattice finds no table; one sheet per table.
 */
export const CAMELOT_DEFAULT_SCRIPT = `
import sys, warnings
warnings.filterwarnings("ignore")
import camelot, pandas as pd
pdf, out = sys.argv[1], sys.argv[2]
tables = camelot.read_pdf(pdf, pages="all")
if tables.n == 0:
    tables = camelot.read_pdf(pdf, pages="all", flavor="stream")
with pd.ExcelWriter(out, engine="openpyxl") as xl:
    for i, t in enumerate(tables):
        t.df.to_excel(xl, sheet_name=f"Table {i + 1}", header=False, index=False)
    if tables.n == 0:
        pd.DataFrame().to_excel(xl, sheet_name="Sheet1")
`;

/** pdfplumber as its users run it: extract_tables() on every page with default settings, one sheet per table. */
export const PDFPLUMBER_SCRIPT = `
import sys, warnings
warnings.filterwarnings("ignore")
import pdfplumber
from openpyxl import Workbook
pdf, out = sys.argv[1], sys.argv[2]
wb = Workbook()
wb.remove(wb.active)
with pdfplumber.open(pdf) as doc:
    for i, page in enumerate(doc.pages):
        for k, table in enumerate(page.extract_tables()):
            ws = wb.create_sheet(f"Page {i + 1} Table {k + 1}"[:31])
            for row in table:
                ws.append([c if c is not None else "" for c in row])
if not wb.sheetnames:
    wb.create_sheet("Sheet1")
wb.save(out)
`;

type Grid = (OutCell | undefined)[][];

interface Tool {
  name: string;
  /** Converts `pdf` to an XLSX at `out`; returns seconds, or an error. */
  run: (pdf: string, out: string) => Promise<{ seconds: number; error?: string }>;
}

async function timed(cmd: string, args: string[]): Promise<{ seconds: number; error?: string }> {
  const t = performance.now();
  try {
    await execFileP(cmd, args, { timeout: TIMEOUT_MS, maxBuffer: 256 * 1024 * 1024 });
    return { seconds: (performance.now() - t) / 1000 };
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    return { seconds: (performance.now() - t) / 1000, error: (e.stderr?.trim().split("\n").pop() || e.message).slice(0, 160) };
  }
}

/** Folio's CLI converting `pdf` to `to` into `dir`, timed like the peers. */
function folioConvert(pdf: string, to: "xlsx" | "docx", dir: string): ReturnType<typeof timed> {
  return timed(process.execPath, [path.join(ROOT, "bin/folio.ts"), "run", "convert", "--options", JSON.stringify({ to }), pdf, "-o", dir]);
}

/** The converters compared: Folio's CLI, and the peers from the virtualenv. */
export function tools(venv: string, camelotScript: string, plumberScript: string): Tool[] {
  const python = path.join(venv, "bin/python");
  return [
    {
      name: "folio",
      run: async (pdf, out) => {
        const dir = path.dirname(out);
        const res = await folioConvert(pdf, "xlsx", dir);
        return res;
      },
    },
    { name: "camelot", run: (pdf, out) => timed(python, [camelotScript, pdf, out]) },
    { name: "pdfplumber", run: (pdf, out) => timed(python, [plumberScript, pdf, out]) },
  ];
}

async function sheets(file: string): Promise<Grid[]> {
  return (await readXlsx(file)).map((s) => s.grid.map((r) => r.map((c) => c && { ...c, display: c.display ?? String(c.value) })));
}

interface ToolResult {
  tool: string;
  seconds: number;
  failures: number;
  rows: { table: TruthTable; score: TableScore }[];
}

/** Runs every tool on every PDF of the tables, scores every table. */
async function scoreTools(tables: readonly TruthTable[], all: Tool[], work: string): Promise<ToolResult[]> {
  const pdfs = [...new Set(tables.map((t) => t.pdf))];
  const out: ToolResult[] = [];
  for (const tool of all) {
    const got = new Map<string, Grid[]>();
    let seconds = 0;
    let failures = 0;
    for (const pdf of pdfs) {
      const file = path.join(work, tool.name, path.basename(path.dirname(pdf)), `${path.basename(pdf, ".pdf")}.xlsx`);
      await mkdir(path.dirname(file), { recursive: true });
      process.stderr.write(`  ${tool.name}: ${path.basename(pdf)}\n`);
      const res = await tool.run(pdf, file);
      seconds += res.seconds;
      if (res.error) failures++;
      else got.set(pdf, await sheets(file).catch(() => []));
    }
    const rows = tables.map((table) => {
      const s = got.get(table.pdf);
      return {
        table,
        score: s ? scoreTable(table.cells, s) : { cells: table.cells.flat().filter((c) => c.trim()).length, exact: 0, exactText: 0 },
      };
    });
    out.push({ tool: tool.name, seconds, failures, rows });
  }
  return out;
}

const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;

/** The per-class table: for each split and class, Folio typed and text, each peer's text. */
function classTable(title: string, results: ToolResult[], splits: readonly ("tune" | "holdout")[]): string[] {
  const lines = [title, ""];
  const head = [
    "split",
    "class",
    "tables",
    "cells",
    ...results.flatMap((r) => (r.tool === "folio" ? ["folio (typed)", "folio (text)"] : [r.tool])),
  ];
  const body: string[][] = [];
  for (const split of splits) {
    const per = results.map((r) => byClass(r.rows.filter((x) => x.table.split === split)));
    const classes = [...per[0]!.keys()].sort((a, b) => (a === "all" ? -1 : b === "all" ? 1 : a.localeCompare(b)));
    for (const cls of classes) {
      const first = per[0]!.get(cls)!;
      body.push([
        split,
        cls,
        String(first.tables),
        String(first.cells),
        ...results.flatMap((r, i) => {
          const s = per[i]!.get(cls)!;
          return r.tool === "folio" ? [pct(s.meanExact), pct(s.meanExactText)] : [pct(s.meanExactText)];
        }),
      ]);
    }
  }
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)) + 2);
  const line = (r: string[]): string =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join("")
      .trimEnd();
  lines.push(line(head), line(widths.map((w) => "-".repeat(w - 2))), ...body.map(line));
  lines.push(
    "",
    `  time over the files: ${results.map((r) => `${r.tool} ${r.seconds.toFixed(1)} s${r.failures ? ` (${r.failures} failed)` : ""}`).join(", ")}`,
  );
  lines.push(
    `  (mean over the tables of each class of the share of their non-empty cells found exact; a table counts in each of its classes)`,
  );
  return lines;
}

/** Each table's exact share per tool (the real truth is small enough to list). */
function perTable(results: ToolResult[]): string[] {
  const ids = results[0]!.rows.map((r) => r.table.id);
  const width = Math.max(...ids.map((id) => id.length)) + 2;
  const head = "table".padEnd(width) + "split    " + results.map((r) => r.tool.padEnd(12)).join("");
  return [
    head,
    ...results[0]!.rows.map(
      (row, i) =>
        row.table.id.padEnd(width) +
        row.table.split.padEnd(9) +
        results.map((r) => pct(r.tool === "folio" ? r.rows[i]!.score.exact : r.rows[i]!.score.exactText).padEnd(12)).join(""),
    ),
  ];
}

type TextTool = "folio" | "pdf2docx" | "poppler" | "xlsx";

/** The text part's running totals: found/total words per tool, and the documents worth naming. */
interface TextTally {
  sum: Record<TextTool, [number, number]>;
  lost: string[];
  lowDocx: string[];
  docs: number;
}

/** Every real PDF of the corpus, in a stable order. */
export async function realPdfFiles(): Promise<string[]> {
  const files: string[] = [];
  for (const sub of ["pdfplumber-tests", "py-pdf-sample-files"]) {
    for (const f of (await readdir(path.join(REAL_PDFS, sub))).filter((x) => x.endsWith(".pdf")).sort())
      files.push(path.join(REAL_PDFS, sub, f));
  }
  return files;
}

/** Converts one real PDF with Folio (and pdf2docx when `peer`) and adds its recall to the tally; skips PDFs without text. */
async function measureText(pdf: string, venv: string, work: string, peer: boolean, tally: TextTally): Promise<void> {
  const [refs, mu] = [await referenceTexts(pdf), (await mupdfText(pdf)) ?? undefined];
  if (!refs[0]?.trim()) return;
  const base = path.basename(pdf, ".pdf");
  // Words both readers glue across a clip count as found in their two halves, for every tool alike.
  const glued = GLUED_ACROSS_CLIP[path.basename(pdf)];
  const dir = path.join(work, "text", base);
  await mkdir(dir, { recursive: true });
  process.stderr.write(`  text: ${base}\n`);
  const fx = await folioConvert(pdf, "xlsx", dir);
  const fd = await folioConvert(pdf, "docx", dir);
  const pd = peer ? await timed(path.join(venv, "bin/pdf2docx"), ["convert", pdf, path.join(dir, "pdf2docx.docx")]) : null;
  if (fx.error || fd.error) return;
  tally.docs++;
  const xlsxText = workbookText((await sheets(path.join(dir, `${base}.xlsx`))).map((grid) => ({ grid })));
  const docxText = readDocx(await readFile(path.join(dir, `${base}.docx`))).text;
  const add = (k: TextTool, r: { found: number; total: number }): void => {
    tally.sum[k][0] += r.found;
    tally.sum[k][1] += r.total;
  };
  add("folio", bestRecall(refs, docxText, mu, glued));
  add("poppler", bestRecall(refs, docxText, undefined, glued));
  const xr = bestRecall(refs, xlsxText, mu, glued);
  add("xlsx", xr);
  if (xr.found < xr.total) tally.lost.push(`${base} (${xr.total - xr.found} of ${xr.total})`);
  const dr = bestRecall(refs, docxText, mu, glued);
  if (dr.recall < 0.99) tally.lowDocx.push(`${base} ${pct(dr.recall)}`);
  if (pd)
    add(
      "pdf2docx",
      pd.error
        ? { found: 0, total: bestRecall(refs, "", mu).total }
        : bestRecall(refs, readDocx(await readFile(path.join(dir, "pdf2docx.docx"))).text, mu, glued),
    );
}

/** Folio's PDF → DOCX word recall and PDF → XLSX silent losses on every real PDF, pdf2docx's recall beside. */
async function realText(venv: string, work: string, peer: boolean): Promise<string[]> {
  const tally: TextTally = {
    sum: { folio: [0, 0], pdf2docx: [0, 0], poppler: [0, 0], xlsx: [0, 0] },
    lost: [],
    lowDocx: [],
    docs: 0,
  };
  for (const pdf of await realPdfFiles()) await measureText(pdf, venv, work, peer, tally);
  const { sum, lost, lowDocx, docs } = tally;
  const r = (k: TextTool): string => pct(sum[k][0] / sum[k][1]);
  return [
    `Real PDFs (${docs} with text): PDF → DOCX word recall, word-weighted (words both pdftotext and mutool read)`,
    `  folio ${r("folio")} (against pdftotext alone: ${r("poppler")}), pdf2docx ${peer ? r("pdf2docx") : "not run"}`,
    `  documents under 99 % in DOCX: ${lowDocx.join(", ") || "none"}`,
    `  PDF → XLSX: folio keeps ${r("xlsx")} of the words; documents with a word missing (silent losses): ${lost.length}`,
    ...lost.map((l) => `    ${l}`),
  ];
}

export interface TruthOptions {
  /** Round-trip sheets to build and score (0: none). */
  roundTrips: number;
  /** Round-trip Word reports to build and score (test/truth/roundtrip-docx.ts; 0 or undefined: none). */
  reports?: number;
  /** Financial statements to build and score (test/truth/roundtrip-statements.ts; 0 or undefined: none). */
  statements?: number;
  /** Invoices printed by Chromium to build and score (test/truth/roundtrip-invoices.ts; 0 or undefined: none). */
  invoices?: number;
  /** Reports rendered by ReportLab to build and score (test/truth/roundtrip-reportlab.ts; 0 or undefined: none). */
  reportlab?: number;
  /** Listings printed by line printers, enscript and report writers to build and score (test/truth/roundtrip-listings.ts; 0 or undefined: none). */
  listings?: number;
  /** Producers to print each generated corpus again with (test/truth/reprint.ts), each reprint scored too (none when undefined). */
  via?: readonly Producer[];
  /** The splits of the real truth to score ("holdout" alone: the quick run). */
  splits?: readonly ("tune" | "holdout")[];
  /** Whether to measure PDF → DOCX recall and XLSX losses on every real PDF (the long part). */
  text?: boolean;
  /** Whether to run pdf2docx beside Folio in the text part (it takes minutes on a long PDF). */
  docxPeer?: boolean;
  /** Called with each part's lines as soon as it is measured (a long run shows what it has). */
  emit?: (lines: string[]) => void;
}

/** The whole truth part: real tables, round trips, real text. */
export async function truthBench(work: string, venv: string, opts: TruthOptions): Promise<string[]> {
  await mkdir(work, { recursive: true });
  // Not named after the modules: a script called camelot.py would import itself.
  const camelot = path.join(work, "run-camelot.py");
  const plumber = path.join(work, "run-pdfplumber.py");
  await writeFile(camelot, CAMELOT_DEFAULT_SCRIPT);
  await writeFile(plumber, PDFPLUMBER_SCRIPT);
  const all = tools(venv, camelot, plumber);
  const splits = opts.splits ?? ["tune", "holdout"];
  const out = [""];
  const push = (...lines: string[]): void => {
    out.push(...lines);
    opts.emit?.(lines);
  };
  process.stderr.write(`truth corpus: real documents (${splits.join(", ")})…\n`);
  const realTables = (await loadRealTruth()).filter((t) => splits.includes(t.split));
  if (splits.length) {
    const real = await scoreTools(realTables, all, path.join(work, "real"));
    push(...classTable("PDF → XLSX exact cells per class, hand-made truth of real documents (test/truth/real)", real, splits), "");
    push(...perTable(real), "");
  }
  // The generated corpora, each built once and scored like the real truth.
  const generated = [
    { count: opts.roundTrips, build: buildRoundTrip, what: "spreadsheets", source: "test/truth/roundtrip.ts", dir: "roundtrip" },
    { count: opts.reports ?? 0, build: buildReportRoundTrip, what: "Word reports", source: "test/truth/roundtrip-docx.ts", dir: "reports" },
    {
      count: opts.statements ?? 0,
      build: buildStatementRoundTrip,
      what: "financial statements",
      source: "test/truth/roundtrip-statements.ts",
      dir: "statements",
    },
    {
      count: opts.invoices ?? 0,
      build: buildInvoiceRoundTrip,
      what: "invoices",
      source: "test/truth/roundtrip-invoices.ts",
      dir: "invoices",
    },
    {
      count: opts.reportlab ?? 0,
      build: buildReportlabRoundTrip,
      what: "ReportLab reports",
      source: "test/truth/roundtrip-reportlab.ts",
      dir: "reportlab",
    },
    {
      count: opts.listings ?? 0,
      build: buildListingRoundTrip,
      what: "listings (line printer, enscript, report writer)",
      source: "test/truth/roundtrip-listings.ts",
      dir: "listings",
    },
  ];
  for (const g of generated.filter((c) => c.count > 0)) {
    process.stderr.write(`truth corpus: ${g.count} generated ${g.what}…\n`);
    const tables = await g.build(path.join(work, `${g.dir}-pdf`), { count: g.count });
    const rt = await scoreTools(tables, all, path.join(work, g.dir));
    push(
      ...classTable(`PDF → XLSX exact cells per class, round trips of ${g.count} generated ${g.what} (${g.source})`, rt, [
        "tune",
        "holdout",
      ]),
      "",
    );
    for (const producer of opts.via ?? []) {
      process.stderr.write(`truth corpus: the ${g.what} printed again by ${producer}…
`);
      const again = await reprinted(tables, producer, path.join(work, `${g.dir}-${producer}-pdf`));
      const scored = await scoreTools(again, all, path.join(work, `${g.dir}-${producer}`));
      push(...classTable(`The same ${g.what} printed again by ${producer} (test/truth/reprint.ts)`, scored, ["tune", "holdout"]), "");
    }
  }
  if (opts.text ?? true) {
    process.stderr.write("real PDFs: text recall…\n");
    push(...(await realText(venv, work, opts.docxPeer ?? true)), "");
  }
  return out;
}

/**
 * Run alone (the venv of bench/pdf-to-office.ts must exist: `make bench-convert` creates it):
 *   node bench/pdf-to-office-truth.ts [--holdout | --no-real] [--roundtrips N] [--reports N] [--statements N] [--invoices N] [--reportlab N] [--listings N] [--via] [--no-text] [--no-pdf2docx]
 * --holdout scores the held-out real truth only (the quick run on a loaded machine); --no-real skips
 * the real truth tables, --no-text the text recall, --no-pdf2docx the text recall's peer.
 */
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const n = args.indexOf("--roundtrips");
  const reports = args.indexOf("--reports");
  const statements = args.indexOf("--statements");
  const invoices = args.indexOf("--invoices");
  const reportlab = args.indexOf("--reportlab");
  const listings = args.indexOf("--listings");
  const venv = path.join(os.homedir(), ".cache/folio-bench/venv");
  const work = await mkdtemp(path.join(os.tmpdir(), "folio-truth-bench-"));
  try {
    await truthBench(work, venv, {
      roundTrips: n >= 0 ? Number(args[n + 1]) : 0,
      reports: reports >= 0 ? Number(args[reports + 1]) : 0,
      statements: statements >= 0 ? Number(args[statements + 1]) : 0,
      invoices: invoices >= 0 ? Number(args[invoices + 1]) : 0,
      reportlab: reportlab >= 0 ? Number(args[reportlab + 1]) : 0,
      listings: listings >= 0 ? Number(args[listings + 1]) : 0,
      via: args.includes("--via") ? PRODUCERS : undefined,
      splits: args.includes("--no-real") ? [] : args.includes("--holdout") ? ["holdout"] : ["tune", "holdout"],
      text: !args.includes("--no-text"),
      docxPeer: !args.includes("--no-pdf2docx"),
      emit: (lines) => process.stdout.write(lines.join("\n") + "\n"),
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
