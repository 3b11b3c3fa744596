/**
 * The quick loop for table work (issue #13): Folio alone, in-process, on one split of the real
 * truth (test/truth/real/), per table and per class — no peers, no CLI start-up, no round trips.
 * The full comparison stays bench/pdf-to-office-truth.ts; this is what one iterates with, on the
 * tune split only (held-out tables are scored once, at the end, with `--split holdout`).
 *
 *   node bench/truth-tune.ts [--split tune|holdout] [--only <substring of a table id>] [--dump]
 *                            [--roundtrips N] [--reports N] [--statements N [--seed S]]
 *                            [--invoices N [--seed S]] [--reportlab N [--seed S]] [--listings N [--seed S]]
 *                            [--via cairo|gs]
 *
 * --listings N scores N generated listings as line printers, enscript and report writers print
 * them (test/truth/roundtrip-listings.ts: running heads, rules drawn in text, SAP and psql/MySQL
 * grids, trailing-minus negatives, groups with subtotals, pages), both splits; --seed S draws
 * another corpus (default 101).
 * --reportlab N scores N generated reports rendered by ReportLab (test/truth/roundtrip-reportlab.ts:
 * summaries with totals and group headers, listings with wrapped descriptions, five table styles),
 * both splits; --seed S draws another corpus (default 83).
 * --invoices N scores N generated invoices printed from HTML by Chromium (test/truth/roundtrip-invoices.ts:
 * line items ruled, lined, striped or plain, wrapped descriptions, totals under the amounts), both
 * splits; --seed S draws another corpus (default 61).
 * --statements N scores N generated financial statements (test/truth/roundtrip-statements.ts:
 * sections, indented items, subtotals, currency signs, footnote markers), both splits; --seed S draws
 * another corpus of them (default 41) to check a change on statements it was not made on.
 * --reports N scores the round trips of N generated Word reports (test/truth/roundtrip-docx.ts: tables
 * among prose, exported by LibreOffice Writer untagged or tagged), both splits, built once likewise.
 * --roundtrips N scores the round trips of N generated spreadsheets (test/truth/roundtrip.ts, both
 * splits: they are generated, nothing to tune to) instead of the real truth; their PDFs are built
 * once into $TMPDIR/folio-truth-tune-roundtrip-N and reused.
 * --via cairo|gs scores the PDFs printed again by cairo or Ghostscript (test/truth/reprint.ts), the
 * originals' truth standing for them: the same pages, their text drawn another way.
 * --dump prints each selected table's workbook rows beside the truth rows that were missed, to see
 * what went wrong.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { writeXlsx } from "../runner/ops/convert-xlsx.ts";
import { analyzePdf } from "../runner/pdf-layout/index.ts";
import { readXlsx } from "../test/helpers/convert-quality.ts";
import { byClass, cellAgrees, loadRealTruth, scoreTable, typeTruth, type OutCell, type TruthTable } from "../test/helpers/table-truth.ts";
import { buildRoundTrip } from "../test/truth/roundtrip.ts";
import { buildReportRoundTrip } from "../test/truth/roundtrip-docx.ts";
import { buildStatementRoundTrip } from "../test/truth/roundtrip-statements.ts";
import { buildInvoiceRoundTrip } from "../test/truth/roundtrip-invoices.ts";
import { buildListingRoundTrip } from "../test/truth/roundtrip-listings.ts";
import { buildReportlabRoundTrip } from "../test/truth/roundtrip-reportlab.ts";
import { PRODUCERS, reprinted, type Producer } from "../test/truth/reprint.ts";

type Grid = (OutCell | undefined)[][];

const args = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const split = opt("--split") ?? "tune";
const only = opt("--only");
const dump = args.includes("--dump");
const roundTrips = Number(opt("--roundtrips") ?? 0);
const reports = Number(opt("--reports") ?? 0);
const statements = Number(opt("--statements") ?? 0);
const invoices = Number(opt("--invoices") ?? 0);
const reportlab = Number(opt("--reportlab") ?? 0);
const listings = Number(opt("--listings") ?? 0);
const seed = opt("--seed");
const via = opt("--via");
if (via !== undefined && !PRODUCERS.includes(via as Producer)) throw new Error(`--via takes ${PRODUCERS.join(" or ")}`);

/** Folio's workbook for one PDF, as grids of shown text. */
async function folioSheets(pdf: string, work: string): Promise<{ name: string; grid: Grid }[]> {
  const signal = new AbortController().signal;
  const layout = await analyzePdf(pdf, { signal, maxImagePixels: 0, images: false });
  const out = path.join(work, `${path.basename(pdf, ".pdf")}.xlsx`);
  await writeXlsx(layout, out, signal);
  return (await readXlsx(out)).map((s) => ({
    name: s.name,
    grid: s.grid.map((r) => r.map((c) => c && { ...c, display: c.display ?? String(c.value) })),
  }));
}

