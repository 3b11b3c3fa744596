/**
 * Benchmark: PDF → DOCX and PDF → XLSX, Folio beside the best open peers, on the same files.
 *   node bench/pdf-to-office.ts            (make bench-convert; the project's Node 24)
 *
 * The corpus is issue #6's (test/fixtures/pdf-office-corpus.ts) with a ≈100-page document added.
 * Each file goes through Folio's CLI (`node bin/folio.ts run convert --options '{"to":…}'`) and
 * through a peer's, timed as a person would run them (process start included, one at a time,
 * median of three runs interleaved with the peer's so that both see the same machine load):
 *  - DOCX: pdf2docx (its `pdf2docx convert` CLI);
 *  - XLSX: camelot (lattice, then stream when lattice finds no table; text split at ruling
 *    lines; tables written to a workbook by pandas, as its own export does). Camelot rather than
 *    pdfplumber because it is the table extractor people compare against and it installs from
 *    PyPI as wheels (its pdfium backend needs no Ghostscript).
 * Quality is measured by test/helpers/convert-quality.ts, the same yardstick the tests assert
 * floors with: for DOCX word recall, word order, share of words in frames/text boxes, headings
 * and tables found, and the time LibreOffice takes to reopen the output; for XLSX cell accuracy
 * with types (a number must be a number cell, a date a date cell) and without (the displayed
 * text), since camelot writes every cell as text.
 * Then the truth corpus of issue #13 (bench/pdf-to-office-truth.ts): exact cells per class of table
 * on the hand-made truth of real documents and on round trips of generated spreadsheets, each split
 * into tune and held-out tables, beside camelot and pdfplumber with their default settings; PDF →
 * DOCX word recall on every real PDF beside pdf2docx; PDF → XLSX silent losses.
 * The peers are Python: they live in a throwaway virtualenv under ~/.cache/folio-bench/venv,
 * created and filled from PyPI on first run (pinned versions), never used by the product.
 */
import { execFile } from "node:child_process";
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { buildPdfOfficeCorpus, type DocPdf, type SheetPdf } from "../test/fixtures/pdf-office-corpus.ts";
import {
  docxQuality,
  readXlsx,
  reopenInLibreOffice,
  xlsxQuality,
  type DocxQuality,
  type XlsxQuality,
} from "../test/helpers/convert-quality.ts";
import { pdftotext, pageCount, ROOT } from "../test/helpers/tools.ts";
import { truthBench } from "./pdf-to-office-truth.ts";

const execFileP = promisify(execFile);
const PEERS = ["pdf2docx==0.5.13", "camelot-py==2.0.0", "pdfplumber==0.11.10", "openpyxl==3.1.5"];
/** Round-trip sheets for the truth corpus (test/truth/roundtrip.ts): about 1.15 tables each. */
const ROUND_TRIPS = 150;
/** Word reports built and scored the same way (test/truth/roundtrip-docx.ts). */
const REPORTS = 60;
/** Financial statements likewise (test/truth/roundtrip-statements.ts): about 1.35 tables each. */
const STATEMENTS = 60;
/** Invoices printed from HTML by Chromium (test/truth/roundtrip-invoices.ts): about 1.6 tables each. */
const INVOICES = 60;
/** Reports rendered by ReportLab (test/truth/roundtrip-reportlab.ts): about 2 tables each. */
const REPORTLAB = 60;
/** Listings as line printers, enscript and report writers print them (test/truth/roundtrip-listings.ts): about 1.1 tables each. */
const LISTINGS = 60;
const VENV = path.join(os.homedir(), ".cache/folio-bench/venv");
const RUN_TIMEOUT_MS = 900_000;
/** Each conversion and each reopening runs this many times, interleaved; the median is reported. */
const REPEATS = 3;

