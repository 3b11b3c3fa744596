/**
 * compress on the real engines (qpdf, sharp), checked with tools compress does not use: poppler
 * (pdfinfo, pdftotext, pdftoppm for SSIM, pdfimages for the resolution of every placed image),
 * qpdf --check and qpdf's JSON view of forms and outlines, and pdf-lib to fill the forms of the output.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { PDFDocument } from "pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMPRESS_LEVELS } from "../../core/schemas/options.ts";
import type { RunnerResult } from "../../core/schemas/job.ts";
import { forEachOperator, type Operand } from "../../runner/pdf/content-stream.ts";
import { targetSize } from "../../runner/ops/compress-images/image-plan.ts";
import { formsPdf, IMAGE_HEAVY, imagePdf, interactiveFacts, patternPdf, sharedAndCmykPdf, textPdf } from "../fixtures/compress-fixtures.ts";
import { errorCode, ok, runOp } from "../helpers/runner.ts";
import { pageCount, pdfinfo, pdfSsim, pdftotext, qpdfCheck, run, tmpDir, wordRecall } from "../helpers/tools.ts";

type Level = keyof typeof COMPRESS_LEVELS;
const LEVELS: Level[] = ["lossless", "low", "medium", "high"];

let dir: string;
let cleanup: () => Promise<void>;
const fx = { images: "", text: "", forms: "", shared: "", pattern: "", pdfa1: "", pdfa2: "", encrypted: "", notPdf: "", garbage: "" };

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-compress-"));
  for (const k of Object.keys(fx) as (keyof typeof fx)[]) fx[k] = path.join(dir, `${k}.pdf`);
  await Promise.all([
    imagePdf(fx.images, IMAGE_HEAVY),
    textPdf(fx.text, 4),
    formsPdf(fx.forms),
    sharedAndCmykPdf(fx.shared),
    patternPdf(fx.pattern),
    textPdf(fx.pdfa1, 4, { pdfaPart: 1 }),
    textPdf(fx.pdfa2, 4, { pdfaPart: 2 }),
  ]);
  // Owner password only: opens without a password, so operations must accept it (qpdf decrypts).
  const enc = await run("qpdf", ["--encrypt", "", "owner-secret", "256", "--print=none", "--", fx.images, fx.encrypted]);
  expect(enc.code).toBe(0);
  await writeFile(fx.notPdf, "Dear customer, this is a plain text letter and not a PDF at all.\n".repeat(20));
  await writeFile(fx.garbage, Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(4096, 0x5a)]));
});
afterAll(() => cleanup());

const results = new Map<string, RunnerResult>();
async function compress(
  fixture: keyof typeof fx,
  options: Record<string, unknown>,
  extra: Parameters<typeof runOp>[4] = {},
): Promise<RunnerResult> {
  const key = `${fixture} ${JSON.stringify(options)} ${JSON.stringify(extra)}`;
  const cached = results.get(key);
  if (cached) return cached;
  const res = ok(await runOp("compress", options, [fx[fixture]], path.join(dir, `out-${results.size}`), extra));
  results.set(key, res);
  return res;
}

interface ImageRow {
  page: number;
  type: string;
  width: number;
  height: number;
  color: string;
  enc: string;
  xppi: number;
  yppi: number;
}

/** poppler's pdfimages -list: one row per placed image, with its effective resolution. */
async function listImages(file: string): Promise<ImageRow[]> {
  const res = await run("pdfimages", ["-list", file]);
  expect(res.code).toBe(0);
  return res.stdout
    .split("\n")
    .slice(2)
    .filter((l) => l.trim())
    .map((l) => {
      const c = l.trim().split(/\s+/);
      return { page: +c[0]!, type: c[2]!, width: +c[3]!, height: +c[4]!, color: c[5]!, enc: c[8]!, xppi: +c[12]!, yppi: +c[13]! };
    });
}

/**
 * SSIM floors, on pages rendered at 72 DPI (a screen view of the whole page). The image-heavy
 * fixture measured 0.9991 (low), 0.9972 (medium), 0.9920 (high); Ghostscript /ebook 0.9883. The
 * floors sit about 0.005–0.01 under the measurements, to absorb encoder and renderer updates, yet
 * catch a placement error: the same fixture with its images at half the medium resolution (75 DPI)
 * measures 0.986, at 15 DPI 0.91.
 */
