/**
 * merge on the real engines: page identity and order checked with poppler-rendered page hashes,
 * bookmarks checked with pdf.js, validity with qpdf --check.
 */
import { copyFile, mkdir, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  flatten,
  BOOK_PAGES,
  DEEP_TITLE,
  bookmarkedPdf,
  brokenPdf,
  encryptedPdf,
  libreOfficeBookmarks,
  libreOfficePdf,
  notPdf,
  ownerOnlyEncryptedPdf,
  readBookmarks,
  textPdf,
} from "../fixtures/pdf-fixtures.ts";
import { errorCode, ok, runOp } from "../helpers/runner.ts";
import { pageCount, pageHashes, qpdfCheck, tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
const f: Record<string, string> = {};
const hashes: Record<string, string[]> = {};
let outN = 0;
const out = (): string => path.join(dir, `out-${++outN}`);

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-merge-"));
  f.alpha = await textPdf(path.join(dir, "alpha.pdf"), 3, "alpha");
  f.beta = await textPdf(path.join(dir, "beta.pdf"), 5, "beta");
  f.book = await bookmarkedPdf(path.join(dir, "book.pdf"));
  f.guide = await bookmarkedPdf(path.join(dir, "Guide – 2024.pdf"), "guide");
  f.office = await libreOfficePdf(path.join(dir, "office.pdf"), 25);
  f.locked = await encryptedPdf(f.alpha, path.join(dir, "locked.pdf"), "secret");
  f.ownerOnly = await ownerOnlyEncryptedPdf(f.beta, path.join(dir, "owner-only.pdf"));
  f.broken = await brokenPdf(path.join(dir, "broken.pdf"));
  f.text = await notPdf(path.join(dir, "text.pdf"));
  for (const k of ["alpha", "beta", "book", "guide"]) hashes[k] = await pageHashes(f[k]!);
});
afterAll(() => cleanup());

/** The hashes of `pages` (1-based) of a fixture. */
const pagesOf = (name: string, pages: number[]): string[] => pages.map((p) => hashes[name]![p - 1]!);
const range = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

