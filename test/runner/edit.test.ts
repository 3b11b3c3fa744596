/**
 * edit on the real engines (qpdf, pdfinfo for geometry), checked with tools that took no part in
 * writing the output: poppler's pdfinfo (rotation, metadata, forms, encryption), pdftotext -bbox
 * (where words are on the page as displayed), pdftoppm (what the page looks like), qpdf --check.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { PDFDocument, StandardFonts, degrees, rgb } from "pdf-lib";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { damagedPdf, encryptedPdf, ownerOnlyEncryptedPdf, textPdf } from "../fixtures/pdf-fixtures.ts";
import { errorCode, ok, runOp } from "../helpers/runner.ts";
import { CORPUS, pageHashes, pdfinfo, pdftotext, qpdfCheck, renderGray, run, tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
let doc: string;
let rotated: string;
let n = 0;
const out = (): string => path.join(dir, `out-${++n}`);

/** Four A4 pages, the second to fourth with /Rotate 90, 180, 270; each says "Body N". */
async function rotatedPdf(file: string): Promise<string> {
  const d = await PDFDocument.create();
  const f = await d.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < 4; i++) {
    const p = d.addPage([595, 842]);
    p.drawText(`Body ${i + 1}`, { x: 60, y: 700, size: 24, font: f });
    p.setRotation(degrees(i * 90));
  }
  await writeFile(file, await d.save());
  return file;
}

/**
 * Word centres of page `page` as displayed, as shares of the displayed width and height, by
 * `pdftotext -bbox` (whose coordinates are those of the page as displayed, while the page size it
 * prints is the unrotated one).
 */
async function words(file: string, page: number): Promise<{ word: string; x: number; y: number; pw: number; ph: number }[]> {
  const res = await run("pdftotext", ["-bbox", "-f", String(page), "-l", String(page), file, "-"]);
  const pageTag = /<page width="([\d.]+)" height="([\d.]+)"/.exec(res.stdout)!;
  const turned = (await rotations(file))[page - 1]! % 180 !== 0;
  const [pw, ph] = turned ? [Number(pageTag[2]), Number(pageTag[1])] : [Number(pageTag[1]), Number(pageTag[2])];
  return [...res.stdout.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g)].map((m) => ({
    word: m[5]!,
    x: (Number(m[1]) + Number(m[3])) / 2 / pw,
    y: (Number(m[2]) + Number(m[4])) / 2 / ph,
    pw,
    ph,
  }));
}

async function rotations(file: string): Promise<number[]> {
  const res = await run("pdfinfo", ["-f", "1", "-l", "999", file]);
  return [...res.stdout.matchAll(/^Page\s+\d+ rot:\s+(\d+)/gm)].map((m) => Number(m[1]));
}

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-edit-"));
  doc = await textPdf(path.join(dir, "doc.pdf"), 6, "doc", { objectStreams: false });
  rotated = await rotatedPdf(path.join(dir, "rotated.pdf"));
});
afterAll(() => cleanup());

