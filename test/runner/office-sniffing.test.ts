/**
 * Input sniffing accepts the Office files LibreOffice opens (issue #13): real LibreOffice outputs
 * (DOCX, XLSX, PPTX, ODT, ODS, ODP, DOC, XLS, PPT), rewritten the ways other producers write zips
 * — backslashes in entry names, entries in another order, sizes in data descriptors, ZIP64 — each
 * judged by the runner and by the API's head-and-tail sniffing as the kind it is; the ones
 * LibreOffice can then read are converted (backslashed names are rewritten for it first).
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SNIFF_BYTES, SNIFF_TAIL_BYTES, sniff } from "../../core/sniff.ts";
import { sniffFile } from "../../runner/engines/office-zip.ts";
import { ok, runOp } from "../helpers/runner.ts";
import { pdftotext, tmpDir } from "../helpers/tools.ts";
import { buildZip, readZip, type BuildEntry, type BuildOptions } from "../helpers/zip-builder.ts";

const execFileP = promisify(execFile);
let dir: string;
let cleanup: () => Promise<void>;
const real: Record<string, string> = {};

const FODT = `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.text">
<office:body><office:text><text:p>Sniffing ledger Halloran</text:p></office:text></office:body></office:document>`;
const FODS = `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.spreadsheet">
<office:body><office:spreadsheet><table:table table:name="S"><table:table-row><table:table-cell><text:p>Sniffing ledger Halloran</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet></office:body></office:document>`;
const FODP = `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.presentation">
<office:body><office:presentation><draw:page draw:name="p1"><draw:frame svg:x="2cm" svg:y="2cm" svg:width="20cm" svg:height="3cm"><draw:text-box><text:p>Sniffing ledger Halloran</text:p></draw:text-box></draw:frame></draw:page></office:presentation></office:body></office:document>`;

/** LibreOffice converts `src` to `fmt` (one soffice run per format, a private profile). */
async function convert(src: string, fmt: string): Promise<string> {
  const profile = path.join(dir, `profile-${fmt}`);
  await execFileP(
    "soffice",
    [`-env:UserInstallation=file://${profile}`, "--headless", "--norestore", "--convert-to", fmt, "--outdir", dir, src],
    {
      timeout: 180_000,
    },
  );
  await rm(profile, { recursive: true, force: true });
  return path.join(dir, `${path.basename(src, path.extname(src))}.${fmt}`);
}

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-sniff-"));
  const src = path.join(dir, "src");
  await mkdir(src);
  const sources = { writer: FODT, calc: FODS, impress: FODP } as const;
  for (const [name, text] of Object.entries(sources))
    await writeFile(path.join(src, `${name}.f${name === "writer" ? "odt" : name === "calc" ? "ods" : "odp"}`), text);
  const jobs: [keyof typeof sources, string][] = [
    ["writer", "docx"],
    ["writer", "odt"],
    ["writer", "doc"],
    ["calc", "xlsx"],
    ["calc", "ods"],
    ["calc", "xls"],
    ["impress", "pptx"],
    ["impress", "odp"],
    ["impress", "ppt"],
  ];
  for (let i = 0; i < jobs.length; i += 3) {
    await Promise.all(
      jobs.slice(i, i + 3).map(async ([name, fmt]) => {
        const ext = name === "writer" ? "fodt" : name === "calc" ? "fods" : "fodp";
        real[fmt] = await convert(path.join(src, `${name}.${ext}`), fmt);
      }),
    );
  }
  real.fodt = path.join(src, "writer.fodt");
}, 600_000);
afterAll(() => cleanup());

const variants: [string, (e: BuildEntry[]) => BuildEntry[], BuildOptions][] = [
  ["as LibreOffice wrote it, rewritten", (e) => e, {}],
  ["with backslashes in its entry names", (e) => e.map((x) => ({ ...x, name: x.name.replace(/\//g, "\\") })), {}],
  ["with its entries in reverse order", (e) => [...e].reverse(), {}],
  ["with sizes in data descriptors", (e) => e, { dataDescriptors: true }],
  ["with ZIP64 records", (e) => e, { zip64: true }],
];
const ZIPS = ["docx", "xlsx", "pptx", "odt", "ods", "odp"] as const;
const kindOf = (fmt: string): string => fmt;

describe("Office sniffing", () => {
  it.each(ZIPS.flatMap((fmt) => variants.map(([what, f, o]) => [fmt, what, f, o] as const)))(
    "takes a %s %s as what it is",
    async (fmt, what, transform, opts) => {
      const file = path.join(dir, `${fmt}-${what.replace(/\W+/g, "-")}.bin`);
      const bytes = buildZip(transform(readZip(real[fmt]!)), opts);
      await writeFile(file, bytes);
      expect(sniffFile(file, bytes.length, "upload.bin", 1e8)).toBe(kindOf(fmt));
      // What the API sees of an upload: its first and its last bytes (api/http/uploads.ts).
      const tail = { bytes: bytes.subarray(-SNIFF_TAIL_BYTES), size: bytes.length };
      expect(sniff(bytes.subarray(0, SNIFF_BYTES), "upload.bin", tail)).toBe(kindOf(fmt));
    },
  );

  it.each(["doc", "xls", "ppt"])("tells a %s by its streams, whatever its name", async (fmt) => {
    const file = path.join(dir, `renamed-${fmt}.doc`);
    await copyFile(real[fmt]!, file);
    const size = (await readFile(file)).length;
    expect(sniffFile(file, size, "scan 2024.doc", 1e8)).toBe(fmt);
  });

  it("takes a flat ODF document (.fodt)", async () => {
    expect(sniff(await readFile(real.fodt!), "notes.xml")).toBe("odt");
  });

  it.each([
    ["xlsx", "with backslashes in its entry names (rewritten for LibreOffice, which misses such parts)", 1, {}],
    ["docx", "with its entries in reverse order and sizes in data descriptors", 2, { dataDescriptors: true }],
    ["pptx", "with backslashes in its entry names", 1, {}],
  ] as const)("converts a %s %s", { timeout: 300_000 }, async (fmt, _what, v, opts) => {
    const transform = variants[v]![1];
    const file = path.join(dir, `convert-${fmt}.${fmt}`);
    await writeFile(file, buildZip(transform(readZip(real[fmt]!)), opts));
    const res = ok(await runOp("convert", { to: "pdf" }, [file], path.join(dir, `out-${fmt}`)));
    expect(await pdftotext(res.outputs[0]!.path)).toContain("Sniffing ledger Halloran");
  });
});
