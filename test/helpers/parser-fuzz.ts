/**
 * A property-based fuzzer (fast-check) of the runner's own parsers, seeded with real files and
 * fed their mutations (test/helpers/pdf-mutations.ts). The property, for every target: on any
 * input the parser either answers or throws its own typed error — no other exception, no hang —
 * and takes bounded time. The short run is test/unit/parser-fuzz.test.ts; the long one is
 * `make bench-fuzz-parser` (bench/fuzz-parser.ts).
 */
import { execFile } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import fc from "fast-check";
import { officeZipKind, sniff } from "../../core/sniff.ts";
import { localHeaders, readZipDirectory } from "../../core/zip-directory.ts";
import { forEachOperator } from "../../runner/pdf/content-stream.ts";
import { FIT, writeOutline } from "../../runner/pdf/outline.ts";
import { PdfLexer, PdfSyntaxError } from "../../runner/pdf/pdf-syntax.ts";
import { QpdfWrittenPdf } from "../../runner/pdf/pdf-update.ts";
import { countedFilters, decodedSize } from "../../runner/pdf/stream-filters.ts";
import { buildZip } from "./zip-builder.ts";
import { mutateAll, mutations, type Mutation } from "./pdf-mutations.ts";
import { CORPUS } from "./tools.ts";

const execFileP = promisify(execFile);

/** One parser under test: `run` may throw only errors for which `typed` is true. */
export interface FuzzTarget {
  name: string;
  run(bytes: Buffer, scratch: string): Promise<void> | void;
  typed(err: unknown): boolean;
}

const isSyntaxError = (err: unknown): boolean => err instanceof PdfSyntaxError;

/** Reads one value after each of the first 64 "obj" keywords, and at the start (§7.3). */
const lexer: FuzzTarget = {
  name: "pdf-syntax lexer",
  run(bytes) {
    const text = bytes.toString("latin1");
    const starts = [0];
    for (let i = text.indexOf(" obj"); i >= 0 && starts.length < 64; i = text.indexOf(" obj", i + 4)) starts.push(i + 4);
    for (const pos of starts) {
      try {
        new PdfLexer(text, pos).value();
      } catch (err) {
        if (!isSyntaxError(err)) throw err;
      }
    }
  },
  typed: isSyntaxError,
};

/** Opens the file as qpdf's output, lists its pages and appends a bookmark, as merge and split do. */
const qpdfWritten: FuzzTarget = {
  name: "incremental-update reader and writer",
  async run(bytes, scratch) {
    await writeFile(scratch, bytes);
    const pdf = await QpdfWrittenPdf.open(scratch);
    let pages: number;
    try {
      pages = (await pdf.pageRefs(await pdf.readObject(pdf.rootRef))).length;
    } finally {
      await pdf.close();
    }
    if (pages > 0) await writeOutline(scratch, [{ title: "fuzz", page: pages - 1, view: FIT, open: true, kids: [] }], pages);
  },
  typed: isSyntaxError,
};

/** The content-stream tokenizer never throws at all: a viewer stops drawing where a stream breaks. */
const contentStream: FuzzTarget = {
  name: "content-stream tokenizer",
  run(bytes) {
    let operators = 0;
    forEachOperator(bytes, () => void operators++);
  },
  typed: () => false,
};

/** Sniffing answers a kind or null for any bytes and name. */
const sniffing: FuzzTarget = {
  name: "input sniffing",
  run(bytes) {
    sniff(bytes.subarray(0, 64 * 1024), "fuzz.docx");
  },
  typed: () => false,
};

/** The zip central directory and local headers (Office inputs), and the kind they tell. */
const zipDirectory: FuzzTarget = {
  name: "zip directory and Office kind",
  run(bytes) {
    const read = (offset: number, length: number): Buffer | null =>
      offset >= 0 && length >= 0 && offset + length <= bytes.length ? bytes.subarray(offset, offset + length) : null;
    const dir = readZipDirectory(read, bytes.length);
    officeZipKind(dir?.entries.length ? dir.entries : localHeaders(bytes), read);
    sniff(bytes.subarray(0, 64 * 1024), "fuzz.xlsx", { bytes: bytes.subarray(-64 * 1024), size: bytes.length });
  },
  typed: () => false,
};

/** Counting what stream filters decode to: any bytes, every chain, never a throw. */
const streamFilters: FuzzTarget = {
  name: "stream filter counting",
  async run(bytes) {
    for (const chain of [
      ["FlateDecode"],
      ["LZWDecode"],
      ["RunLengthDecode"],
      ["ASCII85Decode", "LZWDecode"],
      ["ASCIIHexDecode", "FlateDecode"],
    ]) {
      await decodedSize(bytes, countedFilters(chain), 64 * 1024 * 1024);
    }
  },
  typed: () => false,
};

export const TARGETS = { lexer, qpdfWritten, contentStream, sniffing, zipDirectory, streamFilters } as const;

