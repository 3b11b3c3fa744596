/**
 * Benchmark: merge, split and protect, folio vs raw qpdf, on a 5,050-page document.
 *   node bench/qpdf-ops.ts [runs]      (the project's Node 24 runs the TypeScript sources directly)
 *
 * Fixed parameters. The documents are made once by LibreOffice and cached in
 * $TMPDIR/folio-bench-qpdf-ops-v1 (delete it to rebuild; about a minute): a Writer document of
 * 5,050 pages, one level-2 heading per page and a level-1 heading every ten pages, so 5,555
 * bookmarks and one resource dictionary shared by all pages — the shape of office-made PDFs —
 * plus its two halves (2,525 pages each, with their bookmarks) and a 10-page document.
 *
 * Each case runs RUNS times (default 5) after one warm-up, and prints the median wall time of:
 *   qpdf          the raw qpdf command doing the same work with the same flags
 *   qpdf default  the same without --remove-unreferenced-resources=no (what most callers run)
 *   folio         runSpec in-process, as the worker pool runs it (inputs inspected, outputs hashed)
 *   folio CLI     ./bin/folio run … (dist/, after `make build`), or `node bin/folio.ts run …` when
 *                 dist/ is missing or older than the sources
 * and folio/qpdf ratios. Goal (issue #2): folio ≤ 1.3× qpdf.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { JobError } from "../core/errors.ts";
import { libreOfficePdf } from "../test/fixtures/pdf-fixtures.ts";
import { runOp } from "../test/helpers/runner.ts";
import { writeZip } from "../runner/engines/zip.ts";

const execFileP = promisify(execFile);
const RUNS = Number(process.argv[2] ?? 5);
const ROOT = path.resolve(import.meta.dirname, "..");
const CACHE = path.join(os.tmpdir(), "folio-bench-qpdf-ops-v1");
const SCRATCH = path.join(os.tmpdir(), `folio-bench-qpdf-ops-run-${process.pid}`);
const PAGES = 5050;
const LIMITS = { max_pages: 100_000, timeout_ms: 600_000 };
const FAST = "--remove-unreferenced-resources=no";

interface Docs {
  doc: string;
  halfA: string;
  halfB: string;
  small: string;
}

const failures: string[] = [];
const TIME = "/usr/bin/time";
const haveTime = existsSync(TIME);

/** Median wall time, and median CPU time (user + system, the process and its children) when known. */
interface Measure {
  wall: number;
  cpu: number | null;
}

/** A variant runs once and returns its CPU seconds when it can tell them. */
type Variant = [label: string, run: () => Promise<number | null>];

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Runs the variants of one case in turn, RUNS rounds after a warm-up round (page cache, lazy
 * imports), and returns each variant's medians, or null for a variant that failed. Interleaving
 * keeps the ratios fair on a machine whose load changes while the bench runs; CPU time, which
 * other processes' load hardly changes, is the steadier figure on a busy machine.
 */
async function medians(name: string, variants: Variant[], before: () => Promise<void>): Promise<(Measure | null)[]> {
  const walls: number[][] = variants.map(() => []);
  const cpus: (number | null)[][] = variants.map(() => []);
  const failed = variants.map(() => false);
  for (let round = 0; round <= RUNS; round++) {
    for (const [v, [label, run]] of variants.entries()) {
      if (failed[v]) continue;
      await before();
      try {
        const t = performance.now();
        const cpu = await run();
        if (round > 0) {
          walls[v]!.push((performance.now() - t) / 1000);
          cpus[v]!.push(cpu);
        }
      } catch (err) {
        failed[v] = true;
        const e = err as { stdout?: string; message?: string; cause?: { message?: string } };
        failures.push(
          `${name}, ${label}: ${(e.stdout || e.message || String(err)).trim().slice(0, 300)}${e.cause?.message ? ` (${e.cause.message.trim().slice(0, 200)})` : ""}`,
        );
      }
    }
  }
  return walls.map((w, v) => {
    if (failed[v]) return null;
    const c = cpus[v]!;
    const known = c.filter((x): x is number => x !== null);
    return { wall: median(w), cpu: known.length === c.length ? median(known) : null };
  });
}

/**
 * Runs a command (exit 0, or 3 = qpdf's "succeeded with warnings") under /usr/bin/time and returns
 * its CPU seconds, children included (they are waited for, so their rusage is counted).
 */
const cpuFile = path.join(os.tmpdir(), `folio-bench-cpu-${process.pid}`);

