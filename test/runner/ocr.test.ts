/**
 * OCR on the real engines (OCRmyPDF, Tesseract), on scans made from known text
 * (test/fixtures/scan-fixtures.ts), checked with poppler's pdftotext (the text layer) and
 * pdfimages (the page images are the scanned ones, not re-rendered). Kept small: each OCRed page
 * costs a few seconds; bench/ocr.ts measures recall and speed on a larger set.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writePdf } from "../../runner/pdf/pdf-writer.ts";
import { textPdf } from "../fixtures/pdf-fixtures.ts";
import { ENGLISH_WORDS, GERMAN_WORDS, paragraph, scannedImage, scannedPdf } from "../fixtures/scan-fixtures.ts";
import { readDocx } from "../helpers/convert-quality.ts";
import { errorCode, ok, runOp } from "../helpers/runner.ts";
import { pdftotext, run, tmpDir, wordRecall } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
const out = (): string => path.join(dir, `out-${++n}`);
const english = paragraph(ENGLISH_WORDS, 7, 60);
const german = paragraph(GERMAN_WORDS, 8, 60);
let scan: string;

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-ocr-"));
  // A page scanned 3° askew and sideways, and a German page in another font.
  scan = await scannedPdf(path.join(dir, "scan.pdf"), [
    { text: english, font: "TimesRoman", skew: 3, turn: 90 },
    { text: german, font: "Helvetica", skew: -2, turn: 0 },
  ]);
}, 60_000);
afterAll(() => cleanup());

describe("ocr", () => {
  it("makes a skewed, sideways scan in two languages searchable, over the original page images", async () => {
    expect((await pdftotext(scan)).trim()).toBe("");
    const res = ok(await runOp("ocr", { languages: ["eng", "deu"], deskew: true, rotate_pages: true }, [scan], out()));
    const pages = (await pdftotext(res.outputs[0]!.path)).split("\f");
    expect(wordRecall(english, pages[0]!)).toBeGreaterThanOrEqual(0.95);
    expect(wordRecall(german, pages[1]!)).toBeGreaterThanOrEqual(0.95);
    expect(pages[1]).toMatch(/für|größere|übersicht/);
    expect(res.outputs[0]!.pages).toBe(2);
    // The text is invisible (render mode 3): the pages still show only the scanned images.
    const images = await run("pdfimages", ["-list", res.outputs[0]!.path]);
    expect(images.stdout.split("\n").filter((l) => /^\s+\d+\s+\d+\s+image/.test(l))).toHaveLength(2);
  }, 180_000);

  it("makes an image input a searchable PDF", async () => {
    const jpeg = await scannedImage(path.join(dir, "page.jpg"), { text: english, font: "Courier", skew: 0, turn: 0 });
    const res = ok(await runOp("ocr", {}, [jpeg], out()));
    expect(res.outputs[0]!.filename).toBe("page.pdf");
    expect(wordRecall(english, await pdftotext(res.outputs[0]!.path))).toBeGreaterThanOrEqual(0.95);
  }, 120_000);

  it("leaves pages that already have text as they are (skip_text)", async () => {
    const typed = await textPdf(path.join(dir, "typed.pdf"), 2, "typed words");
    const res = ok(await runOp("ocr", {}, [typed], out()));
    expect(await pdftotext(res.outputs[0]!.path)).toBe(await pdftotext(typed));
  }, 60_000);

  it("refuses a language that is not installed, naming those that are", async () => {
    const res = await runOp("ocr", { languages: ["xyz"] }, [scan], out());
    expect(errorCode(res)).toBe("unsupported_input");
    expect((res as Error).message).toMatch(/xyz.*available: .*eng/);
  });

  it("refuses a 2,001-page scan over the page limit before any OCR runs", async () => {
    // 2,001 pages showing one image: a few kilobytes, and qpdf counts the pages.
    const jpeg = await readFile(await scannedImage(path.join(dir, "one.jpg"), { text: "page", font: "Helvetica", skew: 0, turn: 0 }));
    const big = path.join(dir, "big-scan.pdf");
    const pages = Array.from({ length: 2001 }, () => ({ width: 595, height: 842, content: "q 595 0 0 842 0 0 cm /Im0 Do Q" }));
    const size = await (await import("sharp")).default(jpeg).metadata();
    await writePdf(big, {
      pages,
      opacities: new Set(),
      images: new Map([
        [
          "Im0",
          () => Promise.resolve({ kind: "jpeg" as const, data: jpeg, width: size.width, height: size.height, components: 1 as const }),
        ],
      ]),
    });
    const started = performance.now();
    expect(errorCode(await runOp("ocr", {}, [big], out()))).toBe("limit_exceeded");
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

describe('convert with ocr: "auto"', () => {
  it("converts a scan to DOCX through OCR instead of ending in unsupported_input", async () => {
    const oneScan = await scannedPdf(path.join(dir, "letter.pdf"), [{ text: english, font: "Helvetica", skew: 0, turn: 0 }]);
    expect(errorCode(await runOp("convert", { to: "docx" }, [oneScan], out()))).toBe("unsupported_input");
    const res = ok(await runOp("convert", { to: "docx", ocr: "auto" }, [oneScan], out()));
    const docx = readDocx(await readFile(res.outputs[0]!.path));
    expect(wordRecall(english, docx.text)).toBeGreaterThanOrEqual(0.95);
  }, 120_000);
});
