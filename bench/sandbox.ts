/**
 * What the engines' sandbox costs (issue #11, core/sandbox.ts; goal: under 30 ms per job), on
 * this machine, with and without it, median of N runs each:
 *
 *   1. one engine process: `qpdf --show-npages` on a small PDF, bare vs in bubblewrap (prlimit,
 *      bwrap with the system read-only, the job's paths bound, new namespaces);
 *   2. one job: a merge of two small PDFs through runSpec (5 qpdf processes: inspections, the
 *      merge, the page count), FOLIO_SANDBOX=none vs bwrap;
 *   3. one Office conversion on a warm office: the pool unsandboxed vs sandboxed (the input copied
 *      into the slot's exchange and the PDF moved out).
 *
 *   node bench/sandbox.ts [runs]
 */
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { bwrapArgv, sandboxPolicy } from "../core/sandbox.ts";
import { SofficePool } from "../runner/engines/soffice-pool.ts";
import { runSpec } from "../runner/run.ts";
import { textPdf } from "../test/fixtures/pdf-fixtures.ts";

const RUNS = Number(process.argv[2] ?? 30);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (n: number): string => `${n.toFixed(1)} ms`;
const hostFs = {
  exists: (p: string): boolean => existsSync(p),
  isDir: (p: string): boolean => statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false,
  isLink: (p: string): boolean => lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink() ?? false,
};

async function timed(runs: number, fn: () => unknown): Promise<number> {
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    t.push(performance.now() - start);
  }
  return median(t);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "folio-bench-sandbox-"));
  const log = createLogger({ level: "warn", pretty: false }, { component: "bench" });
  try {
    console.log(
      `sandbox cost — median of ${RUNS} runs; load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")} on ${os.cpus().length} cores\n`,
    );
    const a = await textPdf(path.join(dir, "a.pdf"), 2, "alpha");
    const b = await textPdf(path.join(dir, "b.pdf"), 3, "beta");

    // 1. One process.
    const policy = sandboxPolicy(loadConfig({ FOLIO_SANDBOX: "bwrap" }));
    const args = ["--show-npages", a];
    const bare = await timed(RUNS, () => execFileSync("qpdf", args));
    const [file, ...rest] = bwrapArgv({ ...policy, readable: [a], writable: [dir] }, "qpdf", args, undefined, hostFs);
    const boxed = await timed(RUNS, () => execFileSync(file!, rest));
    console.log("one engine process (qpdf --show-npages)");
    console.log(`  bare ${ms(bare)}   in bubblewrap ${ms(boxed)}   cost ${ms(boxed - bare)}\n`);

    // 2. One job.
    const job = async (mode: "none" | "bwrap", n: number): Promise<void> => {
      const out = path.join(dir, `out-${mode}-${n}`);
      await mkdir(out, { recursive: true });
      const config = loadConfig({ FOLIO_SANDBOX: mode, FOLIO_TMP_DIR: dir, FOLIO_LOG_LEVEL: "warn" });
      const soffice = { engine: "cold" as const, toPdf: () => Promise.reject(new Error("unused")), close: () => Promise.resolve() };
      await runSpec(
        {
          operation: "merge",
          inputs: [
            { path: a, filename: "a.pdf" },
            { path: b, filename: "b.pdf" },
          ],
          options: {},
          output_dir: out,
        },
        { config, log, soffice },
      );
    };
    let n = 0;
    await job("none", n++);
    const plain = await timed(RUNS, () => job("none", n++));
    const sandboxed = await timed(RUNS, () => job("bwrap", n++));
    console.log("one job (merge of 2 small PDFs: 5 qpdf processes)");
    console.log(`  FOLIO_SANDBOX=none ${ms(plain)}   bwrap ${ms(sandboxed)}   cost per job ${ms(sandboxed - plain)}\n`);

    // 3. A warm office.
    const fodt = path.join(dir, "doc.fodt");
    await writeFile(
      fodt,
      '<?xml version="1.0"?><office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text"><office:body><office:text><text:p>Folio</text:p></office:text></office:body></office:document>',
    );
    const office = async (sandboxedPool: boolean): Promise<number> => {
      const pool = new SofficePool({
        soffice: "soffice",
        size: 1,
        tmpDir: dir,
        jobTimeoutMs: 60_000,
        maxJobs: 1000,
        maxRssMb: 4096,
        log,
        ...(sandboxedPool ? { sandbox: policy } : {}),
      });
      try {
        const work = path.join(dir, `office-${sandboxedPool}`);
        await mkdir(work, { recursive: true });
        await pool.toPdf(fodt, { work, signal: AbortSignal.timeout(120_000) }); // warm
        return await timed(Math.max(5, Math.round(RUNS / 3)), () => pool.toPdf(fodt, { work, signal: AbortSignal.timeout(60_000) }));
      } finally {
        await pool.close();
      }
    };
    const warmPlain = await office(false);
    const warmBoxed = await office(true);
    console.log("one conversion on a warm LibreOffice (a one-paragraph document)");
    console.log(`  unsandboxed ${ms(warmPlain)}   sandboxed (exchange directory) ${ms(warmBoxed)}   cost ${ms(warmBoxed - warmPlain)}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
