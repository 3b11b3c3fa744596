/** Page count of an uploaded PDF for its File object; null when qpdf cannot tell quickly. */
import { execFile } from "node:child_process";

export function pdfPages(qpdf: string, file: string, timeoutMs = 10_000): Promise<number | null> {
  return new Promise((resolve) => {
    execFile(qpdf, ["--no-warn", "--show-npages", file], { timeout: timeoutMs, killSignal: "SIGKILL" }, (err, stdout) => {
      // qpdf exits 3 when it succeeded with warnings (it repaired the file).
      const code = (err as { code?: number } | null)?.code;
      if (err && code !== 3) return resolve(null);
      const n = Number.parseInt(String(stdout).trim(), 10);
      resolve(Number.isFinite(n) && n > 0 ? n : null);
    });
  });
}
