/**
 * `make bench-api`: the embedded API on loopback, on this machine, beside its floor.
 *   1. GET /v1/jobs/{id}: throughput and p50/p99 with autocannon (goal ≥ 3,000 req/s, p99 ≤ 50 ms),
 *      beside a bare Node HTTPS server answering the same bytes (the floor any Node API has).
 *   2. Small merges end to end (submit with Prefer: wait, 8 at a time): jobs/s and latency,
 *      beside raw qpdf merging the same files one after another.
 *   3. Server RSS growth during a 1 GB streamed upload (goal ≤ 64 MB).
 * The rate limit is raised for the run (the limiter still runs on every request).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { blob, startServer, type Server } from "../test/api/harness.ts";
import { textPdf } from "../test/api/fixtures.ts";

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 32;

function rssKiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
}

async function cannon(
  url: string,
  headers: Record<string, string>,
): Promise<{ rps: number; p50: number; p99: number; errors: number; non2xx: number }> {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, headers, tlsOptions: { rejectUnauthorized: false } });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

async function bareServer(body: string, tls: { cert: Buffer; key: Buffer }): Promise<{ url: string; close: () => void }> {
  const srv = https.createServer(tls, (_req, res) => {
    res.writeHead(200, { "Content-Type": "application/json; charset=utf-8" }).end(body);
  });
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  return { url: `https://127.0.0.1:${(srv.address() as { port: number }).port}/`, close: () => srv.close() };
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
}

async function merges(
  s: Server,
  a: Uint8Array,
  b: Uint8Array,
  n: number,
  parallel: number,
): Promise<{ jobsPerSec: number; p50: number; p99: number; failed: number }> {
  const lat: number[] = [];
  let failed = 0;
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < n) {
      next++;
      const form = new FormData();
      form.append("file", blob(a), "a.pdf");
      form.append("file", blob(b), "b.pdf");
      const t = performance.now();
      const res = await s.request("POST", "/v1/pdf/merge", { form, headers: { Prefer: "wait=60" } });
      lat.push(performance.now() - t);
      if (res.json?.status !== "succeeded") failed++;
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return { jobsPerSec: n / ((performance.now() - started) / 1000), p50: quantile(lat, 0.5), p99: quantile(lat, 0.99), failed };
}

async function upload1G(s: Server): Promise<{ growthMiB: number; seconds: number }> {
  const boundary = "----folio-bench";
  const size = 1024 ** 3;
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  function* body(): Generator<Buffer> {
    yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\n\r\n%PDF-1.7\n`);
    for (let sent = 9; sent < size; sent += chunk.length) yield sent + chunk.length > size ? chunk.subarray(0, size - sent) : chunk;
    yield Buffer.from(`\r\n--${boundary}--\r\n`);
  }
  const before = rssKiB(s.pid());
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, rssKiB(s.pid()))), 50);
  const t = performance.now();
  const res = await s.request("POST", "/v1/files", {
    body: body(),
    headers: { "Content-Type": `multipart/form-data; boundary=${boundary}` },
  });
  clearInterval(timer);
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.text}`);
  await s.request("DELETE", `/v1/files/${res.json.data[0].id}`);
  return { growthMiB: (peak - before) / 1024, seconds: (performance.now() - t) / 1000 };
}

async function main(): Promise<void> {
  const s = await startServer({
    FOLIO_RATE_LIMIT_PER_MINUTE: "100000000",
    FOLIO_RATE_LIMIT_BURST: "100000000",
    FOLIO_MAX_UNFINISHED_JOBS: "1000",
    FOLIO_LOG_LEVEL: "warn",
    FOLIO_MAX_FILE_BYTES: String(2 * 1024 ** 3),
    FOLIO_MAX_REQUEST_BYTES: String(2 * 1024 ** 3),
  });
  try {
    const a = await textPdf(1, "a");
    const b = await textPdf(1, "b");
    const form = new FormData();
    form.append("file", blob(a), "a.pdf");
    form.append("file", blob(b), "b.pdf");
    const job = (await s.request("POST", "/v1/pdf/merge", { form, headers: { Prefer: "wait=30" } })).json;
    const auth = { Authorization: `Bearer ${s.key}` };

    const tls = { cert: readFileSync(path.join(s.dataDir, "tls-cert.pem")), key: readFileSync(path.join(s.dataDir, "tls-key.pem")) };
    const bare = await bareServer(JSON.stringify(job), tls);
    const floor = await cannon(bare.url, {});
    bare.close();
    const folio = await cannon(`${s.base}/v1/jobs/${job.id}`, auth);

    // Raw qpdf merging the same two pages, one after another: the engine's own floor.
    const dir = mkdtempSync(path.join(os.tmpdir(), "folio-bench-api-"));
    writeFileSync(path.join(dir, "a.pdf"), a);
    writeFileSync(path.join(dir, "b.pdf"), b);
    const n = 60;
    let t = performance.now();
    for (let i = 0; i < n; i++)
      execFileSync("qpdf", ["--empty", "--pages", path.join(dir, "a.pdf"), path.join(dir, "b.pdf"), "--", path.join(dir, "out.pdf")]);
    const qpdfRate = n / ((performance.now() - t) / 1000);
    t = performance.now();
    const m = await merges(s, a, b, n, 8);

    const up = await upload1G(s);

    const row = (cols: (string | number)[]): string => cols.map((c, i) => String(c).padEnd(i === 0 ? 44 : 14)).join("");
    console.log(
      `folio API benchmark — ${os.cpus().length} cores, ${DURATION} s per load run, ${CONNECTIONS} connections, node ${process.version}\n`,
    );
    console.log(row(["", "req/s", "p50 ms", "p99 ms", "errors"]));
    console.log(row(["GET /v1/jobs/{id} (folio)", Math.round(folio.rps), folio.p50, folio.p99, folio.errors + folio.non2xx]));
    console.log(
      row(["same bytes, bare Node HTTPS server (floor)", Math.round(floor.rps), floor.p50, floor.p99, floor.errors + floor.non2xx]),
    );
    console.log(row(["goal", "≥ 3000", "", "≤ 50", "0"]));
    console.log();
    console.log(row(["", "jobs/s", "p50 ms", "p99 ms", "failed"]));
    console.log(row(["merge 2×1 page, submit+wait, 8 at a time", m.jobsPerSec.toFixed(1), Math.round(m.p50), Math.round(m.p99), m.failed]));
    console.log(row(["raw qpdf, same merge, one at a time", qpdfRate.toFixed(1), "", "", ""]));
    console.log();
    console.log(
      row(["1 GB streamed upload: server RSS growth", `${up.growthMiB.toFixed(1)} MiB`, `${up.seconds.toFixed(1)} s`, "goal ≤ 64 MiB", ""]),
    );
  } finally {
    await s.cleanup();
  }
}

await main();
