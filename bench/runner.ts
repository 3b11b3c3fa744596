/**
 * `make bench-runner`: the runner's benchmarks in one run, on this machine, side by side with the
 * raw engines and peers they compete with. Each part is a script of its own (also runnable alone):
 *   bench/qpdf-ops.ts   merge, split, protect: folio vs raw qpdf on a 5,050-page document
 *   bench/compress.ts   compress: size and SSIM vs Ghostscript /ebook, and vs qpdf lossless
 *   bench/convert.ts    Office → PDF: warm pool vs cold soffice, latency and throughput
 *   bench/edit.ts       edit: folio vs raw qpdf on a 5,000-page document (issue #15)
 *   bench/html.ts       HTML → PDF: warm pool vs cold Chromium, throughput, memory over 1,000 documents
 *   bench/ocr.ts        OCR: word recall and speed vs ocrmypdf run directly
 *   bench/pdfa.ts       PDF/A: every output of a corpus validates (veraPDF)
 *   bench/sandbox.ts    what the engines' bubblewrap sandbox costs per process, per job, per warm conversion
 * Benchmarks are not tests: they print figures, and the figures go into the issue notes.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";

const parts = ["qpdf-ops.ts", "compress.ts", "convert.ts", "sandbox.ts", "edit.ts", "html.ts", "ocr.ts", "pdfa.ts"];
const only = process.argv.slice(2);
let failed = 0;
console.log(`folio runner benchmarks — ${new Date().toISOString()} — node ${process.version}\n`);
for (const part of parts) {
  if (only.length && !only.some((o) => part.startsWith(o))) continue;
  console.log(`=== ${part} ===`);
  const res = spawnSync(process.execPath, [path.join(import.meta.dirname, part)], { stdio: "inherit" });
  if (res.status !== 0) {
    failed++;
    console.log(`(${part} exited with ${res.status})`);
  }
  console.log();
}
process.exitCode = failed ? 1 : 0;