async function command(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<number | null> {
  const argv = haveTime ? [TIME, "-f", "%U %S", "-o", cpuFile, cmd, ...args] : [cmd, ...args];
  try {
    await execFileP(argv[0]!, argv.slice(1), { maxBuffer: 64 * 1024 * 1024, ...(env ? { env } : {}) });
  } catch (err) {
    if ((err as { code?: number }).code !== 3) throw err;
  }
  if (!haveTime) return null;
  const text = await readFile(cpuFile, "utf8");
  const [user, sys] = text.trim().split("\n").pop()!.split(" ").map(Number);
  return (user ?? 0) + (sys ?? 0);
}

const qpdf = (args: string[]): Promise<number | null> => command("qpdf", args);

async function buildDocs(): Promise<Docs> {
  await mkdir(CACHE, { recursive: true });
  const docs: Docs = {
    doc: path.join(CACHE, "doc-5050.pdf"),
    halfA: path.join(CACHE, "half-a-2525.pdf"),
    halfB: path.join(CACHE, "half-b-2525.pdf"),
    small: path.join(CACHE, "small-10.pdf"),
  };
  if (!existsSync(docs.doc)) {
    console.log(`building the ${PAGES}-page document with LibreOffice (cached in ${CACHE}) …`);
    await libreOfficePdf(docs.doc, PAGES);
  }
  if (!existsSync(docs.small)) await libreOfficePdf(docs.small, 10);
  if (!existsSync(docs.halfA) || !existsSync(docs.halfB)) {
    // folio's own split keeps each half's bookmarks (qpdf alone would drop them).
    const out = path.join(CACHE, "halves");
    const res = await runOp("split", { mode: "ranges", ranges: "1-2525,2526-last" }, [docs.doc], out, { limits: LIMITS });
    if (res instanceof JobError) throw res;
    await execFileP("mv", [res.outputs[0]!.path, docs.halfA]);
    await execFileP("mv", [res.outputs[1]!.path, docs.halfB]);
    await rm(out, { recursive: true, force: true });
  }
  return docs;
}

/** folio in-process; fails loudly if the job fails. Its CPU time (qpdf children included) is not measured. */
async function folio(operation: string, options: Record<string, unknown>, inputs: string[]): Promise<null> {
  const res = await runOp(operation, options, inputs, path.join(SCRATCH, "folio"), { limits: LIMITS });
  if (res instanceof JobError) throw res;
  return null;
}

/**
 * The CLI as scripts run it: ./bin/folio on the compiled dist/ when that is newer than every
 * source, otherwise `node bin/folio.ts` on the sources (the same code; Node strips the types).
 * The bench never builds: `make build` replaces dist/, which others may be using.
 */
async function cliCommand(): Promise<{ argv: string[]; label: string }> {
  const built = path.join(ROOT, "dist/bin/folio.js");
  if (existsSync(built)) {
    const builtAt = (await stat(built)).mtimeMs;
    const sources = (await readdir(ROOT, { recursive: true }))
      .filter((f) => /^(core|runner|bin)\/.*\.ts$/.test(f) && !f.endsWith(".test.ts"))
      .map((f) => path.join(ROOT, f));
    const newest = Math.max(...(await Promise.all(sources.map(async (f) => (await stat(f)).mtimeMs))));
    if (newest <= builtAt) return { argv: [path.join(ROOT, "bin/folio")], label: "bin/folio (dist)" };
  }
  return { argv: [process.execPath, path.join(ROOT, "bin/folio.ts")], label: "node bin/folio.ts (sources; dist/ missing or stale)" };
}

function folioCli(cli: string[], operation: string, options: Record<string, unknown>, inputs: string[]): Promise<number | null> {
  const args = [...cli.slice(1), "run", operation, "--options", JSON.stringify(options), ...inputs, "-o", path.join(SCRATCH, "cli")];
  return command(cli[0]!, args, { ...process.env, FOLIO_MAX_PAGES: String(LIMITS.max_pages), FOLIO_LOG_LEVEL: "warn" });
}

interface Case {
  name: string;
  qpdf: string[];
  qpdfDefault?: string[];
  op: string;
  options: Record<string, unknown>;
  inputs: string[];
}

function cases(d: Docs, out: string): Case[] {
  const merged = path.join(out, "merged.pdf");
  const halves = ["--empty", "--pages", d.halfA, d.halfB, "--", merged];
  const whole = ["--empty", "--pages", d.doc, d.small, "--", merged];
  const withFlag = (args: string[]): string[] => [args[0]!, FAST, ...args.slice(1)];
  return [
    {
      name: "merge 2×2,525 p, outline keep",
      qpdf: withFlag(halves),
      qpdfDefault: halves,
      op: "merge",
      options: { outline: "keep" },
      inputs: [d.halfA, d.halfB],
    },
    {
      name: "merge 2×2,525 p, outline none",
      qpdf: withFlag(halves),
      op: "merge",
      options: { outline: "none" },
      inputs: [d.halfA, d.halfB],
    },
    {
      name: "merge 5,050 p + 10 p, keep",
      qpdf: withFlag(whole),
      qpdfDefault: whole,
      op: "merge",
      options: { outline: "keep" },
      inputs: [d.doc, d.small],
    },
    {
      name: "split every 100 (51 parts + zip)",
      qpdf: [d.doc, FAST, "--split-pages=100", path.join(out, "part-%d.pdf")],
      qpdfDefault: [d.doc, "--split-pages=100", path.join(out, "part-%d.pdf")],
      op: "split",
      options: { mode: "every", every: 100 },
      inputs: [d.doc],
    },
    {
      name: "protect AES-256",
      qpdf: [d.doc, "--encrypt", "user-pw", "owner-pw", "256", "--", path.join(out, "protected.pdf")],
      op: "protect",
      options: { user_password: "user-pw", owner_password: "owner-pw" },
      inputs: [d.doc],
    },
  ];
}

/** Why split's zip STOREs: time and size of the 51-part zip, stored vs deflated (yazl, level 6). */
async function zipChoice(doc: string): Promise<void> {
  const dir = path.join(SCRATCH, "zip-parts");
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await qpdf([doc, FAST, "--split-pages=100", path.join(dir, "part-%d.pdf")]);
  const entries = (await readdir(dir)).sort().map((f) => ({ path: path.join(dir, f), name: f }));
  const partsBytes = (await Promise.all(entries.map(async (e) => (await stat(e.path)).size))).reduce((a, b) => a + b, 0);
  const cells: string[] = [];
  for (const compress of [false, true]) {
    const zip = path.join(SCRATCH, `parts-${compress ? "deflate" : "store"}.zip`);
    const [t] = await medians("zip", [["zip", () => writeZip(zip, entries, { compress }).then(() => null)]], () =>
      rm(zip, { force: true }),
    );
    const size = (await stat(zip)).size;
    cells.push(`${compress ? "deflate" : "store"} ${fmt(t?.wall ?? null)} s, ${(size / 1e6).toFixed(2)} MB`);
  }
  console.log(`zip of the 51 parts (${(partsBytes / 1e6).toFixed(2)} MB of PDFs): ${cells.join("; ")}`);
}

const fmt = (s: number | null): string => (s === null ? "—" : s.toFixed(3));
const ratio = (a: number | null, b: number): string => (a === null ? "—" : `${(a / b).toFixed(2)}×`);

/** One case's table row: raw qpdf (with and without the fast flag), Folio in-process and via its CLI; null when qpdf itself failed. */
async function measureCase(c: Case, cliArgv: string[], fresh: () => Promise<void>): Promise<string[] | null> {
  const variants: Variant[] = [
    ["qpdf", () => qpdf(c.qpdf)],
    ["folio", () => folio(c.op, c.options, c.inputs)],
    ["folio CLI", () => folioCli(cliArgv, c.op, c.options, c.inputs)],
  ];
  const withoutFlag = c.qpdfDefault;
  if (withoutFlag) variants.push(["qpdf default", () => qpdf(withoutFlag)]);
  const [raw, inProcess, viaCli, rawDefault] = await medians(c.name, variants, fresh);
  if (!raw) return null;
  const wall = (m: Measure | null | undefined): number | null => m?.wall ?? null;
  const cliCpu = viaCli?.cpu ?? null;
  return [
    c.name,
    fmt(raw.wall),
    fmt(wall(rawDefault)),
    fmt(wall(inProcess)),
    ratio(wall(inProcess), raw.wall),
    fmt(wall(viaCli)),
    ratio(wall(viaCli), raw.wall),
    fmt(raw.cpu),
    fmt(cliCpu),
    raw.cpu ? ratio(cliCpu, raw.cpu) : "—",
  ];
}

async function main(): Promise<void> {
  const docs = await buildDocs();
  const size = (await stat(docs.doc)).size;
  console.log(
    `document: ${PAGES} pages, ${(size / 1e6).toFixed(1)} MB (LibreOffice ${PAGES + Math.ceil(PAGES / 10)} bookmarks); median of ${RUNS} runs; ${os.availableParallelism()} cores`,
  );
  const cli = await cliCommand();
  console.log(`folio CLI: ${cli.label}`);
  const fresh = async (): Promise<void> => {
    await rm(SCRATCH, { recursive: true, force: true });
    await mkdir(path.join(SCRATCH, "raw"), { recursive: true });
  };
  const header = ["case", "qpdf s", "default s", "folio s", "folio/qpdf", "CLI s", "CLI/qpdf", "qpdf CPU", "CLI CPU", "CPU ratio"];
  const rows: string[][] = [];
  for (const c of cases(docs, path.join(SCRATCH, "raw"))) {
    const row = await measureCase(c, cli.argv, fresh);
    if (!row) continue;
    rows.push(row);
    console.log(`  measured ${c.name}`);
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  console.log();
  console.log(line(header));
  for (const r of rows) console.log(line(r));
  console.log(`\n"default" is raw qpdf without ${FAST}: qpdf then rewrites every page's resources.`);
  console.log("CPU: user + system seconds of the process and its children (/usr/bin/time); folio in-process is not measured.");
  await zipChoice(docs.doc);
  for (const f of failures) console.log(`FAILED ${f}`);
  process.exitCode = failures.length ? 1 : 0;
}

try {
  await main();
} finally {
  await rm(SCRATCH, { recursive: true, force: true });
  await rm(cpuFile, { force: true });
}
