/**
 * Which images the lossy pass may touch, and to what size. Only what can be decoded and
 * re-encoded without changing its meaning qualifies: 8-bit Gray or RGB samples (Device, Cal or
 * ICC-based; ISO 32000-1 §8.6), with the default /Decode, stored raw, with generalized filters or
 * as a parameterless DCT (JPEG). CMYK, Lab, Indexed, Separation, DeviceN, 1/2/4/16-bit samples,
 * stencil masks, colour-key masks, JPX, JBIG2 and CCITT are left exactly as they are.
 */
import type { Size } from "../../engines/images.ts";
import { deref, dictAt, isRef, nameOf, type JsonDict, type PdfObjects } from "../../pdf/pdf-json.ts";

/** Downsample only above 1.5× the target resolution, like Acrobat and Ghostscript do. */
const DOWNSAMPLE_THRESHOLD = 1.5;

/** Filters qpdf's generalized decode level undoes (ISO 32000-1 Table 6, with their abbreviations). */
const GENERAL_FILTERS = new Set(["FlateDecode", "Fl", "LZWDecode", "LZW", "ASCII85Decode", "A85", "ASCIIHexDecode", "AHx"]);

export interface Candidate {
  ref: string;
  dict: JsonDict;
  width: number;
  height: number;
  components: 1 | 3;
  /** Bytes of the stream in the file. */
  stored: number;
  smask: string | null;
}

/** Colour components of an image colour space we can re-encode (1 or 3), else null. */
function componentsOf(objs: PdfObjects, cs: JsonDict[string] | undefined): 1 | 3 | null {
  const v = deref(objs, cs);
  const name = nameOf(v) ?? (Array.isArray(v) ? nameOf(v[0]) : null);
  if (name === "DeviceGray" || name === "CalGray") return 1;
  if (name === "DeviceRGB" || name === "CalRGB") return 3;
  if (name === "ICCBased" && Array.isArray(v)) {
    const n = dictAt(objs, v[1])?.["/N"];
    return n === 1 || n === 3 ? n : null;
  }
  return null; // CMYK, Lab, Indexed, Separation, DeviceN, Pattern: left alone
}

/** Decode arrays other than the default [0 1 …] invert or remap samples: not handled. */
function defaultDecode(objs: PdfObjects, v: JsonDict[string] | undefined, components: number): boolean {
  const d = deref(objs, v);
  if (d === undefined || d === null) return true;
  return Array.isArray(d) && d.length === 2 * components && d.every((x, i) => x === i % 2);
}

/** Only generalized filters, optionally ending in a DCTDecode without parameters. */
function decodableFilters(objs: PdfObjects, dict: JsonDict): boolean {
  const f = deref(objs, dict["/Filter"]);
  const filters = f === undefined || f === null ? [] : Array.isArray(f) ? f.map((x) => nameOf(deref(objs, x))) : [nameOf(f)];
  const parms = deref(objs, dict["/DecodeParms"]);
  return filters.every((name, i) => {
    if (name === "DCTDecode" || name === "DCT") {
      const p = Array.isArray(parms) ? deref(objs, parms[i]) : parms;
      return i === filters.length - 1 && (p === undefined || p === null);
    }
    return name !== null && GENERAL_FILTERS.has(name);
  });
}

/** Whether `v` is a usable pixel dimension (a positive integer). */
const isDimension = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 1;

/** An 8-bit sampled image (not a stencil mask) of at most `maxPixels`: its size, else null. */
function sampledSize(objs: PdfObjects, dict: JsonDict, maxPixels: number): Size | null {
  const [w, h, bpc] = [deref(objs, dict["/Width"]), deref(objs, dict["/Height"]), deref(objs, dict["/BitsPerComponent"])];
  if (!isDimension(w) || !isDimension(h)) return null;
  if (w * h > maxPixels || bpc !== 8 || deref(objs, dict["/ImageMask"]) === true) return null;
  return { width: w, height: h };
}

/**
 * Whether the image's masking survives resampling: no colour-key mask (it needs exact samples),
 * and a soft mask, if any, given by reference and without /Matte (pre-multiplied colours).
 */
function maskingAllows(objs: PdfObjects, dict: JsonDict): boolean {
  if (Array.isArray(deref(objs, dict["/Mask"]))) return false;
  const smask = dict["/SMask"];
  return smask === undefined || (isRef(smask) && dictAt(objs, smask)?.["/Matte"] === undefined);
}

/** The image as a candidate for recompression, or null when it must be left alone. */
export function candidateOf(objs: PdfObjects, ref: string, dict: JsonDict, maxPixels: number): Candidate | null {
  const size = sampledSize(objs, dict, maxPixels);
  if (!size) return null;
  const components = componentsOf(objs, dict["/ColorSpace"]);
  if (!components || !defaultDecode(objs, dict["/Decode"], components) || !decodableFilters(objs, dict)) return null;
  if (!maskingAllows(objs, dict)) return null;
  const smask = dict["/SMask"];
  const stored = deref(objs, dict["/Length"]);
  return {
    ref,
    dict,
    width: size.width,
    height: size.height,
    components,
    stored: typeof stored === "number" ? stored : Infinity,
    smask: isRef(smask) ? smask : null,
  };
}

/** The size to downsample to, or null when the image is already near or below the target. */
export function targetSize(width: number, height: number, use: { widthIn: number; heightIn: number }, dpi: number): Size | null {
  const scale = Math.max((use.widthIn * dpi) / width, (use.heightIn * dpi) / height);
  if (!(scale > 0) || scale * DOWNSAMPLE_THRESHOLD >= 1) return null;
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/** The soft mask may be resampled along with its image when it is a plain 8-bit gray image used only there. */
export function maskCanFollow(objs: PdfObjects, c: Candidate, usedBy: Map<string, Set<string>>, maxPixels: number): boolean {
  const m = c.smask ? dictAt(objs, c.smask) : null;
  if (!m || !c.smask || usedBy.get(c.smask)?.size !== 1) return false;
  const [w, h] = [deref(objs, m["/Width"]), deref(objs, m["/Height"])];
  if (typeof w !== "number" || typeof h !== "number" || w * h > maxPixels) return false;
  return (
    deref(objs, m["/BitsPerComponent"]) === 8 &&
    componentsOf(objs, m["/ColorSpace"]) === 1 &&
    defaultDecode(objs, m["/Decode"], 1) &&
    decodableFilters(objs, m)
  );
}
