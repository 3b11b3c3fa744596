/**
 * Why Folio calls qpdf directly instead of through node-qpdf2 (docs/adr/0001-call-qpdf-directly.md).
 * node-qpdf2 6.0.0 is on the required package list; these tests run its real API against the real
 * qpdf and assert each defect that rules it out, so they pass while the defects exist and fail
 * (prompting a look at the ADR again) once a release fixes them.
 */
import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { decrypt, encrypt } from "node-qpdf2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { damagedPdf, recordingQpdf, textPdf, type QpdfRecording } from "../fixtures/pdf-fixtures.ts";
import { ok, runOp } from "../helpers/runner.ts";
import { pdfinfo, qpdfCheck, run, tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
let doc: string;
let qpdf: QpdfRecording;
const savedPath = process.env.PATH;

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-node-qpdf2-"));
  doc = await textPdf(path.join(dir, "doc.pdf"), 4, "doc", { objectStreams: false });
  // node-qpdf2 spawns "qpdf" from PATH and offers no way to choose the executable: put a
  // recording wrapper first in PATH for this test file (vitest runs each file in its own process).
  qpdf = await recordingQpdf(dir);
  process.env.PATH = `${path.dirname(qpdf.path)}:${savedPath}`;
});
afterAll(async () => {
  process.env.PATH = savedPath;
  await cleanup();
});

/** A rejection's reason; node-qpdf2 rejects with qpdf's stderr as a plain string. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (reason) {
    return reason;
  }
  throw new Error("expected the promise to reject");
}

const REPLACEMENT_CHAR = Buffer.from([0xef, 0xbf, 0xbd]);

describe("node-qpdf2 6.0.0", () => {
  it("corrupts the PDF it returns when no output path is given: binary stdout is decoded as UTF-8", async () => {
    // Without `output` it runs `qpdf … -` and joins stdout chunks with Array.join(""), which
    // turns every Buffer into a UTF-8 string, replacing each invalid byte sequence with U+FFFD.
    const returned = await decrypt({ input: doc });
    const real = path.join(dir, "real.pdf");
    expect((await run("qpdf", ["--decrypt", doc, real])).code).toBe(0);
    const realBytes = await readFile(real);
    // qpdf's second line is a comment of high-bit bytes (ISO 32000-1 §7.5.2) that marks the file as binary.
    expect(realBytes.subarray(0, 20).includes(Buffer.from([0xbf, 0xf7, 0xa2, 0xfe]))).toBe(true);
    expect(realBytes.includes(REPLACEMENT_CHAR)).toBe(false);
    expect(returned.includes(REPLACEMENT_CHAR)).toBe(true);
    expect(returned.length).not.toBe(realBytes.length);
    // The compressed page contents no longer inflate: qpdf --check finds errors.
    const broken = path.join(dir, "returned.pdf");
    await writeFile(broken, returned);
    expect(await qpdfCheck(real)).toBe(true);
    expect(await qpdfCheck(broken)).toBe(false);
  });

  it("rejects when qpdf repaired a damaged file and succeeded with warnings (exit code 3)", async () => {
    const damaged = await damagedPdf(doc, path.join(dir, "damaged.pdf"));
    // qpdf itself: exit 3, "succeeded with warnings", and a good output.
    const direct = path.join(dir, "direct.pdf");
    expect((await run("qpdf", [damaged, direct])).code).toBe(3);
    expect((await pdfinfo(direct)).Pages).toBe("4");
    // node-qpdf2 treats every exit code but 0 as failure, although it wrote the same good file.
    const output = path.join(dir, "via-node-qpdf2.pdf");
    const reason = await rejection(decrypt({ input: damaged, output }));
    expect(String(reason)).toMatch(/operation succeeded with warnings/);
    expect((await stat(output)).size).toBeGreaterThan(0);
    expect((await pdfinfo(output)).Pages).toBe("4");
    expect(await qpdfCheck(output)).toBe(true);
  });

  it("puts the user and owner passwords on qpdf's command line, visible to every process", async () => {
    const user = "user-secret-7f3a";
    const owner = "owner-secret-91c2";
    await encrypt({ input: doc, output: path.join(dir, "enc.pdf"), password: { user, owner } });
    const runs = await qpdf.argv();
    const encryptRun = runs.find((argv) => argv.includes("--encrypt"));
    expect(encryptRun).toBeDefined();
    expect(encryptRun).toContain(user);
    expect(encryptRun).toContain(owner);
    expect(await qpdf.processes()).toContain(user);
  });

  it("cannot encrypt with a password that begins with --, which Folio's protect handles", async () => {
    // The positional `--encrypt USER OWNER 256` form: qpdf 11.3 reads "--help" as an option.
    const reason = await rejection(encrypt({ input: doc, output: path.join(dir, "dash.pdf"), password: "--help" }));
    expect(String(reason)).toMatch(/unrecognized argument --help/);
    const res = ok(await runOp("protect", { user_password: "--help" }, [doc], path.join(dir, "folio")));
    expect((await pdfinfo(res.outputs[0]!.path, "--help")).ok).toBe(true);
  });
});
