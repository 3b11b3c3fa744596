/**
 * Runs the extraction worker (extract-worker.ts) for one PDF and hands its pages over one at a
 * time. The worker is a fresh thread per job and is terminated when the job's signal aborts, so a
 * PDF that makes pdfjs spin cannot outlive its deadline and nothing pdfjs caches leaks into the
 * next job.
 *
 * Pages flow with back-pressure: the worker reads the next page only when the consumer has taken
 * the previous one (and says whether it still wants that page's images), so at most one page's
 * decoded images are in memory however long the PDF is.
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
  /** pdfjs drops any single image above this many pixels (the job's max_image_pixels). */
  maxImagePixels: number;
  /** Whether images are wanted at all (not for XLSX: pdfjs then never decodes them). */
  images: boolean;
  /** Decoded image pixels allowed over the whole document; images past it are left out and counted. */
  imagePixelBudget: number;
}

function failed(cause: Error): JobError {
  return new JobError("conversion_failed", "The PDF could not be read for conversion.", { cause });
}

/** The PDF's pages in order; abandon the loop (or abort the signal) to stop the worker. */
export async function* extractPages(file: string, opts: ExtractOptions): AsyncGenerator<RawPage> {
  const { signal } = opts;
  signal.throwIfAborted();
  const data = new Uint8Array(await readFile(file));
  // The deadline may have passed while the file was read: never start a worker after it.
  signal.throwIfAborted();
  const input: WorkerInput = {
    data,
    maxImagePixels: opts.images ? opts.maxImagePixels : 0,
    imagePixelBudget: opts.imagePixelBudget,
    fontsDir: path.join(PDFJS_DIR, "standard_fonts") + path.sep,
    cmapsDir: path.join(PDFJS_DIR, "cmaps") + path.sep,
  };
  const worker = new Worker(WORKER_URL, {
    workerData: input,
    transferList: [data.buffer],
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  // Everything the worker says (or how it ended), in order; `wake` resolves a waiting read.
  const inbox: (WorkerMessage | Error)[] = [];
  let wake: (() => void) | null = null;
  const post = (m: WorkerMessage | Error): void => {
    inbox.push(m);
    wake?.();
  };
  const onAbort = (): void => post(signal.reason as Error);
  signal.addEventListener("abort", onAbort, { once: true });
  worker.on("message", post);
  worker.on("error", (err: Error) => post(failed(err)));
  worker.on("exit", (code) => post(failed(new Error(`extraction worker exited with ${code}`))));
  try {
    for (;;) {
      if (!inbox.length) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
      wake = null;
      signal.throwIfAborted();
      const msg = inbox.shift()!;
      if (msg instanceof Error) throw msg;
      if (msg.type === "done") return;
      if (msg.type === "error") throw workerError(msg);
      yield msg.page;
      signal.throwIfAborted();
      worker.postMessage("next");
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    await worker.terminate();
  }
}

function workerError(msg: Extract<WorkerMessage, { type: "error" }>): JobError {
  const cause = new Error(msg.message);
  if (msg.reason === "limit") return new JobError("limit_exceeded", msg.message, { cause });
  if (msg.reason === "password")
    return new JobError("encrypted_input", "The PDF is password-protected; remove the password first.", { cause });
  if (msg.reason === "invalid") return new JobError("invalid_pdf", "The file is not a readable PDF.", { cause });
  return failed(cause);
}
