/**
 * Raster inputs (PNG, JPEG, TIFF) read with sharp (libvips). Their size comes from the file's
 * header, never from decoding it: an image of 100,000 × 100,000 pixels is refused with
 * limit_exceeded before a single pixel is decoded, and decoding itself is bounded by the same
 * limit (sharp's limitInputPixels), so a header that lies cannot get past it either.
 */
import sharp, { type Metadata } from "sharp";
import { JobError } from "../../core/errors.ts";
import type { PdfImage } from "../pdf/pdf-writer.ts";

export interface RasterInfo {
  width: number;
  height: number;
  /** Frames (a multi-page TIFF has several). */
  pages: number;
  /** Pixels per inch from the file, when it says. */
  dpi: number | null;
  format: string;
}

/** Width, height of all frames and of one, upright (per the EXIF orientation); 0 when the header does not say. */
function frameSize(meta: Metadata): { width: number; height: number; frameHeight: number } {
  const width = meta.autoOrient?.width ?? meta.width ?? 0;
  const height = meta.autoOrient?.height ?? meta.height ?? 0;
  // For a multi-page file sharp reports the height of all frames stacked (pageHeight is one frame).
  const frameHeight = meta.pages && meta.pages > 1 && meta.pageHeight ? meta.pageHeight : height;
  return { width, height, frameHeight };
}

/** The file's density when it is a plausible pixels-per-inch figure. */
function densityDpi(meta: Metadata): number | null {
  return meta.density && meta.density > 1 && meta.density < 10_000 ? meta.density : null;
}

/** Reads an image's header and checks its pixels against `maxPixels` (per frame). */
export async function rasterInfo(file: string, filename: string, maxPixels: number): Promise<RasterInfo> {
  let meta: Metadata;
  try {
    meta = await sharp(file, { limitInputPixels: false }).metadata();
  } catch {
    throw new JobError("unsupported_input", `Input "${filename}" is not a readable image.`);
  }
  const { width, height, frameHeight } = frameSize(meta);
  if (!(width > 0 && height > 0)) throw new JobError("unsupported_input", `Input "${filename}" is not a readable image.`);
  if (width * frameHeight > maxPixels) {
    throw new JobError(
      "limit_exceeded",
      `Input "${filename}" is ${width} × ${frameHeight} pixels; the limit is ${maxPixels.toLocaleString("en-US")} pixels.`,
    );
  }
  return { width, height: frameHeight, pages: meta.pages ?? 1, dpi: densityDpi(meta), format: meta.format ?? "unknown" };
}

/** A JPEG already upright in gray, RGB or CMYK: PDF's DCTDecode takes its bytes as they are. */
function passesThrough(meta: Metadata): meta is Metadata & { channels: 1 | 3 | 4 } {
  const upright = !meta.orientation || meta.orientation === 1;
  return meta.format === "jpeg" && upright && (meta.channels === 1 || meta.channels === 3 || meta.channels === 4);
}

/** Splits interleaved colour + alpha pixels into the colour samples and a soft mask (null when every pixel is opaque). */
function splitAlpha(data: Buffer, ch: number, colour: number, n: number): { pixels: Buffer; alpha: Buffer | null } {
  const pixels = Buffer.alloc(n * colour);
  const alpha = Buffer.alloc(n);
  let opaque = true;
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < colour; c++) pixels[i * colour + c] = data[i * ch + c]!;
    const a = data[i * ch + colour]!;
    alpha[i] = a;
    if (a !== 255) opaque = false;
  }
  return { pixels, alpha: opaque ? null : alpha };
}

/**
 * One frame of an image as a PDF image: a plain JPEG passes through untouched (DCTDecode), any
 * other image is decoded (upright, per its EXIF orientation) to 8-bit gray or RGB plus alpha.
 */
export async function loadPdfImage(file: string, maxPixels: number, page = 0): Promise<PdfImage> {
  const img = sharp(file, { limitInputPixels: maxPixels, page });
  const meta = await img.metadata();
  if (passesThrough(meta)) {
    const { readFile } = await import("node:fs/promises");
    const components = meta.channels;
    return { kind: "jpeg", data: await readFile(file), width: meta.width, height: meta.height, components };
  }
  const gray = meta.channels !== undefined && meta.channels <= 2 && meta.space !== "cmyk";
  const oriented = img.rotate();
  const base = gray ? oriented.toColourspace("b-w") : oriented.toColourspace("srgb");
  const { data, info } = await base.raw({ depth: "uchar" }).toBuffer({ resolveWithObject: true });
  const ch = info.channels;
  const colour = gray ? 1 : 3;
  const hasAlpha = ch === colour + 1;
  const n = info.width * info.height;
  if (!hasAlpha) return { kind: "raw", pixels: data, channels: colour, alpha: null, width: info.width, height: info.height };
  const { pixels, alpha } = splitAlpha(data, ch, colour, n);
  return { kind: "raw", pixels, channels: colour, alpha, width: info.width, height: info.height };
}
