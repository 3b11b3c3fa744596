/**
 * Benchmark: compress, side by side with the peers it must beat, on the same files in one run.
 *   node bench/compress.ts            (the project's Node 24 runs the TypeScript sources directly)
 *
 * Fixed parameters. Two generated corpora:
 *  - images: PDFs of photographic pictures at various resolutions and encodings (JPEG at 300 and
 *    400+ DPI, Flate "PNG" photos at 600 DPI, gray photos at 500 DPI, a 300 DPI scanned text
 *    page, mixed placements incl. forms and a soft mask, and JPEGs already at 150 DPI);
 *  - text: text-only PDFs (pdf-lib without and with object streams, and a LibreOffice-made PDF
 *    with embedded font subsets) plus an interactive form.
 * For each file: size, mean SSIM against the input (pages rendered by poppler at SSIM_DPI) and
 * wall time of folio compress low/medium/high/lossless (in-process runSpec, as the CLI runs it),
 * Ghostscript `-dPDFSETTINGS=/ebook` and `qpdf --object-streams=generate --recompress-flate
 * --compression-level=9`. Goals (issue #2): on images, folio medium is smaller AND has a higher
 * SSIM than Ghostscript /ebook; on text, folio is never above qpdf lossless. (On JPEGs already at
 * the target resolution Ghostscript copies the data through — SSIM 1.0, file not smaller — while
 * folio re-encodes at the level's quality when that saves ≥ 15 %: that row is a trade, not a race.)
 * Ghostscript is only the anchor here; it is not part of the product.
 */
import { execFile } from "node:child_process";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { JobError } from "../core/errors.ts";
import { formsPdf, IMAGE_HEAVY, imagePdf, textPdf, type PlacedImage } from "../test/fixtures/compress-fixtures.ts";
import { runOp } from "../test/helpers/runner.ts";
import { pdfSsim } from "../test/helpers/tools.ts";

const execFileP = promisify(execFile);
const SSIM_DPI = 150;
const FOLIO_LEVELS = ["low", "medium", "high", "lossless"] as const;

interface BenchFile {
  name: string;
  group: "images" | "text";
  path: string;
}

interface Cell {
  size: number;
  ssim: number;
  ms: number;
  note?: string;
}

const photos = (n: number, img: PlacedImage): PlacedImage[][] => Array.from({ length: n }, (_, i) => [{ ...img, seed: i + 1 }]);

async function buildCorpus(dir: string): Promise<BenchFile[]> {
  const files: BenchFile[] = [];
  const add = async (name: string, group: BenchFile["group"], make: (file: string) => Promise<void>): Promise<void> => {
    const file = path.join(dir, `${name}.pdf`);
    try {
      await make(file);
      files.push({ name, group, path: file });
    } catch (err) {
      console.log(`(skipped ${name}: ${String(err)})`);
    }
  };
  await add("jpeg-300dpi", "images", (f) =>
    imagePdf(f, photos(6, { width: 1800, height: 1200, format: "jpeg", quality: 92, inches: [6, 4] })),
  );
  await add("png-600dpi", "images", (f) => imagePdf(f, photos(4, { width: 2400, height: 1800, format: "png", inches: [4, 3] })));
  await add("gray-photo-500dpi", "images", (f) =>
    imagePdf(f, photos(3, { width: 2000, height: 1500, format: "gray-jpeg", quality: 92, inches: [4, 3] })),
  );
  await add("text-scan-300dpi", "images", (f) =>
    imagePdf(f, photos(2, { width: 2250, height: 3000, format: "scan-jpeg", quality: 90, inches: [7.5, 10] })),
  );
  await add("mixed-fixture", "images", (f) => imagePdf(f, IMAGE_HEAVY));
  await add("jpeg-150dpi-q75", "images", (f) =>
    imagePdf(f, photos(4, { width: 900, height: 600, format: "jpeg", quality: 75, inches: [6, 4] })),
  );
  await add("text-20p", "text", (f) => textPdf(f, 20, { seed: 3 }));
  await add("text-20p-objstm", "text", (f) => textPdf(f, 20, { seed: 5, objectStreams: true }));
  await add("libreoffice-text", "text", (f) => libreOfficePdf(f, dir));
  await add("form-fields", "text", (f) => formsPdf(f));
  return files;
}

