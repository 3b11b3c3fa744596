/**
 * Benchmark: HTML → PDF on Chromium.
 *   node bench/html.ts [documents-for-the-memory-run] [--memory-only]
 *
 * Fixed parameters, one run, printed side by side:
 *  1. latency of a one-page HTML (text, a table, inline CSS): warm pool (a browser kept, a fresh
 *     context per job made before the job) vs a cold Chromium started for each job (what a CLI run
 *     or a one-shot container does); 30 warm and 8 cold, p50 and p90, through runSpec as a worker
 *     runs a job (inspection, the render, hashing). Goal: warm p50 ≤ 0.3 s.
 *  2. throughput: 100 documents through a pool of 2 browsers, 2 at a time (the 2-core machine).
 *  3. memory: the pool's browsers (PSS of their process trees, summed over the slots) every 100
 *     documents over 1,000 (or the count given), with the default recycling (every
 *     FOLIO_CHROMIUM_MAX_JOBS = 100 jobs) and without any — the second shows what recycling keeps
 *     flat. With recycling, the sample is taken after the 99th document of each hundred, when the
 *     browser is oldest: after the 100th it has just been replaced, and a fresh browser says
 *     nothing about growth. The runner's own RSS (the fetch proxies live in it) is printed too.
 *     `--memory-only` runs this part alone.
 * The machine's load average is printed with the figures: other work on it makes them noisy.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../core/config.ts";
import { createLogger } from "../core/logger.ts";
import { SsrfGuard } from "../core/net/ssrf.ts";
import { createBrowsers, type BrowserProvider } from "../runner/engines/browsers.ts";
import { ChromiumPool } from "../runner/engines/chromium-pool.ts";
import { SITE_HOST } from "../runner/engines/fetch-proxy.ts";
import { ok, runOp } from "../test/helpers/runner.ts";

const args = process.argv.slice(2);
const MEMORY_ONLY = args.includes("--memory-only");
const MEMORY_DOCS = Number(args.find((a) => !a.startsWith("--")) ?? 1000);
const SCRATCH = path.join(os.tmpdir(), `folio-bench-html-${process.pid}`);
const log = createLogger({ level: "silent" });
const config = loadConfig({ FOLIO_LOG_LEVEL: "silent" });
const load = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

const PAGE = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Invoice</title><style>
body{font-family:"DejaVu Sans",sans-serif;margin:2cm}h1{color:#234}table{border-collapse:collapse;width:100%}td,th{border:1px solid #999;padding:4px}
</style></head><body><h1>Invoice 2041</h1><p>Thank you for your order. Payment is due within 30 days.</p><table><tr><th>Item</th><th>Qty</th><th>Price</th></tr>
${Array.from({ length: 12 }, (_, i) => `<tr><td>Item ${i + 1}</td><td>${i + 1}</td><td>${(i * 9.5).toFixed(2)} €</td></tr>`).join("")}</table></body></html>`;

let n = 0;
async function job(file: string, browsers: BrowserProvider): Promise<number> {
  const t = performance.now();
  ok(await runOp("convert", { to: "pdf" }, [file], path.join(SCRATCH, `out-${++n}`), { config, browsers }));
  await rm(path.join(SCRATCH, `out-${n}`), { recursive: true, force: true });
  return (performance.now() - t) / 1000;
}

async function latency(file: string): Promise<void> {
  const warm = createBrowsers(config, log, true);
  await job(file, warm); // warm-up: the browser starts
  const w: number[] = [];
  for (let i = 0; i < 30; i++) {
    // A short pause between jobs, as between requests: the next context is made meanwhile.
    await new Promise((r) => setTimeout(r, 50));
    w.push(await job(file, warm));
  }
  await warm.close();
  const c: number[] = [];
  for (let i = 0; i < 8; i++) {
    const cold = createBrowsers(config, log, false);
    c.push(await job(file, cold));
    await cold.close();
  }
  console.log("| one-page HTML → PDF (whole job) | p50 | p90 |");
  console.log("|---|---|---|");
  console.log(`| warm pool (30 jobs) | ${pct(w, 0.5).toFixed(3)} s | ${pct(w, 0.9).toFixed(3)} s |`);
  console.log(`| cold Chromium per job (8 jobs) | ${pct(c, 0.5).toFixed(3)} s | ${pct(c, 0.9).toFixed(3)} s |`);
  console.log(`load ${load()}\n`);
}

function pool(size: number, maxJobs: number): ChromiumPool {
  return new ChromiumPool({
    chromium: config.FOLIO_CHROMIUM,
    tmpDir: config.FOLIO_TMP_DIR,
    size,
    warm: true,
    maxJobs,
    recycleMb: maxJobs > 1e6 ? 1e9 : config.FOLIO_CHROMIUM_RECYCLE_MB,
    jobMaxMb: config.FOLIO_CHROMIUM_JOB_MAX_MB,
    jobTimeoutMs: config.FOLIO_CHROMIUM_JOB_TIMEOUT_MS,
    heapMb: config.FOLIO_CHROMIUM_HEAP_MB,
    guard: new SsrfGuard([]),
    log,
  });
}

/** Renders straight on the pool (the engine alone), `count` jobs `parallel` at a time. */
async function renderMany(
  p: ChromiumPool,
  site: string,
  count: number,
  parallel: number,
  each?: (done: number) => Promise<void>,
): Promise<number> {
  let next = 0;
  let done = 0;
  const t = performance.now();
  const worker = async (): Promise<void> => {
    while (next < count) {
      next++;
      const output = path.join(SCRATCH, `r-${++n}.pdf`);
      await p.render({
        url: `http://${SITE_HOST}/index.html`,
        site,
        output,
        print: {},
        media: "print",
        waitForNetworkIdle: false,
        waitTimeoutMs: 10_000,
        signal: AbortSignal.timeout(60_000),
      });
      await rm(output, { force: true });
      done++;
      if (each) await each(done);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return (performance.now() - t) / 1000;
}

async function throughput(site: string): Promise<void> {
  const p = pool(2, config.FOLIO_CHROMIUM_MAX_JOBS);
  p.warmUp();
  await renderMany(p, site, 4, 2);
  const s = await renderMany(p, site, 100, 2);
  await p.close();
  console.log(
    `throughput: 100 documents, pool of 2, 2 at a time: ${(100 / s).toFixed(1)} documents/s (${s.toFixed(1)} s); load ${load()}\n`,
  );
}

/** The pool's memory: its browsers' trees summed (MB). */
async function poolMb(p: ChromiumPool): Promise<number> {
  const { memoryMb } = await p.stats();
  return memoryMb.length ? memoryMb.reduce((a, b) => a + b, 0) : Number.NaN;
}

async function memory(site: string): Promise<void> {
  const every = config.FOLIO_CHROMIUM_MAX_JOBS;
  console.log(`memory over ${MEMORY_DOCS} documents, one browser, one job at a time`);
  console.log(
    `| documents | pool, recycled every ${every} (MB; after document N−1) | pool, never recycled (MB) | runner RSS, never recycled (MB) |`,
  );
  console.log("|---|---|---|---|");
  const rows = new Map<number, [number, number, number]>();
  const row = (done: number): [number, number, number] => {
    const r = rows.get(done) ?? [Number.NaN, Number.NaN, Number.NaN];
    rows.set(done, r);
    return r;
  };
  const recycled = pool(1, every);
  recycled.warmUp();
  await renderMany(recycled, site, MEMORY_DOCS, 1, async (done) => {
    if (done % 100 === 99) row(done + 1)[0] = await poolMb(recycled);
  });
  const recycles = (await recycled.stats()).recycles;
  await recycled.close();
  const kept = pool(1, 1e9);
  kept.warmUp();
  await renderMany(kept, site, MEMORY_DOCS, 1, async (done) => {
    if (done % 100 !== 0) return;
    const r = row(done);
    r[1] = await poolMb(kept);
    r[2] = process.memoryUsage().rss / 2 ** 20;
  });
  const keptStats = await kept.stats();
  await kept.close();
  for (const [done, [a, b, c]] of [...rows].sort(([x], [y]) => x - y)) {
    console.log(`| ${done} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${c.toFixed(0)} |`);
  }
  console.log(`recycles: ${recycles} with recycling, ${keptStats.recycles} without (starts ${keptStats.starts}); load ${load()}`);
}

await mkdir(SCRATCH, { recursive: true });
const site = path.join(SCRATCH, "site");
await mkdir(site);
await writeFile(path.join(site, "index.html"), PAGE);
const file = path.join(SCRATCH, "invoice.html");
await writeFile(file, PAGE);
console.log(`HTML → PDF, Chromium ${config.FOLIO_CHROMIUM}; load ${load()}\n`);
if (!MEMORY_ONLY) {
  await latency(file);
  await throughput(site);
}
await memory(site);
await rm(SCRATCH, { recursive: true, force: true });
