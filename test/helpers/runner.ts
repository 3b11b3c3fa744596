/**
 * Runs operations in-process through the same runSpec the CLI, the worker pool and Kubernetes pods
 * use, with the real engines. Faster than spawning the CLI for every case; the CLI contract itself
 * is tested in test/runner/cli.test.ts.
 */
import { loadConfig, type Config } from "../../core/config.ts";
import { JobError } from "../../core/errors.ts";
import { createLogger } from "../../core/logger.ts";
import type { RunnerResult } from "../../core/schemas/job.ts";
import { createSoffice } from "../../runner/engines/libreoffice.ts";
import type { SofficeProvider } from "../../runner/engines/libreoffice.ts";
import type { BrowserProvider } from "../../runner/engines/browsers.ts";
import { runSpec } from "../../runner/run.ts";

export const testConfig: Config = loadConfig({ FOLIO_LOG_LEVEL: "silent" });
const log = createLogger({ level: "silent" });

export interface OpInput {
  path: string;
  filename?: string;
  pages?: string;
}

/** Runs one operation and returns its result, or the JobError it failed with. */
export async function runOp(
  operation: string,
  options: Record<string, unknown>,
  inputs: (string | OpInput)[],
  outDir: string,
  extra: {
    limits?: Record<string, number>;
    soffice?: SofficeProvider;
    browsers?: BrowserProvider;
    config?: Config;
    output_filename?: string;
  } = {},
): Promise<RunnerResult | JobError> {
  const config = extra.config ?? testConfig;
  const soffice = extra.soffice ?? createSoffice(config, log, 0);
  try {
    return await runSpec(
      {
        operation,
        options,
        inputs: inputs.map((i) =>
          typeof i === "string" ? { path: i, filename: i.split("/").pop() } : { filename: i.path.split("/").pop(), ...i },
        ),
        output_dir: outDir,
        ...(extra.limits ? { limits: extra.limits } : {}),
        ...(extra.output_filename ? { output_filename: extra.output_filename } : {}),
      },
      { config, log, soffice, ...(extra.browsers ? { browsers: extra.browsers } : {}) },
    );
  } catch (err) {
    if (err instanceof JobError) return err;
    throw err;
  } finally {
    if (!extra.soffice) await soffice.close();
  }
}

/** Narrows runOp's answer to a result, failing the test with the job error otherwise. */
export function ok(res: RunnerResult | JobError): RunnerResult {
  if (res instanceof JobError) throw new Error(`expected success, got ${res.code}: ${res.message}`);
  return res;
}

/** Narrows runOp's answer to a job error code, failing the test on success. */
export function errorCode(res: RunnerResult | JobError): string {
  if (res instanceof JobError) return res.code;
  throw new Error(`expected a job error, got success with ${res.outputs.length} outputs`);
}