/** A text document converted by LibreOffice (embedded TrueType subsets, like real office output). */
async function libreOfficePdf(file: string, dir: string): Promise<void> {
  const src = path.join(dir, "libreoffice-text.html");
  const para = "Quarterly ledger review: revenue, harbour logistics and orchard yields were reconciled against the annual plan. ";
  const body = Array.from({ length: 60 }, (_, i) => `<h2>Section ${i + 1}</h2><p>${para.repeat(6)}</p>`).join("\n");
  await writeFile(src, `<html><body>${body}</body></html>`);
  const profile = path.join(dir, "lo-profile");
  await execFileP(
    "soffice",
    [`-env:UserInstallation=file://${profile}`, "--headless", "--convert-to", "pdf:writer_pdf_Export", "--outdir", dir, src],
    {
      timeout: 180_000,
    },
  );
  await stat(file);
}

async function timeIt(fn: () => Promise<void>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function measure(input: string, output: string, ms: number, note?: string): Promise<Cell> {
  return { size: (await stat(output)).size, ssim: await pdfSsim(input, output, SSIM_DPI), ms, ...(note ? { note } : {}) };
}

async function folio(file: BenchFile, level: string, out: string): Promise<Cell> {
  let result: Awaited<ReturnType<typeof runOp>> | undefined;
  const ms = await timeIt(async () => void (result = await runOp("compress", { level }, [file.path], out)));
  if (!result || result instanceof JobError) throw new Error(`folio ${level} failed on ${file.name}: ${String(result)}`);
  const o = result.outputs[0]!;
  return measure(file.path, o.path, ms, result.figures.compressed ? undefined : "input kept");
}

async function ghostscript(file: BenchFile, out: string): Promise<Cell> {
  const ms = await timeIt(async () => {
    await execFileP("gs", [
      "-sDEVICE=pdfwrite",
      "-dPDFSETTINGS=/ebook",
      "-dNOPAUSE",
      "-dBATCH",
      "-dQUIET",
      `-sOutputFile=${out}`,
      file.path,
    ]);
  });
  const fields = await formFieldCount(out);
  return measure(
    file.path,
    out,
    ms,
    fields === (await formFieldCount(file.path)) ? undefined : `form fields ${await formFieldCount(file.path)}→${fields}`,
  );
}

async function qpdfLossless(file: BenchFile, out: string): Promise<Cell> {
  const ms = await timeIt(async () => {
    await execFileP("qpdf", ["--object-streams=generate", "--recompress-flate", "--compression-level=9", file.path, out]).catch(
      (err: { code?: number }) => {
        if (err.code !== 3) throw err; // 3: success with warnings
      },
    );
  });
  return measure(file.path, out, ms);
}

async function formFieldCount(file: string): Promise<number> {
  const { stdout } = await execFileP("qpdf", ["--json=2", "--json-key=acroform", file], { maxBuffer: 64 * 1024 * 1024 });
  return (JSON.parse(stdout) as { acroform: { fields: unknown[] } }).acroform.fields.length;
}

const kb = (n: number): string => `${(n / 1024).toFixed(n < 1000 * 1024 ? 1 : 0)} KB`;
const cellText = (c: Cell | undefined): string =>
  c ? `${kb(c.size)} ${c.ssim.toFixed(4)} ${(c.ms / 1000).toFixed(2)}s${c.note ? ` (${c.note})` : ""}` : "—";

function printTable(files: BenchFile[], sizes: Map<string, number>, cells: Map<string, Map<string, Cell>>, columns: string[]): void {
  const header = ["file", "input", ...columns];
  const rows = files.map((f) => [f.name, kb(sizes.get(f.name)!), ...columns.map((c) => cellText(cells.get(f.name)?.get(c)))]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]): string => r.map((v, i) => v.padEnd(widths[i]!)).join(" | ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
  for (const [i, r] of rows.entries()) {
    if (i > 0 && files[i]!.group !== files[i - 1]!.group) console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
    console.log(line(r));
  }
}

function verdicts(files: BenchFile[], cells: Map<string, Map<string, Cell>>): string[] {
  const out: string[] = [];
  const cell = (f: BenchFile, col: string): Cell => cells.get(f.name)!.get(col)!;
  const images = files.filter((f) => f.group === "images");
  const misses: string[] = [];
  for (const f of images) {
    const [m, g] = [cell(f, "folio medium"), cell(f, "gs /ebook")];
    if (m.size >= g.size) misses.push(`${f.name}: folio ${kb(m.size)} is not smaller than gs ${kb(g.size)}`);
    if (m.ssim <= g.ssim)
      misses.push(
        `${f.name}: folio SSIM ${m.ssim.toFixed(4)} is not above gs ${g.ssim.toFixed(4)}${g.size >= (cells.get(f.name)!.get("qpdf lossless")?.size ?? Infinity) ? " (gs kept the images as they were and grew the file)" : ""}`,
      );
  }
  const won = images.length - new Set(misses.map((m) => m.split(":")[0])).size;
  out.push(
    `images: folio medium smaller AND higher SSIM than gs /ebook on ${won}/${images.length} files — goal ${won === images.length ? "met" : "MISSED"}`,
  );
  for (const m of misses) out.push(`  ${m}`);
  const total = (col: string): number => images.reduce((s, f) => s + cell(f, col).size, 0);
  const meanSsim = (col: string): number => images.reduce((s, f) => s + cell(f, col).ssim, 0) / images.length;
  out.push(
    `images total: folio medium ${kb(total("folio medium"))} (mean SSIM ${meanSsim("folio medium").toFixed(4)}) vs gs /ebook ${kb(total("gs /ebook"))} (mean SSIM ${meanSsim("gs /ebook").toFixed(4)})`,
  );
  const text = files.filter((f) => f.group === "text");
  const notAbove = text.filter((f) => FOLIO_LEVELS.every((l) => cell(f, `folio ${l}`).size <= cell(f, "qpdf lossless").size));
  out.push(
    `text: folio (every level) never above qpdf lossless on ${notAbove.length}/${text.length} files — goal ${notAbove.length === text.length ? "met" : "MISSED"}`,
  );
  return out;
}

export async function main(): Promise<void> {
  const dir = path.join(os.tmpdir(), `folio-bench-compress-${process.pid}`);
  await mkdir(dir, { recursive: true });
  try {
    console.log(`compress benchmark — SSIM on pages rendered at ${SSIM_DPI} DPI; times are wall clock on ${os.cpus().length} cores\n`);
    const files = await buildCorpus(dir);
    const sizes = new Map<string, number>();
    const cells = new Map<string, Map<string, Cell>>();
    for (const f of files) {
      sizes.set(f.name, (await readFile(f.path)).length);
      const row = new Map<string, Cell>();
      cells.set(f.name, row);
      for (const level of FOLIO_LEVELS) row.set(`folio ${level}`, await folio(f, level, path.join(dir, `out-${f.name}-${level}`)));
      row.set("gs /ebook", await ghostscript(f, path.join(dir, `${f.name}.gs.pdf`)));
      row.set("qpdf lossless", await qpdfLossless(f, path.join(dir, `${f.name}.qpdf.pdf`)));
    }
    printTable(files, sizes, cells, [...FOLIO_LEVELS.map((l) => `folio ${l}`), "gs /ebook", "qpdf lossless"]);
    console.log("\ncells: size, SSIM vs input, time\n");
    for (const v of verdicts(files, cells)) console.log(v);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
