/**
 * Output files are written under a temporary name in the output directory and renamed into place
 * when complete: the rename is atomic (same file system), nobody sees half a file, and an output
 * whose name equals an input in the same directory does not overwrite that input while an engine
 * is still reading it.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { OpOutputFile } from "../ops/types.ts";

/** An output with its page count, which the operation knows without asking qpdf again. */
export interface PdfOutputFile extends OpOutputFile {
  pages: number;
}

/** A hidden temporary path in `dir` for an output that will be renamed to its final name. */
export function partialPath(dir: string, ext: string): string {
  return path.join(dir, `.folio-${randomBytes(6).toString("hex")}.partial${ext}`);
}

/** A hidden temporary directory in `dir` for outputs written by one engine run. */
export function stagingDir(dir: string): Promise<string> {
  return mkdtemp(path.join(dir, ".folio-staging-"));
}

/** Moves a finished temporary file to `outDir/filename` and returns its path. */
export async function commitOutput(tmp: string, outDir: string, filename: string): Promise<string> {
  const final = path.join(outDir, filename);
  await rename(tmp, final);
  return final;
}

/** Removes temporary files or directories, ignoring those already gone. */
export async function discard(...paths: string[]): Promise<void> {
  await Promise.all(paths.map((p) => rm(p, { recursive: true, force: true })));
}
