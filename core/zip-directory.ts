/**
 * The central directory of a zip file (PKWARE APPNOTE.TXT 6.3, §4.3): the list of entries with
 * their names, methods, sizes and local header offsets, ZIP64 included (§4.3.14–4.3.16, §4.5.3).
 * Office documents (OOXML, ODF) are zips; sniffing (core/sniff.ts) reads the names, the runner's
 * zip-bomb check (runner/engines/office-zip.ts) the sizes.
 *
 * The reader takes a `read(offset, length)` callback that answers the bytes or null when it does
 * not have them: the runner reads the file, the API has only the first and last bytes of an upload.
 * Nothing here trusts a count or an offset: every one is checked against the bytes present.
 */

export interface ZipEntryInfo {
  /** As stored; Office producers differ (backslashes, leading slashes, case). */
  name: string;
  /** 0 stored, 8 deflated (§4.4.5); anything else no Office reader writes. */
  method: number;
  /** General purpose flags (§4.4.4): bit 0 encrypted, bit 3 sizes in a data descriptor. */
  flags: number;
  compressedSize: number;
  size: number;
  /** Offset of the entry's local file header, corrected for data prepended to the archive. */
  localOffset: number;
}

export interface ZipDirectory {
  entries: ZipEntryInfo[];
  /** Entries the end record declares (may exceed `entries` when the directory is cut short). */
  declared: number;
  /** Bytes before the archive proper (a self-extractor stub), by which offsets are shifted. */
  prefix: number;
}

export type ZipRead = (offset: number, length: number) => Buffer | null;

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
/** §4.3.16: the end record is 22 bytes plus a comment of at most 65,535. */
const EOCD_SEARCH = 22 + 0xffff;
/** More entries than any Office document has; a directory claiming more is not read further. */
export const MAX_ZIP_ENTRIES = 100_000;

/** A number read from 8 bytes, or Infinity past 2^53 (no real file is that large). */
function u64(b: Buffer, at: number): number {
  const v = b.readBigUInt64LE(at);
  return v > BigInt(Number.MAX_SAFE_INTEGER) ? Infinity : Number(v);
}

interface EndRecord {
  at: number;
  count: number;
  cdSize: number;
  cdOffset: number;
}

/** The end of central directory record (§4.3.16), and its ZIP64 counterpart when it defers to one. */
function endRecord(read: ZipRead, size: number): EndRecord | null {
  const from = Math.max(0, size - EOCD_SEARCH);
  const tail = read(from, size - from);
  if (!tail) return null;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) !== EOCD) continue;
    const at = from + i;
    let count = tail.readUInt16LE(i + 10);
    let cdSize = tail.readUInt32LE(i + 12);
    let cdOffset = tail.readUInt32LE(i + 16);
    if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
      const locator = at >= 20 ? read(at - 20, 20) : null;
      if (locator?.readUInt32LE(0) === ZIP64_LOCATOR) {
        const z64At = u64(locator, 8);
        const z64 = Number.isFinite(z64At) ? read(z64At, 56) : null;
        if (z64?.readUInt32LE(0) === ZIP64_EOCD) {
          count = u64(z64, 32);
          cdSize = u64(z64, 40);
          cdOffset = u64(z64, 48);
        }
      }
    }
    return { at, count, cdSize, cdOffset };
  }
  return null;
}

/** ZIP64 extended information (§4.5.3): the 8-byte values that stand in for 0xFFFFFFFF fields. */
function zip64Extra(extra: Buffer, e: { size: number; compressedSize: number; localOffset: number }): void {
  for (let p = 0; p + 4 <= extra.length;) {
    const id = extra.readUInt16LE(p);
    const len = extra.readUInt16LE(p + 2);
    if (id === 0x0001) {
      let q = p + 4;
      const end = Math.min(extra.length, q + len);
      if (e.size === 0xffffffff && q + 8 <= end) {
        e.size = u64(extra, q);
        q += 8;
      }
      if (e.compressedSize === 0xffffffff && q + 8 <= end) {
        e.compressedSize = u64(extra, q);
        q += 8;
      }
      if (e.localOffset === 0xffffffff && q + 8 <= end) e.localOffset = u64(extra, q);
      return;
    }
    p += 4 + len;
  }
}

