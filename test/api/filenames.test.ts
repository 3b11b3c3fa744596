/**
 * Names and secrets with awkward characters (issue #10 items 11 and 14): U+2028/U+2029 must not
 * break the runner's line-delimited IPC, bidi controls must not spoof an extension, and non-ASCII
 * upload names arrive as the client wrote them (UTF-8 or RFC 8187 filename*) and go back in
 * results and in the downloads' Content-Disposition (filename and filename*).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contentDisposition, decodeMultipartFilename, safeFilename } from "../../api/http/filenames.ts";
import { pdftotext } from "../helpers/tools.ts";
import { textPdf } from "./fixtures.ts";
import { startServer, type Server } from "./harness.ts";

let s: Server;
let pdf: Uint8Array;
beforeAll(async () => {
  s = await startServer();
  pdf = await textPdf(1, "awkward names");
}, 60_000);
afterAll(async () => {
  await s?.cleanup();
});

const B = "folioNames42";
/** A multipart body whose Content-Disposition parameters are written byte for byte. */
function rawUpload(disposition: Buffer): Promise<import("./harness.ts").HttpResponse> {
  const body = Buffer.concat([
    Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="file"; `),
    disposition,
    Buffer.from("\r\nContent-Type: application/pdf\r\n\r\n"),
    Buffer.from(pdf),
    Buffer.from(`\r\n--${B}--\r\n`),
  ]);
  return s.request("POST", "/v1/files", { headers: { "Content-Type": `multipart/form-data; boundary=${B}` }, body });
}

describe("upload names", () => {
  it.each([
    ["UTF-8 bytes in filename (RFC 7578 §4.2)", Buffer.from('filename="résumé.pdf"', "utf8"), "résumé.pdf"],
    ["an RFC 8187 filename* alone", Buffer.from("filename*=UTF-8''r%C3%A9sum%C3%A9%20%E2%9C%93.pdf"), "résumé ✓.pdf"],
    [
      "filename* wins over an ASCII filename (RFC 6266 §4.3)",
      Buffer.from("filename=\"resume.pdf\"; filename*=UTF-8''%E6%96%87%E6%9B%B8.pdf"),
      "文書.pdf",
    ],
    ["latin1 bytes that are not UTF-8 are kept as latin1", Buffer.from('filename="r\xe9sum\xe9.pdf"', "latin1"), "résumé.pdf"],
    ["a right-to-left override cannot disguise an extension", Buffer.from('filename="invoice\u202efdp.exe"', "utf8"), "invoicefdp.exe"],
    ["isolates, marks and zero-width characters are removed", Buffer.from('filename="a\u2067b\u200fc\u200b.pdf"', "utf8"), "abc.pdf"],
  ])("%s", async (_s, disposition, want) => {
    const res = await rawUpload(disposition);
    expect(res.status, res.text).toBe(201);
    expect(res.json.data[0].filename).toBe(want);
    const dl = await s.request("GET", `/v1/files/${res.json.data[0].id}/content`);
    expect(dl.headers["content-disposition"]).toBe(contentDisposition(want));
  });

  it("the download names it for old and new clients alike", async () => {
    const res = await rawUpload(Buffer.from('filename="résumé (final)\'s.pdf"', "utf8"));
    const dl = await s.request("GET", `/v1/files/${res.json.data[0].id}/content`);
    expect(dl.headers["content-disposition"]).toBe(
      `attachment; filename="resume (final)'s.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%28final%29%27s.pdf`,
    );
  });

  it("the name flows into the job's result and its download", async () => {
    const up = await rawUpload(Buffer.from('filename="résumé.pdf"', "utf8"));
    const job = await s.request("POST", "/v1/pdf/compress", {
      json: { inputs: [{ file_id: up.json.data[0].id }] },
      headers: { Prefer: "wait=60" },
    });
    expect(job.json.status, job.text).toBe("succeeded");
    expect(job.json.inputs[0].filename).toBe("résumé.pdf");
    const out = job.json.result.files[0];
    expect(out.filename).toBe("résumé.pdf");
    const dl = await s.request("GET", out.download_url);
    expect(dl.headers["content-disposition"]).toContain("filename*=UTF-8''r%C3%A9sum%C3%A9.pdf");
  });
});

describe("U+2028 and U+2029 (the runner's line-delimited IPC)", () => {
  it("a password with both protects the file; the job does not fail", async () => {
    const password = "line\u2028sep\u2029para-91f";
    const up = await rawUpload(Buffer.from('filename="plain.pdf"'));
    const res = await s.request("POST", "/v1/pdf/protect", {
      json: { inputs: [{ file_id: up.json.data[0].id }], user_password: password },
      headers: { Prefer: "wait=60" },
    });
    expect(res.json.status, res.text).toBe("succeeded");
    const file = path.join(s.dataDir, "check-2028.pdf");
    await writeFile(file, (await s.request("GET", res.json.result.files[0].download_url)).body);
    expect(await pdftotext(file, password)).toContain("awkward names");
    await expect(pdftotext(file)).rejects.toThrow();
  });

  it("an output_filename with both (and a bidi override) gives an honest name", async () => {
    const up = await rawUpload(Buffer.from('filename="plain.pdf"'));
    const res = await s.request("POST", "/v1/pdf/compress", {
      json: { inputs: [{ file_id: up.json.data[0].id }], output_filename: "q3\u2028report\u2029\u202Egnp" },
      headers: { Prefer: "wait=60" },
    });
    expect(res.json.status, res.text).toBe("succeeded");
    expect(res.json.result.files[0].filename).toBe("q3reportgnp.pdf");
  });

  it("an output_filename of format characters only is 422", async () => {
    const up = await rawUpload(Buffer.from('filename="plain.pdf"'));
    const res = await s.request("POST", "/v1/pdf/compress", {
      json: { inputs: [{ file_id: up.json.data[0].id }], output_filename: "\u202E\u200B" },
    });
    expect(res.status).toBe(422);
    expect(res.json.errors[0].path).toBe("output_filename");
  });
});

describe("filename functions", () => {
  it("decodeMultipartFilename keeps names busboy decoded from filename*", () => {
    expect(decodeMultipartFilename("文書.pdf")).toBe("文書.pdf");
    expect(decodeMultipartFilename(undefined)).toBeUndefined();
  });
  it("safeFilename keeps only the last path segment and never splits a surrogate pair", () => {
    expect(safeFilename("..\\..\\etc/passwd")).toBe("passwd");
    expect(safeFilename("😀".repeat(300))).toBe("😀".repeat(255));
  });
});
