/**
 * convert between images and PDF on the real engines, checked with poppler (pdfinfo for page
 * sizes, pdfimages to pull the embedded images back out, pdftoppm to see the pages) and sharp
 * (the rendered images' sizes), none of which wrote the outputs.
 */
import { createHash } from "node:crypto";
import { readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { deflateSync } from "node:zlib";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { textPdf } from "../fixtures/pdf-fixtures.ts";
import { unzip } from "../helpers/convert-quality.ts";
import { errorCode, ok, runOp } from "../helpers/runner.ts";
import { pageHashes, pdfinfo, renderGray, run, tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
const out = (): string => path.join(dir, `out-${++n}`);
const sha = (b: Buffer): string => createHash("sha256").update(b).digest("hex");

/** A PNG whose header claims width × height pixels, with one tiny (wrong) IDAT: nothing to decode. */
function hugePngHeader(width: number, height: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, k) => {
    let c = k;
    for (let i = 0; i < 8; i++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer): number => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer): Buffer => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(Buffer.alloc(16))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

let jpeg: string;
let png: string;
let tiff: string;

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-convert-images-"));
  jpeg = path.join(dir, "photo.jpg");
  // 600 × 300 at 300 DPI: a 2 × 1 inch page (144 × 72 pt).
  await sharp({ create: { width: 600, height: 300, channels: 3, background: { r: 200, g: 30, b: 30 } } })
    .withMetadata({ density: 300 })
    .jpeg({ quality: 80 })
    .toFile(jpeg);
  png = path.join(dir, "logo.png");
  // 200 × 100 without a resolution: 96 DPI → 150 × 75 pt. Left half transparent.
  const rgba = Buffer.alloc(200 * 100 * 4);
  for (let y = 0; y < 100; y++) for (let x = 0; x < 200; x++) rgba.set([0, 0, 0, x < 100 ? 0 : 255], (y * 200 + x) * 4);
  await sharp(rgba, { raw: { width: 200, height: 100, channels: 4 } })
    .png()
    .toFile(png);
  tiff = path.join(dir, "scan.tiff");
  const frame = (v: number): Promise<Buffer> =>
    sharp({ create: { width: 100, height: 150, channels: 3, background: { r: v, g: v, b: v } } })
      .png()
      .toBuffer();
  await sharp([await frame(0), await frame(255)], { join: { animated: true } })
    .tiff()
    .toFile(tiff)
    .catch(async () => {
      // libvips without joined multi-page TIFF output: fall back to one frame.
      await sharp(await frame(0))
        .tiff()
        .toFile(tiff);
    });
});
afterAll(() => cleanup());

describe("images → PDF", () => {
  it("makes a page per image (per TIFF frame), sized by each image's resolution, the JPEG embedded byte for byte", async () => {
    const frames = (await sharp(tiff).metadata()).pages ?? 1;
    const res = ok(await runOp("convert", { to: "pdf" }, [jpeg, png, tiff], out()));
    const file = res.outputs[0]!.path;
    expect(res.outputs[0]!.pages).toBe(2 + frames);
    const sizes = (await run("pdfinfo", ["-f", "1", "-l", "9", file])).stdout.match(/^Page\s+\d+ size:\s+([\d.]+) x ([\d.]+)/gm)!;
    expect(sizes[0]).toMatch(/144 x 72/);
    expect(sizes[1]).toMatch(/150 x 75/);
    // pdfimages -j writes a DCT image out exactly as it is stored.
    const images = path.join(dir, "extracted");
    await run("pdfimages", ["-j", "-f", "1", "-l", "1", file, images]);
    const extracted = (await readdir(dir)).filter((f) => f.startsWith("extracted") && f.endsWith(".jpg"));
    expect(extracted).toHaveLength(1);
    expect(sha(await readFile(path.join(dir, extracted[0]!)))).toBe(sha(await readFile(jpeg)));
    // Transparency kept: the PNG's left half shows the white page, its right half black.
    const g = await renderGray(file, 2, 96);
    expect(g.data[50 * g.width + 40]!).toBeGreaterThan(240);
    expect(g.data[50 * g.width + 160]!).toBeLessThan(15);
  });

  it("fits images on A4, turned to their orientation", async () => {
    const file = ok(await runOp("convert", { to: "pdf", page_size: "a4" }, [jpeg], out())).outputs[0]!.path;
    expect((await pdfinfo(file))["Page size"]).toMatch(/^841\.89 x 595\.28/);
  });

  it("refuses a 100,000 × 100,000 image from its header, before decoding it", async () => {
    const huge = path.join(dir, "huge.png");
    await writeFile(huge, hugePngHeader(100_000, 100_000));
    const started = performance.now();
    const res = await runOp("convert", { to: "pdf" }, [huge], out());
    expect(errorCode(res)).toBe("limit_exceeded");
    expect((res as Error).message).toContain("100000 × 100000");
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it("refuses a mix of images and a document", async () => {
    const pdf = await textPdf(path.join(dir, "mixed.pdf"), 1, "x");
    expect(errorCode(await runOp("convert", { to: "pdf" }, [png, pdf], out()))).toBe("unsupported_input");
    expect(errorCode(await runOp("convert", { to: "docx" }, [png], out()))).toBe("unsupported_input");
  });
});

describe("PDF → images", () => {
  let doc: string;
  beforeAll(async () => {
    doc = await textPdf(path.join(dir, "doc.pdf"), 3, "page");
  });

  it("renders every page to PNG at the DPI and zips them in page order", async () => {
    const res = ok(await runOp("convert", { to: "png", dpi: 100 }, [doc], out()));
    expect(res.outputs).toHaveLength(1);
    expect(res.outputs[0]!.content_type).toBe("application/zip");
    const entries = unzip(await readFile(res.outputs[0]!.path));
    expect([...entries.keys()]).toEqual(["doc-1.png", "doc-2.png", "doc-3.png"]);
    const hashes: string[] = [];
    for (const b of entries.values()) {
      const meta = await sharp(b).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(["png", 417, 556]); // 300 × 400 pt at 100 DPI
      hashes.push(sha(b));
    }
    expect(new Set(hashes).size).toBe(3);
  });

  it("returns one page as the JPEG itself, at the quality asked", async () => {
    const low = ok(await runOp("convert", { to: "jpeg", pages: "2", quality: 20 }, [doc], out())).outputs;
    const high = ok(await runOp("convert", { to: "jpeg", pages: "2", quality: 95 }, [doc], out())).outputs;
    expect(low).toHaveLength(1);
    expect(low[0]!.filename).toBe("doc-2.jpg");
    expect((await sharp(low[0]!.path).metadata()).format).toBe("jpeg");
    expect(low[0]!.size).toBeLessThan(high[0]!.size);
    // The page rendered is page 2.
    const back = ok(await runOp("convert", { to: "pdf" }, [low[0]!.path], out())).outputs[0]!.path;
    expect(await pageHashes(back, 10)).toHaveLength(1);
  });

  it("refuses a rendering larger than the image pixel limit, and pages outside the document", async () => {
    expect(errorCode(await runOp("convert", { to: "png", dpi: 600 }, [doc], out(), { limits: { max_image_pixels: 1_000_000 } }))).toBe(
      "limit_exceeded",
    );
    expect(errorCode(await runOp("convert", { to: "png", pages: "4" }, [doc], out()))).toBe("invalid_page_range");
  });
});