/**
 * Zip seeds for the zip target: Office-shaped archives as producers write them (plain, with data
 * descriptors, ZIP64, a stub before them, backslashed names).
 */
export async function zipSeeds(dir: string): Promise<string[]> {
  const types = Buffer.from(
    '<Types><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>',
  );
  const entries = [
    { name: "[Content_Types].xml", data: types },
    { name: "xl/workbook.xml", data: Buffer.from("<workbook>".padEnd(4000, " ") + "</workbook>") },
    { name: "xl\\worksheets\\sheet1.xml", data: Buffer.from("<sheetData/>".repeat(300)) },
    { name: "mimetype", data: Buffer.from("application/vnd.oasis.opendocument.spreadsheet"), deflate: false },
  ];
  const variants = [{}, { dataDescriptors: true }, { zip64: true }, { prefix: Buffer.alloc(300, 0x4d) }];
  const files: string[] = [];
  for (const [i, v] of variants.entries()) {
    const file = path.join(dir, `zip-seed-${i}.zip`);
    await writeFile(file, buildZip(i % 2 ? [...entries].reverse() : entries, v));
    files.push(file);
  }
  return files;
}

/** Corpus PDFs, smallest first, at most `max` of them and none above `maxBytes`. */
export function corpusFiles(max: number, maxBytes = 512 * 1024): string[] {
  return readdirSync(CORPUS)
    .filter((f) => f.endsWith(".pdf"))
    .map((f) => path.join(CORPUS, f))
    .filter((f) => statSync(f).size <= maxBytes)
    .sort()
    .filter((_, i, all) => i % Math.max(1, Math.floor(all.length / max)) === 0)
    .slice(0, max);
}

/**
 * Seeds for the incremental-update target: each corpus file as merge writes it (qpdf --empty
 * --pages …, classic xref), so mutations hit the syntax that reader really meets. Files qpdf
 * cannot open are skipped. Returns the written files and their page counts by qpdf.
 */
export async function qpdfWrittenSeeds(files: readonly string[], dir: string): Promise<{ file: string; pages: number }[]> {
  const seeds: { file: string; pages: number }[] = [];
  for (const [i, f] of files.entries()) {
    const out = path.join(dir, `seed-${i}.pdf`);
    try {
      await execFileP("qpdf", [
        "--no-warn",
        "--empty",
        "--object-streams=disable",
        "--remove-unreferenced-resources=no",
        "--pages",
        f,
        "--",
        out,
      ]);
    } catch (err) {
      if ((err as { code?: number }).code !== 3) continue;
    }
    const { stdout } = await execFileP("qpdf", ["--show-npages", out]).catch(() => ({ stdout: "" }));
    const pages = Number.parseInt(stdout, 10);
    if (pages > 0) seeds.push({ file: out, pages });
  }
  return seeds;
}

export interface FuzzReport {
  target: string;
  runs: number;
  /** Inputs the parser answered, and inputs it refused with its typed error. */
  answered: number;
  refused: number;
  maxMs: number;
  /** The first failure (fast-check's shrunk counterexample), or null. */
  failure: string | null;
  seed: number;
}

/**
 * Runs `runs` mutated inputs through `target`. A failure is an untyped exception or an input that
 * took longer than `maxMs`; fast-check shrinks it to a small counterexample and says how to replay it.
 */
export async function fuzz(
  target: FuzzTarget,
  seeds: readonly string[],
  opts: { runs: number; seed: number; maxMs: number; scratch: string },
): Promise<FuzzReport> {
  const bytes = await Promise.all(seeds.map((s) => readFile(s)));
  const report: FuzzReport = { target: target.name, runs: 0, answered: 0, refused: 0, maxMs: 0, failure: null, seed: opts.seed };
  const property = fc.asyncProperty(fc.nat(bytes.length - 1), mutations, async (i: number, ms: Mutation[]) => {
    const input = mutateAll(bytes[i]!, ms);
    const started = performance.now();
    try {
      await target.run(input, opts.scratch);
      report.answered++;
    } catch (err) {
      if (!target.typed(err)) throw err;
      report.refused++;
    }
    const took = performance.now() - started;
    report.maxMs = Math.max(report.maxMs, took);
    report.runs++;
    if (took > opts.maxMs) throw new Error(`took ${Math.round(took)} ms (bound ${opts.maxMs} ms) on ${path.basename(seeds[i]!)}`);
  });
  const result = await fc.check(property, { numRuns: opts.runs, seed: opts.seed, endOnFailure: false });
  if (result.failed) {
    const [i, ms] = result.counterexample ?? [];
    report.failure = `${String(result.errorInstance)} — seed ${path.basename(seeds[i ?? 0] ?? "?")}, mutations ${JSON.stringify(ms)}, replay with seed ${result.seed} path ${result.counterexamplePath}`;
  }
  return report;
}