const show = (g: Grid): string[] => g.map((r) => r.map((c) => c?.display ?? "").join(" | "));

/** The truth's cells missed by the best placement, for --dump: each truth row with the misses marked. */
function misses(truth: string[][], grid: Grid): string[] {
  const out: string[] = [];
  for (const row of truth) {
    const bad = row.filter((t) => t.trim() && !grid.some((r) => r.some((g) => cellAgrees(typeTruth(t), g, true))));
    if (bad.length) out.push(`  row [${row.join(" | ")}] never found: ${bad.join(" ; ")}`);
  }
  return out;
}

/** The generated corpus asked for, if any (the first with a count), its default seed if it takes one. */
const generated = [
  { label: "listings", count: listings, build: buildListingRoundTrip, seed: "101" },
  { label: "reportlab", count: reportlab, build: buildReportlabRoundTrip, seed: "83" },
  { label: "invoices", count: invoices, build: buildInvoiceRoundTrip, seed: "61" },
  { label: "statements", count: statements, build: buildStatementRoundTrip, seed: "41" },
  { label: "reports", count: reports, build: buildReportRoundTrip, seed: undefined },
  { label: "roundtrip", count: roundTrips, build: buildRoundTrip, seed: undefined },
].find((g) => g.count > 0);
const source: TruthTable[] = generated
  ? await generated.build(
      path.join(os.tmpdir(), `folio-truth-tune-${generated.label}-${generated.count}${generated.seed ? `-${seed ?? generated.seed}` : ""}`),
      { count: generated.count, ...(seed && generated.seed ? { seed: Number(seed) } : {}) },
    )
  : (await loadRealTruth()).filter((t) => t.split === split);
const work = await mkdtemp(path.join(os.tmpdir(), "folio-truth-tune-"));
const picked = source.filter((t) => !only || t.id.includes(only));
const tables = via ? await reprinted(picked, via as Producer, work) : picked;
const got = new Map<string, { name: string; grid: Grid }[]>();
const t0 = performance.now();
try {
  for (const pdf of new Set(tables.map((t) => t.pdf))) got.set(pdf, await folioSheets(pdf, work));
} finally {
  await rm(work, { recursive: true, force: true });
}
const rows = tables.map((table) => ({
  table,
  score: scoreTable(
    table.cells,
    got.get(table.pdf)!.map((s) => s.grid),
  ),
}));
for (const { table, score } of rows) {
  console.log(`${table.id.padEnd(70)} ${(score.exact * 100).toFixed(1).padStart(6)} %  (${score.cells} cells)`);
  if (!dump) continue;
  for (const s of got.get(table.pdf)!) console.log([`  == ${s.name}`, ...show(s.grid).map((l) => `  ${l}`)].join("\n"));
  console.log(
    misses(
      table.cells,
      got.get(table.pdf)!.flatMap((s) => s.grid),
    ).join("\n"),
  );
}
console.log("");
for (const [cls, s] of [...byClass(rows)].sort())
  console.log(`${generated?.label ?? split} ${cls.padEnd(14)} ${String(s.tables).padStart(3)} tables  ${(s.meanExact * 100).toFixed(1)} %`);
console.log(`(${((performance.now() - t0) / 1000).toFixed(1)} s)`);