describe("edit: pages", () => {
  it("adds a rotation to each page's own /Rotate (rotation alone reads no page geometry)", async () => {
    const res = ok(
      await runOp(
        "edit",
        {
          steps: [
            { type: "rotate", angle: 90 },
            { type: "rotate", angle: -90, pages: "4" },
          ],
        },
        [rotated],
        out(),
      ),
    );
    // The input's pages are at 0, 90, 180 and 270 (pdfinfo reads them back).
    expect(await rotations(rotated)).toEqual([0, 90, 180, 270]);
    expect(await rotations(res.outputs[0]!.path)).toEqual([90, 180, 270, 270]);
    expect(await qpdfCheck(res.outputs[0]!.path)).toBe(true);
  });

  it("rotates, deletes and reorders in the order the steps are given", async () => {
    const res = ok(
      await runOp(
        "edit",
        {
          steps: [
            { type: "delete", pages: "2" },
            { type: "select", pages: "5,1-2" },
            { type: "rotate", angle: 90, pages: "1" },
            { type: "rotate", angle: 180 },
          ],
        },
        [doc],
        out(),
      ),
    );
    const file = res.outputs[0]!.path;
    expect(res.outputs[0]!.pages).toBe(3);
    // After deleting page 2, pages are 1,3,4,5,6; "5,1-2" picks 6,1,3.
    const src = await pageHashes(doc);
    const unrotated = ok(
      await runOp(
        "edit",
        {
          steps: [
            { type: "rotate", angle: 90, pages: "1" },
            { type: "rotate", angle: 180, pages: "2-3" },
          ],
        },
        [file],
        out(),
      ),
    );
    expect(await pageHashes(unrotated.outputs[0]!.path)).toEqual([src[5], src[0], src[2]]);
    expect(await rotations(file)).toEqual([270, 180, 180]);
    expect(await qpdfCheck(file)).toBe(true);
  });

  it("a page selected twice becomes two pages that later steps mark apart", async () => {
    const res = ok(
      await runOp(
        "edit",
        {
          steps: [
            { type: "select", pages: "1,1" },
            { type: "stamp", text: "SECOND", pages: "2" },
          ],
        },
        [doc],
        out(),
      ),
    );
    const file = res.outputs[0]!.path;
    expect(await pdftotext(file)).toMatch(/doc 1[\s\S]*doc 1[\s\S]*SECOND/);
    expect((await words(file, 1)).some((w) => w.word === "SECOND")).toBe(false);
  });

  it.each([
    ["a page beyond the document", [{ type: "delete", pages: "7" }]],
    ["deleting every page", [{ type: "delete", pages: "1-" }]],
    [
      "a range beyond what an earlier step left",
      [
        { type: "select", pages: "1-2" },
        { type: "rotate", angle: 90, pages: "3" },
      ],
    ],
  ])("refuses %s with invalid_page_range", async (_what, steps) => {
    expect(errorCode(await runOp("edit", { steps }, [doc], out()))).toBe("invalid_page_range");
  });

  it("refuses a selection that multiplies pages past the page limit (limit_exceeded)", async () => {
    const res = await runOp("edit", { steps: [{ type: "select", pages: Array(20).fill("1-").join(",") }] }, [doc], out(), {
      limits: { max_pages: 100 },
    });
    expect(errorCode(res)).toBe("limit_exceeded");
  });
});

