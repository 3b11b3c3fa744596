/**
 * Runs the extraction worker (extract-worker.ts) for one PDF and collects its pages. The worker is
 * a fresh thread per job and is terminated when the job's signal aborts, so a PDF that makes pdfjs
 * spin cannot outlive its deadline and nothing pdfjs caches leaks into the next job.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { Worker } from "node:worker_threads";
import { JobError } from "../../core/errors.ts";
import type { WorkerInput, WorkerMessage } from "./extract-worker.ts";
import type { RawPage } from "./types.ts";

const PDFJS_DIR = path.dirname(createRequire(import.meta.url).resolve("pdfjs-dist/package.json"));
/** The worker's source beside this file: .ts when Node runs the sources, .js in the build. */
const WORKER_URL = new URL(import.meta.url.endsWith(".ts") ? "./extract-worker.ts" : "./extract-worker.js", import.meta.url);
/** Heap for one extraction; pdfjs holds decoded fonts and images of the current page. */
const WORKER_HEAP_MB = 1024;

export interface ExtractOptions {
  signal: AbortSignal;
  maxImagePixels: number;
}

export async function extractPages(file: string, opts: ExtractOptions): Promise<RawPage[]> {
  opts.signal.throwIfAborted();
  const data = new Uint8Array(await readFile(file));
  const input: WorkerInput = {
    data,
    maxImagePixels: opts.maxImagePixels,
    fontsDir: path.join(PDFJS_DIR, "standard_fonts") + path.sep,
    cmapsDir: path.join(PDFJS_DIR, "cmaps") + path.sep,
  };
  const worker = new Worker(WORKER_URL, { workerData: input, transferList: [data.buffer], resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
  const pages: RawPage[] = [];
  try {
    return await new Promise<RawPage[]>((resolve, reject) => {
      const onAbort = (): void => reject(opts.signal.reason as Error);
      opts.signal.addEventListener("abort", onAbort, { once: true });
      const settle = (fn: () => void): void => {
        opts.signal.removeEventListener("abort", onAbort);
        fn();
      };
      worker.on("message", (msg: WorkerMessage) => {
        if (msg.type === "page") pages.push(msg.page);
        else if (msg.type === "done") settle(() => resolve(pages));
        else settle(() => reject(workerError(msg)));
      });
      worker.on("error", (err) => settle(() => reject(new JobError("conversion_failed", "The PDF could not be read for conversion.", { cause: err }))));
      worker.on("exit", (code) => settle(() => reject(new JobError("conversion_failed", "The PDF could not be read for conversion.", { cause: new Error(`extraction worker exited with ${code}`) }))));
    });
  } finally {
    await worker.terminate();
  }
}

function workerError(msg: Extract<WorkerMessage, { type: "error" }>): JobError {
  const cause = new Error(msg.message);
  if (msg.reason === "password") return new JobError("encrypted_input", "The PDF is password-protected; remove the password first.", { cause });
  if (msg.reason === "invalid") return new JobError("invalid_pdf", "The file is not a readable PDF.", { cause });
  return new JobError("conversion_failed", "The PDF could not be read for conversion.", { cause });
}
