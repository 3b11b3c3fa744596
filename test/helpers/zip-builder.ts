/**
 * A zip writer for tests (PKWARE APPNOTE 6.3) that can write what real producers write and what
 * attackers write: backslashes in names, entries in any order, sizes in data descriptors, ZIP64
 * records, a stub before the archive, declared sizes that lie, entries sharing one deflate stream.
 * `readZip` takes a real zip (LibreOffice's) apart so that its parts can be written back altered.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { readZipDirectory } from "../../core/zip-directory.ts";

export interface BuildEntry {
  name: string;
  data: Buffer;
  /** Deflate the data (default true). */
  deflate?: boolean;
  /** Raw deflate bytes to store instead of compressing `data` (for bombs made elsewhere). */
  compressed?: Buffer;
  /** The uncompressed size to declare (default the real one). */
  declaredSize?: number;
}

export interface BuildOptions {
  /** Sizes and CRC after the data, zero in the local header (flag bit 3), as streaming writers do. */
  dataDescriptors?: boolean;
  /** ZIP64 end records and extra fields, as writers of large archives do. */
  zip64?: boolean;
  /** Bytes before the archive (a self-extractor stub). */
  prefix?: Buffer;
  /** Make the central directory list these entry indexes again, pointing at the same data. */
  duplicateOf?: { index: number; times: number };
}

/** CRC-32 (ISO-HDLC), as zip entries carry it. */
function crc32(data: Buffer): number {
  let crc = ~0;
  for (const b of data) {
    crc ^= b;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

interface Record {
  name: Buffer;
  method: number;
  crc: number;
  csize: number;
  usize: number;
  at: number;
  flags: number;
}

/** A local file header, the data, and a data descriptor when asked (§4.3.7–4.3.9). */
function localRecord(e: BuildEntry, at: number, opts: BuildOptions): { bytes: Buffer[]; record: Record } {
  const name = Buffer.from(e.name, "utf8");
  const method = e.compressed || e.deflate !== false ? 8 : 0;
  const body = e.compressed ?? (method === 8 ? deflateRawSync(e.data) : e.data);
  const crc = crc32(e.data);
  const usize = e.declaredSize ?? e.data.length;
  const flags = 0x0800 | (opts.dataDescriptors ? 0x0008 : 0);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(opts.zip64 ? 45 : 20, 4);
  local.writeUInt16LE(flags, 6);
  local.writeUInt16LE(method, 8);
  if (!opts.dataDescriptors) {
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(usize, 22);
  }
  local.writeUInt16LE(name.length, 26);
  const bytes = [local, name, body];
  if (opts.dataDescriptors) {
    const dd = Buffer.alloc(16);
    dd.writeUInt32LE(0x08074b50, 0);
    dd.writeUInt32LE(crc, 4);
    dd.writeUInt32LE(body.length, 8);
    dd.writeUInt32LE(usize, 12);
    bytes.push(dd);
  }
  return { bytes, record: { name, method, crc, csize: body.length, usize, at, flags } };
}

/** A central directory header (§4.3.12), with a ZIP64 extra field when asked (§4.5.3). */
function centralRecord(r: Record, opts: BuildOptions): Buffer {
  const z64 = opts.zip64 === true;
  const extra = z64 ? Buffer.alloc(28) : Buffer.alloc(0);
  if (z64) {
    extra.writeUInt16LE(0x0001, 0);
    extra.writeUInt16LE(24, 2);
    extra.writeBigUInt64LE(BigInt(r.usize), 4);
    extra.writeBigUInt64LE(BigInt(r.csize), 12);
    extra.writeBigUInt64LE(BigInt(r.at), 20);
  }
  const c = Buffer.alloc(46);
  c.writeUInt32LE(0x02014b50, 0);
  c.writeUInt16LE(z64 ? 45 : 20, 4);
  c.writeUInt16LE(z64 ? 45 : 20, 6);
  c.writeUInt16LE(r.flags, 8);
  c.writeUInt16LE(r.method, 10);
  c.writeUInt32LE(r.crc, 16);
  c.writeUInt32LE(z64 ? 0xffffffff : r.csize, 20);
  c.writeUInt32LE(z64 ? 0xffffffff : r.usize, 24);
  c.writeUInt16LE(r.name.length, 28);
  c.writeUInt16LE(extra.length, 30);
  c.writeUInt32LE(z64 ? 0xffffffff : r.at - (opts.prefix?.length ?? 0), 42);
  return Buffer.concat([c, r.name, extra]);
}

/** The end records (§4.3.14–4.3.16): ZIP64 ones first when asked, the classic one last. */
function endRecords(count: number, cdStart: number, cdLength: number, opts: BuildOptions): Buffer[] {
  const tail: Buffer[] = [];
  const z64 = opts.zip64 === true;
  if (z64) {
    const z = Buffer.alloc(56);
    z.writeUInt32LE(0x06064b50, 0);
    z.writeBigUInt64LE(44n, 4);
    z.writeUInt16LE(45, 12);
    z.writeUInt16LE(45, 14);
    z.writeBigUInt64LE(BigInt(count), 24);
    z.writeBigUInt64LE(BigInt(count), 32);
    z.writeBigUInt64LE(BigInt(cdLength), 40);
    z.writeBigUInt64LE(BigInt(cdStart), 48);
    const loc = Buffer.alloc(20);
    loc.writeUInt32LE(0x07064b50, 0);
    loc.writeBigUInt64LE(BigInt(cdStart + cdLength), 8);
    loc.writeUInt32LE(1, 16);
    tail.push(z, loc);
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(z64 ? 0xffff : count, 8);
  end.writeUInt16LE(z64 ? 0xffff : count, 10);
  end.writeUInt32LE(z64 ? 0xffffffff : cdLength, 12);
  end.writeUInt32LE(z64 ? 0xffffffff : cdStart - (opts.prefix?.length ?? 0), 16);
  tail.push(end);
  return tail;
}

export function buildZip(entries: readonly BuildEntry[], opts: BuildOptions = {}): Buffer {
  const chunks: Buffer[] = opts.prefix ? [opts.prefix] : [];
  let offset = opts.prefix?.length ?? 0;
  const records: Record[] = [];
  for (const e of entries) {
    const { bytes, record } = localRecord(e, offset, opts);
    chunks.push(...bytes);
    records.push(record);
    offset += bytes.reduce((n, b) => n + b.length, 0);
  }
  const listed = [...records];
  if (opts.duplicateOf) {
    for (let i = 0; i < opts.duplicateOf.times; i++)
      listed.push({ ...records[opts.duplicateOf.index]!, name: Buffer.from(`dup/${i}.xml`) });
  }
  const cd = Buffer.concat(listed.map((r) => centralRecord(r, opts)));
  return Buffer.concat([...chunks, cd, ...endRecords(listed.length, offset, cd.length, opts)]);
}

/** The entries of a real zip file, in archive order, inflated. */
export function readZip(file: string): BuildEntry[] {
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    const read = (offset: number, length: number): Buffer | null => {
      if (offset < 0 || offset + length > size) return null;
      const buf = Buffer.alloc(length);
      readSync(fd, buf, 0, length, offset);
      return buf;
    };
    const dir = readZipDirectory(read, size);
    if (!dir) throw new Error(`${file} is not a zip`);
    return dir.entries.map((e) => {
      const local = read(e.localOffset, 30)!;
      const raw = read(e.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28), e.compressedSize)!;
      return { name: e.name, data: e.method === 8 ? inflateRawSync(raw) : raw, deflate: e.method === 8 };
    });
  } finally {
    closeSync(fd);
  }
}
