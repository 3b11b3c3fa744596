/**
 * Office zips (OOXML, ODF) before LibreOffice sees them: what they are (sniffing with the whole
 * central directory at hand) and whether they are compression bombs (issue #10 item 6).
 *
 * The bomb check, in order of cost:
 *  1. the entry count (MAX_ZIP_ENTRIES; no Office document comes near it);
 *  2. entries whose data overlap (APPNOTE §4.3.6 lays entries one after another; the
 *     "non-recursive" bombs point thousands of entries at one deflate stream);
 *  3. the sizes the directory declares, added up, against the job's inflation allowance;
 *  4. the bytes really inflated, entry by entry, counted as they come and stopped the moment the
 *     allowance is spent — declared sizes may lie, and a stopped inflate costs no more CPU than
 *     the allowance.
 * The allowance is min(max_decompressed_bytes, max(64 MiB, max_decompression_ratio × file size)).
 */
import { closeSync, createReadStream, createWriteStream, openSync, readSync } from "node:fs";
import { pipeline } from "node:stream/promises";
import { ZipFile } from "yazl";
import { createInflateRaw } from "node:zlib";
import { JobError } from "../../core/errors.ts";
import type { RunnerLimits } from "../../core/schemas/job.ts";
import { SNIFF_BYTES, ole2Kind, sniff, zipKind, type DocKind } from "../../core/sniff.ts";
import { MAX_ZIP_ENTRIES, readZipDirectory, type ZipEntryInfo, type ZipRead } from "../../core/zip-directory.ts";
import { cfbDirectory } from "./office-encryption.ts";

/** Below this, any inflation is fine: small documents are not worth a ratio. */
export const INFLATION_FLOOR = 64 * 1024 * 1024;

/** Bytes one input may inflate to under the job's limits (see above). */
export function inflationAllowance(limits: Pick<RunnerLimits, "max_decompressed_bytes" | "max_decompression_ratio">, size: number): number {
  return Math.min(limits.max_decompressed_bytes, Math.max(INFLATION_FLOOR, limits.max_decompression_ratio * size));
}

export function inflationError(what: string, allowance: number): JobError {
  return new JobError(
    "limit_exceeded",
    `${what} inflates to more than ${allowance.toLocaleString("en-US")} bytes, the limit for a file of this size (a compression bomb?).`,
  );
}

/** Synchronous positional reads of an open file, as the zip directory reader wants them. */
function fileReader(fd: number, size: number): ZipRead {
  return (offset, length) => {
    if (offset < 0 || length < 0 || offset + length > size) return null;
    const buf = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const n = readSync(fd, buf, done, length - done, offset + done);
      if (n === 0) return null;
      done += n;
    }
    return buf;
  };
}

function withFile<T>(file: string, size: number, fn: (read: ZipRead) => T): T {
  const fd = openSync(file, "r");
  try {
    return fn(fileReader(fd, size));
  } finally {
    closeSync(fd);
  }
}

/**
 * What the file is, with all of it at hand: a zip by its whole central directory, a compound file
 * by its whole directory (up to `maxBytes` read), anything else by its first bytes.
 */
export function sniffFile(file: string, size: number, filename: string, maxBytes: number): DocKind | null {
  return withFile(file, size, (read) => {
    const head = read(0, Math.min(size, SNIFF_BYTES)) ?? Buffer.alloc(0);
    const kind = sniff(head, filename);
    if (head.subarray(0, 4).toString("latin1") === "PK\x03\x04") {
      const dir = readZipDirectory(read, size);
      return dir?.entries.length ? zipKind(dir.entries, read) : kind;
    }
    if (kind === "doc" || kind === "xls" || kind === "ppt") {
      const cfb = cfbDirectory(read(0, Math.min(size, maxBytes)) ?? head);
      return cfb
        ? ole2Kind(
            cfb.entries.map((e) => e.name),
            filename,
          )
        : kind;
    }
    return kind;
  });
}

