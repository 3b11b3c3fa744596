/**
 * The decompressed-size caps (issue #10 item 6, API.md "Limits"): a PDF whose streams, or an
 * Office document whose zip parts, inflate past their allowance end in limit_exceeded before any
 * engine inflates them — a 1 MB PDF that inflates to 1 GiB is stopped after about 200 MB are
 * counted, without qpdf's recompression ever starting.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.ts";
import { JobError } from "../../core/errors.ts";
import { bombPdf, zerosDeflateRaw } from "../fixtures/bomb-fixtures.ts";
import { recordingQpdf, textPdf } from "../fixtures/pdf-fixtures.ts";
import { errorCode, ok, runOp } from "../helpers/runner.ts";
import { tmpDir } from "../helpers/tools.ts";
import { buildZip } from "../helpers/zip-builder.ts";

let dir: string;
let cleanup: () => Promise<void>;
const f: Record<string, string> = {};
let outN = 0;
const out = (): string => path.join(dir, `out-${++outN}`);

const CONTENT_TYPES = Buffer.from(
  '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
    '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
);

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-inflate-"));
  f.bomb = await bombPdf(path.join(dir, "bomb.pdf"), 1024);
  f.airy = await bombPdf(path.join(dir, "airy.pdf"), 48);
  f.alpha = await textPdf(path.join(dir, "alpha.pdf"), 3, "alpha");
  const zip = async (name: string, bytes: Buffer): Promise<void> => {
    f[name] = path.join(dir, `${name}.docx`);
    await writeFile(f[name], bytes);
  };
  const bomb = zerosDeflateRaw(1024);
  await zip(
    "declared",
    buildZip([
      { name: "[Content_Types].xml", data: CONTENT_TYPES },
      { name: "word/document.xml", data: Buffer.alloc(0), compressed: bomb, declaredSize: 1024 ** 3 },
    ]),
  );
  await zip(
    "lying",
    buildZip([
      { name: "[Content_Types].xml", data: CONTENT_TYPES },
      { name: "word/document.xml", data: Buffer.alloc(0), compressed: bomb, declaredSize: 1000 },
    ]),
  );
  await zip(
    "overlapping",
    buildZip(
      [
        { name: "[Content_Types].xml", data: CONTENT_TYPES },
        { name: "word/document.xml", data: Buffer.alloc(0), compressed: zerosDeflateRaw(8), declaredSize: 8 * 1024 ** 2 },
      ],
      {
        duplicateOf: { index: 1, times: 500 },
      },
    ),
  );
  await zip(
    "crowded",
    buildZip(
      [
        { name: "[Content_Types].xml", data: CONTENT_TYPES },
        ...Array.from({ length: 100_001 }, (_, i) => ({ name: `word/media/p${i}.xml`, data: Buffer.from("<x/>"), deflate: false })),
      ],
      { zip64: true },
    ),
  );
});
afterAll(() => cleanup());

describe("decompressed-size caps", () => {
  it("stops compress of a 1 MB PDF that inflates to 1 GiB before qpdf recompresses anything", async () => {
    const qpdf = await recordingQpdf(dir);
    // No sandbox: the recording wrapper writes its log beside itself, which a sandbox forbids.
    const config = loadConfig({ FOLIO_LOG_LEVEL: "silent", FOLIO_QPDF: qpdf.path, FOLIO_SANDBOX: "none" });
    const res = await runOp("compress", { level: "lossless" }, [f.bomb!], out(), { config });
    expect(errorCode(res)).toBe("limit_exceeded");
    expect((res as JobError).message).toMatch(/The PDF inflates to more than 212,\d{3},\d{3} bytes/);
    // qpdf only listed the streams as stored: no rewrite, no image pass.
    const runs = await qpdf.argv();
    expect(runs.some((argv) => argv.some((a) => a.startsWith("--job-json-file=")))).toBe(true);
    expect(runs.some((argv) => argv.includes("--recompress-flate"))).toBe(false);
  });

  it("stops PDF → Word of the same file before layout analysis decodes its content", async () => {
    expect(errorCode(await runOp("convert", { to: "docx" }, [f.bomb!], out()))).toBe("limit_exceeded");
  });

  it("follows max_decompressed_bytes and max_decompression_ratio", async () => {
    // 48 MiB from 50 KB is under the 64 MiB every file may inflate to …
    expect(ok(await runOp("compress", { level: "lossless" }, [f.airy!], out())).figures.compressed).toBeTypeOf("boolean");
    // … unless the operator lowers the absolute cap below it.
    expect(
      errorCode(await runOp("compress", { level: "lossless" }, [f.airy!], out(), { limits: { max_decompressed_bytes: 10_000_000 } })),
    ).toBe("limit_exceeded");
  });

  it("lets merge and protect copy the same file: they never inflate its streams", async () => {
    expect(ok(await runOp("merge", {}, [f.bomb!, f.alpha!], out())).figures.pages).toBe(4);
    expect(ok(await runOp("protect", { user_password: "x" }, [f.bomb!], out())).outputs).toHaveLength(1);
  });

  it.each([
    ["declares 1 GiB for one part", "declared", /The document inflates to more than/],
    ["declares 1,000 bytes for a part that inflates to 1 GiB", "lying", /The document inflates to more than/],
    ["points 500 entries at one 8 MiB deflate stream", "overlapping", /share their data/],
    ["has 100,002 entries", "crowded", /more than 100,000 entries/],
  ])("refuses a DOCX that %s before LibreOffice opens it", async (_what, name, message) => {
    const res = await runOp("convert", { to: "pdf" }, [f[name]!], out());
    expect(errorCode(res)).toBe("limit_exceeded");
    expect((res as JobError).message).toMatch(message);
  });
});
