/**
 * The short run of the parser fuzzer (issue #10 item 4): real qpdf-corpus files, mutated, through
 * every parser the runner owns; the long run is `make bench-fuzz-parser`. A fixed fast-check seed
 * keeps CI reproducible; FOLIO_FUZZ_SEED and FOLIO_FUZZ_RUNS change it.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QpdfWrittenPdf } from "../../runner/pdf/pdf-update.ts";
import { TARGETS, corpusFiles, fuzz, qpdfWrittenSeeds, zipSeeds } from "../helpers/parser-fuzz.ts";
import { tmpDir } from "../helpers/tools.ts";

const RUNS = Number(process.env.FOLIO_FUZZ_RUNS ?? 300);
const SEED = Number(process.env.FOLIO_FUZZ_SEED ?? 20_261_013);
/** Far above what any input takes (a few ms): only a hang or a blow-up comes near it. */
const MAX_MS = 5000;

let dir: string;
let cleanup: () => Promise<void>;
let pdfs: string[];
let written: { file: string; pages: number }[];
let zips: string[];
beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-fuzz-"));
  pdfs = corpusFiles(60);
  written = await qpdfWrittenSeeds(corpusFiles(24), dir);
  zips = await zipSeeds(dir);
}, 120_000);
afterAll(() => cleanup());

describe("parser fuzzing on the qpdf corpus", () => {
  it("reads every unmutated seed as qpdf does, so that refusals below are the mutations' doing", async () => {
    expect(written.length).toBeGreaterThan(15);
    for (const seed of written) {
      const pdf = await QpdfWrittenPdf.open(seed.file);
      try {
        expect((await pdf.pageRefs(await pdf.readObject(pdf.rootRef))).length, seed.file).toBe(seed.pages);
      } finally {
        await pdf.close();
      }
    }
  });

  it.each([
    ["lexer", () => pdfs],
    ["qpdfWritten", () => written.map((w) => w.file)],
    ["contentStream", () => pdfs],
    ["sniffing", () => [...pdfs, ...zips]],
    ["zipDirectory", () => zips],
    ["streamFilters", () => pdfs],
  ] as const)("%s: only the parser's typed error, in bounded time", { timeout: 300_000 }, async (name, seeds) => {
    const report = await fuzz(TARGETS[name], seeds(), { runs: RUNS, seed: SEED, maxMs: MAX_MS, scratch: path.join(dir, `${name}.pdf`) });
    expect(report.failure).toBeNull();
    expect(report.runs).toBe(RUNS);
    console.log(
      `${report.target}: ${report.runs} inputs, ${report.answered} answered, ${report.refused} refused, slowest ${report.maxMs.toFixed(1)} ms`,
    );
  });
});
