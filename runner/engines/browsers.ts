/**
 * The browsers a runner process renders HTML with, built from configuration: a warm pool for a
 * long-lived worker, a browser per job for one-shot runs (`folio run`, a Kubernetes pod). The
 * Chromium modules load on first use, so a merge never pays for them.
 */
import type { Config } from "../../core/config.ts";
import type { Logger } from "../../core/logger.ts";
import { SsrfGuard } from "../../core/net/ssrf.ts";
import { sandboxPolicy } from "../../core/sandbox.ts";
import type { BrowserProvider, ChromiumPool } from "./chromium-pool.ts";

export type { BrowserProvider } from "./chromium-pool.ts";

/**
 * A provider of browsers: `warm` keeps FOLIO_CHROMIUM_POOL_SIZE browsers (started at once). With
 * FOLIO_SANDBOX=bwrap each browser runs in bubblewrap (chromium.ts, docs/adr/0021).
 */
export function createBrowsers(config: Config, log: Logger, warm: boolean): BrowserProvider {
  const isWarm = warm && config.FOLIO_CHROMIUM_POOL_SIZE > 0;
  const policy = sandboxPolicy(config);
  let pool: Promise<ChromiumPool> | null = null;
  const get = (): Promise<ChromiumPool> =>
    (pool ??= import("./chromium-pool.ts").then(
      (m) =>
        new m.ChromiumPool({
          chromium: config.FOLIO_CHROMIUM,
          tmpDir: config.FOLIO_TMP_DIR,
          size: isWarm ? config.FOLIO_CHROMIUM_POOL_SIZE : 1,
          warm: isWarm,
          maxJobs: config.FOLIO_CHROMIUM_MAX_JOBS,
          recycleMb: config.FOLIO_CHROMIUM_RECYCLE_MB,
          jobMaxMb: config.FOLIO_CHROMIUM_JOB_MAX_MB,
          jobTimeoutMs: config.FOLIO_CHROMIUM_JOB_TIMEOUT_MS,
          heapMb: config.FOLIO_CHROMIUM_HEAP_MB,
          guard: new SsrfGuard(config.FOLIO_FETCH_ALLOWED_HOSTS),
          log,
          ...(policy.mode === "bwrap" ? { sandbox: policy } : {}),
        }),
    ));
  if (isWarm) void get().then((p) => p.warmUp());
  return {
    engine: isWarm ? "warm" : "cold",
    render: async (req) => (await get()).render(req),
    close: async () => {
      if (pool) await (await pool).close();
    },
  };
}
