/**
 * Output amplification (issue #10 item 5): the pages and bytes of all the outputs of one job are
 * capped (max_output_pages, max_output_bytes), checked before the work where the work's size is
 * known, and never refuse what a job's inputs hold once.
 */
import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { PDFDocument } from "pdf-lib";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.ts";
import { JobError } from "../../core/errors.ts";
import { recordingQpdf, textPdf } from "../fixtures/pdf-fixtures.ts";
import { prng } from "../helpers/prng.ts";
import { errorCode, ok, runOp } from "../helpers/runner.ts";
import { pageCount, tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
const f: Record<string, string> = {};
let outN = 0;
const out = (): string => path.join(dir, `out-${++outN}`);
const rep = (range: string, n: number): string => Array<string>(n).fill(range).join(",");

/**
 * `pages` pages that all draw one shared 600×450 image of noise (about 800 KB that no compressor
 * shrinks): every split part must carry the image again, so the parts outweigh the input.
 */
async function sharedImagePdf(file: string, pages: number): Promise<string> {
  const random = prng(7);
  const pixels = Buffer.alloc(600 * 450 * 3);
  for (let i = 0; i < pixels.length; i++) pixels[i] = Math.floor(random() * 256);
  const png = await sharp(pixels, { raw: { width: 600, height: 450, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
  const doc = await PDFDocument.create();
  const image = await doc.embedPng(png);
  for (let i = 0; i < pages; i++) doc.addPage([400, 300]).drawImage(image, { x: 0, y: 0, width: 400, height: 300 });
  await writeFile(file, await doc.save({ useObjectStreams: false }));
  return file;
}

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-caps-"));
  f.forty = await textPdf(path.join(dir, "forty.pdf"), 40, "forty");
  f.alpha = await textPdf(path.join(dir, "alpha.pdf"), 3, "alpha");
  f.beta = await textPdf(path.join(dir, "beta.pdf"), 5, "beta");
  f.shared = await sharedImagePdf(path.join(dir, "shared.pdf"), 30);
});
afterAll(() => cleanup());

describe("output caps", () => {
  it("refuses a merge of repeated ranges that would make 26,640 pages, before qpdf assembles anything", async () => {
    const qpdf = await recordingQpdf(dir);
    // The recording wrapper writes beside itself, which the engines' sandbox forbids (core/sandbox.ts).
    const config = loadConfig({ FOLIO_LOG_LEVEL: "silent", FOLIO_QPDF: qpdf.path, FOLIO_SANDBOX: "none" });
    const res = await runOp(
      "merge",
      {},
      [
        { path: f.forty!, pages: rep("1-", 333) },
        { path: f.forty!, pages: rep("1-", 333) },
      ],
      out(),
      {
        config,
      },
    );
    expect(errorCode(res)).toBe("limit_exceeded");
    expect((res as JobError).message).toMatch(/26,640 pages; one job may write at most 10,000/);
    // Only the inputs were inspected: no page was copied.
    const runs = await qpdf.argv();
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.filter((argv) => argv.includes("--empty"))).toEqual([]);
  });

  it("lets a job write every page of its inputs once, whatever the cap", async () => {
    const res = ok(await runOp("merge", {}, [f.alpha!, f.beta!], out(), { limits: { max_output_pages: 2 } }));
    expect(res.figures.pages).toBe(8);
  });

  it("counts a repeated page each time", async () => {
    const limits = { max_output_pages: 8 };
    expect(errorCode(await runOp("merge", {}, [{ path: f.alpha!, pages: "1-,1" }, f.beta!], out(), { limits }))).toBe("limit_exceeded");
    expect(ok(await runOp("merge", {}, [{ path: f.alpha!, pages: "1-2,1" }, f.beta!], out(), { limits })).figures.pages).toBe(8);
  });

  it("refuses split ranges repeated past the cap before writing a part, and allows them below it", async () => {
    const o = out();
    const res = await runOp("split", { mode: "ranges", ranges: rep("1-", 300) }, [f.forty!], o);
    expect(errorCode(res)).toBe("limit_exceeded");
    expect((res as JobError).message).toMatch(/12,000 pages/);
    expect(await readdir(o).catch(() => [])).toEqual([]);
    const fine = ok(await runOp("split", { mode: "ranges", ranges: rep("1-", 3) }, [f.forty!], out()));
    expect(fine.outputs.filter((x) => x.content_type === "application/pdf").map((x) => x.pages)).toEqual([40, 40, 40]);
  });

  it("refuses split ranges whose bytes alone would pass the cap, before writing a part", async () => {
    // 40 copies of an 800 KB document: at least 64 MB with the zip, over a 30 MB cap.
    const res = await runOp("split", { mode: "ranges", ranges: rep("1-", 40) }, [f.shared!], out(), {
      limits: { max_output_bytes: 30_000_000 },
    });
    expect(errorCode(res)).toBe("limit_exceeded");
    expect((res as JobError).message).toMatch(/would be at least [\d,]+ bytes; one job may write at most 30,000,000 bytes/);
  });

  it("stops a split whose parts each carry the shared image again, and leaves no output", async () => {
    // 30 one-page parts × 800 KB, plus the zip: about 48 MB from an 800 KB input; the cap is 20 MB.
    const o = out();
    const res = await runOp("split", { mode: "pages" }, [f.shared!], o, { limits: { max_output_bytes: 20_000_000 } });
    expect(errorCode(res)).toBe("limit_exceeded");
    expect((res as JobError).message).toMatch(/one job may write at most 20,000,000 bytes/);
    expect(await readdir(o)).toEqual([]);
  });

  it("splits the same file into pages under the default cap", async () => {
    const res = ok(await runOp("split", { mode: "pages" }, [f.shared!], out()));
    expect(res.outputs).toHaveLength(31);
    expect(await pageCount(res.outputs[29]!.path)).toBe(1);
  });
});
