/**
 * Zip archives of outputs (split's "one zip of them all"), streamed with yazl: files are read one
 * at a time and never held in memory whole, and ZIP64 records are written when sizes need them.
 *
 * Entries are STORED, not deflated: a stored zip costs little more than copying the bytes, on the
 * critical path of every split. A PDF's content, fonts and images are already compressed; what
 * deflate still finds is the uncompressed object syntax qpdf writes (bench/qpdf-ops.ts: the 51
 * parts of a text-only 5,050-page document shrink from 3.98 to 1.81 MB, at 2–4× the time), and
 * the parts themselves are offered for download as well. `compress: true` switches to deflate.
 */
import { createWriteStream } from "node:fs";
import { pipeline } from "node:stream/promises";
import { ZipFile } from "yazl";

export interface ZipEntry {
  /** File on disk. */
  path: string;
  /** Name inside the archive. */
  name: string;
}

/** Writes `entries` into a new zip at `zipPath`, in order. */
export async function writeZip(
  zipPath: string,
  entries: readonly ZipEntry[],
  opts: { signal?: AbortSignal; compress?: boolean } = {},
): Promise<void> {
  const zip = new ZipFile();
  // One fixed timestamp for every entry: the archive does not depend on when each part was written.
  const mtime = new Date();
  for (const e of entries) zip.addFile(e.path, e.name, { compress: opts.compress ?? false, mtime, mode: 0o100644 });
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(zipPath, { flags: "wx" }), { signal: opts.signal });
}