/** Camelot as its users run it, writing one sheet per table found. */
const CAMELOT_SCRIPT = `
import sys, warnings
warnings.filterwarnings("ignore")
import camelot, pandas as pd
pdf, out = sys.argv[1], sys.argv[2]
tables = camelot.read_pdf(pdf, flavor="lattice", pages="all", split_text=True)
if tables.n == 0:
    tables = camelot.read_pdf(pdf, flavor="stream", pages="all", split_text=True)
with pd.ExcelWriter(out, engine="openpyxl") as xl:
    for i, t in enumerate(tables):
        t.df.to_excel(xl, sheet_name=f"Table {i + 1}", header=False, index=False)
    if tables.n == 0:
        pd.DataFrame().to_excel(xl, sheet_name="Sheet1")
`;

/** Creates the virtualenv with the pinned peers, unless the one cached has exactly them. */
async function ensureVenv(): Promise<void> {
  const marker = path.join(VENV, "folio-peers.txt");
  const want = PEERS.join("\n");
  if ((await readFile(marker, "utf8").catch(() => "")) === want) return;
  process.stderr.write(`creating ${VENV} and installing ${PEERS.join(", ")} from PyPI…\n`);
  await rm(VENV, { recursive: true, force: true });
  await execFileP("python3", ["-m", "venv", VENV]);
  await execFileP(path.join(VENV, "bin/pip"), ["install", "--quiet", "--disable-pip-version-check", ...PEERS], {
    timeout: RUN_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  });
  await writeFile(marker, want);
}

