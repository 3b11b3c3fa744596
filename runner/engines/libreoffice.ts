/**
 * LibreOffice (soffice), the engine behind Office → PDF. Two providers behind one interface:
 *  - warm (soffice-pool.ts): long-lived offices taking conversions over LibreOffice's own IPC,
 *    for the `folio runner --worker` processes of the embedded pool;
 *  - cold (here): one `soffice --convert-to pdf` per conversion with a fresh profile, for a single
 *    `folio run` or a Kubernetes pod, where a pool would never get warm.
 * Both use the same profile hardening (soffice-profile.ts), the same staging and the same output
 * verification (soffice-job.ts), and the same per-conversion timeout.
 */
import path from "node:path";
import type { Config } from "../../core/config.ts";
import { JobError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { sandboxPolicy } from "../../core/sandbox.ts";
import { exec, ExecAborted } from "./exec.ts";
import { conversionTimeout, stageInput, verifyPdfOutput, type SofficeConvertOptions, type SofficeProvider } from "./soffice-job.ts";
import { SofficePool } from "./soffice-pool.ts";
import { prepareSofficeDirs, SOFFICE_FLAGS, sofficeEnv } from "./soffice-profile.ts";

export type { SofficeConvertOptions, SofficeProvider } from "./soffice-job.ts";
export { SofficePool, type SofficePoolStats } from "./soffice-pool.ts";

/** One soffice process per conversion, with a fresh profile in the job's work directory. */
export class ColdSoffice implements SofficeProvider {
  readonly engine = "cold";
  private readonly soffice: string;
  private readonly timeoutMs: number;
  private readonly log: Logger;

  constructor(opts: { soffice: string; timeoutMs: number; log: Logger }) {
    this.soffice = opts.soffice;
    this.timeoutMs = opts.timeoutMs;
    this.log = opts.log;
  }

  async toPdf(input: string, opts: SofficeConvertOptions): Promise<string> {
    const job = await stageInput(input, opts);
    const dirs = await prepareSofficeDirs(path.join(path.dirname(job.outDir), "office"), { seedDocs: false });
    const limit = AbortSignal.timeout(this.timeoutMs);
    const args = [...SOFFICE_FLAGS, `-env:UserInstallation=${dirs.profileUrl}`, "--convert-to", "pdf", "--outdir", job.outDir, job.input];
    let res;
    try {
      // exec() runs soffice in its own process group and kills the whole group on abort.
      res = await exec(this.soffice, args, {
        signal: AbortSignal.any([opts.signal, limit]),
        env: sofficeEnv(dirs),
        cwd: dirs.tmp,
        maxOutput: 64 * 1024,
      });
    } catch (err) {
      if (err instanceof ExecAborted) {
        throw limit.aborted
          ? conversionTimeout(this.timeoutMs)
          : new JobError("timeout", "The job ran out of time during the conversion.", { cause: err });
      }
      throw err;
    }
    try {
      await verifyPdfOutput(job.expected);
    } catch (err) {
      this.log.info(
        { code: res.code, output: (res.stdout + res.stderr).trim().split("\n").slice(-5) },
        "LibreOffice could not convert a document",
      );
      throw err;
    }
    return job.expected;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * The provider for this process: a warm pool of `size` instances, or cold one-shot conversions
 * when size is 0 (what a single `folio run` wants).
 */
export function createSoffice(config: Config, log: Logger, size: number): SofficeProvider {
  if (size <= 0) return new ColdSoffice({ soffice: config.FOLIO_SOFFICE, timeoutMs: config.FOLIO_SOFFICE_JOB_TIMEOUT_MS, log });
  return new SofficePool({
    soffice: config.FOLIO_SOFFICE,
    size,
    tmpDir: config.FOLIO_TMP_DIR,
    jobTimeoutMs: config.FOLIO_SOFFICE_JOB_TIMEOUT_MS,
    maxJobs: config.FOLIO_SOFFICE_MAX_JOBS,
    maxRssMb: config.FOLIO_SOFFICE_MAX_RSS_MB,
    sandbox: sandboxPolicy(config),
    // "component" is the process (runner); the pool names itself as the module within it.
    log: log.child({ module: "soffice-pool" }),
  });
}