const SSIM_FLOOR: Record<Level, number> = { lossless: 0.9999, low: 0.995, medium: 0.99, high: 0.98 };

describe.each(LEVELS)("compress %s", (level) => {
  it.each(["images", "text", "forms"] as const)("never grows the %s fixture, keeps its pages and passes qpdf --check", async (fixture) => {
    const res = await compress(fixture, { level });
    const out = res.outputs[0]!;
    const original = (await readFile(fx[fixture])).length;
    expect(out.size).toBeLessThanOrEqual(original);
    expect(res.figures).toMatchObject({ level, original_size: original, size: out.size, compressed: out.size < original });
    expect(res.figures.ratio).toBeCloseTo(out.size / original, 3);
    expect(await pageCount(out.path)).toBe(await pageCount(fx[fixture]));
    expect(await qpdfCheck(out.path)).toBe(true);
  });

  it(`keeps the rendered image-heavy pages at SSIM ≥ ${SSIM_FLOOR[level]}`, async () => {
    const out = (await compress("images", { level })).outputs[0]!;
    expect(await pdfSsim(fx.images, out.path)).toBeGreaterThanOrEqual(SSIM_FLOOR[level]);
  });

  it("keeps every word of a text PDF (pdftotext recall 1.0)", async () => {
    for (const fixture of ["text", "forms"] as const) {
      const out = (await compress(fixture, { level })).outputs[0]!;
      expect(wordRecall(await pdftotext(fx[fixture]), await pdftotext(out.path))).toBe(1);
    }
  });

  it("keeps form fields fillable, the link and the bookmarks", async () => {
    const out = (await compress("forms", { level })).outputs[0]!;
    const json = JSON.parse((await run("qpdf", ["--json=2", "--json-key=acroform", "--json-key=outlines", out.path])).stdout);
    const fields = json.acroform.fields.map((f: any) => [f.fullname, f.fieldtype, f.value]);
    expect(fields).toEqual([
      ["applicant.name", "/Tx", "u:Ada Lovelace"],
      ["applicant.agree", "/Btn", null],
    ]);
    expect(json.outlines.map((o: any) => [o.title, o.destpageposfrom1])).toEqual([
      ["Application", 1],
      ["Terms and conditions", 2],
    ]);
    const bytes = await readFile(out.path);
    expect(await interactiveFacts(bytes)).toMatchObject({ links: 1, outlineTitles: 2 });

    // Fill the output's form with another library and check the values stick.
    const doc = await PDFDocument.load(bytes);
    doc.getForm().getTextField("applicant.name").setText("Grace Hopper");
    doc.getForm().getCheckBox("applicant.agree").check();
    const filled = path.join(dir, `filled-${level}.pdf`);
    await writeFile(filled, await doc.save());
    const after = JSON.parse((await run("qpdf", ["--json=2", "--json-key=acroform", filled])).stdout);
    expect(after.acroform.fields.map((f: any) => f.value)).toEqual(["u:Grace Hopper", "/Yes"]);
    expect(await pdftotext(filled)).toContain("Grace Hopper");
  });
});

