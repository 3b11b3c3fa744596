/**
 * What the engines' sandbox costs (issue #11, core/sandbox.ts; goal: under 30 ms per job), on
 * this machine, with and without it, median of N runs each:
 *
 *   1. one engine process: `qpdf --show-npages` on a small PDF, bare vs in bubblewrap (prlimit,
 *      bwrap with the system read-only, the job's paths bound, new namespaces);
 *   2. one job: a merge of two small PDFs through runSpec (5 qpdf processes: inspections, the
 *      merge, the page count), FOLIO_SANDBOX=none vs bwrap;
 *   3. one Office conversion on a warm office: the pool unsandboxed vs sandboxed (the input copied
 *      into the slot's exchange and the PDF moved out);
 *   4. one job through a runner worker (api/jobs/worker-pool.ts): the worker bare vs in bubblewrap
 *      with its stage (inputs staged, outputs taken back and checked, the stage emptied), the
 *      engines sandboxed in both; and what starting a worker's sandbox costs (once per worker);
 *   5. Chromium (docs/adr/0021): a browser's start, and one page on a warm browser, bare vs in
 *      bubblewrap behind its relay.
 * 4 and 5 alternate their two series job by job (see `interleaved`).
 *
 *   node bench/sandbox.ts [runs] [sections, e.g. 4,5]
 */
import { execFileSync } from "node:child_process";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { bwrapArgv, sandboxPolicy, withMemoryCap } from "../core/sandbox.ts";
import { SofficePool } from "../runner/engines/soffice-pool.ts";
import { WorkerPool } from "../api/jobs/worker-pool.ts";
import { Stage, workerSandbox } from "../api/jobs/worker-sandbox.ts";
import { ChromiumPool } from "../runner/engines/chromium-pool.ts";
import { SITE_HOST } from "../runner/engines/fetch-proxy.ts";
import { SsrfGuard } from "../core/net/ssrf.ts";
import { runSpec } from "../runner/run.ts";
import { textPdf } from "../test/fixtures/pdf-fixtures.ts";

const RUNS = Number(process.argv[2] ?? 30);
/** Which sections to run ("4,5"); all by default. */
const ONLY = (process.argv[3] ?? "1,2,3,4,5").split(",");
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (n: number): string => `${n.toFixed(1)} ms`;

async function timed(runs: number, fn: () => unknown): Promise<number> {
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    t.push(performance.now() - start);
  }
  return median(t);
}

/**
 * Medians of `fa` and `fb`, run in turn (a, b, a, b…): on a shared, loaded machine the load drifts
 * between two series run one after the other; alternating shares it out between them.
 */
async function interleaved(runs: number, fa: () => Promise<unknown>, fb: () => Promise<unknown>, gapMs = 0): Promise<[number, number]> {
  const ta: number[] = [];
  const tb: number[] = [];
  for (let i = 0; i < runs; i++) {
    for (const [fn, t] of [
      [fa, ta],
      [fb, tb],
    ] as const) {
      const start = performance.now();
      await fn();
      t.push(performance.now() - start);
      // Untimed: what a pool does after a job (a browser prepares the next page) must not land in the other's time.
      if (gapMs) await new Promise((r) => setTimeout(r, gapMs));
    }
  }
  return [median(ta), median(tb)];
}

type Log = ReturnType<typeof createLogger>;

/** 1. One engine process, bare vs in bubblewrap. */
async function oneProcess(dir: string, a: string): Promise<void> {
  const policy = sandboxPolicy(loadConfig({ FOLIO_SANDBOX: "bwrap" }));
  const args = ["--show-npages", a];
  const bare = await timed(RUNS, () => execFileSync("qpdf", args));
  const [file, ...rest] = withMemoryCap(
    policy.memoryBytes,
    bwrapArgv({ ...policy, readable: [a], writable: [dir] }, "qpdf", args, undefined),
  );
  const boxed = await timed(RUNS, () => execFileSync(file!, rest));
  console.log("one engine process (qpdf --show-npages)");
  console.log(`  bare ${ms(bare)}   in bubblewrap ${ms(boxed)}   cost ${ms(boxed - bare)}\n`);
}

/** 2. One job through runSpec, FOLIO_SANDBOX=none vs bwrap. */
async function oneJob(dir: string, a: string, b: string, log: Log): Promise<void> {
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
}

