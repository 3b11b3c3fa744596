/**
 * convert to PDF/A on the real engines. Every output is validated a second time by the test
 * itself — one veraPDF run over all of them, each against the part and level it claims in its
 * XMP, so a file that claimed the wrong part would fail too — and opened by qpdf and poppler.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Document, Packer, Paragraph } from "docx";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobError } from "../../core/errors.ts";
import { createLogger } from "../../core/logger.ts";
import { validatePdfa, verapdfJar } from "../../runner/engines/verapdf.ts";
import { ownerOnlyEncryptedPdf, textPdf } from "../fixtures/pdf-fixtures.ts";
import { errorCode, ok, runOp, testConfig } from "../helpers/runner.ts";
import { pdftotext, qpdfCheck, run, tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
const out = (): string => path.join(dir, `out-${++n}`);
let doc: string;
/** Every PDF/A the tests produced, with the part/level it must claim. */
const produced: [string, string][] = [];

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-pdfa-"));
  doc = await textPdf(path.join(dir, "archive.pdf"), 2, "archive");
});
afterAll(() => cleanup());

describe("convert to PDF/A", () => {
  it.each(["pdf/a-1b", "pdf/a-2b", "pdf/a-3b"])(
    "makes a PDF %s that validates, with the validation in the result",
    async (to) => {
      const res = ok(await runOp("convert", { to }, [doc], out()));
      const file = res.outputs[0]!.path;
      const pdfa = res.figures.pdfa as { compliant: boolean; validator: string; profile: string };
      expect(pdfa.compliant).toBe(true);
      expect(pdfa.validator).toMatch(/^veraPDF \d/);
      expect(pdfa.profile).toContain(to.slice(4).toUpperCase());
      expect(await qpdfCheck(file)).toBe(true);
      expect(await pdftotext(file)).toContain("archive 2");
      produced.push([file, to.slice(6)]);
    },
    120_000,
  );

  it("makes PDF/A from a Word document and from HTML", async () => {
    const docx = path.join(dir, "memo.docx");
    await writeFile(docx, await Packer.toBuffer(new Document({ sections: [{ children: [new Paragraph("Memo for the archive")] }] })));
    const fromWord = ok(await runOp("convert", { to: "pdf/a-2b" }, [docx], out()));
    expect(fromWord.figures.source_format).toBe("docx");
    expect(await pdftotext(fromWord.outputs[0]!.path)).toContain("Memo for the archive");
    const html = path.join(dir, "page.html");
    await writeFile(html, "<!DOCTYPE html><h1>Web page for the archive</h1><p style='color:#c00'>red text</p>");
    const fromHtml = ok(await runOp("convert", { to: "pdf/a-2b" }, [html], out()));
    expect(await pdftotext(fromHtml.outputs[0]!.path)).toContain("Web page for the archive");
    produced.push([fromWord.outputs[0]!.path, "2b"], [fromHtml.outputs[0]!.path, "2b"]);
  }, 180_000);

  it("every output validates for veraPDF run by the test, against the part it claims", async () => {
    expect(produced.length).toBeGreaterThanOrEqual(5);
    const res = await run(testConfig.FOLIO_JAVA, [
      "-cp",
      verapdfJar(testConfig),
      "org.verapdf.apps.GreenfieldCliWrapper",
      "--format",
      "json",
      ...produced.map(([f]) => f),
    ]);
    const jobs = (
      JSON.parse(res.stdout) as {
        report: { jobs: { itemDetails: { name: string }; validationResult: { compliant: boolean; profileName: string }[] }[] };
      }
    ).report.jobs;
    for (const [file, level] of produced) {
      const job = jobs.find((j) => j.itemDetails.name === file)!;
      expect(job.validationResult[0]!.compliant, file).toBe(true);
      expect(job.validationResult[0]!.profileName).toContain(`PDF/A-${level.toUpperCase()}`);
    }
  }, 120_000);

  it("fails with conversion_failed naming the broken clauses when a file does not validate", async () => {
    const ctx = { config: testConfig, signal: AbortSignal.timeout(60_000), log: createLogger({ level: "silent" }) };
    const err = await validatePdfa(ctx, doc, "pdf/a-2b").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobError);
    expect((err as JobError).code).toBe("conversion_failed");
    expect((err as JobError).message).toMatch(/does not validate as PDF\/A-2B .*ISO 19005-2:2011 6\.\d/);
  }, 60_000);

  it("refuses an encrypted PDF with encrypted_input (PDF/A forbids encryption)", async () => {
    const locked = await ownerOnlyEncryptedPdf(doc, path.join(dir, "locked.pdf"));
    expect(errorCode(await runOp("convert", { to: "pdf/a-2b" }, [locked], out()))).toBe("encrypted_input");
  }, 60_000);
});
