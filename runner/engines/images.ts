/**
 * Image re-encoding with sharp (libvips + mozjpeg): downsample one image to a target size and
 * encode it as JPEG (photographs) or as Flate with PNG predictors (graphics, soft masks).
 * Works on the samples exactly as the PDF stores them: no colour management is applied (sharp's
 * ICC handling is off, which keeps a JPEG's embedded profile from being converted to sRGB),
 * because the PDF's /ColorSpace, not the JPEG's markers, defines the colours (ISO 32000-1 §8.9.5).
 * Everything here either returns a smaller encoding or null; it never throws for a bad image.
 */
import { readFile } from "node:fs/promises";
import sharp, { type OutputInfo, type Sharp } from "sharp";

// Every image is read once: libvips' operation cache would only hold memory.
sharp.cache(false);

export interface Size {
  width: number;
  height: number;
}

/** One image's samples, as qpdf extracted them. */
export interface ImageSource extends Size {
  file: string;
  /** "jpeg": the file is a JPEG (the stream's DCTDecode data); "raw": 8-bit samples, row by row. */
  kind: "jpeg" | "raw";
  components: 1 | 3;
}

export interface Encoded extends Size {
  data: Buffer;
  filter: "DCTDecode" | "FlateDecode";
  /** For Flate with PNG predictors (ISO 32000-1 §7.4.4.4, Table 8). */
  decodeParms?: { "/Predictor": number; "/Colors": number; "/BitsPerComponent": number; "/Columns": number };
}

export interface EncodeOptions {
  /** Size to downsample to; null keeps the size (then only a cheaper encoding can win). */
  target: Size | null;
  quality: number;
  maxPixels: number;
  /** Bytes the image takes in the PDF now: the new encoding must be smaller. */
  currentBytes: number;
}

/**
 * Re-encoding a JPEG at the same size loses a generation of quality; only worth it when the saving
 * is real. Downsampled images just have to be smaller.
 */
const SAME_SIZE_GAIN = 0.85;

/**
 * True when the samples look like a photograph rather than a drawing: many distinct colours in a
 * sample of pixels. Charts, screenshots and line art have few and suffer from JPEG's ringing.
 */
export function looksPhotographic(data: Buffer, pixels: number, components: number): boolean {
  const step = Math.max(1, Math.floor(pixels / 65_536));
  const colours = new Set<number>();
  for (let p = 0; p < pixels; p += step) {
    const i = p * components;
    colours.add(components === 3 ? (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]! : data[i]!);
  }
  return components === 3 ? colours.size > 2048 : colours.size > 160;
}

function pipeline(
  input: Buffer | string,
  src: Size & { components: number },
  raw: boolean,
  o: EncodeOptions,
  kernel: "lanczos3" | "linear" = "lanczos3",
): Sharp {
  let img = raw
    ? sharp(input, { raw: { width: src.width, height: src.height, channels: src.components as 1 | 3 }, limitInputPixels: o.maxPixels })
    : sharp(input, { limitInputPixels: o.maxPixels, ignoreIcc: true, autoOrient: false });
  if (o.target) img = img.resize(o.target.width, o.target.height, { fit: "fill", kernel });
  // sharp writes three components unless told the result is gray.
  return src.components === 1 ? img.toColourspace("b-w") : img;
}

async function toJpeg(img: Sharp, quality: number): Promise<{ data: Buffer; info: OutputInfo }> {
  // mozjpeg's preset: trellis quantisation, its quantisation table 3 and optimised progressive
  // scans. Progressive JPEG is valid DCTDecode data since PDF 1.3 (PDF Reference 1.7 §3.3.7);
  // on the benchmark corpus it makes images 2–6 % smaller than baseline at the same SSIM, and at
  // the resolutions we write (≤ 200 DPI) its extra decoding memory is a few megabytes at most.
  return img.jpeg({ quality, mozjpeg: true }).toBuffer({ resolveWithObject: true });
}

/**
 * A zlib stream of PNG-predicted rows, taken from sharp's PNG: the IDAT chunks concatenated are
 * exactly what /FlateDecode with /Predictor 15 decodes (PNG spec §10, ISO 32000-1 §7.4.4.4).
 */
