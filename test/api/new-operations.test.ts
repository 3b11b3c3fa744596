/**
 * The operations of issue #15 through the public API on a real `folio serve` (embedded mode, its
 * worker pool with warm browsers): edit with a password that never reaches a record or a log,
 * HTML uploads that are accepted and rendered, a url convert with no input file, images → PDF
 * with several file parts, OCR — each job checked as a client sees it, its output downloaded and
 * read back with poppler. The OpenAPI document describes every new path.
 */
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encryptedPdf, textPdf } from "../fixtures/pdf-fixtures.ts";
import { scannedImage } from "../fixtures/scan-fixtures.ts";
import { pdfinfo, pdftotext, tmpDir, wordRecall } from "../helpers/tools.ts";
import { blob, startServer, type Server } from "./harness.ts";

let s: Server;
let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-api-newops-"));
  s = await startServer();
}, 60_000);
afterAll(async () => {
  await s?.cleanup();
  await cleanup();
});

/** Submits a multipart operation with Prefer: wait and returns the finished job. */
async function submit(op: string, files: [Uint8Array | string, string][], options: Record<string, unknown>): Promise<any> {
  const form = new FormData();
  for (const [bytes, name] of files) form.append("file", blob(bytes), name);
  form.append("options", JSON.stringify(options));
  const res = await s.request("POST", `/v1/pdf/${op}`, { form, headers: { Prefer: "wait=60" } });
  expect([200, 202], res.text).toContain(res.status);
  return res.json;
}

async function download(job: any, i = 0): Promise<string> {
  const res = await s.request("GET", job.result.files[i].download_url);
  expect(res.status).toBe(200);
  const file = path.join(dir, `${job.id}-${i}-${job.result.files[i].filename}`);
  await writeFile(file, res.body);
  return file;
}

describe("issue #15 operations over the API", () => {
  it("edit unlocks with a password that is in no job record, log or database", async () => {
    const password = "unlock-me-7c1f0e";
    const locked = await encryptedPdf(await textPdf(path.join(dir, "src.pdf"), 3, "page"), path.join(dir, "locked.pdf"), password);
    const job = await submit("edit", [[readFileSync(locked), "locked.pdf"]], {
      password,
      steps: [{ type: "page_numbers", format: "Page {n} of {total}" }, { type: "unlock" }],
    });
    expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
    expect(job.operation).toBe("edit");
    expect(JSON.stringify(job)).not.toContain(password);
    const out = await download(job);
    expect((await pdfinfo(out)).Encrypted).toBe("no");
    expect(await pdftotext(out)).toContain("Page 2 of 3");
    expect(s.logs()).not.toContain(password);
    const db = Buffer.concat([readFileSync(path.join(s.dataDir, "folio.db")), readFileSync(path.join(s.dataDir, "folio.db-wal"))]);
    expect(db.includes(Buffer.from(password))).toBe(false);
  });

  it("accepts an HTML upload (no longer 415) and renders it", async () => {
    const job = await submit("convert", [["<!DOCTYPE html><h1>Invoice 2041</h1>", "invoice.html"]], { to: "pdf" });
    expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
    expect(job.inputs[0].content_type).toBe("text/html");
    expect(await pdftotext(await download(job))).toContain("Invoice 2041");
  });

  it("takes a url with no file, and refuses a url together with a file", async () => {
    const res = await s.request("POST", "/v1/pdf/convert", {
      json: { to: "pdf", url: "http://127.0.0.1:1/" },
      headers: { Prefer: "wait=30" },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json.inputs).toEqual([]);
    // The address is loopback: the job fails, it never reaches the browser.
    expect(res.json.error.code).toBe("unsupported_input");
    const both = new FormData();
    both.append("file", blob("<p>x</p>"), "x.html");
    both.append("options", JSON.stringify({ to: "pdf", url: "https://example.com/" }));
    const refused = await s.request("POST", "/v1/pdf/convert", { form: both });
    expect(refused.status).toBe(422);
    expect(refused.json.errors[0].path).toBe("url");
  });

  it("makes one PDF of several image parts", async () => {
    const png = await sharp({ create: { width: 96, height: 48, channels: 3, background: "#123456" } })
      .png()
      .toBuffer();
    const jpg = await sharp({ create: { width: 48, height: 96, channels: 3, background: "#654321" } })
      .jpeg()
      .toBuffer();
    const job = await submit(
      "convert",
      [
        [png, "a.png"],
        [jpg, "b.jpg"],
      ],
      { to: "pdf" },
    );
    expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
    expect(job.result.files[0].pages).toBe(2);
    expect((await pdfinfo(await download(job))).Pages).toBe("2");
  });

  it("OCRs an image into a searchable PDF", async () => {
    const text = "the quarterly report shows revenue growth across every region";
    const jpeg = readFileSync(await scannedImage(path.join(dir, "scan.jpg"), { text, font: "Helvetica", skew: 0, turn: 0 }));
    const job = await submit("ocr", [[jpeg, "scan.jpg"]], { languages: ["eng"] });
    expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
    expect(wordRecall(text, await pdftotext(await download(job)))).toBeGreaterThanOrEqual(0.9);
  }, 120_000);

  it("describes the new paths and their options in the OpenAPI document", async () => {
    const doc = (await s.request("GET", "/v1/openapi.json")).json;
    for (const p of ["/v1/pdf/edit", "/v1/pdf/ocr"]) expect(doc.paths[p]?.post, p).toBeDefined();
    const convert = JSON.stringify(doc.components.schemas.ConvertRequest);
    for (const field of ["url", "wait_for_selector", "header_template", "dpi", "ocr", "pdf/a-2b"]) expect(convert).toContain(field);
    expect(JSON.stringify(doc.components.schemas.EditRequest)).toContain("#/components/schemas/EditPageNumbers");
    expect(JSON.stringify(doc.components.schemas.EditPageNumbers)).toContain("{total}");
    expect(doc.components.schemas.OcrRequest.properties.languages).toBeDefined();
  });
});