describe("compress: images", () => {
  it("shrinks the image-heavy fixture at medium to under 3 % of its size (measured 1.9 %)", async () => {
    const res = await compress("images", { level: "medium" });
    expect(res.figures.ratio).toBeLessThan(0.03);
    expect(res.figures).toMatchObject({ compressed: true, images: 7, images_recompressed: 5 });
  });

  it.each(["low", "medium", "high"] as const)(
    "%s: every placed image ends at most at the target resolution, none far below it",
    async (level) => {
      const dpi = COMPRESS_LEVELS[level].dpi;
      const before = await listImages(fx.images);
      const after = await listImages((await compress("images", { level })).outputs[0]!.path);
      expect(after.map((r) => [r.page, r.type])).toEqual(before.map((r) => [r.page, r.type]));
      for (const [i, row] of after.entries()) {
        const was = before[i]!;
        const shouldShrink = Math.min(was.xppi, was.yppi) > dpi * 1.5;
        const expected = shouldShrink ? dpi : was.xppi;
        expect(row.xppi, `page ${row.page} image ${i} (${was.xppi} ppi before)`).toBeGreaterThanOrEqual(Math.floor(expected * 0.97));
        expect(row.xppi, `page ${row.page} image ${i} (${was.xppi} ppi before)`).toBeLessThanOrEqual(Math.ceil(expected * 1.03));
      }
    },
  );

  it("resamples a soft mask along with its image", async () => {
    const rows = await listImages((await compress("images", { level: "medium" })).outputs[0]!.path);
    const i = rows.findIndex((r) => r.type === "smask");
    expect(rows[i]!.width).toBe(rows[i - 1]!.width);
    expect(rows[i]!.height).toBe(rows[i - 1]!.height);
    expect(rows[i - 1]!.width).toBeLessThan(1200);
  });

  it("sizes a shared image for its largest placement, measures annotation appearances, and leaves CMYK alone", async () => {
    const before = await listImages(fx.shared);
    const res = await compress("shared", { level: "medium" });
    const after = await listImages(res.outputs[0]!.path);
    // One image drawn at 6×4 in on page 1 and as a 1-inch thumbnail on page 2: sized for page 1.
    expect(after[0]).toMatchObject({ page: 1, width: 900, height: 600, xppi: 150 });
    expect(after[1]).toMatchObject({ page: 2, width: 900, height: 600 });
    expect(after[2]).toMatchObject({ ...before[2], color: "cmyk" });
    // The stamp's appearance stream maps its 100×100 BBox onto a 3×2 in /Rect (ISO 32000-1 §12.5.5).
    expect(after[3]).toMatchObject({ page: 3, width: 450, height: 300, xppi: 150 });
    expect(res.figures).toMatchObject({ images: 3, images_recompressed: 2 });
    expect(await pdfSsim(fx.shared, res.outputs[0]!.path)).toBeGreaterThanOrEqual(SSIM_FLOOR.medium);
  });

  it("leaves an image alone when a tiling pattern paints it too (a placement it cannot measure)", async () => {
    const before = await listImages(fx.pattern);
    const res = await compress("pattern", { level: "high" });
    expect(await listImages(res.outputs[0]!.path)).toEqual(before);
    expect(res.figures).toMatchObject({ images: 1, images_recompressed: 0 });
    expect(await pdfSsim(fx.pattern, res.outputs[0]!.path)).toBeGreaterThanOrEqual(0.9999);
  });

  it("leaves images above max_image_pixels as they are", async () => {
    const before = await listImages(fx.images);
    const res = await compress("images", { level: "medium" }, { limits: { max_image_pixels: 1_000_000 } });
    const after = await listImages(res.outputs[0]!.path);
    for (const [i, row] of after.entries()) {
      if (before[i]!.width * before[i]!.height > 1_000_000) expect([row.width, row.height]).toEqual([before[i]!.width, before[i]!.height]);
    }
    // Only the 900×600 photo is under the limit and above the target resolution.
    expect(res.figures.images_recompressed).toBe(1);
  });

  it("compresses an owner-password-only PDF and keeps it encrypted with the same permissions", async () => {
    const res = await compress("encrypted", { level: "medium" });
    const out = res.outputs[0]!;
    expect(res.figures.compressed).toBe(true);
    expect(res.figures.ratio).toBeLessThan(0.05);
    expect((await pdfinfo(out.path)).Encrypted).toMatch(/^yes/);
    expect((await pdfinfo(out.path)).Encrypted).toContain("print:no");
    expect(await pdfSsim(fx.images, out.path)).toBeGreaterThanOrEqual(SSIM_FLOOR.medium);
  });
});