describe("edit: marks", () => {
  it("numbers pages 'Page {n} of {total}' at the bottom centre of every page as displayed, skipping the cover", async () => {
    const res = ok(
      await runOp(
        "edit",
        { steps: [{ type: "page_numbers", format: "Page {n} of {total}", skip_first: true, start: 1 }] },
        [rotated],
        out(),
      ),
    );
    const file = res.outputs[0]!.path;
    expect(await pdftotext(file)).not.toMatch(/of 4/);
    expect((await words(file, 1)).map((w) => w.word)).not.toContain("Page");
    for (const page of [2, 3, 4]) {
      const ws = await words(file, page);
      const label = ws.filter((w) => w.y > 0.9);
      expect(label.map((w) => w.word).join(" ")).toBe(`Page ${page - 1} of 3`);
      // Bottom centre of the page as the reader shows it, whatever its /Rotate.
      for (const w of label) {
        expect(w.y).toBeGreaterThan(0.9);
        expect(Math.abs(w.x - 0.5)).toBeLessThan(0.1);
      }
    }
  });

  it("puts header and footer text in their corners, with {n} from a start number", async () => {
    const steps = [{ type: "header_footer", header: { left: "ACME Corp" }, footer: { right: "{n}/{total}" }, start: 10 }];
    const file = ok(await runOp("edit", { steps }, [doc], out())).outputs[0]!.path;
    const ws = await words(file, 2);
    const acme = ws.find((w) => w.word === "ACME")!;
    const num = ws.find((w) => w.word === "11/15")!;
    expect(acme.x).toBeLessThan(0.35);
    expect(acme.y).toBeLessThan(0.1);
    expect(num.x).toBeGreaterThan(0.7);
    expect(num.y).toBeGreaterThan(0.9);
  });

  it("draws a watermark under the content and a stamp over it", async () => {
    // A page painted white all over: only what lies over the paint can be seen.
    const d = await PDFDocument.create();
    d.addPage([300, 300]).drawRectangle({ x: 0, y: 0, width: 300, height: 300, color: rgb(1, 1, 1) });
    const covered = path.join(dir, "covered.pdf");
    await writeFile(covered, await d.save());
    const mark = { text: "XXXXXXXX", font_size: 40, opacity: 1, color: "#000000" };
    const under = ok(await runOp("edit", { steps: [{ type: "watermark", ...mark }] }, [covered], out())).outputs[0]!.path;
    const over = ok(await runOp("edit", { steps: [{ type: "stamp", ...mark }] }, [covered], out())).outputs[0]!.path;
    const darkest = (g: { data: Uint8Array }): number => Math.min(...g.data);
    expect(darkest(await renderGray(under, 1))).toBeGreaterThan(250);
    expect(darkest(await renderGray(over, 1))).toBeLessThan(50);
    expect(await pdftotext(under)).toContain("XXXXXXXX");
  });

  it("stamps an image input at a corner with its opacity", async () => {
    const png = path.join(dir, "black.png");
    await sharp({ create: { width: 100, height: 100, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 1 } } })
      .png()
      .toFile(png);
    const steps = [{ type: "stamp", image_input: 1, position: "top-left", margin: 0, image_width: 0.5, opacity: 0.5 }];
    const file = ok(await runOp("edit", { steps }, [doc, png], out())).outputs[0]!.path;
    const g = await renderGray(file, 1, 72); // 300 × 400 pt → 300 × 400 px
    const at = (x: number, y: number): number => g.data[y * g.width + x]!;
    expect(at(20, 20)).toBeGreaterThan(110); // half-transparent black over white ≈ 128
    expect(at(20, 20)).toBeLessThan(145);
    expect(at(280, 20)).toBeGreaterThan(250); // right of the image: untouched
  });

  it("refuses an image input that is not among the inputs, and text outside Latin-1", async () => {
    expect(errorCode(await runOp("edit", { steps: [{ type: "stamp", image_input: 2 }] }, [doc], out()))).toBe("unsupported_input");
    expect(errorCode(await runOp("edit", { steps: [{ type: "stamp", text: "機密" }] }, [doc], out()))).toBe("validation_failed");
  });
});