/** Reads the central directory, or null when there is no end record or no directory where it says. */
export function readZipDirectory(read: ZipRead, size: number): ZipDirectory | null {
  const end = endRecord(read, size);
  if (!end || !Number.isFinite(end.cdSize) || end.cdSize > end.at) return null;
  // Data prepended to the archive shifts every offset: the directory really ends at the end record.
  const cdStart = end.at - end.cdSize;
  const prefix = Number.isFinite(end.cdOffset) ? cdStart - end.cdOffset : 0;
  const cd = read(cdStart, end.cdSize);
  if (!cd) return null;
  const entries: ZipEntryInfo[] = [];
  for (let p = 0; p + 46 <= cd.length && entries.length < MAX_ZIP_ENTRIES && cd.readUInt32LE(p) === CENTRAL;) {
    const nameLen = cd.readUInt16LE(p + 28);
    const extraLen = cd.readUInt16LE(p + 30);
    const next = p + 46 + nameLen + extraLen + cd.readUInt16LE(p + 32);
    if (next > cd.length) break;
    const flags = cd.readUInt16LE(p + 8);
    const entry: ZipEntryInfo = {
      // Bit 11: UTF-8 names (§4.4.4); others are CP437, which matters only beyond ASCII.
      name: cd.toString(flags & 0x0800 ? "utf8" : "latin1", p + 46, p + 46 + nameLen),
      method: cd.readUInt16LE(p + 10),
      flags,
      compressedSize: cd.readUInt32LE(p + 20),
      size: cd.readUInt32LE(p + 24),
      localOffset: cd.readUInt32LE(p + 42),
    };
    zip64Extra(cd.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen), entry);
    entry.localOffset += prefix;
    entries.push(entry);
    p = next;
  }
  return { entries, declared: end.count, prefix };
}

/**
 * Entries from the local file headers at the start of a zip (§4.3.7), for when the central
 * directory is out of reach (an upload's first bytes). When the sizes follow the data in a data
 * descriptor (flag bit 3) the entry is taken to run to the next signature: exact for stored data,
 * a few bytes long for deflated data, whose stream ends by itself.
 */
export function localHeaders(head: Buffer): ZipEntryInfo[] {
  const entries: ZipEntryInfo[] = [];
  for (let p = 0; p + 30 <= head.length && entries.length < MAX_ZIP_ENTRIES;) {
    if (head.readUInt32LE(p) !== 0x04034b50) break;
    const flags = head.readUInt16LE(p + 6);
    const nameLen = head.readUInt16LE(p + 26);
    const dataAt = p + 30 + nameLen + head.readUInt16LE(p + 28);
    if (dataAt > head.length) break;
    let compressedSize = head.readUInt32LE(p + 18);
    let next = dataAt + compressedSize;
    if (flags & 0x0008 || compressedSize === 0xffffffff) {
      const sig = [head.indexOf("PK\x07\x08", dataAt, "latin1"), head.indexOf("PK\x03\x04", dataAt, "latin1")].filter((i) => i >= 0);
      next = sig.length ? Math.min(...sig) : head.length;
      compressedSize = next - dataAt;
    }
    entries.push({
      name: head.toString(flags & 0x0800 ? "utf8" : "latin1", p + 30, p + 30 + nameLen),
      method: head.readUInt16LE(p + 8),
      flags,
      compressedSize,
      size: flags & 0x0008 ? 0 : head.readUInt32LE(p + 22),
      localOffset: p,
    });
    if (next <= p) break;
    const following = head.indexOf("PK\x03\x04", next, "latin1");
    if (following < 0) break;
    p = following;
  }
  return entries;
}

/** A name as Office readers compare them: forward slashes, no leading slash, lower case. */
export function normalizeZipName(name: string): string {
  return name.replace(/\\/g, "/").replace(/^\/+/, "").toLowerCase();
}
