/**
 * PDF → DOCX and PDF → XLSX through the public API (POST /v1/pdf/convert with "to"), end to end on
 * a real `folio serve`: upload, convert, download, and the download is the document it should be.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textLinesPdf } from "../fixtures/pdf-office-corpus.ts";
import { readDocx, readXlsx, sheetRows } from "../helpers/convert-quality.ts";
import { pdftotext, wordRecall } from "../helpers/tools.ts";
import { blob, startServer, type Server } from "./harness.ts";

let s: Server;
let pdf: Uint8Array;
let lines: string[][];

beforeAll(async () => {
  s = await startServer();
  ({ bytes: pdf, lines } = await textLinesPdf(11));
});

afterAll(async () => {
  await s?.cleanup();
});

async function convert(to: "docx" | "xlsx"): Promise<{ file: string; job: any }> {
  const form = new FormData();
  form.append("file", blob(pdf), "minutes.pdf");
  const up = await s.request("POST", "/v1/files", { form });
  expect(up.status, up.text).toBe(201);
  const res = await s.request("POST", "/v1/pdf/convert", {
    json: { inputs: [{ file_id: up.json.data[0].id }], to },
    headers: { Prefer: "wait=60" },
  });
  expect(res.status, res.text).toBe(200);
  expect(res.json.status, JSON.stringify(res.json.error)).toBe("succeeded");
  const out = res.json.result.files[0];
  expect(out.filename).toBe(`minutes.${to}`);
  const download = await s.request("GET", out.download_url);
  expect(download.status).toBe(200);
  const file = path.join(s.dataDir, `check.${to}`);
  await writeFile(file, download.body);
  return { file, job: res.json };
}

describe("POST /v1/pdf/convert from a PDF", () => {
  it('"to": "docx" answers with a Word document holding the PDF\'s text', async () => {
    const { file, job } = await convert("docx");
    expect(job.result.files[0].content_type).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    const source = path.join(s.dataDir, "source.pdf");
    await writeFile(source, pdf);
    expect(wordRecall(await pdftotext(source), readDocx(await readFile(file)).text)).toBeGreaterThanOrEqual(0.99);
  });

  it('"to": "xlsx" answers with a workbook of the text lines (the PDF has no table)', async () => {
    const { file, job } = await convert("xlsx");
    expect(job.result.files[0].content_type).toBe("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet");
    expect(sheetRows(await readXlsx(file))).toEqual(expect.arrayContaining(lines.flat()));
  });
});
