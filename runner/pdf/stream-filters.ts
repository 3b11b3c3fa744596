/**
 * How many bytes a PDF stream's filters (ISO 32000-1 §7.4) decode it to, counted without keeping
 * them and stopped as soon as a budget is spent: the decompressed-size cap (pdf-inflation.ts)
 * must cost no more CPU than the bytes it allows. The filters counted are the ones that expand
 * and that Folio's engines decode: FlateDecode, LZWDecode, RunLengthDecode, and the ASCII ones a
 * chain may start with. Image codecs (DCT, JPX, JBIG2, CCITT) end a chain: their decoding is
 * bounded by the image size checks (max_image_pixels).
 */
import { createInflate, createInflateRaw, inflateRawSync, inflateSync } from "node:zlib";

/** Filters by their full names and the abbreviations of inline images (§8.9.7, Table 94). */
const NAMES: Record<string, string> = {
  FlateDecode: "Flate",
  Fl: "Flate",
  LZWDecode: "LZW",
  LZW: "LZW",
  RunLengthDecode: "RunLength",
  RL: "RunLength",
  ASCIIHexDecode: "ASCIIHex",
  AHx: "ASCIIHex",
  ASCII85Decode: "ASCII85",
  A85: "ASCII85",
};

/** The filters of a chain that we count, up to the first we do not (an image codec, or unknown). */
export function countedFilters(filters: readonly string[]): string[] {
  const out: string[] = [];
  for (const f of filters) {
    const known = NAMES[f.replace(/^\//, "")];
    if (!known) break;
    out.push(known);
  }
  return out;
}

/** Inflated bytes of zlib (or, when the header is damaged, raw deflate) data, stopped past `budget`. */
function flateCount(data: Buffer, budget: number, raw = false): Promise<number> {
  return new Promise((resolve) => {
    const z = raw ? createInflateRaw() : createInflate();
    let n = 0;
    let settled = false;
    const done = (v: number): void => {
      if (settled) return;
      settled = true;
      resolve(v);
    };
    z.on("data", (chunk: Buffer) => {
      n += chunk.length;
      if (n > budget) {
        z.destroy();
        done(n);
      }
    });
    z.on("error", () => {
      // A wrong zlib header on good deflate data happens (§7.4.4 asks for zlib; some writers
      // omit it); anything else is damage, and what came out before it is what a reader gets.
      if (!raw && n === 0) flateCount(data, budget, true).then(done, () => done(n));
      else done(n);
    });
    z.on("end", () => done(n));
    z.end(data);
  });
}

/** The length of an LZW table entry: one byte for the first 256 codes, else as recorded when the entry was added. */
function entryLength(lengths: Uint16Array, code: number): number {
  return code < 256 ? 1 : lengths[code]!;
}

/**
 * LZW (§7.4.4.2): 9- to 12-bit codes, 256 clears the table, 257 ends; EarlyChange 1 (the default)
 * widens codes one entry early. Counting needs only each table entry's length, not its bytes.
 */
function lzwCount(data: Buffer, budget: number, earlyChange = 1): number {
  const lengths = new Uint16Array(4096);
  let next = 258;
  let width = 9;
  let prev = -1;
  let n = 0;
  let bits = 0;
  let acc = 0;
  for (const byte of data) {
    acc = ((acc << 8) | byte) >>> 0;
    bits += 8;
    while (bits >= width) {
      const code = (acc >>> (bits - width)) & ((1 << width) - 1);
      bits -= width;
      acc &= (1 << bits) - 1;
      if (code === 256) {
        next = 258;
        width = 9;
        prev = -1;
        continue;
      }
      if (code === 257) return n;
      const len = code < next ? entryLength(lengths, code) : prev >= 0 ? entryLength(lengths, prev) + 1 : 0;
      if (len === 0) return n; // a code that cannot come yet: damaged data ends here
      n += len;
      if (n > budget) return n;
      if (prev >= 0 && next < 4096) lengths[next++] = entryLength(lengths, prev) + 1;
      prev = code;
      if (next + earlyChange >= 1 << width && width < 12) width++;
    }
  }
  return n;
}

/** RunLength (§7.4.5): a length byte, then that many literal bytes or one byte repeated. */
function runLengthCount(data: Buffer, budget: number): number {
  let n = 0;
  for (let i = 0; i < data.length && n <= budget;) {
    const len = data[i]!;
    if (len === 128) break;
    if (len < 128) {
      n += len + 1;
      i += len + 2;
    } else {
      n += 257 - len;
      i += 2;
    }
  }
  return n;
}

/** ASCIIHex (§7.4.2) and ASCII85 (§7.4.3) decoded in full: they only ever shrink data. */
function asciiDecode(kind: "ASCIIHex" | "ASCII85", data: Buffer): Buffer {
  const text = data.toString("latin1");
  if (kind === "ASCIIHex") {
    const hex = text.split(">")[0]!.replace(/[^0-9A-Fa-f]/g, "");
    return Buffer.from(hex.length % 2 ? `${hex}0` : hex, "hex");
  }
  const body = text
    .replace(/^\s*<~/, "")
    .split("~>")[0]!
    .replace(/\s/g, "");
  const out: number[] = [];
  for (let i = 0; i < body.length;) {
    if (body[i] === "z") {
      out.push(0, 0, 0, 0);
      i++;
      continue;
    }
    const group = body.slice(i, i + 5);
    i += 5;
    let v = 0;
    for (let k = 0; k < 5; k++) v = v * 85 + ((k < group.length ? group.charCodeAt(k) : 117) - 33);
    const bytes = [(v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255];
    out.push(...bytes.slice(0, Math.max(0, group.length - 1)));
  }
  return Buffer.from(out);
}

/**
 * Streams up to this size are inflated in one synchronous call, bounded by the budget: most
 * streams of a document are this small, and a stream per call costs far less than a zlib stream
 * object each (a 117-page LaTeX book: 866 streams, 1.6 s → a tenth of it).
 */
const SMALL = 256 * 1024;
/** zlib never inflates more than 1,032 bytes from one: a small stream is counted whole below this. */
const SYNC_CAP = SMALL * 1032 + 1;

function flateCountSync(data: Buffer, budget: number): Promise<number> {
  const max = Math.min(budget + 1, SYNC_CAP);
  for (const raw of [false, true]) {
    try {
      const out = raw ? inflateRawSync(data, { maxOutputLength: max }) : inflateSync(data, { maxOutputLength: max });
      return Promise.resolve(out.length);
    } catch (err) {
      if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") return Promise.resolve(max);
    }
  }
  // Damaged data: the streaming count gives what came out before the damage, as a reader sees it.
  return flateCount(data, budget);
}

/** Largest intermediate result of a chain kept in memory ([/FlateDecode /FlateDecode] and the like). */
const MAX_INTERMEDIATE = 256 * 1024 * 1024;

/**
 * Bytes `data` decodes to through `filters` (names as countedFilters returns them), or a number
 * above `budget` as soon as it is certain to pass it. Every stage but the last is decoded in
 * memory; the last is only counted.
 */
export async function decodedSize(data: Buffer, filters: readonly string[], budget: number): Promise<number> {
  let cur = data;
  for (const [i, f] of filters.entries()) {
    const last = i === filters.length - 1;
    if (f === "ASCIIHex" || f === "ASCII85") {
      cur = asciiDecode(f, cur);
      if (last) return cur.length;
      continue;
    }
    if (last) {
      if (f === "Flate") return cur.length <= SMALL ? flateCountSync(cur, budget) : flateCount(cur, budget);
      if (f === "LZW") return lzwCount(cur, budget);
      return runLengthCount(cur, budget);
    }
    // An expanding stage that another filter follows: decoded whole, within the smaller bound.
    const cap = Math.min(budget, MAX_INTERMEDIATE);
    if (f !== "Flate") return cur.length; // LZW or RunLength inside a chain: never seen in real files
    try {
      cur = inflateSync(cur, { maxOutputLength: cap + 1 });
    } catch (err) {
      // Past the bound: a chain that inflates twice by that much is a bomb whatever the budget.
      if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") return budget + 1;
      return cur.length;
    }
  }
  return cur.length;
}
