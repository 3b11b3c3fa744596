import { appendFile, mkdir, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobError } from "../../core/errors.ts";
import { parsePageRanges } from "../../core/pages.ts";
import { outputCaps, rangesPageCount, specPageCount, withinBytes } from "../../runner/ops/output-budget.ts";
import { tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tmpDir("folio-budget-")));
afterAll(() => cleanup());

const limits = {
  max_pages: 2000,
  max_file_bytes: 1e8,
  max_merge_files: 50,
  max_image_pixels: 1e8,
  timeout_ms: 60_000,
  max_output_pages: 100,
  max_output_bytes: 1_000_000,
  max_decompressed_bytes: 1e9,
  max_decompression_ratio: 200,
};

describe("output budget", () => {
  it("never caps below what the inputs hold once", () => {
    expect(outputCaps(limits, [{ pages: 10, size: 100 }])).toEqual({ pages: 100, bytes: 1_000_000 });
    expect(
      outputCaps(limits, [
        { pages: 80, size: 400_000 },
        { pages: 70, size: 300_000 },
        { pages: null, size: 1 },
      ]),
    ).toEqual({
      pages: 150,
      bytes: 1_400_002,
    });
  });

  it.each([
    ["1-3,7,10-", 12, 3 + 1 + 3],
    ["1-,1-,1-", 2000, 6000],
    ["last,5-last", 9, 1 + 5],
    ["3-99", 10, 0],
  ])("counts the pages of %s over %i pages without listing them", (spec, pages, n) => {
    expect(specPageCount(spec, pages)).toBe(n);
    const parsed = parsePageRanges(spec);
    if (typeof parsed !== "string") expect(rangesPageCount(parsed, pages)).toBe(n);
  });

  it("counts every page without a spec, and none for one that does not parse", () => {
    expect(specPageCount(undefined, 17)).toBe(17);
    expect(specPageCount("7-3", 17)).toBe(0);
  });

  it("aborts work whose files outgrow the cap, as limit_exceeded", async () => {
    const sub = path.join(dir, "grow");
    await mkdir(sub);
    const file = path.join(sub, "out.bin");
    const caps = { pages: 100, bytes: 5_000_000 };
    const chunk = Buffer.alloc(256 * 1024);
    const work = withinBytes(
      caps,
      async () => (await stat(file).catch(() => ({ size: 0 }))).size,
      new AbortController().signal,
      async (signal) => {
        // Writes until stopped, like a qpdf that would write forever.
        while (!signal.aborted) {
          await appendFile(file, chunk);
          await new Promise((r) => setTimeout(r, 5));
        }
        throw new Error("aborted");
      },
    );
    const err = await work.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobError);
    expect((err as JobError).code).toBe("limit_exceeded");
  });

  it("leaves work within the cap alone and passes its result through", async () => {
    const res = await withinBytes(
      { pages: 1, bytes: 10 },
      () => Promise.resolve(5),
      new AbortController().signal,
      () => Promise.resolve("done"),
    );
    expect(res).toBe("done");
  });
});
