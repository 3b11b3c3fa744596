/**
 * Benchmark: OCR word recall and speed, folio vs `ocrmypdf` run directly with its defaults.
 *   node bench/ocr.ts
 *
 * Fixed corpus, made from known text (test/fixtures/scan-fixtures.ts): clean 300-DPI grayscale
 * scans of 12 A4 pages — three fonts (Helvetica, Times, Courier), skew from −5° to +5°, four pages
 * scanned sideways or upside down, half English and half German (umlauts, ß). Both tools get the
 * same PDF and the same languages (eng+deu) and the same work, in pairs: first with nothing else
 * (ocrmypdf's defaults against folio's: folio writes a plain PDF where ocrmypdf's default output is
 * PDF/A through Ghostscript, so a third row asks ocrmypdf for `--output-type pdf` too), then with
 * deskew and page rotation, which a user scanning such pages asks for (`--deskew --rotate-pages`).
 * folio runs as a job runs (runSpec: the sandbox, the checks, the output written and verified).
 * Recall: the share of each page's words (lower-cased, letters and digits) found in the text
 * poppler's pdftotext reads back from that page. Goal (issue #15): folio ≥ 98 % and no slower.
 */
import { execFile } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { ENGLISH_WORDS, GERMAN_WORDS, paragraph, scannedPdf, type ScanPage } from "../test/fixtures/scan-fixtures.ts";
import { ok, runOp } from "../test/helpers/runner.ts";
import { pdftotext, wordRecall } from "../test/helpers/tools.ts";

const execFileP = promisify(execFile);
const SCRATCH = path.join(os.tmpdir(), `folio-bench-ocr-${process.pid}`);
const load = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

const FONTS: ScanPage["font"][] = ["Helvetica", "TimesRoman", "Courier"];
const SKEWS = [0, 2, -3, 5, -5, 1.5, 0, -2, 4, -1, 3, 0];
const TURNS: ScanPage["turn"][] = [0, 0, 90, 0, 0, 180, 0, 270, 0, 0, 90, 0];
const PAGES: ScanPage[] = SKEWS.map((skew, i) => ({
  text: paragraph(i % 2 ? GERMAN_WORDS : ENGLISH_WORDS, 100 + i, 110),
  font: FONTS[i % 3]!,
  skew,
  turn: TURNS[i]!,
}));

async function recall(file: string): Promise<number[]> {
  const pages = (await pdftotext(file)).split("\f");
  return PAGES.map((p, i) => wordRecall(p.text, pages[i] ?? ""));
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

await mkdir(SCRATCH, { recursive: true });
const scan = await scannedPdf(path.join(SCRATCH, "scans.pdf"), PAGES);
console.log(`OCR of ${PAGES.length} scanned pages (300 DPI, 3 fonts, skew ±5°, 4 turned, English + German); load ${load()}\n`);

interface Row {
  label: string;
  recall: number[];
  seconds: number;
}

async function folio(label: string, options: Record<string, unknown>): Promise<Row> {
  const t = performance.now();
  const out = path.join(SCRATCH, `folio-${label.replace(/\W+/g, "-")}`);
  const res = ok(await runOp("ocr", { languages: ["eng", "deu"], ...options }, [scan], out, { limits: { timeout_ms: 3_600_000 } }));
  const seconds = (performance.now() - t) / 1000;
  return { label, recall: await recall(res.outputs[0]!.path), seconds };
}

async function ocrmypdf(label: string, args: string[]): Promise<Row> {
  const direct = path.join(SCRATCH, `direct-${label.replace(/\W+/g, "-")}.pdf`);
  const t = performance.now();
  await execFileP("ocrmypdf", ["-l", "eng+deu", ...args, scan, direct]);
  const seconds = (performance.now() - t) / 1000;
  return { label, recall: await recall(direct), seconds };
}

const rows: Row[] = [
  await folio("folio ocr (defaults)", {}),
  await ocrmypdf("ocrmypdf -l eng+deu (its defaults: PDF/A output)", []),
  await ocrmypdf("ocrmypdf -l eng+deu --output-type pdf", ["--output-type", "pdf"]),
  await folio("folio ocr (deskew, rotate_pages)", { deskew: true, rotate_pages: true }),
  await ocrmypdf("ocrmypdf -l eng+deu --deskew --rotate-pages --output-type pdf", ["--deskew", "--rotate-pages", "--output-type", "pdf"]),
];

console.log("| | word recall (mean, worst page) | time | per page | folio time ÷ this |");
console.log("|---|---|---|---|---|");
for (const [i, r] of rows.entries()) {
  const pair = r.label.startsWith("folio") ? "" : `${((i < 3 ? rows[0]! : rows[3]!).seconds / r.seconds).toFixed(2)}×`;
  console.log(
    `| ${r.label} | ${(mean(r.recall) * 100).toFixed(2)} %, ${(Math.min(...r.recall) * 100).toFixed(1)} % | ${r.seconds.toFixed(1)} s | ${(r.seconds / PAGES.length).toFixed(2)} s | ${pair} |`,
  );
}
const [plain, , , fixed, fixedDirect] = rows;
console.log(
  "\nper page, deskew + rotation (folio / ocrmypdf recall): " +
    PAGES.map(
      (p, i) =>
        `${p.font[0]}${p.skew}°${p.turn ? `+${p.turn}` : ""} ${(fixed!.recall[i]! * 100).toFixed(0)}/${(fixedDirect!.recall[i]! * 100).toFixed(0)}`,
    ).join(", "),
);
console.log(`(folio without deskew/rotation: ${(mean(plain!.recall) * 100).toFixed(2)} % — turned pages need rotate_pages)`);
console.log(`load after: ${load()}`);
await rm(SCRATCH, { recursive: true, force: true });
