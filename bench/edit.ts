/**
 * Benchmark: edit on a 5,000-page document, folio vs raw qpdf doing the same work.
 *   node bench/edit.ts [runs]
 *
 * Fixed parameters: a 5,000-page pdf-lib document (text and a bar on each page, classic xref),
 * cached in $TMPDIR/folio-bench-edit-v1. Each case runs RUNS times (default 5) after a warm-up and
 * prints the median wall time of raw qpdf, of folio in-process (runSpec: inputs inspected, outputs
 * hashed, as a worker runs it), and their ratio. Raw qpdf gets the overlay PDFs ready-made (its
 * users would have to make them somehow); folio makes them within its time. Goal (issue #15):
 * folio ≤ 1.5× raw qpdf.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { writePdf } from "../runner/pdf/pdf-writer.ts";
import { textPdf } from "../test/fixtures/pdf-fixtures.ts";
import { ok, runOp } from "../test/helpers/runner.ts";

const execFileP = promisify(execFile);
const RUNS = Number(process.argv[2] ?? 5);
const PAGES = 5000;
const CACHE = path.join(os.tmpdir(), "folio-bench-edit-v1");
const SCRATCH = path.join(os.tmpdir(), `folio-bench-edit-run-${process.pid}`);
const LIMITS = { max_pages: 100_000, timeout_ms: 600_000 };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
let n = 0;

async function time(fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const xs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    xs.push((performance.now() - t) / 1000);
  }
  return median(xs);
}

async function qpdf(args: string[]): Promise<void> {
  await execFileP("qpdf", ["--no-warn", ...args, path.join(SCRATCH, `q-${++n}.pdf`)]).catch((e: { code?: number }) => {
    if (e.code !== 3) throw e;
  });
}

async function main(): Promise<void> {
  await mkdir(CACHE, { recursive: true });
  await mkdir(SCRATCH, { recursive: true });
  const doc = path.join(CACHE, "doc-5000.pdf");
  if (!existsSync(doc)) await textPdf(doc, PAGES, "page", { objectStreams: false });
  // What raw qpdf is handed: a one-page stamp, and 5,000 pages of page numbers (made by Folio's writer).
  const stamp = path.join(SCRATCH, "stamp.pdf");
  const numbers = path.join(SCRATCH, "numbers.pdf");
  const text = (s: string, x: number, y: number, size: number): string => `BT /F1 ${size} Tf ${x} ${y} Td (${s}) Tj ET`;
  await writePdf(stamp, {
    pages: [{ width: 300, height: 400, content: `q /G300 gs ${text("CONFIDENTIAL", 40, 200, 36)} Q` }],
    opacities: new Set([0.3]),
    images: new Map(),
  });
  await writePdf(numbers, {
    pages: Array.from({ length: PAGES }, (_, i) => ({ width: 300, height: 400, content: text(`Page ${i + 1} of ${PAGES}`, 110, 28, 10) })),
    opacities: new Set(),
    images: new Map(),
  });
  const folio = (steps: unknown[]) => async (): Promise<void> => {
    ok(await runOp("edit", { steps }, [doc], path.join(SCRATCH, `f-${++n}`), { limits: LIMITS }));
  };
  const cases: [string, () => Promise<void>, () => Promise<void>][] = [
    ["rotate every page 90°", () => qpdf([doc, "--rotate=+90"]), folio([{ type: "rotate", angle: 90 }])],
    ["delete the first half", () => qpdf([doc, "--pages", ".", "2501-z", "--"]), folio([{ type: "delete", pages: "1-2500" }])],
    ["extract pages 1,001-3,000", () => qpdf([doc, "--pages", ".", "1001-3000", "--"]), folio([{ type: "select", pages: "1001-3000" }])],
    [
      "text stamp on every page",
      () => qpdf([doc, "--overlay", stamp, "--repeat=1", "--"]),
      folio([{ type: "stamp", text: "CONFIDENTIAL", opacity: 0.3, font_size: 36 }]),
    ],
    [
      "'Page {n} of {total}' on every page",
      () => qpdf([doc, "--overlay", numbers, "--"]),
      folio([{ type: "page_numbers", format: "Page {n} of {total}" }]),
    ],
    ["flatten", () => qpdf([doc, "--generate-appearances", "--flatten-annotations=all"]), folio([{ type: "flatten" }])],
  ];
  console.log(
    `edit on a ${PAGES}-page document, median of ${RUNS}; load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}\n`,
  );
  console.log("| case | raw qpdf | folio | ratio |");
  console.log("|---|---|---|---|");
  for (const [label, raw, ours] of cases) {
    const q = await time(raw);
    const f = await time(ours);
    console.log(`| ${label} | ${q.toFixed(2)} s | ${f.toFixed(2)} s | ${(f / q).toFixed(2)}× |`);
    await rm(SCRATCH, { recursive: true, force: true });
    await mkdir(SCRATCH, { recursive: true });
    // The overlay inputs live in SCRATCH: make them again for the next cases.
    await writePdf(stamp, {
      pages: [{ width: 300, height: 400, content: `q /G300 gs ${text("CONFIDENTIAL", 40, 200, 36)} Q` }],
      opacities: new Set([0.3]),
      images: new Map(),
    });
    await writePdf(numbers, {
      pages: Array.from({ length: PAGES }, (_, i) => ({
        width: 300,
        height: 400,
        content: text(`Page ${i + 1} of ${PAGES}`, 110, 28, 10),
      })),
      opacities: new Set(),
      images: new Map(),
    });
  }
  console.log(
    `\nload after: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
  await rm(SCRATCH, { recursive: true, force: true });
}

await main();