describe("compress: the output", () => {
  it("is named after the input (or output_filename) and typed application/pdf", async () => {
    const res = ok(await runOp("compress", {}, [fx.text], path.join(dir, "named"), { output_filename: "smaller" }));
    expect(res.outputs.map((o) => [o.filename, o.content_type])).toEqual([["smaller.pdf", "application/pdf"]]);
    expect(res.figures.level).toBe("medium");
  });

  it("is the input itself, byte for byte, when nothing makes it smaller", async () => {
    const once = (await compress("text", { level: "lossless" })).outputs[0]!;
    const res = ok(await runOp("compress", { level: "lossless" }, [once.path], path.join(dir, "twice")));
    expect(res.figures).toMatchObject({ compressed: false, ratio: 1, size: once.size });
    expect(res.outputs[0]!.sha256).toBe(once.sha256);
  });

  it("is linearized on request", async () => {
    const out = (await compress("forms", { level: "medium", linearize: true })).outputs[0]!;
    expect((await pdfinfo(out.path)).Optimized).toBe("yes");
    expect((await pdfinfo((await compress("forms", { level: "medium" })).outputs[0]!.path)).Optimized).toBe("no");
  });

  it.each([
    ["keeps a classic cross-reference table for a PDF/A-1 file (object streams are not allowed there)", "pdfa1", false],
    ["uses object streams for a PDF/A-2 file", "pdfa2", true],
  ] as const)("%s", async (_what, fixture, objectStreams) => {
    const res = await compress(fixture, { level: "medium" });
    const bytes = (await readFile(res.outputs[0]!.path)).toString("latin1");
    expect(bytes.includes("/ObjStm")).toBe(objectStreams);
    expect(bytes.includes("pdfaid:part")).toBe(true);
    expect(res.outputs[0]!.size).toBeLessThanOrEqual((await readFile(fx[fixture])).length);
  });

  it("ends in timeout, promptly, when the job's deadline passes mid-way", async () => {
    const started = Date.now();
    const res = await runOp("compress", { level: "medium" }, [fx.images], path.join(dir, "late"), { limits: { timeout_ms: 50 } });
    expect(errorCode(res)).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it.each([
    ["a text file named .pdf", "notPdf"],
    ["a PDF header followed by garbage", "garbage"],
  ] as const)("refuses %s with invalid_pdf", async (_what, fixture) => {
    expect(errorCode(await runOp("compress", { level: "medium" }, [fx[fixture]], path.join(dir, "bad")))).toBe("invalid_pdf");
  });
});

describe("compress: placement arithmetic", () => {
  it.each([
    ["an image at exactly the target resolution stays", 900, 600, [6, 4], 150, null],
    ["an image under 1.5× the target stays (not worth a generation of loss)", 1300, 866, [6, 4], 150, null],
    ["an image at 400 DPI goes to 150 DPI", 2400, 1600, [6, 4], 150, { width: 900, height: 600 }],
    ["a stretched placement keeps the aspect ratio and the sharper axis", 2000, 2000, [2, 8], 100, { width: 800, height: 800 }],
  ] as const)("%s", (_what, w, h, inches, dpi, expected) => {
    expect(targetSize(w, h, { widthIn: inches[0], heightIn: inches[1] }, dpi)).toEqual(expected);
  });
});

describe("compress: the content-stream tokenizer", () => {
  const ops = (src: string | Buffer): [string, Operand[]][] => {
    const out: [string, Operand[]][] = [];
    forEachOperator(typeof src === "string" ? Buffer.from(src, "latin1") : src, (op, operands) => out.push([op, [...operands]]));
    return out;
  };

  it.each([
    [
      "follows q, cm, Do and Q",
      "q 2 0 0 2 10 20 cm /Im1 Do Q",
      [
        ["q", []],
        ["cm", [2, 0, 0, 2, 10, 20]],
        ["Do", [{ name: "Im1" }]],
        ["Q", []],
      ],
    ],
    ["does not read operators inside strings, nested parentheses or escapes", "(a cm (b) \\) Do) Tj", [["Tj", [null]]]],
    ["skips comments and hex strings", "% 1 0 0 1 0 0 cm\n<3020636d> Tj", [["Tj", [null]]]],
    ["decodes #xx escapes in names", "/Im#201 Do", [["Do", [{ name: "Im 1" }]]]],
    [
      "treats arrays and dictionaries as single operands",
      "[1 2 (x)] 0 d /P <</MCID 3>> BDC",
      [
        ["d", [null, 0]],
        ["BDC", [{ name: "P" }, null]],
      ],
    ],
  ] as const)("%s", (_what, src, expected) => {
    expect(ops(src)).toEqual(expected);
  });

  it("skips inline image data, even when it contains operator-like bytes", () => {
    const data = Buffer.from([0x51, 0x20, 0x63, 0x6d, 0x00, 0xff, 0x20, 0x45, 0x49, 0x80, 0x01]); // "Q cm", then a binary " EI"
    const src = Buffer.concat([Buffer.from("q BI /W 2 /H 2 /BPC 8 /CS /G ID "), data, Buffer.from(" EI Q /Im0 Do")]);
    expect(ops(src).map(([op]) => op)).toEqual(["q", "BI", "EI", "Q", "Do"]);
  });
});
