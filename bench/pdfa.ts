/**
 * Benchmark: PDF/A on a corpus — does every output validate?
 *   node bench/pdfa.ts [max-files-per-corpus]
 *
 * The corpus: the real-world PDFs of ../shared/corpus/real-pdfs (pdfplumber's and py-pdf's test
 * files: reports, forms, CMYK and fax images, attachments, Arabic text, PDF/A) and a sample of
 * qpdf's test files (every 10th, many damaged on purpose), up to N each (default 40), plus
 * documents made here (text, scans, images). Each goes through `convert to: "pdf/a-2b"` (and the
 * made ones through -1b and -3b as well). Folio validates each output with veraPDF before
 * delivering it; this script validates every delivered file again with veraPDF (one run over all
 * of them, each against the part it claims) and counts: delivered and valid, refused with a
 * stable code (which), delivered but invalid (must be 0).
 */
import { execFile } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { JobError } from "../core/errors.ts";
import { verapdfJar } from "../runner/engines/verapdf.ts";
import { textPdf } from "../test/fixtures/pdf-fixtures.ts";
import { ENGLISH_WORDS, paragraph, scannedPdf } from "../test/fixtures/scan-fixtures.ts";
import { runOp, testConfig } from "../test/helpers/runner.ts";

const execFileP = promisify(execFile);
const MAX = Number(process.argv[2] ?? 40);
const CORPUS = path.resolve(import.meta.dirname, "../../shared/corpus");
const SCRATCH = path.join(os.tmpdir(), `folio-bench-pdfa-${process.pid}`);
const load = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

function pdfsUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.toLowerCase().endsWith(".pdf") && statSync(p).size < 20 * 1024 * 1024) out.push(p);
    }
  };
  try {
    walk(dir);
  } catch {
    /* a corpus that is not there is skipped */
  }
  return out.sort();
}

await mkdir(SCRATCH, { recursive: true });
const made = [
  await textPdf(path.join(SCRATCH, "text.pdf"), 3, "text"),
  await scannedPdf(path.join(SCRATCH, "scan.pdf"), [{ text: paragraph(ENGLISH_WORDS, 3, 40), font: "TimesRoman", skew: 0, turn: 0 }]),
];
const real = pdfsUnder(path.join(CORPUS, "real-pdfs")).slice(0, MAX);
const qpdfSample = pdfsUnder(path.join(CORPUS, "qpdf-qtest"))
  .filter((_, i) => i % 10 === 0)
  .slice(0, MAX);
const runs: [string, string][] = [
  ...made.flatMap((f) => ["pdf/a-1b", "pdf/a-2b", "pdf/a-3b"].map((to) => [f, to] as [string, string])),
  ...[...real, ...qpdfSample].map((f) => [f, "pdf/a-2b"] as [string, string]),
];
console.log(
  `PDF/A of ${runs.length} conversions (${made.length} made here × 3 levels, ${real.length} real-world, ${qpdfSample.length} from qpdf's tests); load ${load()}\n`,
);

const delivered: [string, string][] = [];
const refused = new Map<string, number>();
const times: number[] = [];
for (const [i, [file, to]] of runs.entries()) {
  const t = performance.now();
  const res = await runOp("convert", { to }, [file], path.join(SCRATCH, `out-${i}`), { limits: { timeout_ms: 300_000 } });
  times.push((performance.now() - t) / 1000);
  if (res instanceof JobError) refused.set(res.code, (refused.get(res.code) ?? 0) + 1);
  else delivered.push([res.outputs[0]!.path, to.slice(6).toUpperCase()]);
}

// One veraPDF run over every delivered file, each validated against the part it claims.
let invalid = 0;
if (delivered.length) {
  const { stdout } = await execFileP(
    testConfig.FOLIO_JAVA,
    ["-Xmx1g", "-cp", verapdfJar(testConfig), "org.verapdf.apps.GreenfieldCliWrapper", "--format", "json", ...delivered.map(([f]) => f)],
    {
      maxBuffer: 512 * 1024 * 1024,
    },
  );
  const jobs = (
    JSON.parse(stdout) as {
      report: { jobs: { itemDetails: { name: string }; validationResult?: { compliant: boolean; profileName: string }[] }[] };
    }
  ).report.jobs;
  for (const [file, level] of delivered) {
    const v = jobs.find((j) => j.itemDetails.name === file)?.validationResult?.[0];
    if (!v?.compliant || !v.profileName.includes(`PDF/A-${level}`)) {
      invalid++;
      console.log(`  NOT VALID: ${file} (${v?.profileName ?? "no verdict"})`);
    }
  }
}
const sorted = [...times].sort((a, b) => a - b);
console.log("| conversions | delivered, valid (veraPDF again) | delivered, NOT valid | refused (code: count) | p50 time |");
console.log("|---|---|---|---|---|");
console.log(
  `| ${runs.length} | ${delivered.length - invalid} | ${invalid} | ${[...refused].map(([c, k]) => `${c}: ${k}`).join(", ") || "none"} | ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} s |`,
);
console.log(`load after: ${load()}`);
await rm(SCRATCH, { recursive: true, force: true });
process.exitCode = invalid ? 1 : 0;