/** Checks 1–3 above; returns the entries to inflate. */
function checkDirectory(entries: readonly ZipEntryInfo[], declared: number, allowance: number, size: number): ZipEntryInfo[] {
  if (declared > MAX_ZIP_ENTRIES || entries.length >= MAX_ZIP_ENTRIES) {
    throw new JobError("limit_exceeded", `The document's zip has more than ${MAX_ZIP_ENTRIES.toLocaleString("en-US")} entries.`);
  }
  const sorted = [...entries].sort((a, b) => a.localOffset - b.localOffset);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    // A local header is at least 30 bytes, then the data: the next entry cannot start inside it.
    if (sorted[i]!.localOffset < prev.localOffset + 30 + prev.compressedSize) {
      throw new JobError("limit_exceeded", "The document's zip has entries that share their data (a zip bomb).");
    }
  }
  const total = entries.reduce((n, e) => n + e.size, 0);
  if (total > allowance) throw inflationError("The document", allowance);
  return entries.filter((e) => e.method === 8 && e.compressedSize > 0 && e.localOffset < size);
}

/** Inflates one entry's data, counting; resolves with the count, or stops once past `budget`. */
function inflatedBytes(data: Buffer, budget: number): Promise<number> {
  return new Promise((resolve) => {
    const inflate = createInflateRaw();
    let n = 0;
    inflate.on("data", (chunk: Buffer) => {
      n += chunk.length;
      if (n > budget) {
        inflate.destroy();
        resolve(n);
      }
    });
    // A damaged entry counts what it gave: LibreOffice decides what to make of it.
    inflate.on("error", () => resolve(n));
    inflate.on("end", () => resolve(n));
    inflate.end(data);
  });
}

/**
 * The zip-bomb check of an Office document that is a zip (OOXML, ODF); does nothing for others.
 * Throws limit_exceeded (see above).
 */
export async function checkZipInflation(file: string, size: number, limits: RunnerLimits): Promise<void> {
  const allowance = inflationAllowance(limits, size);
  const fd = openSync(file, "r");
  try {
    const read = fileReader(fd, size);
    if (read(0, 4)?.toString("latin1") !== "PK\x03\x04") return;
    const dir = readZipDirectory(read, size);
    if (!dir) return;
    let total = 0;
    for (const e of checkDirectory(dir.entries, dir.declared, allowance, size)) {
      const data = entryBytes(read, e);
      if (!data) continue;
      total += await inflatedBytes(data, allowance - total);
      if (total > allowance) throw inflationError("The document", allowance);
    }
  } finally {
    closeSync(fd);
  }
}

/** An entry's compressed bytes, found through its local header (§4.3.7). */
function entryBytes(read: ZipRead, e: ZipEntryInfo): Buffer | null {
  const local = read(e.localOffset, 30);
  if (!local || local.readUInt32LE(0) !== 0x04034b50) return null;
  return read(e.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28), e.compressedSize);
}

/**
 * Some producers write zip entry names with backslashes ("xl\workbook.xml"); Excel reads them,
 * LibreOffice does not find the parts. Such a zip is rewritten with forward slashes (data
 * inflated and deflated again, one entry at a time) into `out`, which LibreOffice then opens.
 * Returns false, writing nothing, when every name is already in the zip form (APPNOTE §4.4.17.1).
 */
export async function normalizeZipNames(file: string, size: number, out: string): Promise<boolean> {
  const fd = openSync(file, "r");
  let dir: ReturnType<typeof readZipDirectory>;
  try {
    dir = readZipDirectory(fileReader(fd, size), size);
  } finally {
    closeSync(fd);
  }
  if (!dir?.entries.some((e) => e.name.includes("\\"))) return false;
  const zip = new ZipFile();
  for (const e of dir.entries) {
    const name = e.name.replace(/\\/g, "/").replace(/^\/+/, "");
    if (!name || name.endsWith("/")) continue;
    const local = withFile(file, size, (read) => read(e.localOffset, 30));
    if (!local || local.readUInt32LE(0) !== 0x04034b50 || (e.method !== 0 && e.method !== 8)) continue;
    const start = e.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
    const raw = createReadStream(file, { start, end: start + e.compressedSize - 1 });
    zip.addReadStream(e.method === 8 ? raw.pipe(createInflateRaw()) : raw, name, { compress: name !== "mimetype" });
  }
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(out, { flags: "wx" }));
  return true;
}
