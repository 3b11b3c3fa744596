/**
 * The warm LibreOffice pool (runner/engines/soffice-pool.ts) closed while its office is still
 * starting: a cancellation. No promise is left rejected without a handler (fatal in Node 24), no
 * error is logged, no office outlives close(), and the jobs waiting for an office fail at once
 * with a clear error rather than hanging or running on a closed pool.
 *
 * The jobs' promises get their handlers at once, so an unhandled rejection seen here is the
 * pool's own. (The earlier version of this test in convert.test.ts attached its handler only
 * after `await close()`, by which time the job had already rejected: that unhandled rejection was
 * the test's own promise.)
 */
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.ts";
import { SofficePool } from "../../runner/engines/soffice-pool.ts";
import { tmpDir } from "../helpers/tools.ts";

interface LogLine {
  level: string;
  msg: string;
}

/** A pool of one office whose log lines (debug and up) are kept in `lines`. */
function capturedPool(): { pool: SofficePool; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done): void {
      for (const line of chunk.toString("utf8").split("\n")) if (line) lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const pool = new SofficePool({
    soffice: "soffice",
    size: 1,
    tmpDir: os.tmpdir(),
    jobTimeoutMs: 60_000,
    maxJobs: 1000,
    maxRssMb: 4096,
    log: createLogger({ level: "debug", destination }),
  });
  return { pool, lines };
}

/** Live (non-zombie) processes whose command line mentions `root` (every office's profile is under it). */
async function processesUnder(root: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    const statText = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    if (cmdline.includes(root) && statText.slice(statText.lastIndexOf(")") + 2)[0] !== "Z")
      found.push(`${entry} ${cmdline.replaceAll("\0", " ")}`);
  }
  return found;
}

/** Settles to the job's error (or its result): the rejection is handled from the start. */
const outcome = (job: Promise<string>): Promise<unknown> =>
  job.then(
    (pdf) => pdf,
    (err: unknown) => err,
  );

let dir: string;
let cleanup: () => Promise<void>;
let input: string;
let n = 0;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-pool-close-"));
  input = path.join(dir, "note.txt");
  await writeFile(input, "Never converted: the pool closes first.\n");
  process.on("unhandledRejection", onUnhandled);
});

afterAll(async () => {
  process.off("unhandledRejection", onUnhandled);
  await cleanup?.();
});

beforeEach(() => {
  unhandled.length = 0;
});

afterEach(() => {
  expect(unhandled).toEqual([]);
});

// The moments of the office's start at which close() comes: before the jobs have staged their
// input, while the profile is being made, around the spawn, and once soffice.bin runs (it then
// waits for IPC and converts its warm-ups, which take a second or more even on an idle machine).
const moments: [string, (pool: SofficePool) => Promise<void>][] = [
  ["at once (0 ms)", () => Promise.resolve()],
  ["after 50 ms", () => sleep(50).then(() => undefined)],
  ["after 300 ms", () => sleep(300).then(() => undefined)],
  [
    "once soffice.bin runs",
    async (pool) => {
      const until = Date.now() + 60_000;
      while (pool.stats().instances[0]?.binPid == null) {
        if (Date.now() > until) throw new Error("soffice.bin did not appear within 60 s");
        await sleep(10);
      }
    },
  ],
];

describe("warm pool: close() while an office is starting", () => {
  it.each(moments)(
    "closed %s: the job waiting for the office and the queued one fail with 'pool is closed', nothing unhandled, no error logged, no office left",
    async (_moment, wait) => {
      const { pool, lines } = capturedPool();
      const { root } = pool.stats();
      // One job takes the only slot and waits for its office; the second queues behind it (closed
      // at once, both are still staging their input).
      const jobs = [1, 2].map((i) =>
        outcome(pool.toPdf(input, { work: path.join(dir, `work-${++n}-${i}`), signal: AbortSignal.timeout(120_000) })),
      );
      await wait(pool);
      await pool.close();
      // By the time close() returns, the start has given up and cleaned up after itself.
      expect(lines.some((l) => l.level === "debug" && /cancelled|stopped/.test(l.msg))).toBe(true);
      expect(await processesUnder(root)).toEqual([]);
      expect(await stat(root).catch(() => null)).toBeNull();
      for (const err of await Promise.all(jobs)) {
        expect(err).toBeInstanceOf(Error);
        expect((err as Error).message).toMatch(/LibreOffice pool is closed/);
      }
      // Anything the pool still had in flight (a rejection, a log line, an office) would show now;
      // afterEach checks the unhandled rejections.
      await sleep(500);
      expect(lines.filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);
      expect(await processesUnder(root)).toEqual([]);
      expect(await stat(root).catch(() => null)).toBeNull();
    },
  );
});