async function toPngFlate(img: Sharp, components: 1 | 3): Promise<Encoded | null> {
  const png = await img.png({ compressionLevel: 9, adaptiveFiltering: true, palette: false }).toBuffer();
  const idat: Buffer[] = [];
  let size: Size | null = null;
  for (let i = 8; i + 8 <= png.length;) {
    const len = png.readUInt32BE(i);
    const type = png.toString("latin1", i + 4, i + 8);
    const body = png.subarray(i + 8, i + 8 + len);
    if (type === "IHDR") {
      // 8-bit, gray (0) or RGB (2), not interlaced: otherwise the rows are not what PDF expects.
      const colourType = body[9];
      if (body[8] !== 8 || body[12] !== 0 || colourType !== (components === 1 ? 0 : 2)) return null;
      size = { width: body.readUInt32BE(0), height: body.readUInt32BE(4) };
    } else if (type === "IDAT") idat.push(body);
    i += 12 + len;
  }
  if (!size || idat.length === 0) return null;
  return {
    ...size,
    data: Buffer.concat(idat),
    filter: "FlateDecode",
    decodeParms: { "/Predictor": 15, "/Colors": components, "/BitsPerComponent": 8, "/Columns": size.width },
  };
}

async function readSamples(file: string, bytes: number): Promise<Buffer | null> {
  const data = await readFile(file);
  // Short data is a damaged stream: leave it alone. Extra bytes are ignored, as readers do.
  return data.length < bytes ? null : data.subarray(0, bytes);
}

/** Re-encodes one image; null when it cannot be done safely or would not be smaller. */
export async function reencodeImage(src: ImageSource, o: EncodeOptions): Promise<Encoded | null> {
  try {
    let encoded: Encoded | null;
    if (src.kind === "jpeg") {
      const meta = await sharp(src.file, { limitInputPixels: o.maxPixels }).metadata();
      // The JPEG must agree with the PDF's dictionary: same size, same number of components, and
      // not CMYK/YCCK (Adobe's inverted CMYK conventions are not worth the risk).
      if (meta.width !== src.width || meta.height !== src.height || meta.channels !== src.components || meta.space === "cmyk") return null;
      const { data, info } = await toJpeg(pipeline(src.file, src, false, o), o.quality);
      encoded = { data, width: info.width, height: info.height, filter: "DCTDecode" };
    } else {
      const samples = await readSamples(src.file, src.width * src.height * src.components);
      if (!samples) return null;
      if (looksPhotographic(samples, src.width * src.height, src.components)) {
        const { data, info } = await toJpeg(pipeline(samples, src, true, o), o.quality);
        encoded = { data, width: info.width, height: info.height, filter: "DCTDecode" };
      } else if (o.target) {
        encoded = await toPngFlate(pipeline(samples, src, true, o), src.components);
      } else {
        return null; // a drawing at its size: the lossless pass recompresses it
      }
    }
    if (!encoded) return null;
    const limit = o.target ? o.currentBytes : o.currentBytes * SAME_SIZE_GAIN;
    return encoded.data.length < limit ? encoded : null;
  } catch {
    return null; // undecodable, truncated or over the pixel limit: keep the original
  }
}

/**
 * Resamples an 8-bit gray soft mask to the size of its (resampled) image. A mask and its image
 * need not share a resolution (ISO 32000-1 §11.6.5.3), but keeping a full-size mask under a
 * downsampled image would waste most of the saving. Lossless (Flate) to keep edges clean.
 */
export async function resampleMask(file: string, src: Size, target: Size, maxPixels: number): Promise<Encoded | null> {
  try {
    const samples = await readSamples(file, src.width * src.height);
    if (!samples) return null;
    const o: EncodeOptions = { target, quality: 100, maxPixels, currentBytes: Infinity };
    // A triangle (linear) filter: no ringing around hard mask edges, and the smoother result
    // compresses a third smaller than Lanczos under PNG prediction.
    return await toPngFlate(pipeline(samples, { ...src, components: 1 }, true, o, "linear"), 1);
  } catch {
    return null;
  }
}
