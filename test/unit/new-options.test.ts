/** The option schemas of issue #15: what they accept and what they refuse, with a path a client can act on. */
import { describe, expect, it } from "vitest";
import { OPTIONS_SCHEMAS, redactOptions } from "../../core/schemas/options.ts";

const paths = (op: keyof typeof OPTIONS_SCHEMAS, options: unknown): string[] => {
  const r = OPTIONS_SCHEMAS[op].safeParse(options);
  return r.success ? [] : r.error.issues.map((i) => i.path.join("."));
};

describe("convert options", () => {
  it.each([
    ["a DPI for an image target", { to: "png", dpi: 300 }],
    ["a url to PDF", { to: "pdf", url: "https://example.com/a?b=c" }],
    ["a url to PDF/A", { to: "pdf/a-2b", url: "http://example.com/" }],
    ["ocr auto for Word", { to: "docx", ocr: "auto" }],
    [
      "Chromium's print settings",
      { to: "pdf", paper_size: "letter", landscape: true, margins: { top: 1 }, scale: 0.8, wait_for_selector: "#done" },
    ],
  ])("accepts %s", (_what, options) => {
    expect(paths("convert", options)).toEqual([]);
  });

  it.each([
    ["a DPI for a PDF target", { to: "pdf", dpi: 300 }, "dpi"],
    ["a JPEG quality for PNG", { to: "png", quality: 50 }, "quality"],
    ["ocr for an Office → PDF", { to: "pdf", ocr: "auto" }, "ocr"],
    ["a url to Word", { to: "docx", url: "https://example.com/" }, "url"],
    ["a url that is not http(s)", { to: "pdf", url: "file:///etc/passwd" }, "url"],
    ["an unknown PDF/A level", { to: "pdf/a-4" }, "to"],
  ])("refuses %s at its path", (_what, options, path) => {
    expect(paths("convert", options)).toContain(path);
  });

  it("keeps the echoed options to what the client sent (no defaults added)", () => {
    expect(OPTIONS_SCHEMAS.convert.parse({ to: "pdf" })).toEqual({ to: "pdf" });
  });
});

describe("edit options", () => {
  it("refuses a mark with both or neither of text and image_input", () => {
    expect(paths("edit", { steps: [{ type: "stamp" }] })).toContain("steps.0.text");
    expect(paths("edit", { steps: [{ type: "stamp", text: "A", image_input: 1 }] })).toContain("steps.0.text");
  });

  it("refuses text the standard font cannot draw, and accepts Latin-1 with typographic quotes", () => {
    expect(paths("edit", { steps: [{ type: "stamp", text: "Ελληνικά" }] })).toContain("steps.0.text");
    expect(paths("edit", { steps: [{ type: "stamp", text: "“Entwurf” – Größe €5" }] })).toEqual([]);
  });

  it("never keeps the password in a record", () => {
    const parsed = OPTIONS_SCHEMAS.edit.parse({ steps: [{ type: "unlock" }], password: "s3cret" });
    expect(redactOptions("edit", parsed)).not.toHaveProperty("password");
  });
});

describe("ocr options", () => {
  it("defaults to English, skipping pages that have text", () => {
    expect(OPTIONS_SCHEMAS.ocr.parse({})).toEqual({ languages: ["eng"], deskew: false, rotate_pages: false, skip_text: true, pdfa: false });
  });

  it("refuses language codes that are not Tesseract's shape", () => {
    expect(paths("ocr", { languages: ["english"] })).toContain("languages.0");
    expect(paths("ocr", { languages: ["../../etc"] })).toContain("languages.0");
  });
});
