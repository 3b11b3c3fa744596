/**
 * Hostile but authenticated clients (issue #10): malformed request bodies end in a stable 4xx
 * problem, never a 500 and never a crash. After each request the same server must still answer
 * and still accept a real upload, so a process that died (or a handler that broke) fails the row.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blob, startServer, type Server } from "./harness.ts";
import { textPdf } from "./fixtures.ts";

const B = "folioBoundary7";
const multipart = { "Content-Type": `multipart/form-data; boundary=${B}` };
const pdfPart = (disposition: string): string =>
  `--${B}\r\nContent-Disposition: ${disposition}\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4 a tiny body\r\n`;

let s: Server;
let pdf: Uint8Array;

beforeAll(async () => {
  s = await startServer();
  pdf = await textPdf(1, "still here");
}, 60_000);
afterAll(async () => {
  await s?.cleanup();
});

async function stillServing(): Promise<void> {
  expect((await s.request("GET", "/healthz")).status).toBe(200);
  const form = new FormData();
  form.append("file", blob(pdf), "ok.pdf");
  const up = await s.request("POST", "/v1/files", { form });
  expect(up.status, up.text).toBe(201);
}

describe("malformed multipart bodies", () => {
  it.each([
    ["a body that ends cleanly without its closing boundary", "/v1/files", pdfPart('form-data; name="file"; filename="a.pdf"')],
    ["the same truncated body on an operation endpoint", "/v1/pdf/compress", pdfPart('form-data; name="file"; filename="a.pdf"')],
    ["a file part with no name at all", "/v1/files", `${pdfPart('form-data; filename="a.pdf"')}--${B}--\r\n`],
    ["a file part with an empty name", "/v1/files", `${pdfPart('form-data; name=""; filename="a.pdf"')}--${B}--\r\n`],
    ["a field part with no name", "/v1/pdf/compress", `--${B}\r\nContent-Disposition: form-data\r\n\r\nhigh\r\n--${B}--\r\n`],
    [
      "a field part with an empty name",
      "/v1/pdf/compress",
      `--${B}\r\nContent-Disposition: form-data; name=""\r\n\r\nhigh\r\n--${B}--\r\n`,
    ],
    ["a part cut off inside its headers", "/v1/files", `--${B}\r\nContent-Disposition: form-da`],
  ])("%s → 422 validation_failed, server up", async (_name, route, body) => {
    const res = await s.request("POST", route, { headers: multipart, body });
    expect(res.status, res.text).toBe(422);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(res.json.code).toBe("validation_failed");
    await stillServing();
  });
});

describe("request bodies that do not decode", () => {
  it.each(["gzip", "deflate", "br", "zstd"])("Content-Encoding: %s with bytes that are not %s → 422, not 500", async (encoding) => {
    const res = await s.request("POST", "/v1/pdf/merge", {
      headers: { "Content-Type": "application/json", "Content-Encoding": encoding },
      body: "these bytes are not compressed",
    });
    expect(res.status, res.text).toBe(422);
    expect(res.json.code).toBe("validation_failed");
    expect(res.json.errors).toEqual([{ path: "(body)", message: "could not be read" }]);
    await stillServing();
  });

  it("the server logged none of them as an internal error", () => {
    expect(s.logs()).not.toContain("Request failed with an internal error");
  });
});
