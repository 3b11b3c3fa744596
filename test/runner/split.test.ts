/**
 * split on the real engines: parts checked with pdfinfo and poppler-rendered page hashes against
 * the source's pages, the zip listed and tested with Python's zipfile (not the library that wrote
 * it), bookmarks of parts read with pdf.js.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bookmarkedPdf, flatten, readBookmarks, textPdf } from "../fixtures/pdf-fixtures.ts";
import { errorCode, ok, runOp } from "../helpers/runner.ts";
import { pageCount, pageHashes, qpdfCheck, run, tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
let doc: string;
let book: string;
let docHashes: string[];
let outN = 0;
const out = (): string => path.join(dir, `out-${++outN}`);

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-split-"));
  doc = await textPdf(path.join(dir, "report.pdf"), 12, "report");
  book = await bookmarkedPdf(path.join(dir, "book.pdf"));
  docHashes = await pageHashes(doc);
});
afterAll(() => cleanup());

/** Names, sizes and CRC check of a zip, by Python's zipfile. */
async function listZip(file: string): Promise<{ names: string[]; sizes: number[]; bad: string | null }> {
  const script =
    "import json,sys,zipfile\nz=zipfile.ZipFile(sys.argv[1])\nprint(json.dumps({'names':z.namelist(),'sizes':[i.file_size for i in z.infolist()],'bad':z.testzip()}))";
  const res = await run("python3", ["-c", script, file]);
  if (res.code !== 0) throw new Error(res.stderr);
  return JSON.parse(res.stdout);
}

/** Checks each part's page count and page images against the source's pages. */
async function expectParts(res: Awaited<ReturnType<typeof ok>>, parts: number[][], names: string[]): Promise<void> {
  const pdfs = res.outputs.filter((o) => o.content_type === "application/pdf");
  expect(pdfs.map((o) => o.filename)).toEqual(names);
  for (const [i, part] of pdfs.entries()) {
    expect(await pageCount(part.path)).toBe(parts[i]!.length);
    expect(part.pages).toBe(parts[i]!.length);
    expect(await pageHashes(part.path)).toEqual(parts[i]!.map((p) => docHashes[p - 1]));
    expect(await qpdfCheck(part.path)).toBe(true);
  }
  const zip = res.outputs[res.outputs.length - 1]!;
  expect(zip.content_type).toBe("application/zip");
  expect(zip.filename).toBe("report.zip");
  const listed = await listZip(zip.path);
  expect(listed.names).toEqual(names);
  expect(listed.sizes).toEqual(pdfs.map((p) => p.size));
  expect(listed.bad).toBeNull();
  expect(res.figures).toEqual({ parts: parts.length });
}

const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe("split", () => {
  it("should write one part per N pages, the last one shorter, plus a zip of them all", async () => {
    const o = out();
    const res = ok(await runOp("split", { mode: "every", every: 5 }, [doc], o));
    await expectParts(res, [range(1, 5), range(6, 10), range(11, 12)], ["report-1.pdf", "report-2.pdf", "report-3.pdf"]);
    // Nothing but the outputs is left in the output directory.
    expect((await readdir(o)).sort()).toEqual(["report-1.pdf", "report-2.pdf", "report-3.pdf", "report.zip"]);
  });

  it("should write one part per page, with zero-padded numbers so names sort in page order", async () => {
    const res = ok(await runOp("split", { mode: "pages" }, [doc], out()));
    const names = range(1, 12).map((i) => `report-${String(i).padStart(2, "0")}.pdf`);
    await expectParts(
      res,
      range(1, 12).map((p) => [p]),
      names,
    );
  });

  it("should write one part per range, in the order given, overlapping or not", async () => {
    const res = ok(await runOp("split", { mode: "ranges", ranges: "1-3,4-6,7-" }, [doc], out()));
    await expectParts(res, [range(1, 3), range(4, 6), range(7, 12)], ["report-1.pdf", "report-2.pdf", "report-3.pdf"]);
    const res2 = ok(await runOp("split", { mode: "ranges", ranges: "10-last,2,1-2,last" }, [doc], out()));
    await expectParts(res2, [range(10, 12), [2], [1, 2], [12]], ["report-1.pdf", "report-2.pdf", "report-3.pdf", "report-4.pdf"]);
  });

  it("should write a single part when N is at least the page count", async () => {
    const res = ok(await runOp("split", { mode: "every", every: 100 }, [doc], out()));
    await expectParts(res, [range(1, 12)], ["report-1.pdf"]);
  });

  it("should name parts and zip after output_filename", async () => {
    const res = ok(await runOp("split", { mode: "every", every: 6 }, [doc], out(), { output_filename: "Kapitel" }));
    expect(res.outputs.map((o) => o.filename)).toEqual(["Kapitel-1.pdf", "Kapitel-2.pdf", "Kapitel.zip"]);
  });

  it("should give each part the bookmarks that point into it, on its own pages", async () => {
    // book.pdf: Chapter 1 (p1) > 1.1 (p2), 1.2 (p3); Chapter 2 (p4) > 2.1 (p5) > 2.1.1 (p6).
    const res = ok(await runOp("split", { mode: "ranges", ranges: "1-2,3-5,6" }, [book], out()));
    const parts = res.outputs.filter((o) => o.content_type === "application/pdf");
    const read = async (i: number) => (await readBookmarks(parts[i]!.path)).map(({ title, depth, page }) => [title, depth, page]);
    const [ch1, s11, s12, ch2, s21, s211] = flatten().map((b) => b.title);
    expect(await read(0)).toEqual([
      [ch1, 0, 1],
      [s11, 1, 2],
    ]);
    expect(await read(1)).toEqual([
      // Chapter 1's page is not in this part; it stays as the heading of 1.2, on 1.2's page.
      [ch1, 0, 1],
      [s12, 1, 1],
      [ch2, 0, 2],
      [s21, 1, 3],
    ]);
    expect(await read(2)).toEqual([
      [ch2, 0, 1],
      [s21, 1, 1],
      [s211, 2, 1],
    ]);
    for (const p of parts) expect(await qpdfCheck(p.path)).toBe(true);
  });

  it.each([
    ["a range past the end", { mode: "ranges", ranges: "1-3,10-13" }, "invalid_page_range"],
    ["a range that starts past the end", { mode: "ranges", ranges: "13-" }, "invalid_page_range"],
    ["a range that is not a range", { mode: "ranges", ranges: "1-3,x" }, "validation_failed"],
    ["every 0 pages", { mode: "every", every: 0 }, "validation_failed"],
    ["ranges without a ranges option", { mode: "ranges" }, "validation_failed"],
  ])("should fail with a stable code for %s", async (_why, options, code) => {
    expect(errorCode(await runOp("split", options, [doc], out()))).toBe(code);
  });

  it("should say which page is outside the document", async () => {
    const res = await runOp("split", { mode: "ranges", ranges: "1-3,10-13" }, [doc], out());
    expect((res as Error).message).toMatch(/page 13 is outside the document, which has 12 pages/);
  });

  it("should refuse two inputs", async () => {
    expect(errorCode(await runOp("split", { mode: "pages" }, [doc, doc], out()))).toBe("unsupported_input");
  });
});
