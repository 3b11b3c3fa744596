/**
 * Is an Office document password-protected? Answered from the bytes, before LibreOffice sees the
 * file, so that the client gets `encrypted_input` rather than a vague `conversion_failed` (in
 * headless mode LibreOffice cannot ask for the password and simply fails to load the document).
 *
 *  - ODF (ODF 1.2 part 3, §3.8): encrypted entries carry <manifest:encryption-data> in
 *    META-INF/manifest.xml; the zip itself is not encrypted.
 *  - Encrypted OOXML (MS-OFFCRYPTO §2.3.4): not a zip at all but a compound file (CFB) holding the
 *    streams "EncryptionInfo" and "EncryptedPackage".
 *  - Word 97–2003 (MS-DOC §2.5.1): FIB flag fEncrypted (bit 8 of the flags at offset 0x0A of the
 *    WordDocument stream). Excel 97–2003 (MS-XLS §2.4.117): a FILEPASS record (0x002F) right after
 *    the workbook's BOF record. PowerPoint 97–2003 (MS-PPT §2.1.4): an "EncryptedSummary" stream.
 * Anything this does not recognise is left to LibreOffice, whose failure is conversion_failed.
 */
import { open } from "node:fs/promises";
import { inflateRawSync } from "node:zlib";
import type { DocKind } from "../../core/sniff.ts";

const ZIP_KINDS = new Set<DocKind>(["odt", "ods", "odp"]);
const OLE2 = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
/** Manifests are small; anything larger is not a manifest we want to inflate. */
const MAX_MANIFEST = 4 * 1024 * 1024;

async function readAll(file: string, maxBytes: number): Promise<Buffer> {
  const fh = await open(file, "r");
  try {
    const { size } = await fh.stat();
    const buf = Buffer.alloc(Math.min(size, maxBytes));
    await fh.read(buf, 0, buf.length, 0);
    return buf;
  } finally {
    await fh.close();
  }
}

/** The uncompressed bytes of one zip entry, found through the central directory (APPNOTE §4.3). */
export function zipEntry(zip: Buffer, name: string): Buffer | null {
  const from = Math.max(0, zip.length - 65_557);
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < from || eocd + 22 > zip.length) return null;
  const count = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  for (let i = 0; i < count && p + 46 <= zip.length && zip.readUInt32LE(p) === 0x02014b50; i++) {
    const method = zip.readUInt16LE(p + 10);
    const csize = zip.readUInt32LE(p + 20);
    const usize = zip.readUInt32LE(p + 24);
    const nameLen = zip.readUInt16LE(p + 28);
    const skip = nameLen + zip.readUInt16LE(p + 30) + zip.readUInt16LE(p + 32);
    const local = zip.readUInt32LE(p + 42);
    if (zip.toString("utf8", p + 46, p + 46 + nameLen) === name) {
      if (usize > MAX_MANIFEST || local + 30 > zip.length) return null;
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + csize);
      if (method === 0) return data;
      if (method !== 8) return null;
      try {
        return inflateRawSync(data, { maxOutputLength: MAX_MANIFEST });
      } catch {
        return null;
      }
    }
    p += 46 + skip;
  }
  return null;
}

interface CfbEntry {
  name: string;
  start: number;
  size: number;
}

/**
 * The directory of a compound file (MS-CFB §2.2–2.6) and a reader for the first sector of a
 * stream — all the encryption checks need. Chains are followed through the FAT, which is rebuilt
 * from the header's DIFAT and the DIFAT sector chain.
 */
export function cfbDirectory(buf: Buffer): { entries: CfbEntry[]; firstSector(entry: CfbEntry): Buffer | null } | null {
  if (buf.length < 512 || !buf.subarray(0, 8).equals(OLE2)) return null;
  const shift = buf.readUInt16LE(0x1e);
  if (shift !== 9 && shift !== 12) return null;
  const sectorSize = 1 << shift;
  const sector: SectorReader = (n) => {
    const off = (n + 1) * sectorSize;
    return n >= 0 && off + sectorSize <= buf.length ? buf.subarray(off, off + sectorSize) : null;
  };
  const entries = readDirectory(buf, readFat(buf, sectorSize, sector), sector);
  const miniCutoff = buf.readUInt32LE(0x38) || 4096;
  // Streams below the cutoff live in the mini stream; none of the streams we read is that small.
  return { entries, firstSector: (e) => (e.size >= miniCutoff ? sector(e.start) : null) };
}

