/**
 * The incremental-update reader (runner/pdf/pdf-update.ts) reads every object whole, wherever
 * it lies and however large it is: issue #10 item 4 was a page-tree node cut at a 64 KiB read
 * window ("expected a name key at 65536"). Files here are written the way qpdf writes them
 * (classic cross-reference table, one object per offset) and checked with qpdf itself.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeOutline } from "../../runner/pdf/outline.ts";
import { QpdfWrittenPdf } from "../../runner/pdf/pdf-update.ts";
import { PdfSyntaxError } from "../../runner/pdf/pdf-syntax.ts";
import { readBookmarks } from "../fixtures/pdf-fixtures.ts";
import { qpdfCheck, tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await tmpDir("folio-pdf-update-")));
afterAll(() => cleanup());

/**
 * A PDF of `pages` empty pages whose page-tree root also carries a string of `pad` bytes, placed
 * after /Kids so that the dictionary's closing `/Type /Pages >>` can be moved across any offset.
 */
function pdfWithPageTree(pages: number, pad: number): Buffer {
  const objects: string[] = [];
  objects[1] = "<< /Pages 2 0 R /Type /Catalog >>";
  const kids = Array.from({ length: pages }, (_, i) => `${i + 3} 0 R`).join(" ");
  objects[2] = `<< /Count ${pages} /Kids [ ${kids} ] /Pad (${"x".repeat(pad)}) /Type /Pages >>`;
  for (let i = 0; i < pages; i++) objects[i + 3] = "<< /MediaBox [ 0 0 200 200 ] /Parent 2 0 R /Type /Page >>";
  let text = "%PDF-1.7\n%\xbf\xf7\xa2\xfe\n";
  const offsets: number[] = [];
  for (let n = 1; n < objects.length; n++) {
    offsets[n] = text.length;
    text += `${n} 0 obj\n${objects[n]}\nendobj\n`;
  }
  const xref = text.length;
  text += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let n = 1; n < objects.length; n++) text += `${String(offsets[n]).padStart(10, "0")} 00000 n \n`;
  text += `trailer << /Root 1 0 R /Size ${objects.length} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(text, "latin1");
}

/** Where the page-tree root (object 2) starts and where its dictionary's `>>` ends, in `bytes`. */
function rootNodeSpan(bytes: Buffer): { start: number; end: number } {
  const text = bytes.toString("latin1");
  const start = text.indexOf("\n2 0 obj\n") + 1;
  return { start, end: text.indexOf(">>\nendobj", start) + 2 };
}

describe("QpdfWrittenPdf reads objects whole", () => {
  // 5,000 kids make the node about 50 KiB; the pads move its end across the old 64 KiB window.
  const pads = Array.from({ length: 24 }, (_, i) => 21_569 + i);

  it.each(pads)("a 5,000-page tree node whose end lies near 64 KiB from its start (pad %i)", async (pad) => {
    const bytes = pdfWithPageTree(5000, pad);
    const span = rootNodeSpan(bytes);
    // The case of issue #10: the 64 KiB boundary falls inside the node's tail.
    expect(span.end - span.start).toBeGreaterThan(65_536 - 24);
    expect(span.end - span.start).toBeLessThan(65_536 + 24);
    const file = path.join(dir, `tree-${pad}.pdf`);
    await writeFile(file, bytes);
    const pdf = await QpdfWrittenPdf.open(file);
    try {
      const catalog = await pdf.readObject(pdf.rootRef);
      const pages = await pdf.pageRefs(catalog);
      expect(pages.length).toBe(5000);
      expect(pages[4999]).toEqual({ kind: "ref", num: 5002, gen: 0 });
    } finally {
      await pdf.close();
    }
  });

  it("writes bookmarks into such a file, which qpdf and pdf.js then read", async () => {
    const file = path.join(dir, "outline.pdf");
    await writeFile(file, pdfWithPageTree(5000, 21_580));
    const items = [{ title: "Last page", page: 4999, view: ["/Fit"] as ["/Fit"], open: true, kids: [] }];
    expect(await writeOutline(file, items, 5000)).toBe(1);
    expect(await qpdfCheck(file)).toBe(true);
    expect(await readBookmarks(file)).toEqual([{ title: "Last page", depth: 0, page: 5000, count: undefined }]);
  });

  it("refuses a file with no startxref at its end with a typed error, after looking through all of it", async () => {
    const file = path.join(dir, "no-startxref.pdf");
    await writeFile(file, Buffer.concat([pdfWithPageTree(2, 0).subarray(0, 300), Buffer.alloc(5000, 0x20)]));
    await expect(QpdfWrittenPdf.open(file)).rejects.toBeInstanceOf(PdfSyntaxError);
  });

  it("refuses an xref subsection that claims more entries than the file holds, at once", async () => {
    const bytes = pdfWithPageTree(2, 0)
      .toString("latin1")
      .replace(/xref\n0 5\n/, "xref\n0 999999999\n");
    const file = path.join(dir, "huge-count.pdf");
    await writeFile(file, Buffer.from(bytes, "latin1"));
    await expect(QpdfWrittenPdf.open(file)).rejects.toThrow(/runs past the end/);
  });
});
