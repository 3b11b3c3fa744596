/**
 * Page count of an uploaded PDF for its File object; null when qpdf cannot tell quickly. qpdf reads
 * an untrusted upload here, so it runs like every engine (core/sandbox.ts): the allow-listed
 * environment, and in embedded mode a bubblewrap sandbox that sees only this one file.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { bwrapArgv, engineEnv, withMemoryCap, type SandboxScope } from "../../core/sandbox.ts";

export function pdfPages(
  qpdf: string,
  file: string,
  timeoutMs = 10_000,
  sandbox?: Pick<SandboxScope, "mode" | "memoryBytes" | "hidden">,
): Promise<number | null> {
  const args = ["--no-warn", "--show-npages", file];
  const [cmd, ...argv] =
    sandbox?.mode === "bwrap"
      ? withMemoryCap(sandbox.memoryBytes, bwrapArgv({ ...sandbox, readable: [path.resolve(file)], writable: [] }, qpdf, args, undefined))
      : [qpdf, ...args];
  return new Promise((resolve) => {
    execFile(cmd!, argv, { timeout: timeoutMs, killSignal: "SIGKILL", env: engineEnv() }, (err, stdout) => {
      // qpdf exits 3 when it succeeded with warnings (it repaired the file).
      const code = (err as { code?: number } | null)?.code;
      if (err && code !== 3) return resolve(null);
      const n = Number.parseInt(String(stdout).trim(), 10);
      resolve(Number.isFinite(n) && n > 0 ? n : null);
    });
  });
}
