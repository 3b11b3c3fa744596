/**
 * Uploads are told by their bytes, head and tail (issue #13): an Office zip whose
 * [Content_Types].xml comes after more than 64 KiB of other parts (writers that add media first
 * and the content types last do this) is judged by its central directory, at the end of the
 * upload, not taken for a plain zip from its first local headers — and it then converts.
 */
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import ExcelJS from "exceljs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTENT_TYPES } from "../../core/sniff.ts";
import { pdftotext } from "../helpers/tools.ts";
import { buildZip, readZip } from "../helpers/zip-builder.ts";
import { blob, startServer, type Server } from "./harness.ts";

let s: Server;
let xlsx: Buffer;

beforeAll(async () => {
  s = await startServer();
  const book = new ExcelJS.Workbook();
  book.addWorksheet("Ledger").addRow(["Sniffing", "ledger", "Halloran"]);
  const plain = path.join(s.dataDir, "plain.xlsx");
  await writeFile(plain, Buffer.from(await book.xlsx.writeBuffer()));
  const entries = readZip(plain);
  const types = entries.filter((e) => e.name === "[Content_Types].xml");
  const parts = entries.filter((e) => e.name !== "[Content_Types].xml");
  expect(types).toHaveLength(1);
  // 200 KiB of incompressible media first, stored; the content types last.
  const media = { name: "xl/media/image1.bin", data: randomBytes(200 * 1024), deflate: false };
  xlsx = buildZip([media, ...parts, ...types]);
  expect(xlsx.indexOf("[Content_Types].xml")).toBeGreaterThan(64 * 1024);
});

afterAll(async () => {
  await s?.cleanup();
});

describe("POST /v1/files sniffing", () => {
  it("takes an XLSX whose content types come after 64 KiB of media for what it is, and converts it", { timeout: 180_000 }, async () => {
    const form = new FormData();
    form.append("file", blob(xlsx), "ledger.bin");
    const up = await s.request("POST", "/v1/files", { form });
    expect(up.status, up.text).toBe(201);
    expect(up.json.data[0].content_type).toBe(CONTENT_TYPES.xlsx);

    const res = await s.request("POST", "/v1/pdf/convert", {
      json: { inputs: [{ file_id: up.json.data[0].id }], to: "pdf" },
      headers: { Prefer: "wait=60" },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json.status, JSON.stringify(res.json.error)).toBe("succeeded");
    const download = await s.request("GET", res.json.result.files[0].download_url);
    expect(download.status).toBe(200);
    const out = path.join(s.dataDir, "ledger.pdf");
    await writeFile(out, download.body);
    expect(await pdftotext(out)).toMatch(/Sniffing\s+ledger\s+Halloran/);
  });
});
