/**
 * The lossy half of compress: find every image XObject's largest placement, downsample the ones
 * above the target resolution and re-encode them, and describe the result as a patch for
 * `qpdf --update-from-json`. Only image streams change; every other object (text, fonts, forms,
 * annotations, outlines, structure) is left to qpdf exactly as it was read.
 */
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../../../core/logger.ts";
import { ExecAborted } from "../../engines/exec.ts";
import { measurePlacements, type Placements } from "./image-placement.ts";
import { candidateOf, maskCanFollow, targetSize, type Candidate } from "./image-plan.ts";
import { reencodeImage, resampleMask, type Encoded, type Size } from "../../engines/images.ts";
import { referrers } from "../../pdf/page-graph.ts";
import {
  deref,
  dictAt,
  dumpObjects,
  extractStreams,
  nameOf,
  readStreams,
  writePatch,
  type ExtractedStream,
  type JsonDict,
  type PdfObjects,
  type StreamUpdate,
} from "../../pdf/pdf-json.ts";
import type { QpdfContext } from "../../engines/qpdf.ts";

export interface ImagePassOptions {
  qpdf: QpdfContext;
  input: string;
  /** Page count qpdf reported for the input. */
  pages: number;
  dpi: number;
  quality: number;
  /** Largest image (width × height) to decode; larger ones are left as they are. */
  maxPixels: number;
  log: Logger;
}

export interface ImagePassResult {
  /** A patch for `qpdf --update-from-json`, or null when no image changed. */
  patch: string | null;
  /** Image XObjects in the document. */
  images: number;
  recompressed: number;
}

/** Bounds that keep one job's memory and disk in check. */
const MAX_OBJECTS_JSON = 128 * 1024 * 1024;
/** Stored bytes of content streams read per qpdf run, and the most JSON such a run may print. */
const MAX_CONTENT_BATCH = 8 * 1024 * 1024;
const MAX_CONTENT_JSON = 256 * 1024 * 1024;
const MAX_BATCH_BYTES = 256 * 1024 * 1024;
/** Images smaller than this in the file are not worth a decode. */
const MIN_IMAGE_BYTES = 4096;

/**
 * The new stream dictionary: every entry of the old one (colour space, soft mask, /Intent,
 * /Interpolate, /OC, /Metadata, /StructParent …) except those describing the old encoding.
 */
function newDict(old: JsonDict, enc: Encoded): JsonDict {
  const dict: JsonDict = {};
  const drop = new Set(["/Filter", "/DecodeParms", "/Length", "/Width", "/Height", "/BitsPerComponent", "/Decode", "/DL"]);
  for (const [k, v] of Object.entries(old)) if (!drop.has(k)) dict[k] = v;
  Object.assign(dict, { "/Filter": `/${enc.filter}`, "/Width": enc.width, "/Height": enc.height, "/BitsPerComponent": 8 });
  if (enc.decodeParms) dict["/DecodeParms"] = enc.decodeParms;
  return dict;
}

function abortIfNeeded(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new ExecAborted("image pass aborted");
}

/** The image XObjects worth a decode (see candidateOf), and how many images the document has. */
function findCandidates(objs: PdfObjects, maxPixels: number): { candidates: Map<string, Candidate>; images: number } {
  const candidates = new Map<string, Candidate>();
  let images = 0;
  for (const [ref, obj] of objs.objects) {
    if (!obj.stream || nameOf(obj.stream.dict["/Subtype"]) !== "Image") continue;
    images++;
    const c = candidateOf(objs, ref, obj.stream.dict, maxPixels);
    if (c && c.stored >= MIN_IMAGE_BYTES) candidates.set(ref, c);
  }
  return { candidates, images };
}

/** Each candidate that is placed, and only where it can be measured: its target size and whether its soft mask follows. */
function planImages(objs: PdfObjects, candidates: Map<string, Candidate>, placements: Placements, o: ImagePassOptions): Planned[] {
  const plan: Planned[] = [];
  const maskUsers = referrers(objs, new Set([...candidates.values()].flatMap((c) => (c.smask ? [c.smask] : []))));
  for (const c of candidates.values()) {
    const use = placements.uses.get(c.ref);
    if (!use || placements.unsafe.has(c.ref)) continue;
    const target = targetSize(c.width, c.height, use, o.dpi);
    plan.push({ c, target, mask: target !== null && maskCanFollow(objs, c, maskUsers, o.maxPixels) });
  }
  return plan;
}

/** The plan in batches whose decoded samples stay within MAX_BATCH_BYTES (a larger image goes alone). */
function batches(plan: readonly Planned[]): Planned[][] {
  const out: Planned[][] = [];
  let batch: Planned[] = [];
  let batchBytes = 0;
  for (const p of plan) {
    const bytes = p.c.width * p.c.height * (p.c.components + (p.mask ? 1 : 0));
    if (batch.length && batchBytes + bytes > MAX_BATCH_BYTES) {
      out.push(batch);
      batch = [];
      batchBytes = 0;
    }
    batch.push(p);
    batchBytes += bytes;
  }
  if (batch.length) out.push(batch);
  return out;
}

/** Extracts one batch's streams with one qpdf run and re-encodes them, appending to `updates`; returns how many images changed. */
async function reencodeBatch(
  objs: PdfObjects,
  batch: readonly Planned[],
  dir: string,
  o: ImagePassOptions,
  updates: StreamUpdate[],
): Promise<number> {
  const q = o.qpdf;
  const refs = batch.flatMap((p) => (p.mask && p.c.smask ? [p.c.ref, p.c.smask] : [p.c.ref]));
  const streams = await extractStreams(q, o.input, refs, dir);
  let recompressed = 0;
  try {
    for (const p of batch) {
      abortIfNeeded(q.signal);
      const done = await reencodePlanned(objs, p, streams, dir, updates.length, o);
      if (done.length) recompressed++;
      updates.push(...done);
    }
  } finally {
    for (const s of streams.values()) await rm(s.file, { force: true });
  }
  return recompressed;
}

