/**
 * The repair path (issue #13): damaged PDFs that qpdf can reconstruct come out of every operation
 * reconstructed, valid (qpdf --check) and with the pages other readers see; what cannot be
 * reconstructed ends in invalid_pdf saying what is wrong — never internal_error, never a damaged
 * output reported as success. The damage is done to real files (pdfplumber's test-punkt.pdf, a
 * 4-page report with a classic cross-reference table; qpdf's corpus), by class.
 */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobError } from "../../core/errors.ts";
import type { RunnerResult } from "../../core/schemas/job.ts";
import { openWithPdfjs } from "../fixtures/pdf-fixtures.ts";
import { prng } from "../helpers/prng.ts";
import { runOp } from "../helpers/runner.ts";
import { CORPUS, pdfinfo, tmpDir } from "../helpers/tools.ts";

const execFileP = promisify(execFile);
const REPORT = path.resolve(CORPUS, "../real-pdfs/pdfplumber-tests/test-punkt.pdf");
const OPS: [string, Record<string, unknown>, number][] = [
  ["compress", { level: "lossless" }, 1],
  ["merge", {}, 2],
  ["split", { mode: "every", every: 1 }, 1],
  ["protect", { user_password: "pw" }, 1],
  // edit starts before the page tree is walked (engines/repair.ts openEarly): the same outcomes.
  ["edit", { steps: [{ type: "rotate", angle: 90 }] }, 1],
];

let dir: string;
let cleanup: () => Promise<void>;
let original: Buffer;
let outN = 0;
const out = (): string => path.join(dir, `out-${++outN}`);

/** qpdf --check finds no error (warnings are fine); protect's outputs are opened with their password. */
async function passesCheck(file: string, password?: string): Promise<boolean> {
  try {
    await execFileP("qpdf", ["--check", ...(password ? [`--password=${password}`] : []), file]);
    return true;
  } catch (err) {
    return (err as { code?: number }).code === 3;
  }
}

/** Every PDF output passes qpdf --check and holds `pages` pages in all (per input copy). */
async function expectGoodOutputs(op: string, res: RunnerResult, pages: number, inputs: number): Promise<void> {
  const pdfs = res.outputs.filter((o) => o.content_type === "application/pdf");
  for (const o of pdfs) expect(await passesCheck(o.path, op === "protect" ? "pw" : undefined), `${op}: ${o.filename}`).toBe(true);
  expect(
    pdfs.reduce((n, o) => n + (o.pages ?? 0), 0),
    op,
  ).toBe(op === "split" ? pages : pages * inputs);
  if (op !== "protect") for (const o of pdfs) expect(Number((await pdfinfo(o.path)).Pages), `${op}: poppler`).toBe(o.pages);
}

async function damaged(name: string, bytes: Buffer): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, bytes);
  return file;
}

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-repair-"));
  original = await readFile(REPORT);
});
afterAll(() => cleanup());

