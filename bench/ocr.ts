/**
 * Benchmark: OCR word recall and speed, folio vs `ocrmypdf` run directly with its defaults.
 *   node bench/ocr.ts
 *
 * Fixed corpus, made from known text (test/fixtures/scan-fixtures.ts): clean 300-DPI grayscale
 * scans of 12 A4 pages — three fonts (Helvetica, Times, Courier), skew from −5° to +5°, four pages
 * scanned sideways or upside down, half English and half German (umlauts, ß). Both tools get the
 * same PDF and the same languages (eng+deu); folio runs as a job runs (runSpec, with deskew and
 * rotate_pages, which a user scanning such pages asks for), ocrmypdf with nothing but -l.
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

let t = performance.now();
const res = ok(
  await runOp("ocr", { languages: ["eng", "deu"], deskew: true, rotate_pages: true }, [scan], path.join(SCRATCH, "folio"), {
    limits: { timeout_ms: 3_600_000 },
  }),
);
const folioS = (performance.now() - t) / 1000;
const folioRecall = await recall(res.outputs[0]!.path);

t = performance.now();
const direct = path.join(SCRATCH, "direct.pdf");
await execFileP("ocrmypdf", ["-l", "eng+deu", scan, direct]);
const directS = (performance.now() - t) / 1000;
const directRecall = await recall(direct);

console.log("| | word recall (mean, worst page) | time | per page |");
console.log("|---|---|---|---|");
const row = (label: string, r: number[], s: number): string =>
  `| ${label} | ${(mean(r) * 100).toFixed(2)} %, ${(Math.min(...r) * 100).toFixed(1)} % | ${s.toFixed(1)} s | ${(s / PAGES.length).toFixed(2)} s |`;
console.log(row("folio ocr (deskew, rotate_pages)", folioRecall, folioS));
console.log(row("ocrmypdf -l eng+deu (its defaults)", directRecall, directS));
console.log(
  "\nper page (folio / ocrmypdf recall): " +
    PAGES.map(
      (p, i) =>
        `${p.font[0]}${p.skew}°${p.turn ? `+${p.turn}` : ""} ${(folioRecall[i]! * 100).toFixed(0)}/${(directRecall[i]! * 100).toFixed(0)}`,
    ).join(", "),
);
console.log(`load after: ${load()}`);
await rm(SCRATCH, { recursive: true, force: true });
