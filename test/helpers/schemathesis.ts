/**
 * Schemathesis (PyPI) against a running Folio: the test tool lives in a throwaway virtualenv
 * under ~/.cache/folio-fuzz, made once per pinned version (CI reuses it), never in the product.
 * It reads the served OpenAPI document, runs every check, and leaves its JSON run report.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const execFileP = promisify(execFile);
export const SCHEMATHESIS = "schemathesis==4.32.5";
const VENV = path.join(os.homedir(), ".cache/folio-fuzz/venv");

/** Creates the virtualenv with the pinned schemathesis unless the cached one has exactly it. */
export async function ensureSchemathesis(): Promise<string> {
  const marker = path.join(VENV, "folio-pinned.txt");
  if ((await readFile(marker, "utf8").catch(() => "")) !== SCHEMATHESIS) {
    await rm(VENV, { recursive: true, force: true });
    await execFileP("python3", ["-m", "venv", VENV]);
    await execFileP(path.join(VENV, "bin/pip"), ["install", "--quiet", "--disable-pip-version-check", SCHEMATHESIS], {
      timeout: 600_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    await writeFile(marker, SCHEMATHESIS);
  }
  return path.join(VENV, "bin/schemathesis");
}

export interface FuzzFailure {
  code: string;
  title: string;
  count: number;
  operations: unknown[];
}

export interface FuzzReport {
  generated: number;
  seconds: number;
  failures: FuzzFailure[];
  errors: unknown[];
  /** The run's console output (failures with curl reproductions), for the test's message. */
  output: string;
}

/** Runs every check for `seconds` against `base` with `key`, trusting the server's certificate `caFile`. */
export async function fuzz(opts: { base: string; key: string; caFile: string; seconds: number; seed?: string }): Promise<FuzzReport> {
  const bin = await ensureSchemathesis();
  const dir = await mkdtemp(path.join(os.tmpdir(), "folio-fuzz-"));
  const report = path.join(dir, "run.json");
  const args = [
    "run",
    `${opts.base}/v1/openapi.json`,
    "--checks",
    "all",
    "-H",
    `Authorization: Bearer ${opts.key}`,
    "--tls-verify",
    opts.caFile,
    "--max-time",
    String(opts.seconds),
    // One worker thread: with two, Debian's Python 3.11 sometimes fails hypothesis' own source
    // parsing with "AST constructor recursion depth mismatch" (the interpreter's AST state is
    // shared between threads: cpython#106905), a runtime error of the tool that failed CI once.
    "--workers",
    "1",
    "--request-timeout",
    "90",
    "--suppress-health-check",
    "all",
    "--report",
    "json",
    "--report-json-path",
    report,
    ...(opts.seed ? ["--seed", opts.seed] : []),
  ];
  let output = "";
  try {
    // Its own cache (.schemathesis/) goes to the temporary directory, not the checkout.
    const r = await execFileP(bin, args, { cwd: dir, timeout: (opts.seconds + 300) * 1000, maxBuffer: 256 * 1024 * 1024 });
    output = r.stdout;
  } catch (err) {
    // Schemathesis exits 1 when any check failed; the report says which.
    output = (err as { stdout?: string }).stdout ?? String(err);
  }
  try {
    const json = JSON.parse(await readFile(report, "utf8"));
    return {
      generated: json.test_cases.generated,
      seconds: json.running_time,
      failures: json.failures,
      errors: json.errors,
      output,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * "Schema-valid request rejected" (positive_data_acceptance) is the one check Folio cannot pass on
 * generated data: a well-formed file id that was never uploaded, bytes that are not a document
 * (415) or a webhook host that does not resolve are valid by the schema and rightly refused.
 */
export const SEMANTIC_ONLY = new Set(["ST202"]);
