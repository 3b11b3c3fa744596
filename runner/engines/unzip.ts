/**
 * Extracts a zip of a web page and its assets into a folder, refusing what a hostile archive
 * tries (APPNOTE.TXT 6.3.10 is the format):
 *  - a path leaving the folder (`../`, an absolute path, a drive letter, a backslash, a NUL) or a
 *    symbolic link entry: `unsupported_input`, the whole archive refused;
 *  - a zip bomb: more than `maxEntries` entries, more than `maxBytes` declared in all, or an entry
 *    that inflates past its declared size (each is inflated with that size as a hard cap):
 *    `limit_exceeded`;
 *  - ZIP64, encryption, methods other than stored and deflate: `unsupported_input`.
 * The central directory is read from the end of the file (the entries' local headers can lie).
 */
import { mkdir, open, writeFile } from "node:fs/promises";
import path from "node:path";
import { inflateRawSync } from "node:zlib";
import { JobError } from "../../core/errors.ts";

export interface UnzipLimits {
  maxEntries: number;
  /** Uncompressed bytes of all entries together. */
  maxBytes: number;
}

interface Entry {
  name: string;
  method: number;
  flags: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  unixMode: number;
}

const bad = (why: string): JobError => new JobError("unsupported_input", `The zip cannot be used: ${why}.`);

/** A name made safe, or an error: relative, forward slashes only, no "..", no NUL. */
export function safeEntryName(name: string): string {
  if (name.includes("\0") || name.includes("\\") || /^[a-zA-Z]:/.test(name) || name.startsWith("/"))
    throw bad(`entry "${name.slice(0, 100)}" has an unsafe path`);
  const parts = name.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.some((p) => p === "..")) throw bad(`entry "${name.slice(0, 100)}" points outside the archive`);
  return parts.join("/");
}

function readDirectory(buf: Buffer, limits: UnzipLimits): Entry[] {
  // End of central directory: 22 bytes plus a comment of up to 65,535 (§4.3.16).
  const from = Math.max(0, buf.length - 22 - 65_535);
  let eocd = -1;
  for (let i = buf.length - 22; i >= from; i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw bad("it has no central directory");
  const count = buf.readUInt16LE(eocd + 10);
  const dirOffset = buf.readUInt32LE(eocd + 16);
  if (count === 0xffff || dirOffset === 0xffffffff) throw bad("ZIP64 archives are not supported");
  if (count > limits.maxEntries) throw new JobError("limit_exceeded", `The zip has ${count} entries; the limit is ${limits.maxEntries}.`);
  const entries: Entry[] = [];
  let at = dirOffset;
  let total = 0;
  for (let i = 0; i < count; i++) {
    if (at + 46 > buf.length || buf.readUInt32LE(at) !== 0x02014b50) throw bad("its central directory is damaged");
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const entry: Entry = {
      name: buf.subarray(at + 46, at + 46 + nameLen).toString("utf8"),
      flags: buf.readUInt16LE(at + 8),
      method: buf.readUInt16LE(at + 10),
      compressedSize: buf.readUInt32LE(at + 20),
      size: buf.readUInt32LE(at + 24),
      localOffset: buf.readUInt32LE(at + 42),
      unixMode: buf.readUInt32LE(at + 38) >>> 16,
    };
    total += entry.size;
    if (total > limits.maxBytes) throw new JobError("limit_exceeded", `The zip unpacks to more than ${limits.maxBytes} bytes.`);
    entries.push(entry);
    at += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** Extracts `zipFile` into `dir` (which must exist and be empty); returns the files written. */
export async function unzipSafely(zipFile: string, dir: string, limits: UnzipLimits): Promise<string[]> {
  const fh = await open(zipFile, "r");
  let buf: Buffer;
  try {
    buf = await fh.readFile();
  } finally {
    await fh.close();
  }
  const written: string[] = [];
  for (const e of readDirectory(buf, limits)) {
    const name = safeEntryName(e.name);
    if ((e.unixMode & 0o170000) === 0o120000) throw bad(`entry "${name}" is a symbolic link`);
    if (e.flags & 1) throw bad("encrypted entries are not supported");
    if (name === "" || e.name.endsWith("/")) continue;
    const local = e.localOffset;
    if (local + 30 > buf.length || buf.readUInt32LE(local) !== 0x04034b50) throw bad("an entry's header is damaged");
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(start, start + e.compressedSize);
    let data: Buffer;
    if (e.method === 0) data = raw;
    else if (e.method === 8) {
      try {
        // Never more than the size the directory declared: a bomb stops at its declared size.
        data = inflateRawSync(raw, { maxOutputLength: Math.max(1, e.size) });
      } catch (err) {
        if (err instanceof RangeError) throw new JobError("limit_exceeded", `Entry "${name}" unpacks to more than it declares.`);
        throw bad(`entry "${name}" is damaged`);
      }
    } else throw bad(`entry "${name}" uses compression method ${e.method}`);
    if (data.length !== e.size) throw bad(`entry "${name}" does not have its declared size`);
    const target = path.join(dir, name);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, data, { flag: "wx" }).catch((err: NodeJS.ErrnoException) => {
      if (err.code === "EEXIST") throw bad(`entry "${name}" appears twice`);
      throw err;
    });
    written.push(name);
  }
  return written;
}
