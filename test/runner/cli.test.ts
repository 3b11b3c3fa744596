/**
 * The contract for scripts (issue #2): `./bin/folio run … -o OUTDIR` prints the result JSON on
 * stdout and nothing else; failures print {"error": {code, message}} and exit with the documented
 * code; `folio runner --spec` and `--worker` speak the same JSON. Drives the real CLI (make build).
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { EXIT } from "../../core/errors.ts";
import { FOLIO, folio, pageCount, tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
let a: string;
let b: string;

async function textPdf(file: string, pages: number, label: string): Promise<void> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) doc.addPage().drawText(`${label} page ${i}`, { x: 72, y: 720, size: 24, font });
  await writeFile(file, await doc.save());
}

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir());
  a = path.join(dir, "alpha.pdf");
  b = path.join(dir, "beta.pdf");
  await textPdf(a, 3, "alpha");
  await textPdf(b, 2, "beta");
});
afterAll(() => cleanup());

describe("folio run", () => {
  it("prints one JSON result on stdout describing outputs that match the files written", async () => {
    const out = path.join(dir, "merged");
    const res = await folio(["run", "merge", a, `${b}@2`, "-o", out]);
    expect(res.code, res.stderr).toBe(EXIT.OK);
    expect(res.stdout.trim().split("\n")).toHaveLength(1);
    expect(res.json.operation).toBe("merge");
    const [file] = res.json.outputs;
    const bytes = await readFile(file.path);
    expect(path.dirname(file.path)).toBe(path.resolve(out));
    expect(file.size).toBe(bytes.length);
    expect(file.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(file.pages).toBe(await pageCount(file.path));
    expect(file.pages).toBe(4);
  });

  it("takes input and output paths relative to the caller's directory, '..' included", async () => {
    // From a directory beside the files: the engines run elsewhere, and once named no file there
    // (every such input was refused as invalid_pdf).
    const here = path.join(dir, "here");
    await mkdir(here, { recursive: true });
    const res = await folio(["run", "merge", `../${path.basename(a)}`, `../${path.basename(b)}@1`, "-o", "../relative-out"], { cwd: here });
    expect(res.code, res.stdout + res.stderr).toBe(EXIT.OK);
    const [file] = res.json.outputs;
    expect(path.dirname(file.path)).toBe(path.join(dir, "relative-out"));
    expect(await pageCount(file.path)).toBe(4);
  });

  it("finds veraPDF from the compiled code too: PDF/A of a PDF validates", async () => {
    // bin/folio runs dist/, whose "../.." is dist itself: the jar's default place is the checkout's.
    const res = await folio(["run", "convert", "--to", "pdf/a-2b", a, "-o", path.join(dir, "pdfa")]);
    expect(res.code, res.stdout + res.stderr).toBe(EXIT.OK);
    expect(res.json.figures.pdfa).toMatchObject({ compliant: true });
  });

  it("accepts the options as JSON, as kebab-case flags, or from stdin", async () => {
    const viaJson = await folio(["run", "split", "--options", '{"mode": "every", "every": 2}', a, "-o", path.join(dir, "s1")]);
    const viaFlags = await folio(["run", "split", "--mode", "every", "--every", "2", a, "-o", path.join(dir, "s2")]);
    const viaStdin = await folio(["run", "split", "--options", "-", a, "-o", path.join(dir, "s3")], {
      stdin: '{"mode": "every", "every": 2}',
    });
    for (const r of [viaJson, viaFlags, viaStdin]) {
      expect(r.code, r.stdout + r.stderr).toBe(EXIT.OK);
      // Two PDFs (pages 1-2 and 3) plus the zip of them.
      expect(r.json.outputs.map((o: { pages: number | null }) => o.pages)).toEqual([2, 1, null]);
    }
  });

  it.each([
    ["a file that is not a PDF", ["compress", "NOTPDF", "-o", "OUT"], EXIT.BAD_INPUT, "invalid_pdf"],
    ["a missing file", ["compress", "/nonexistent/x.pdf", "-o", "OUT"], EXIT.BAD_INPUT, "invalid_pdf"],
    ["an unknown option value", ["compress", "--level", "extreme", "A", "-o", "OUT"], EXIT.USAGE, "validation_failed"],
    ["an unknown operation", ["explode", "A", "-o", "OUT"], EXIT.USAGE, "validation_failed"],
    [
      "a page range outside the document",
      ["split", "--mode", "ranges", "--ranges", "2-9", "A", "-o", "OUT"],
      EXIT.BAD_INPUT,
      "invalid_page_range",
    ],
    ["a merge of one file", ["merge", "A", "-o", "OUT"], EXIT.BAD_INPUT, "unsupported_input"],
  ])("answers %s with a stable code", async (_why, args, exit, code) => {
    const notPdf = path.join(dir, "not.pdf");
    await writeFile(notPdf, "this is text, not a PDF");
    const argv = args.map((x) => (x === "A" ? a : x === "NOTPDF" ? notPdf : x === "OUT" ? path.join(dir, "err") : x));
    const res = await folio(["run", ...argv]);
    expect(res.code).toBe(exit);
    expect(res.json).toEqual({ error: { code, message: expect.any(String) } });
    expect(res.json.error.message).not.toContain(dir);
  });

  it("names the bad variable when the configuration is invalid", async () => {
    const res = await folio(["run", "compress", a, "-o", path.join(dir, "cfg")], { env: { FOLIO_MAX_PAGES: "lots" } });
    expect(res.code).toBe(EXIT.USAGE);
    expect(res.stderr).toContain("FOLIO_MAX_PAGES");
  });

  it("enforces the page cap from the configuration", async () => {
    const res = await folio(["run", "compress", a, "-o", path.join(dir, "cap")], { env: { FOLIO_MAX_PAGES: "2" } });
    expect(res.code).toBe(EXIT.BAD_INPUT);
    expect(res.json.error.code).toBe("limit_exceeded");
  });
});

describe("folio runner", () => {
  it("runs a spec from stdin like a Kubernetes pod does", async () => {
    const spec = {
      job_id: "job_cli1",
      operation: "protect",
      options: { user_password: "pw" },
      inputs: [{ path: a, filename: "a.pdf" }],
      output_dir: path.join(dir, "spec"),
    };
    const res = await folio(["runner", "--spec", "-"], { stdin: JSON.stringify(spec) });
    expect(res.code, res.stderr).toBe(EXIT.OK);
    expect(res.json.outputs[0].filename).toBe("a.pdf");
    expect((await stat(res.json.outputs[0].path)).size).toBeGreaterThan(0);
  });

  it("serves several specs over stdio as a worker, one JSON line each, in order", async () => {
    const child = spawn(FOLIO, ["runner", "--worker"], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    const done = new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? -1)));
    const good = {
      operation: "split",
      options: { mode: "pages" },
      inputs: [{ path: b, filename: "b.pdf" }],
      output_dir: path.join(dir, "w1"),
    };
    const bad = {
      operation: "split",
      options: { mode: "pages" },
      inputs: [{ path: "/nope.pdf", filename: "nope.pdf" }],
      output_dir: path.join(dir, "w2"),
    };
    child.stdin.write(JSON.stringify({ id: 1, spec: good }) + "\n");
    child.stdin.write(JSON.stringify({ id: 2, spec: bad }) + "\n");
    child.stdin.end("not json\n");
    expect(await done).toBe(0);
    const lines = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    expect(lines[0].id).toBe(1);
    expect(lines[0].result.outputs).toHaveLength(3);
    expect(lines[1]).toEqual({ id: 2, error: { code: "invalid_pdf", message: expect.any(String) } });
    expect(lines[2].error.code).toBe("validation_failed");
  });
});
