/**
 * Every job error code of API.md, reached through the public API, and an internal error that
 * reaches the client as a safe 500 problem without paths or stack traces.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PDFDocument, rgb } from "pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tmpDir } from "../helpers/tools.ts";
import { blob, startServer, type Server } from "./harness.ts";
import { textPdf } from "./fixtures.ts";

async function submit(s: Server, op: string, file: [Uint8Array | Buffer, string], fields: Record<string, string>): Promise<any> {
  const form = new FormData();
  form.append("file", blob(file[0]), file[1]);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await s.request("POST", `/v1/pdf/${op}`, { form, headers: { Prefer: "wait=60" } });
  expect([200, 202], res.text).toContain(res.status);
  return res.json;
}

describe("job error codes", () => {
  let s: Server;
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    ({ dir, cleanup } = await tmpDir());
    s = await startServer({ FOLIO_MAX_PAGES: "50" });
  }, 60_000);
  afterAll(async () => {
    await s.cleanup();
    await cleanup();
  });

  it("encrypted_input: a password-protected PDF", async () => {
    const plain = path.join(dir, "plain.pdf");
    const locked = path.join(dir, "locked.pdf");
    writeFileSync(plain, await textPdf(1, "x"));
    execFileSync("qpdf", ["--encrypt", "user", "owner", "256", "--", plain, locked]);
    const job = await submit(s, "compress", [Buffer.from(execFileSync("cat", [locked])), "locked.pdf"], {});
    expect(job.status).toBe("failed");
    expect(job.error.code).toBe("encrypted_input");
  });

  it("invalid_pdf: bytes that start like a PDF but are not one", async () => {
    const job = await submit(s, "split", [Buffer.concat([Buffer.from("%PDF-1.4\n"), Buffer.alloc(2000, 0x78)]), "junk.pdf"], {
      mode: "pages",
    });
    expect(job.error.code).toBe("invalid_pdf");
  });

  it("unsupported_input: PDF to Word of a page without any text (a scan needs OCR first)", async () => {
    const doc = await PDFDocument.create();
    doc.addPage([595, 842]).drawRectangle({ x: 50, y: 50, width: 400, height: 600, color: rgb(0.2, 0.2, 0.2) });
    const job = await submit(s, "convert", [await doc.save(), "scan.pdf"], { to: "docx" });
    expect(job.error.code).toBe("unsupported_input");
    expect(job.error.message).toMatch(/OCR/);
  });

  it("conversion_failed: an Office document LibreOffice cannot load", async () => {
    // A DOCX container whose main part is garbage.
    const zipDir = path.join(dir, "docx");
    execFileSync("mkdir", ["-p", path.join(zipDir, "word")]);
    writeFileSync(path.join(zipDir, "[Content_Types].xml"), "<Types/>");
    writeFileSync(path.join(zipDir, "word", "document.xml"), "this is not xml at all <<<");
    execFileSync("python3", [
      "-c",
      `import zipfile,os;z=zipfile.ZipFile('${dir}/bad.docx','w');[z.write(os.path.join(r,f),os.path.relpath(os.path.join(r,f),'${zipDir}')) for r,_,fs in os.walk('${zipDir}') for f in fs];z.close()`,
    ]);
    const job = await submit(s, "convert", [Buffer.from(execFileSync("cat", [path.join(dir, "bad.docx")])), "bad.docx"], { to: "pdf" });
    expect(job.status).toBe("failed");
    expect(job.error.code).toBe("conversion_failed");
  });

  it("limit_exceeded: more pages than the plan allows", async () => {
    const job = await submit(s, "compress", [await textPdf(60, "p"), "long.pdf"], {});
    expect(job.error).toEqual({ code: "limit_exceeded", message: expect.stringContaining("50") });
  });

  // invalid_page_range: in embedded mode the API counts pages with the same qpdf the runner
  // uses, so a range outside the document is always a 422 at submission (api.test.ts); the
  // runner's own check is tested through the CLI (test/runner/cli.test.ts).

  it("internal_error over HTTP: a stored file whose bytes vanished is a safe 500, no path or stack", async () => {
    const form = new FormData();
    form.append("file", blob(await textPdf(1, "gone")), "gone.pdf");
    const file = (await s.request("POST", "/v1/files", { form })).json.data[0];
    const stored = path.join(s.dataDir, "files");
    for (const t of readdirSync(stored)) rmSync(path.join(stored, t, file.id), { force: true });
    const res = await s.request("GET", `/v1/files/${file.id}/content`);
    expect(res.status).toBe(500);
    expect(res.json.code).toBe("internal_error");
    expect(res.text).not.toContain(s.dataDir);
    expect(res.text).not.toMatch(/\n\s+at |Error:/);
  });
});

describe("timeout", () => {
  let s: Server;
  beforeAll(async () => {
    s = await startServer({ FOLIO_JOB_TIMEOUT_MS: "1" });
  }, 60_000);
  afterAll(() => s.cleanup());

  it("timeout: a job that runs out of time", async () => {
    const job = await submit(s, "split", [await textPdf(200, "t"), "t.pdf"], { mode: "pages" });
    expect(job.error.code).toBe("timeout");
  });
});
