/**
 * `make bench-fuzz`: schemathesis against a real embedded server for a long time budget
 * (SECONDS, default 1200), every check, limits lifted; prints the test cases run and the
 * failures by check. The short run of the same thing is test/api/fuzz.test.ts in `make test`.
 *
 *   node bench/fuzz-api.ts [SECONDS] [SEED]
 */
import path from "node:path";
import { startServer } from "../test/api/harness.ts";
import { fuzz, SEMANTIC_ONLY } from "../test/helpers/schemathesis.ts";

const seconds = Number(process.argv[2] ?? 1200);
const seed = process.argv[3];
const s = await startServer({
  FOLIO_RATE_LIMIT_PER_MINUTE: "1000000",
  FOLIO_RATE_LIMIT_BURST: "1000000",
  FOLIO_AUTH_FAILURE_BURST: "1000000",
  FOLIO_ACCESS_REQUESTS_PER_HOUR: "1000000",
  FOLIO_MAX_UNFINISHED_JOBS: "10000",
});
try {
  const r = await fuzz({ base: s.base, key: s.key, caFile: path.join(s.dataDir, "tls-cert.pem"), seconds, ...(seed ? { seed } : {}) });
  const real = r.failures.filter((f) => !SEMANTIC_ONLY.has(f.code));
  console.log(`schemathesis ${r.generated} test cases in ${r.seconds.toFixed(0)} s`);
  for (const f of r.failures) console.log(`  ${f.code} ${f.title}: ${f.count}${SEMANTIC_ONLY.has(f.code) ? " (schema-valid only)" : ""}`);
  console.log(`server errors in the log: ${(s.logs().match(/internal error/gi) ?? []).length}`);
  if (real.length) {
    console.log(r.output.slice(-40_000));
    process.exitCode = 1;
  }
} finally {
  await s.cleanup();
}
