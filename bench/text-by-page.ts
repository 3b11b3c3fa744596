/**
 * Word recall page by page over the corpus' real PDFs: every page cut out with qpdf and converted
 * alone to XLSX and DOCX, its words checked against the page's reference texts (the best of them
 * for that page) as bench/pdf-to-office-truth.ts checks whole documents — "every word of every
 * page". A whole document's measure pools its pages' words, so a word missing on one page can be
 * made up by an extra copy on another, and one reference text must serve every page; page by page
 * neither happens. Prints each page that misses a word and the totals.
 *
 *   node bench/text-by-page.ts [name-filter]
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { JobError } from "../core/errors.ts";
import { readDocx, readXlsx, workbookText } from "../test/helpers/convert-quality.ts";
import { runOp } from "../test/helpers/runner.ts";
import { pdfinfo, run } from "../test/helpers/tools.ts";
import { bestRecall, GLUED_ACROSS_CLIP, mupdfText, referenceTexts } from "../test/helpers/text-recall.ts";
import { realPdfFiles } from "./pdf-to-office-truth.ts";

/** The text of a converted file: the DOCX's, or the workbook's cells row by row. */
async function textOf(file: string, to: "xlsx" | "docx"): Promise<string> {
  if (to === "docx") return readDocx(await readFile(file)).text;
  return workbookText(await readXlsx(file));
}

type Tally = Record<"xlsx" | "docx", [found: number, total: number]>;

/** Converts one page of `pdf` alone both ways and adds its recall to the tally; prints what it misses. */
async function measurePage(pdf: string, page: number, work: string, sum: Tally): Promise<void> {
  const refs = await referenceTexts(pdf, page);
  if (!refs[0]?.trim()) return;
  const name = path.basename(pdf);
  const mu = (await mupdfText(pdf, page)) ?? undefined;
  const one = path.join(work, `${name}-${page}.pdf`);
  await run("qpdf", ["--empty", "--pages", pdf, String(page), "--", one, "--warning-exit-0"]);
  for (const to of ["xlsx", "docx"] as const) {
    const res = await runOp("convert", { to }, [one], path.join(work, `${name}-${page}-${to}`));
    if (res instanceof JobError) {
      console.log(`${name} page ${page} ${to}: ${res.code}`);
      continue;
    }
    const r = bestRecall(refs, await textOf(res.outputs[0]!.path, to), mu, GLUED_ACROSS_CLIP[name]);
    sum[to] = [sum[to][0] + r.found, sum[to][1] + r.total];
    if (r.found < r.total) console.log(`${name} page ${page} ${to}: missing ${JSON.stringify([...r.missing])}`);
  }
}

const filter = process.argv[2] ?? "";
const work = await mkdtemp(path.join(os.tmpdir(), "folio-text-by-page-"));
const sum: Tally = { xlsx: [0, 0], docx: [0, 0] };
try {
  for (const pdf of (await realPdfFiles()).filter((f) => path.basename(f).includes(filter))) {
    const info = await pdfinfo(pdf);
    const pages = info.ok ? Number(info.Pages) : 0;
    for (let page = 1; page <= pages; page++) await measurePage(pdf, page, work, sum);
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
for (const to of ["xlsx", "docx"] as const) {
  const [found, total] = sum[to];
  console.log(`${to}: ${found} of ${total} words (${((100 * found) / Math.max(1, total)).toFixed(3)} %)`);
}
