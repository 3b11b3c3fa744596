import { describe, expect, it } from "vitest";
import { needsFullImage, runnerImageFor } from "../../controller/runner-image.ts";
import type { PdfJobSpec } from "../../core/schemas/pdfjob.ts";

const input = (contentType: string): PdfJobSpec["inputs"][number] => ({
  key: "t/f",
  fileId: "file_x",
  filename: "x",
  contentType,
  size: 1,
  sha256: "0".repeat(64),
});
const images = { image: "folio/runner:1", fullImage: "folio/runner-full:1" };

describe("the runner image a job runs", () => {
  it.each<[string, Pick<PdfJobSpec, "operation" | "options" | "inputs">, boolean]>([
    ["OCR needs Tesseract", { operation: "ocr", options: {}, inputs: [input("application/pdf")] }, true],
    ["PDF/A needs OCRmyPDF and veraPDF", { operation: "convert", options: { to: "pdf/a-2b" }, inputs: [input("application/pdf")] }, true],
    ["a url needs Chromium", { operation: "convert", options: { to: "pdf", url: "https://example.com/" }, inputs: [] }, true],
    ["an HTML input needs Chromium", { operation: "convert", options: { to: "pdf" }, inputs: [input("text/html")] }, true],
    ["a zipped page needs Chromium", { operation: "convert", options: { to: "pdf" }, inputs: [input("application/zip")] }, true],
    [
      "ocr: auto may need Tesseract",
      { operation: "convert", options: { to: "docx", ocr: "auto" }, inputs: [input("application/pdf")] },
      true,
    ],
    [
      "Office → PDF runs on the runner image",
      { operation: "convert", options: { to: "pdf" }, inputs: [input("application/msword")] },
      false,
    ],
    [
      "PDF → DOCX without OCR runs on the runner image",
      { operation: "convert", options: { to: "docx" }, inputs: [input("application/pdf")] },
      false,
    ],
    ["images → PDF runs on the runner image", { operation: "convert", options: { to: "pdf" }, inputs: [input("image/png")] }, false],
    ["edit runs on the runner image", { operation: "edit", options: { steps: [] }, inputs: [input("application/pdf")] }, false],
    ["merge runs on the runner image", { operation: "merge", options: {}, inputs: [input("application/pdf")] }, false],
  ])("%s", (_what, spec, full) => {
    expect(needsFullImage(spec)).toBe(full);
    expect(runnerImageFor(spec, images)).toBe(full ? images.fullImage : images.image);
  });

  it("runs every job on the one image when no full image is configured", () => {
    expect(runnerImageFor({ operation: "ocr", options: {}, inputs: [] }, { image: "one" })).toBe("one");
  });
});
