/**
 * The long run of the parser fuzzer (issue #10 item 4):
 *   node bench/fuzz-parser.ts [runs per target] [seed]     (make bench-fuzz-parser)
 *
 * Every PDF of the qpdf corpus (../shared/corpus/qpdf-qtest, read in place) seeds the lexer,
 * content-stream, stream-filter and sniffing targets; each corpus file qpdf can open, rewritten
 * the way merge writes it, seeds the incremental-update target; Office-shaped zips (plain, data
 * descriptors, ZIP64, a stub before them) seed the zip-directory and sniffing targets. Each target then gets RUNS mutated inputs
 * (default 20,000; a random fast-check seed unless one is given, printed for replay). The property:
 * only the parser's typed error, and no input slower than 10 s. Prints, per target, the inputs
 * answered and refused and the slowest input; exits 1 on any failure, with fast-check's shrunk
 * counterexample.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { TARGETS, corpusFiles, fuzz, qpdfWrittenSeeds, zipSeeds, type FuzzReport } from "../test/helpers/parser-fuzz.ts";

const RUNS = Number(process.argv[2] ?? 20_000);
const SEED = Number(process.argv[3] ?? Math.floor(Math.random() * 2 ** 31));
const MAX_MS = 10_000;

const dir = await mkdtemp(path.join(os.tmpdir(), "folio-bench-fuzz-"));
try {
  const pdfs = corpusFiles(10_000, 4 * 1024 * 1024);
  const written = (await qpdfWrittenSeeds(pdfs, dir)).map((w) => w.file);
  const zips = await zipSeeds(dir);
  console.log(`seeds: ${pdfs.length} corpus PDFs, ${written.length} of them as qpdf writes them; ${RUNS} inputs per target, seed ${SEED}`);
  const reports: FuzzReport[] = [];
  for (const [name, target] of Object.entries(TARGETS)) {
    const started = performance.now();
    const seeds = name === "qpdfWritten" ? written : name === "zipDirectory" ? zips : name === "sniffing" ? [...pdfs, ...zips] : pdfs;
    const report = await fuzz(target, seeds, { runs: RUNS, seed: SEED, maxMs: MAX_MS, scratch: path.join(dir, `${name}.bin`) });
    reports.push(report);
    const secs = ((performance.now() - started) / 1000).toFixed(0);
    console.log(
      `${report.target.padEnd(38)} ${String(report.runs).padStart(6)} inputs  ${String(report.answered).padStart(6)} answered  ${String(report.refused).padStart(6)} refused  slowest ${report.maxMs.toFixed(1).padStart(7)} ms  (${secs} s)`,
    );
    if (report.failure) console.log(`  FAILURE: ${report.failure}`);
  }
  process.exitCode = reports.some((r) => r.failure) ? 1 : 0;
} finally {
  await rm(dir, { recursive: true, force: true });
}