describe("repair", () => {
  const count = (n: string) => (b: Buffer) => Buffer.from(b.toString("latin1").replace("/Count 4 /Kids", `/Count ${n} /Kids`), "latin1");
  const cases: [string, (b: Buffer) => Buffer][] = [
    ["a page-tree /Count of 0 (read as 'no pages' before)", count("0")],
    ["a page-tree /Count of 9 for 4 pages", count("9")],
    ["a negative page-tree /Count", count("-1")],
    [
      "a startxref that points past the end",
      (b) => Buffer.concat([b.subarray(0, b.lastIndexOf("startxref")), Buffer.from("startxref\n999999\n%%EOF\n")]),
    ],
    [
      "every object moved by bytes inserted after the header",
      (b) => Buffer.concat([b.subarray(0, 15), Buffer.from("% 36 bytes that shift every offset\n"), b.subarray(15)]),
    ],
    ["no cross-reference table at all", (b) => Buffer.concat([b.subarray(0, b.lastIndexOf("xref")), Buffer.from("%%EOF\n")])],
  ];

  it.each(cases)("reconstructs %s, for every operation, with the 4 pages pdf.js sees", async (name, damage) => {
    const file = await damaged(`${name.replace(/\W+/g, "-")}.pdf`, damage(original));
    const pdfjs = await openWithPdfjs(file);
    expect("pages" in pdfjs ? [4, 0, -1] : []).toContain("pages" in pdfjs ? pdfjs.pages : 4);
    for (const [op, options, n] of OPS) {
      const res = await runOp(op, options, Array<string>(n).fill(file), out());
      if (res instanceof JobError) throw new Error(`${op}: ${res.code} ${res.message}`);
      await expectGoodOutputs(op, res, 4, n);
      if (op === "compress") expect(res.figures.repaired).toBe(true);
    }
  });

  it("reconstructs a page tree whose root is a page (qpdf corpus), as poppler reads it", async () => {
    const file = path.join(CORPUS, "pages-is-page.pdf");
    expect((await pdfinfo(file)).Pages).toBe("1");
    for (const [op, options, n] of OPS) {
      const res = await runOp(op, options, Array<string>(n).fill(file), out());
      if (res instanceof JobError) throw new Error(`${op}: ${res.code} ${res.message}`);
      await expectGoodOutputs(op, res, 1, n);
    }
  });

  it.each([
    ["cut at 60 %", (b: Buffer) => b.subarray(0, Math.floor(b.length * 0.6)), /even after repair: .*(cross-reference table|cut short)/],
    ["with its trailer nested 600 deep (qpdf corpus issue-202)", null, /nests objects deeper than Folio reads/],
  ])("refuses a file %s with a message that says what is wrong", async (_what, damage, message) => {
    const file = damage ? await damaged("cut.pdf", damage(original)) : path.join(CORPUS, "issue-202.pdf");
    // poppler cannot open the cut file either.
    if (damage) expect((await pdfinfo(file)).ok).toBe(false);
    for (const [op, options, n] of OPS) {
      const res = await runOp(op, options, Array<string>(n).fill(file), out());
      expect(res, op).toBeInstanceOf(JobError);
      expect(["invalid_pdf", "limit_exceeded"]).toContain((res as JobError).code);
      expect((res as JobError).message).toMatch(message);
    }
  });

  it("never fails with internal_error nor reports a damaged output on 12 fuzzed copies", { timeout: 600_000 }, async () => {
    const random = prng(13);
    // Flip bytes in the object syntax (outside stream data, which readers skip): the damage fuzzers find.
    const text = original.toString("latin1");
    const syntax: number[] = [];
    for (const m of text.matchAll(/\d+ 0 obj\n<<[^]*?>>/g)) for (let i = m.index; i < m.index + m[0].length; i++) syntax.push(i);
    const outcomes = new Map<string, number>();
    for (let k = 0; k < 12; k++) {
      const bytes = Buffer.from(original);
      for (let j = 0; j < 3; j++) bytes[syntax[Math.floor(random() * syntax.length)]!] = Math.floor(random() * 256);
      const file = await damaged(`fuzzed-${k}.pdf`, bytes);
      for (const [op, options, n] of OPS) {
        const res = await runOp(op, options, Array<string>(n).fill(file), out());
        const outcome = res instanceof JobError ? res.code : "ok";
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        if (res instanceof JobError) {
          expect(["invalid_pdf", "limit_exceeded"], `${op} on fuzzed-${k}: ${res.message}`).toContain(res.code);
          expect(res.message).toMatch(/even after repair: |damaged beyond repair: |nests objects/);
          continue;
        }
        for (const o of res.outputs.filter((x) => x.content_type === "application/pdf")) {
          expect(await passesCheck(o.path, op === "protect" ? "pw" : undefined), `${op} on fuzzed-${k}`).toBe(true);
        }
      }
    }
    console.log(`fuzzed copies: ${JSON.stringify(Object.fromEntries(outcomes))}`);
    expect(outcomes.get("ok") ?? 0).toBeGreaterThan(0);
  });
});