describe("edit: document", () => {
  it("flattens form fields into the page: the value stays visible, the form is gone", async () => {
    const d = await PDFDocument.create();
    const p = d.addPage([400, 300]);
    const field = d.getForm().createTextField("name");
    field.setText("Alice Example");
    field.addToPage(p, { x: 40, y: 120, width: 250, height: 30 });
    const form = path.join(dir, "form.pdf");
    await writeFile(form, await d.save());
    expect((await pdfinfo(form)).Form).toBe("AcroForm");
    const file = ok(await runOp("edit", { steps: [{ type: "flatten" }] }, [form], out())).outputs[0]!.path;
    expect((await pdfinfo(file)).Form).toBe("none");
    expect(await pdftotext(file)).toContain("Alice Example");
  });

  it("sets and removes document information, keeping the entries it was not told about", async () => {
    const d = await PDFDocument.create();
    d.addPage();
    d.setTitle("Old");
    d.setAuthor("Someone");
    d.setSubject("Kept");
    const src = path.join(dir, "meta.pdf");
    await writeFile(src, await d.save());
    const steps = [{ type: "metadata", title: "Quarterly — Q3 ü", author: null, keywords: "a, b" }];
    const info = await pdfinfo(ok(await runOp("edit", { steps }, [src], out())).outputs[0]!.path);
    expect(info.Title).toBe("Quarterly — Q3 ü");
    expect(info.Author).toBeUndefined();
    expect(info.Subject).toBe("Kept");
    expect(info.Keywords).toBe("a, b");
  });

  it("gives a document without an information dictionary one", async () => {
    const bare = path.join(dir, "bare.pdf");
    await run("qpdf", ["--empty", "--pages", doc, "1", "--", bare]);
    const info = await pdfinfo(ok(await runOp("edit", { steps: [{ type: "metadata", title: "New" }] }, [bare], out())).outputs[0]!.path);
    expect(info.Title).toBe("New");
  });

  it("unlocks a document with its password; without it, or with a wrong one, it is encrypted_input", async () => {
    const locked = await encryptedPdf(doc, path.join(dir, "locked.pdf"), "s3cret pass");
    expect(errorCode(await runOp("edit", { steps: [{ type: "unlock" }] }, [locked], out()))).toBe("encrypted_input");
    expect(errorCode(await runOp("edit", { steps: [{ type: "unlock" }], password: "wrong" }, [locked], out()))).toBe("encrypted_input");
    const res = ok(
      await runOp("edit", { steps: [{ type: "stamp", text: "OPEN" }, { type: "unlock" }], password: "s3cret pass" }, [locked], out()),
    );
    const info = await pdfinfo(res.outputs[0]!.path);
    expect(info.Encrypted).toBe("no");
    expect(res.figures.encrypted).toBe(false);
    expect(await pdftotext(res.outputs[0]!.path)).toContain("OPEN");
  });

  it("keeps the encryption of a document it edits without unlock", async () => {
    const restricted = await ownerOnlyEncryptedPdf(doc, path.join(dir, "restricted.pdf"));
    const res = ok(await runOp("edit", { steps: [{ type: "rotate", angle: 90 }] }, [restricted], out()));
    expect((await pdfinfo(res.outputs[0]!.path)).Encrypted).toMatch(/^yes/);
    expect(res.figures.encrypted).toBe(true);
  });

  // edit starts before the input's page tree is walked (engines/repair.ts openEarly): a file qpdf
  // opens without a warning but whose tree the walk refutes must still come out repaired.
  it.each([
    ["a /Count below the pages there are (2 for 6)", "2", {}],
    ["a /Count above them (9 for 6)", "9", {}],
    ["a /Count above the page limit while the pages are within it", "9", { max_pages: 8 }],
  ])("rotates every page of a file with %s, as the repair path leaves it", async (_what, count, limits) => {
    const bytes = (await readFile(doc)).toString("latin1");
    expect(bytes).toMatch(/\/Count 6\b/);
    const file = path.join(dir, `count-${count}-${n}.pdf`);
    await writeFile(file, Buffer.from(bytes.replace(/\/Count 6\b/, `/Count ${count}`), "latin1"));
    expect((await run("qpdf", ["--show-npages", file])).code).toBe(0);
    const res = ok(await runOp("edit", { steps: [{ type: "rotate", angle: 90 }] }, [file], out(), { limits }));
    const o = res.outputs[0]!;
    expect(o.pages).toBe(6);
    expect(Number((await pdfinfo(o.path)).Pages)).toBe(6);
    expect(await rotations(o.path)).toEqual([90, 90, 90, 90, 90, 90]);
    expect(await qpdfCheck(o.path)).toBe(true);
  });

  it("edits a page tree whose root is a page (qpdf corpus) as the repair path reads it", async () => {
    const res = ok(await runOp("edit", { steps: [{ type: "rotate", angle: 90 }] }, [path.join(CORPUS, "pages-is-page.pdf")], out()));
    expect(res.outputs[0]!.pages).toBe(1);
    expect(await rotations(res.outputs[0]!.path)).toEqual([90]);
  });

  it("repairs a file whose cross-reference table points nowhere", async () => {
    const broken = await damagedPdf(doc, path.join(dir, "damaged.pdf"));
    expect((await run("qpdf", ["--check", broken])).code).not.toBe(0);
    const file = ok(await runOp("edit", { steps: [{ type: "repair" }] }, [broken], out())).outputs[0]!.path;
    expect((await run("qpdf", ["--check", file])).code).toBe(0);
    expect(await pageHashes(file)).toEqual(await pageHashes(doc));
  });
});