/** Runs a command and returns its wall time in seconds, or the error it failed with. */
async function timed(cmd: string, args: string[]): Promise<{ seconds: number; error?: string }> {
  const t = performance.now();
  try {
    await execFileP(cmd, args, { timeout: RUN_TIMEOUT_MS, maxBuffer: 256 * 1024 * 1024 });
    return { seconds: (performance.now() - t) / 1000 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return {
      seconds: (performance.now() - t) / 1000,
      error: (e.stdout?.trim() || e.stderr?.trim().split("\n").pop() || e.message).slice(0, 200),
    };
  }
}

/** Folio's CLI, as a user runs it; the one output lands in `outDir`. */
async function folio(pdf: string, to: "docx" | "xlsx", outDir: string): Promise<{ seconds: number; error?: string; file: string }> {
  const res = await timed(process.execPath, [
    path.join(ROOT, "bin/folio.ts"),
    "run",
    "convert",
    "--options",
    JSON.stringify({ to }),
    pdf,
    "-o",
    outDir,
  ]);
  return { ...res, file: path.join(outDir, `${path.basename(pdf, ".pdf")}.${to}`) };
}

interface DocRow {
  file: string;
  pages: number;
  tool: string;
  seconds: number;
  error?: string;
  quality?: DocxQuality;
  reopen?: number;
}

interface SheetRow {
  file: string;
  tool: string;
  seconds: number;
  error?: string;
  quality?: XlsxQuality;
}

interface Tool {
  tool: string;
  run: () => Promise<{ seconds: number; error?: string; file: string }>;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** Runs every tool REPEATS times, interleaved so that both see the same load; median times. */
async function measure(name: string, tools: Tool[]): Promise<{ tool: string; seconds: number; error?: string; file: string }[]> {
  const times = tools.map(() => [] as number[]);
  const last: { seconds: number; error?: string; file: string }[] = [];
  for (let r = 0; r < REPEATS; r++) {
    for (const [i, t] of tools.entries()) {
      process.stderr.write(`  ${name}: ${t.tool} (${r + 1}/${REPEATS})…\n`);
      last[i] = await t.run();
      times[i]!.push(last[i].seconds);
    }
  }
  return tools.map((t, i) => ({ ...last[i]!, tool: t.tool, seconds: median(times[i]!) }));
}

async function benchDoc(d: DocPdf, work: string, profile: string): Promise<DocRow[]> {
  const pages = await pageCount(d.path);
  const reference = await pdftotext(d.path);
  const pdf2docxFile = path.join(work, "pdf2docx", `${d.name}.docx`);
  await mkdir(path.dirname(pdf2docxFile), { recursive: true });
  const results = await measure(d.name, [
    { tool: "folio", run: () => folio(d.path, "docx", path.join(work, "folio", d.name)) },
    {
      tool: "pdf2docx",
      run: async () => ({ ...(await timed(path.join(VENV, "bin/pdf2docx"), ["convert", d.path, pdf2docxFile])), file: pdf2docxFile }),
    },
  ]);
  const rows: DocRow[] = [];
  for (const res of results) {
    const row: DocRow = { file: d.name, pages, tool: res.tool, seconds: res.seconds, ...(res.error ? { error: res.error } : {}) };
    if (!res.error) {
      row.quality = docxQuality(await readFile(res.file), d.truth, reference);
      const reopens = [];
      for (let r = 0; r < REPEATS; r++) reopens.push(await reopenInLibreOffice(res.file, profile, 600_000));
      if (reopens.every((x) => x.ok)) row.reopen = median(reopens.map((x) => x.seconds));
    }
    rows.push(row);
  }
  return rows;
}

async function benchSheet(s: SheetPdf, work: string, script: string): Promise<SheetRow[]> {
  const camelotFile = path.join(work, "camelot", `${s.name}.xlsx`);
  await mkdir(path.dirname(camelotFile), { recursive: true });
  const results = await measure(s.name, [
    { tool: "folio", run: () => folio(s.path, "xlsx", path.join(work, "folio", s.name)) },
    {
      tool: "camelot",
      run: async () => ({ ...(await timed(path.join(VENV, "bin/python"), [script, s.path, camelotFile])), file: camelotFile }),
    },
  ]);
  const rows: SheetRow[] = [];
  for (const res of results) {
    const quality = res.error ? undefined : xlsxQuality(await readXlsx(res.file), s.truth.grid);
    rows.push({
      file: s.name,
      tool: res.tool,
      seconds: res.seconds,
      ...(res.error ? { error: res.error } : {}),
      ...(quality ? { quality } : {}),
    });
  }
  return rows;
}

const pct = (x: number | undefined): string => (x === undefined ? "—" : `${(x * 100).toFixed(1)} %`);
const secs = (x: number | undefined): string => (x === undefined ? "—" : `${x.toFixed(2)} s`);
const table = (head: string[], body: string[][]): string[] => {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)) + 2);
  const line = (r: string[]): string =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join("")
      .trimEnd();
  return [line(head), line(widths.map((w) => "-".repeat(w - 2))), ...body.map(line)];
};

function docTable(rows: DocRow[]): string[] {
  return table(
    ["file", "pages", "tool", "time", "recall", "order", "in frames", "headings", "tables", "reopen"],
    rows.map((r) => {
      const q = r.quality;
      if (!q) return [r.file, String(r.pages), r.tool, secs(r.seconds), `failed: ${r.error ?? ""}`, "", "", "", "", ""];
      return [
        r.file,
        String(r.pages),
        r.tool,
        secs(r.seconds),
        pct(q.recall),
        pct(q.order),
        pct(q.frameShare),
        pct(q.headings.recall),
        `${q.tables.found}/${q.tables.expected} (${q.tables.whole} whole)`,
        r.reopen === undefined ? "failed" : secs(r.reopen),
      ];
    }),
  );
}

function sheetTable(rows: SheetRow[]): string[] {
  return table(
    ["file", "tool", "time", "cells (value+type)", "cells (text)", "numbers numeric", "dates as dates", "sheets"],
    rows.map((r) => {
      const q = r.quality;
      if (!q) return [r.file, r.tool, secs(r.seconds), `failed: ${r.error ?? ""}`, "", "", "", ""];
      return [
        r.file,
        r.tool,
        secs(r.seconds),
        pct(q.accuracy),
        pct(q.textAccuracy),
        pct(q.numericShare),
        pct(q.dateShare),
        String(q.sheets),
      ];
    }),
  );
}

