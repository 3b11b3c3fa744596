/**
 * Schema-driven fuzzing of the real HTTPS server (issue #10 "Proof"): schemathesis reads the
 * served OpenAPI document and runs every check — server errors, status codes, content types,
 * headers, response schemas, negative data, auth, methods, Allow — for a short time budget here
 * (FOLIO_FUZZ_SECONDS, default 90) and a long one in `make bench-fuzz`. Zero 5xx, and no check
 * fails except positive_data_acceptance on data that is valid by the schema only (see
 * test/helpers/schemathesis.ts). Limits are lifted so that the fuzzer reaches the handlers.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fuzz, SEMANTIC_ONLY } from "../helpers/schemathesis.ts";
import { startServer, type Server } from "./harness.ts";

const SECONDS = Number(process.env.FOLIO_FUZZ_SECONDS ?? 90);
let s: Server;

beforeAll(async () => {
  s = await startServer({
    FOLIO_RATE_LIMIT_PER_MINUTE: "1000000",
    FOLIO_RATE_LIMIT_BURST: "1000000",
    FOLIO_AUTH_FAILURE_BURST: "1000000",
    FOLIO_ACCESS_REQUESTS_PER_HOUR: "1000000",
    FOLIO_MAX_UNFINISHED_JOBS: "10000",
  });
}, 60_000);
afterAll(async () => {
  await s?.cleanup();
});

describe("schemathesis against the served OpenAPI document", () => {
  it(`finds no 5xx and no failing check in ${SECONDS} s`, { timeout: (SECONDS + 900) * 1000 }, async () => {
    const report = await fuzz({ base: s.base, key: s.key, caFile: path.join(s.dataDir, "tls-cert.pem"), seconds: SECONDS });
    const counts = Object.fromEntries(report.failures.map((f) => [`${f.code} ${f.title}`, f.count]));
    process.stdout.write(
      `schemathesis: ${report.generated} test cases in ${report.seconds.toFixed(0)} s; failures ${JSON.stringify(counts)}\n`,
    );
    expect(report.generated).toBeGreaterThan(100);
    expect(report.errors, report.output).toEqual([]);
    const real = report.failures.filter((f) => !SEMANTIC_ONLY.has(f.code));
    expect(real, report.output.slice(-20_000)).toEqual([]);
    expect(s.logs()).not.toMatch(/internal error/i);
    expect((await s.request("GET", "/healthz")).status).toBe(200);
  });
});
