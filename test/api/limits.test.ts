/**
 * Limits (API.md "Limits"): the token bucket with its burst, the concurrent job cap, size caps,
 * and a 1 GB upload that is streamed to disk without growing the server's memory.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blob, startServer, waitForJob, type Server } from "./harness.ts";
import { textPdf } from "./fixtures.ts";

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0);
}

describe("rate limit: 60/min with a burst of 5", () => {
  let s: Server;
  beforeAll(async () => {
    s = await startServer({ FOLIO_RATE_LIMIT_PER_MINUTE: "60", FOLIO_RATE_LIMIT_BURST: "5" });
  }, 60_000);
  afterAll(() => s.cleanup());

  it("allows the burst, then answers 429 rate_limited with Retry-After, then refills at the rate", async () => {
    const statuses: number[] = [];
    const remaining: string[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await s.request("GET", "/v1/jobs");
      statuses.push(r.status);
      remaining.push(String(r.headers.ratelimit));
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(remaining[0]).toMatch(/^"default";r=4;t=\d+$/);
    expect(remaining[4]).toMatch(/^"default";r=0;t=\d+$/);
    const limited = await s.request("GET", "/v1/jobs");
    expect(limited.json.code).toBe("rate_limited");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(limited.headers["ratelimit-policy"]).toBe('"default";q=60;w=60');
    // One token a second: after a little over a second, one request passes again.
    await new Promise((r) => setTimeout(r, 1100));
    expect((await s.request("GET", "/v1/jobs")).status).toBe(200);
  });

  it("keeps a bucket per key: another key of the same tenant is not limited", async () => {
    const k = (await s.folio(["keys", "create", "--tenant", "dev", "--json"])).json.key;
    expect((await s.request("GET", "/v1/jobs", { key: k })).status).toBe(200);
  });
});

describe("access requests are rate-limited per client address", () => {
  let s: Server;
  beforeAll(async () => {
    s = await startServer({ FOLIO_ACCESS_REQUESTS_PER_HOUR: "2" });
  }, 60_000);
  afterAll(() => s.cleanup());

  it("accepts the hourly allowance, then answers 429 with Retry-After", async () => {
    const body = {
      email: "a@example.com",
      company: "A",
      use_case: "other",
      description: "d",
      expected_monthly_volume: 1,
      file_types: [],
      needs_dpa: false,
    };
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push(await s.request("POST", "/v1/access_requests", { key: null, json: body }));
    expect(statuses.map((r) => r.status)).toEqual([202, 202, 429]);
    expect(statuses[2]!.json.code).toBe("rate_limited");
    expect(Number(statuses[2]!.headers["retry-after"])).toBeGreaterThan(60);
  });
});

describe("concurrent job cap and size caps", () => {
  let s: Server;
  beforeAll(async () => {
    s = await startServer({
      FOLIO_MAX_UNFINISHED_JOBS: "1",
      FOLIO_WORKERS: "1",
      FOLIO_MAX_FILE_BYTES: "200000",
      FOLIO_MAX_REQUEST_BYTES: "300000",
    });
  }, 60_000);
  afterAll(() => s.cleanup());

  it("answers 429 too_many_jobs while the tenant has its maximum of unfinished jobs", async () => {
    const pdf = await textPdf(300, "page");
    const form = (): FormData => {
      const f = new FormData();
      f.append("file", blob(pdf), "big.pdf");
      f.append("mode", "pages");
      return f;
    };
    const first = await s.request("POST", "/v1/pdf/split", { form: form() });
    expect(first.status, first.text).toBe(202);
    const second = await s.request("POST", "/v1/pdf/split", { form: form() });
    expect(second.status).toBe(429);
    expect(second.json.code).toBe("too_many_jobs");
    await waitForJob(s, first.json.id);
    const third = await s.request("POST", "/v1/pdf/split", { form: form() });
    expect(third.status).toBe(202);
    await waitForJob(s, third.json.id);
  });

  it("answers 413 payload_too_large for a file over the per-file cap, and keeps nothing of it", async () => {
    const form = new FormData();
    form.append("file", blob(Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(250_000, 0x20)])), "huge.pdf");
    const res = await s.request("POST", "/v1/files", { form });
    expect(res.status).toBe(413);
    expect(res.json.code).toBe("payload_too_large");
  });

  it("answers 413 for a request over the per-request cap", async () => {
    const form = new FormData();
    for (let i = 0; i < 2; i++)
      form.append("file", blob(Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(180_000, 0x20)])), `p${i}.pdf`);
    const res = await s.request("POST", "/v1/files", { form });
    expect(res.status).toBe(413);
  });
});

describe("a 1 GB upload", () => {
  let s: Server;
  beforeAll(async () => {
    s = await startServer({ FOLIO_MAX_FILE_BYTES: String(2 * 1024 ** 3), FOLIO_MAX_REQUEST_BYTES: String(2 * 1024 ** 3) });
  }, 60_000);
  afterAll(() => s.cleanup());

  it("is streamed to storage: stored whole, hashed right, and the server's memory does not grow", { timeout: 300_000 }, async () => {
    const boundary = "----folio1gb";
    const size = 1024 ** 3;
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    function* body(): Generator<Buffer> {
      yield Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n`,
      );
      for (let sent = 9; sent < size; sent += chunk.length) yield sent + chunk.length > size ? chunk.subarray(0, size - sent) : chunk;
      yield Buffer.from(`\r\n--${boundary}--\r\n`);
    }
    const before = rssKiB(s.pid());
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(s.pid()))), 100);
    const res = await s.request("POST", "/v1/files", {
      body: body(),
      headers: { "Content-Type": `multipart/form-data; boundary=${boundary}` },
    });
    clearInterval(sampler);
    expect(res.status, res.text).toBe(201);
    expect(res.json.data[0].size).toBe(size + 9 - 9);
    const growthMiB = (peak - before) / 1024;
    console.log(
      `1 GB upload: server RSS ${Math.round(before / 1024)} MiB before, peak ${Math.round(peak / 1024)} MiB (growth ${growthMiB.toFixed(1)} MiB)`,
    );
    expect(growthMiB).toBeLessThan(64);
    expect((await s.request("DELETE", `/v1/files/${res.json.data[0].id}`)).status).toBe(204);
  });
});
