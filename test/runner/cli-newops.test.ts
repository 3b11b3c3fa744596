/** `folio run` for issue #15's operations: options as JSON, a url without an input file. */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textPdf } from "../fixtures/pdf-fixtures.ts";
import { folio, pdftotext, tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-cli-newops-"));
});
afterAll(() => cleanup());

describe("folio run (issue #15)", () => {
  it("edits with steps given as JSON", async () => {
    const doc = await textPdf(path.join(dir, "doc.pdf"), 2, "doc");
    const options = JSON.stringify({ steps: [{ type: "page_numbers", format: "Page {n} of {total}" }] });
    const res = await folio(["run", "edit", "--options", options, doc, "-o", path.join(dir, "out")]);
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.json.operation).toBe("edit");
    expect(await pdftotext(res.json.outputs[0].path)).toContain("Page 2 of 2");
  });

  it("converts a --url without an input file, and answers an inward url with exit 3", async () => {
    const res = await folio(["run", "convert", "--to", "pdf", "--url", "http://127.0.0.1:1/", "-o", path.join(dir, "url")]);
    expect(res.code).toBe(3);
    expect(res.json.error.code).toBe("unsupported_input");
    expect(res.json.error.message).toContain("loopback");
  });
});