/** A sector by number, or null past the end of the file. */
type SectorReader = (n: number) => Buffer | null;

/** The FAT, from the sectors the header's 109 DIFAT slots and the DIFAT sector chain name (MS-CFB §2.5). */
function readFat(buf: Buffer, sectorSize: number, sector: SectorReader): number[] {
  const fatSectors: number[] = [];
  for (let i = 0; i < 109; i++) fatSectors.push(buf.readInt32LE(0x4c + i * 4));
  for (let d = buf.readInt32LE(0x44), guard = 0; d >= 0 && guard < 1000; guard++) {
    const s = sector(d);
    if (!s) break;
    for (let i = 0; i < sectorSize / 4 - 1; i++) fatSectors.push(s.readInt32LE(i * 4));
    d = s.readInt32LE(sectorSize - 4);
  }
  const fat: number[] = [];
  for (const f of fatSectors) {
    const s = f >= 0 ? sector(f) : null;
    if (s) for (let i = 0; i < sectorSize / 4; i++) fat.push(s.readInt32LE(i * 4));
  }
  return fat;
}

/** The directory entries (MS-CFB §2.6), following the directory's sector chain through the FAT; unused entries skipped. */
function readDirectory(buf: Buffer, fat: readonly number[], sector: SectorReader): CfbEntry[] {
  const entries: CfbEntry[] = [];
  for (let d = buf.readInt32LE(0x30), guard = 0; d >= 0 && guard < 10_000; d = fat[d] ?? -1, guard++) {
    const s = sector(d);
    if (!s) break;
    for (let off = 0; off + 128 <= s.length; off += 128) {
      const nameLen = Math.min(64, s.readUInt16LE(off + 0x40));
      if (nameLen < 2 || s[off + 0x42] === 0) continue;
      entries.push({
        name: s.toString("utf16le", off, off + nameLen - 2),
        start: s.readInt32LE(off + 0x74),
        size: s.readUInt32LE(off + 0x78),
      });
    }
  }
  return entries;
}

function oleIsEncrypted(buf: Buffer): boolean {
  const cfb = cfbDirectory(buf);
  if (!cfb) return false;
  const named = (n: string): CfbEntry | undefined => cfb.entries.find((e) => e.name === n);
  if (named("EncryptedPackage") || named("EncryptedSummary")) return true;
  const word = named("WordDocument");
  const wordHead = word ? cfb.firstSector(word) : null;
  if (wordHead && wordHead.readUInt16LE(0) === 0xa5ec && (wordHead.readUInt16LE(0x0a) & 0x0100) !== 0) return true;
  const book = named("Workbook") ?? named("Book");
  const bookHead = book ? cfb.firstSector(book) : null;
  if (bookHead && bookHead.readUInt16LE(0) === 0x0809) {
    const next = 4 + bookHead.readUInt16LE(2);
    if (next + 2 <= bookHead.length && bookHead.readUInt16LE(next) === 0x002f) return true;
  }
  return false;
}

/** True when the document needs a password to open (see the formats above). */
export async function isPasswordProtected(file: string, kind: DocKind, maxBytes: number): Promise<boolean> {
  if (ZIP_KINDS.has(kind)) {
    const manifest = zipEntry(await readAll(file, maxBytes), "META-INF/manifest.xml");
    return manifest !== null && /<manifest:encryption-data\b/.test(manifest.toString("utf8"));
  }
  if (kind === "doc" || kind === "xls" || kind === "ppt") return oleIsEncrypted(await readAll(file, maxBytes));
  return false;
}