/** Per file: is Folio's quality at least the peer's and its time at most the peer's? */
function verdicts(rows: (DocRow | SheetRow)[], score: (r: DocRow | SheetRow) => number): string[] {
  const files = [...new Set(rows.map((r) => r.file))];
  return files.map((f) => {
    const [mine, peer] = [rows.find((r) => r.file === f && r.tool === "folio")!, rows.find((r) => r.file === f && r.tool !== "folio")!];
    const better = score(mine) >= score(peer);
    const faster = !mine.error && mine.seconds <= peer.seconds;
    return `  ${f.padEnd(22)} quality ${better ? "≥" : "<"} ${peer.tool}, time ${faster ? "≤" : ">"} ${peer.tool}${better && faster ? "" : "  ← goal not met"}`;
  });
}

async function main(): Promise<void> {
  await ensureVenv();
  const dir = await mkdtemp(path.join(os.tmpdir(), "folio-bench-pdf-office-"));
  const profile = path.join(dir, "lo-profile");
  try {
    process.stderr.write("building the corpus (LibreOffice exports, ≈100-page document included)…\n");
    const corpus = await buildPdfOfficeCorpus(path.join(dir, "corpus"), { longPages: [32, 100] });
    const work = path.join(dir, "out");
    const script = path.join(dir, "camelot-tables.py");
    await writeFile(script, CAMELOT_SCRIPT);
    // One reopen before timing any, so that no timing pays for creating the LibreOffice profile.
    await reopenInLibreOffice(corpus.docs[0]!.source!, profile);
    await access(path.join(VENV, "bin/pdf2docx"));

    process.stderr.write("PDF → DOCX…\n");
    const docRows: DocRow[] = [];
    for (const d of corpus.docs) docRows.push(...(await benchDoc(d, work, profile)));
    process.stderr.write("PDF → XLSX…\n");
    const sheetRows: SheetRow[] = [];
    for (const s of corpus.sheets) sheetRows.push(...(await benchSheet(s, work, script)));

    const docScore = (r: DocRow | SheetRow): number => {
      const q = (r as DocRow).quality;
      return q
        ? q.recall +
            q.order -
            q.frameShare +
            q.headings.recall +
            (q.tables.expected ? (q.tables.found + q.tables.whole) / (2 * q.tables.expected) : 1)
        : -Infinity;
    };
    const sheetScore = (r: DocRow | SheetRow): number => (r as SheetRow).quality?.accuracy ?? -Infinity;
    const lines = [
      "",
      `PDF → DOCX: Folio vs pdf2docx (${os.cpus().length} cores; time = one CLI run, process start included, median of ${REPEATS}; reopen = LibreOffice DOCX → PDF, median of ${REPEATS})`,
      "",
      ...docTable(docRows),
      "",
      ...corpus.docs.map((d) => `  ${d.name.padEnd(22)} ${d.note}`),
      "",
      "PDF → XLSX: Folio vs camelot (cells over the source grid; a missing cell is wrong)",
      "",
      ...sheetTable(sheetRows),
      "",
      ...corpus.sheets.map((s) => `  ${s.name.padEnd(22)} ${s.note}`),
      "",
      "Goal: equal or better quality, no slower",
      ...verdicts(docRows, docScore),
      ...verdicts(sheetRows, sheetScore),
      "",
      ...(await truthBench(path.join(dir, "truth"), VENV, {
        roundTrips: ROUND_TRIPS,
        reports: REPORTS,
        statements: STATEMENTS,
        invoices: INVOICES,
        reportlab: REPORTLAB,
        listings: LISTINGS,
        // Each generated corpus printed again by cairo too (Ghostscript: `node bench/pdf-to-office-truth.ts --via`).
        via: ["cairo"],
      })),
    ];
    process.stdout.write(lines.join("\n"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