/** 3. One conversion on a warm office, unsandboxed vs sandboxed. */
async function warmOffice(dir: string, log: Log): Promise<void> {
  const policy = sandboxPolicy(loadConfig({ FOLIO_SANDBOX: "bwrap" }));
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
  console.log(`  unsandboxed ${ms(warmPlain)}   sandboxed (exchange directory) ${ms(warmBoxed)}   cost ${ms(warmBoxed - warmPlain)}\n`);
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

    const sections: Record<string, () => Promise<void>> = {
      "1": () => oneProcess(dir, a),
      "2": () => oneJob(dir, a, b, log),
      "3": () => warmOffice(dir, log),
      "4": () => workerJobs(dir, a, b, log),
      "5": () => browsers(dir, log),
    };
    for (const [name, run] of Object.entries(sections)) if (ONLY.includes(name)) await run();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** 4. A job through a runner worker, the worker bare or in bubblewrap (the engines sandboxed in both). */
async function workerJobs(dir: string, a: string, b: string, log: Log): Promise<void> {
  const dataDir = path.join(dir, "data");
  await mkdir(dataDir, { recursive: true });
  // Under root the sandboxed worker runs as nobody and stages below FOLIO_TMP_DIR: it must reach it.
  await chmod(dir, 0o711);
  const env = { ...process.env, FOLIO_SANDBOX: "bwrap", FOLIO_LOG_LEVEL: "warn", FOLIO_TMP_DIR: dir };
  const jobOn = (pool: WorkerPool, tag: string): (() => Promise<void>) => {
    let n = 0;
    return async () => {
      const out = path.join(dir, `worker-out-${tag}-${n++}`);
      await mkdir(out, { recursive: true });
      const inputs = [
        { path: a, filename: "a.pdf" },
        { path: b, filename: "b.pdf" },
      ];
      const answer = await pool.run(`job_${tag}_${n}`, { operation: "merge", inputs, options: {}, output_dir: out });
      if (!("result" in answer)) throw new Error(`merge failed: ${answer.error.message}`);
    };
  };
  const plainPool = new WorkerPool({ size: 1, env, log });
  const boxedPool = new WorkerPool({ size: 1, env: { ...env, FOLIO_DATA_DIR: dataDir }, log });
  let bare: number;
  let boxed: number;
  try {
    const [plainJob, boxedJob] = [jobOn(plainPool, "bare"), jobOn(boxedPool, "boxed")];
    await Promise.all([plainJob(), boxedJob()]); // the workers' start and first job
    [bare, boxed] = await interleaved(RUNS, plainJob, boxedJob);
  } finally {
    await Promise.all([plainPool.close(), boxedPool.close()]);
  }
  console.log("one job through a runner worker (merge of 2 small PDFs; its engines sandboxed either way)");
  console.log(`  worker bare ${ms(bare)}   worker in bubblewrap (staged in and out) ${ms(boxed)}   cost per job ${ms(boxed - bare)}`);
  // The API's part of it alone: stage the inputs, take an output back, empty the stage.
  const box = workerSandbox({ ...env, FOLIO_DATA_DIR: dataDir })!;
  const staging = new Stage(box);
  let k = 0;
  const stagedJob = async (): Promise<void> => {
    const spec = await staging.stageSpec({
      operation: "merge",
      inputs: [
        { path: a, filename: "a.pdf" },
        { path: b, filename: "b.pdf" },
      ],
      options: {},
      output_dir: dir,
    });
    const made = path.join(staging.out, "a.pdf");
    await writeFile(made, "%PDF-1.7");
    const back = path.join(dir, `collected-${k++}`);
    await mkdir(back);
    const output = { filename: "a.pdf", path: made, content_type: "application/pdf", size: 8, sha256: "", pages: 1 };
    await staging.collect({ operation: spec.operation, outputs: [output], figures: {}, duration_ms: 0 }, back);
    await staging.wipe();
  };
  const stageCost = await timed(RUNS, stagedJob);
  await staging.remove();
  console.log(`  of which staging (2 inputs ${box.user ? "copied" : "linked"} in, 1 output moved out, stage emptied) ${ms(stageCost)}`);
  // Starting a worker's sandbox: once per worker, not per job.
  const node = [process.execPath, "-e", "0"];
  const plainStart = await timed(RUNS, () => execFileSync(node[0]!, node.slice(1)));
  const stage = new Stage(box);
  const [file, ...args] = stage.argv(node);
  const user = box.user ?? {};
  const boxedStart = await timed(RUNS, () => execFileSync(file!, args, { ...user }));
  await stage.remove();
  console.log(
    `  starting Node bare ${ms(plainStart)}   in a worker's bubblewrap ${ms(boxedStart)}   cost per worker start ${ms(boxedStart - plainStart)}\n`,
  );
}

/** 5. Chromium: start, and one small page on a warm browser, bare vs in bubblewrap. */
async function browsers(dir: string, log: Log): Promise<void> {
  const config = loadConfig({ FOLIO_SANDBOX: "bwrap", FOLIO_TMP_DIR: dir });
  const site = path.join(dir, "site");
  await mkdir(site, { recursive: true });
  await writeFile(path.join(site, "index.html"), "<!DOCTYPE html><h1>Folio</h1><p>One page.</p>");
  const start = async (sandboxed: boolean): Promise<{ pool: ChromiumPool; render: () => Promise<unknown>; start: number }> => {
    const pool = new ChromiumPool({
      chromium: config.FOLIO_CHROMIUM,
      tmpDir: dir,
      size: 1,
      warm: true,
      maxJobs: 1e9,
      recycleMb: 1e9,
      jobMaxMb: config.FOLIO_CHROMIUM_JOB_MAX_MB,
      jobTimeoutMs: 60_000,
      heapMb: config.FOLIO_CHROMIUM_HEAP_MB,
      guard: new SsrfGuard([]),
      log,
      ...(sandboxed ? { sandbox: sandboxPolicy(config) } : {}),
    });
    let n = 0;
    const render = (): Promise<unknown> =>
      pool.render({
        url: `http://${SITE_HOST}/index.html`,
        site,
        output: path.join(dir, `page-${sandboxed}-${n++}.pdf`),
        print: {},
        media: "print",
        waitForNetworkIdle: false,
        waitTimeoutMs: 10_000,
        signal: AbortSignal.timeout(60_000),
      });
    const t = performance.now();
    await render(); // the browser's start (and its first page)
    return { pool, render, start: performance.now() - t };
  };
  const bare = await start(false);
  const boxed = await start(true);
  let pages: [number, number];
  try {
    pages = await interleaved(Math.max(5, Math.round(RUNS / 2)), bare.render, boxed.render, 1000);
  } finally {
    await Promise.all([bare.pool.close(), boxed.pool.close()]);
  }
  console.log("Chromium (one small page)");
  console.log(`  first page (browser start included) bare ${ms(bare.start)}   in bubblewrap ${ms(boxed.start)}`);
  console.log(`  on a warm browser bare ${ms(pages[0])}   in bubblewrap ${ms(pages[1])}   cost per job ${ms(pages[1] - pages[0])}`);
}

await main();