/** Runs the image pass; returns the patch to apply (or null) and counts. */
export async function recompressImages(o: ImagePassOptions): Promise<ImagePassResult> {
  const q = o.qpdf;
  const objs = await dumpObjects(q, o.input, MAX_OBJECTS_JSON);
  if (!objs) return { patch: null, images: 0, recompressed: 0 };
  const { candidates, images } = findCandidates(objs, o.maxPixels);
  if (candidates.size === 0) return { patch: null, images, recompressed: 0 };

  const dir = path.join(q.work, "images");
  await mkdir(dir, { recursive: true });
  const placements = await measurePlacements({
    objs,
    candidates: new Set(candidates.keys()),
    expectedPages: o.pages,
    loadContent: (refs) => loadContent(q, o.input, objs, refs),
  });
  if (!placements) {
    o.log.debug("Left images alone: page tree or content not measurable");
    return { patch: null, images, recompressed: 0 };
  }

  const updates: StreamUpdate[] = [];
  let recompressed = 0;
  for (const batch of batches(planImages(objs, candidates, placements, o)))
    recompressed += await reencodeBatch(objs, batch, dir, o, updates);

  if (updates.length === 0) return { patch: null, images, recompressed: 0 };
  const patch = path.join(q.work, "images-patch.json");
  await writePatch(patch, objs.header, updates);
  return { patch, images, recompressed };
}

interface Planned {
  c: Candidate;
  target: Size | null;
  /** Resample the soft mask along with the image. */
  mask: boolean;
}

/** Which of qpdf's outputs the extracted data is: raw samples, a JPEG, or something we skip. */
function extractedKind(objs: PdfObjects, s: ExtractedStream): "raw" | "jpeg" | null {
  const f = deref(objs, s.dict["/Filter"]);
  if (f === undefined || f === null) return "raw";
  const name = nameOf(f) ?? (Array.isArray(f) && f.length === 1 ? nameOf(f[0]) : null);
  return name === "DCTDecode" || name === "DCT" ? "jpeg" : null;
}

/** Re-encodes one planned image (and its soft mask): the stream updates, or none. */
async function reencodePlanned(
  objs: PdfObjects,
  p: Planned,
  streams: Map<string, ExtractedStream>,
  dir: string,
  seq: number,
  o: ImagePassOptions,
): Promise<StreamUpdate[]> {
  const s = streams.get(p.c.ref);
  const kind = s ? extractedKind(objs, s) : null;
  if (!s || !kind) return [];
  const enc = await reencodeImage(
    { file: s.file, kind, width: p.c.width, height: p.c.height, components: p.c.components },
    { target: p.target, quality: o.quality, maxPixels: o.maxPixels, currentBytes: p.c.stored },
  );
  if (!enc) return [];
  const out: StreamUpdate[] = [{ ref: p.c.ref, datafile: path.join(dir, `new-${seq}`), dict: newDict(p.c.dict, enc) }];
  await writeFile(out[0]!.datafile, enc.data);
  const m = p.mask && p.c.smask ? streams.get(p.c.smask) : undefined;
  const maskDict = p.c.smask ? dictAt(objs, p.c.smask) : null;
  if (!m || !maskDict || !p.c.smask || extractedKind(objs, m) !== "raw") return out;
  const size = sizeOf(objs, maskDict);
  const menc = size ? await resampleMask(m.file, size, { width: enc.width, height: enc.height }, o.maxPixels) : null;
  if (menc) {
    out.push({ ref: p.c.smask, datafile: path.join(dir, `new-${seq}-mask`), dict: newDict(maskDict, menc) });
    await writeFile(out[1]!.datafile, menc.data);
  }
  return out;
}

/**
 * Decoded content streams, read in batches of bounded size: qpdf's inline JSON (base64) keeps them
 * off the disk, and a batch whose decoded data would exceed the bound (a decompression bomb) just
 * comes back empty, which leaves the images it could paint untouched.
 */
async function loadContent(q: QpdfContext, input: string, objs: PdfObjects, refs: string[]): Promise<Map<string, Uint8Array | null>> {
  const out = new Map<string, Uint8Array | null>();
  let batch: string[] = [];
  let stored = 0;
  const flush = async (): Promise<void> => {
    const got = await readStreams(q, input, batch, MAX_CONTENT_JSON);
    for (const r of batch) out.set(r, got.get(r) ?? null);
    batch = [];
    stored = 0;
  };
  for (const ref of refs) {
    const len = deref(objs, objs.objects.get(ref)?.stream?.dict["/Length"]);
    const bytes = typeof len === "number" ? len : 0;
    if (batch.length && stored + bytes > MAX_CONTENT_BATCH) await flush();
    batch.push(ref);
    stored += bytes;
  }
  if (batch.length) await flush();
  return out;
}

function sizeOf(objs: PdfObjects, dict: JsonDict): Size | null {
  const w = deref(objs, dict["/Width"]);
  const h = deref(objs, dict["/Height"]);
  return typeof w === "number" && typeof h === "number" && Number.isInteger(w) && Number.isInteger(h) && w > 0 && h > 0
    ? { width: w, height: h }
    : null;
}