describe("merge", () => {
  it("should concatenate every page of every input, in input order", async () => {
    const res = ok(await runOp("merge", {}, [f.alpha!, f.beta!, f.alpha!], out()));
    const [file] = res.outputs;
    expect(file!.filename).toBe("alpha.pdf");
    expect(await pageCount(file!.path)).toBe(11);
    expect(file!.pages).toBe(11);
    expect(await pageHashes(file!.path)).toEqual([...hashes.alpha!, ...hashes.beta!, ...hashes.alpha!]);
    expect(await qpdfCheck(file!.path)).toBe(true);
    expect(res.figures).toEqual({ pages: 11, inputs: 3, bookmarks: 0, attachments: 0 });
  });

  it.each([
    ["single pages and reordered ranges", "3,1-2", "5,2", [...[3, 1, 2]], [5, 2]],
    ['"last" and open-ended ranges', "last", "2-", [3], range(2, 5)],
    ["a page taken twice", "1,1", "4-last,1", [1, 1], [4, 5, 1]],
  ])("should take only the pages asked for: %s", async (_why, alphaPages, betaPages, wantAlpha, wantBeta) => {
    const res = ok(
      await runOp(
        "merge",
        {},
        [
          { path: f.alpha!, pages: alphaPages },
          { path: f.beta!, pages: betaPages },
        ],
        out(),
      ),
    );
    const merged = res.outputs[0]!.path;
    expect(await pageHashes(merged)).toEqual([...pagesOf("alpha", wantAlpha), ...pagesOf("beta", wantBeta)]);
    expect(res.figures.pages).toBe(wantAlpha.length + wantBeta.length);
  });

  it("should keep every input's bookmarks, nested, with non-ASCII titles, on the right merged pages", async () => {
    const res = ok(await runOp("merge", {}, [f.alpha!, f.book!, f.guide!], out()));
    const merged = res.outputs[0]!.path;
    expect(await qpdfCheck(merged)).toBe(true);
    expect(await pageHashes(merged)).toEqual([...hashes.alpha!, ...hashes.book!, ...hashes.guide!]);
    // The URI bookmark has no page and is not kept; every other one lands at its page + offset.
    const expected = (offset: number) =>
      flatten()
        .filter((b) => b.page !== null)
        .map((b) => ({ ...b, page: b.page! + offset }));
    const got = await readBookmarks(merged);
    expect(got.map(({ count: _c, ...b }) => b)).toEqual([...expected(3), ...expected(3 + BOOK_PAGES)]);
    expect(res.figures.bookmarks).toBe(got.length);
    // Open/closed state survives: chapter 2 is closed (negative count), chapter 1 open.
    expect(got.find((b) => b.title.startsWith("Chapter 1"))!.count).toBe(2);
    expect(got.find((b) => b.title.startsWith("Chapter 2"))!.count).toBeLessThan(0);
  });

  it("should drop bookmarks to pages not taken, and keep a heading whose own page is gone for its surviving children", async () => {
    // book pages 2-3 and 6: chapter 1's page 1 is gone but 1.1 and 1.2 survive; so does 2.1.1 (page 6).
    const res = ok(
      await runOp(
        "merge",
        { outline: "keep" },
        [
          { path: f.book!, pages: "2-3,6" },
          { path: f.alpha!, pages: "1" },
        ],
        out(),
      ),
    );
    const got = (await readBookmarks(res.outputs[0]!.path)).map(({ count: _c, ...b }) => b);
    expect(got).toEqual([
      { title: "Chapter 1 — Einführung", depth: 0, page: 1 },
      { title: "1.1 Überblick", depth: 1, page: 1 },
      { title: "1.2 日本語のタイトル", depth: 1, page: 2 },
      { title: 'Chapter 2 (closed) «quotes» \\ "x"', depth: 0, page: 3 },
      { title: "2.1 Named destination", depth: 1, page: 3 },
      { title: DEEP_TITLE, depth: 2, page: 3 },
    ]);
  });

  it("should keep the heading bookmarks of a LibreOffice-made PDF", async () => {
    const res = ok(await runOp("merge", {}, [f.office!, { path: f.office!, pages: "11-20" }], out()));
    const got = (await readBookmarks(res.outputs[0]!.path)).map(({ count: _c, ...b }) => b);
    const second = libreOfficeBookmarks(25)
      .filter((b) => b.page! >= 11 && b.page! <= 20)
      .map((b) => ({ ...b, page: b.page! - 10 + 25 }));
    expect(got).toEqual([...libreOfficeBookmarks(25), ...second]);
    expect(await qpdfCheck(res.outputs[0]!.path)).toBe(true);
  });

  it("should write one bookmark per input, titled by its filename, with outline per_file", async () => {
    const res = ok(await runOp("merge", { outline: "per_file" }, [f.alpha!, f.guide!, { path: f.beta!, pages: "2-3" }], out()));
    const got = await readBookmarks(res.outputs[0]!.path);
    expect(got.map(({ count: _c, ...b }) => b)).toEqual([
      { title: "alpha", depth: 0, page: 1 },
      { title: "Guide – 2024", depth: 0, page: 4 },
      { title: "beta", depth: 0, page: 4 + BOOK_PAGES },
    ]);
    expect(res.figures.bookmarks).toBe(3);
  });

  it("should write no bookmarks with outline none, even when inputs have some", async () => {
    const res = ok(await runOp("merge", { outline: "none" }, [f.book!, f.guide!], out()));
    expect(await readBookmarks(res.outputs[0]!.path)).toEqual([]);
    expect(res.figures.bookmarks).toBe(0);
  });

  it("should merge an input encrypted with an owner password only, which opens without one", async () => {
    const res = ok(await runOp("merge", {}, [f.ownerOnly!, f.alpha!], out()));
    expect(await pageHashes(res.outputs[0]!.path)).toEqual([...hashes.beta!, ...hashes.alpha!]);
  });

  it("should name the output after output_filename, and leave nothing else in the output directory", async () => {
    const o = out();
    const res = ok(await runOp("merge", {}, [f.alpha!, f.beta!], o, { output_filename: "Quarterly report" }));
    expect(res.outputs.map((x) => x.filename)).toEqual(["Quarterly report.pdf"]);
    expect(await readdir(o)).toEqual(["Quarterly report.pdf"]);
  });

  it("should not overwrite an input that has the output's name while reading it", async () => {
    const o = out();
    const first = path.join(o, "alpha.pdf");
    await mkdir(o, { recursive: true });
    await copyFile(f.alpha!, first);
    const res = ok(await runOp("merge", {}, [first, f.beta!], o));
    expect(res.outputs[0]!.path).toBe(first);
    expect(await pageHashes(first)).toEqual([...hashes.alpha!, ...hashes.beta!]);
  });

  it.each([
    ["a page past the end of an input", () => [f.alpha!, { path: f.beta!, pages: "2-9" }], "invalid_page_range"],
    ['"last" of a range that starts past the end', () => [{ path: f.alpha!, pages: "4-last" }, f.beta!], "invalid_page_range"],
    ["a password-protected input", () => [f.alpha!, f.locked!], "encrypted_input"],
    ["an input that is not a PDF", () => [f.alpha!, f.text!], "invalid_pdf"],
    ["a PDF damaged beyond repair", () => [f.broken!, f.alpha!], "invalid_pdf"],
    ["a single input", () => [f.alpha!], "unsupported_input"],
  ])("should fail with a stable code for %s", async (_why, inputs, code) => {
    const res = await runOp("merge", {}, inputs(), out());
    expect(errorCode(res)).toBe(code);
  });

  it("should say which input and which page are out of range", async () => {
    const res = await runOp("merge", {}, [f.alpha!, { path: f.beta!, pages: "2-9" }], out());
    expect(errorCode(res)).toBe("invalid_page_range");
    expect((res as Error).message).toMatch(/beta\.pdf.*page 9 is outside the document, which has 5 pages/);
  });

  it("should write the bookmarks of a 7,399-page merge whose page tree spans the reader's old 64 KiB window (issue #10)", async () => {
    // A 30-page input with bookmarks, its range repeated 243 times, then 18 copies and one page of
    // another: qpdf writes the page-tree root so that "/Type /Pages >>" straddles 64 KiB, where
    // the outline writer used to fail with "expected a name key at 65536".
    const big = ok(await runOp("merge", {}, [f.book!, f.book!, f.book!, f.book!, f.book!], out())).outputs[0]!.path;
    const rep = (n: number): string => Array<string>(n).fill("1-").join(",");
    const res = ok(
      await runOp(
        "merge",
        {},
        [
          { path: big, pages: rep(243) },
          { path: f.book!, pages: rep(18) },
          { path: f.book!, pages: "1" },
        ],
        out(),
      ),
    );
    const merged = res.outputs[0]!.path;
    expect(res.figures).toMatchObject({ pages: 7399, bookmarks: 6 * 5 + 6 + 1 });
    expect(await qpdfCheck(merged)).toBe(true);
    // The case is still the one of the issue: the page-tree root runs across offset 65,536 from its start.
    const text = (await readFile(merged)).toString("latin1");
    const rootNode = /\/Pages (\d+) 0 R \/Type \/Catalog/.exec(text)![1];
    const start = text.indexOf(`\n${rootNode} 0 obj\n`) + 1;
    const end = text.indexOf(">>\nendobj", start) + 2;
    expect(text.lastIndexOf("]", end) - start).toBeLessThan(65_536);
    expect(end - start).toBeGreaterThan(65_536);
    const marks = await readBookmarks(merged);
    expect(marks.filter((b) => b.depth === 0).map((b) => b.page)).toEqual([1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 7291, 7294, 7399]);
  });

  it("should refuse more inputs than max_merge_files with limit_exceeded", async () => {
    const res = await runOp("merge", {}, [f.alpha!, f.beta!, f.alpha!], out(), { limits: { max_merge_files: 2 } });
    expect(errorCode(res)).toBe("limit_exceeded");
  });
});
