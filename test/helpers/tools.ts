/**
 * Test helpers: run the real `folio` CLI, and check its outputs with tools Folio does not use to
 * produce them (poppler's pdfinfo, pdftotext and pdftoppm; qpdf --check as a second opinion).
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const execFileP = promisify(execFile);
export const ROOT = path.resolve(import.meta.dirname, "../..");
export const FOLIO = path.join(ROOT, "bin/folio");
export const CORPUS = path.resolve(ROOT, "../shared/corpus/qpdf-qtest");

export interface FolioRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (the result, or {error}). */
  json: any;
}

/** Runs `bin/folio ARGS`, optionally with stdin, and parses its stdout. */
export function folio(args: readonly string[], opts: { stdin?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<FolioRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(FOLIO, args, {
      env: { ...process.env, ...opts.env },
      stdio: ["pipe", "pipe", "pipe"],
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      let json: unknown = undefined;
      try {
        json = JSON.parse(stdout);
      } catch {
        /* left undefined: the test will say so */
      }
      resolve({ code: code ?? -1, stdout, stderr, json });
    });
    child.stdin.end(opts.stdin ?? "");
  });
}

export async function tmpDir(prefix = "folio-test-"): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export async function run(cmd: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileP(cmd, args, { maxBuffer: 256 * 1024 * 1024, encoding: "utf8" });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === "number" ? err.code : -1, stdout: err.stdout ?? "", stderr: err.stderr ?? "" };
  }
}

/** pdfinfo's fields ("Pages", "Encrypted", …); `password` opens encrypted files. */
export async function pdfinfo(file: string, password?: string): Promise<Record<string, string> & { ok: boolean }> {
  const res = await run("pdfinfo", [...(password !== undefined ? ["-upw", password] : []), file]);
  const info: Record<string, string> = {};
  for (const line of res.stdout.split("\n")) {
    const m = /^([^:]+):\s*(.*)$/.exec(line);
    if (m) info[m[1]!] = m[2]!;
  }
  return Object.assign(info, { ok: res.code === 0 });
}

export async function pageCount(file: string): Promise<number> {
  const info = await pdfinfo(file);
  if (!info.ok) throw new Error(`pdfinfo cannot read ${file}`);
  return Number(info.Pages);
}

/** The text of a PDF, by poppler. */
export async function pdftotext(file: string, password?: string): Promise<string> {
  const res = await run("pdftotext", [...(password !== undefined ? ["-upw", password] : []), "-layout", file, "-"]);
  if (res.code !== 0) throw new Error(`pdftotext failed on ${file}: ${res.stderr}`);
  return res.stdout;
}

/** qpdf --check: true when qpdf finds no errors (warnings are fine). */
export async function qpdfCheck(file: string): Promise<boolean> {
  const res = await run("qpdf", ["--check", file]);
  return res.code === 0 || res.code === 3;
}

/**
 * One hash per page of what the page looks like, rendered by poppler at a small resolution:
 * two PDFs have the same pages in the same order exactly when these lists are equal.
 */
export async function pageHashes(file: string, dpi = 20): Promise<string[]> {
  const { dir, cleanup } = await tmpDir("folio-render-");
  try {
    const res = await run("pdftoppm", ["-r", String(dpi), "-gray", file, path.join(dir, "p")]);
    if (res.code !== 0) throw new Error(`pdftoppm failed on ${file}: ${res.stderr}`);
    const files = (await readdir(dir)).sort();
    const hashes: string[] = [];
    for (const f of files)
      hashes.push(
        createHash("sha256")
          .update(await readFile(path.join(dir, f)))
          .digest("hex")
          .slice(0, 16),
      );
    return hashes;
  } finally {
    await cleanup();
  }
}

export interface Gray {
  width: number;
  height: number;
  data: Uint8Array;
}

/** Parses a binary PGM (P5) as pdftoppm -gray writes it. */
export function parsePgm(buf: Buffer): Gray {
  const header = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(buf.subarray(0, 64).toString("latin1"));
  if (!header) throw new Error("not a binary PGM");
  const width = Number(header[1]);
  const height = Number(header[2]);
  return { width, height, data: buf.subarray(header[0].length, header[0].length + width * height) };
}

/** Renders page `page` (1-based) of a PDF to grayscale with poppler. */
export async function renderGray(file: string, page: number, dpi = 72): Promise<Gray> {
  const { dir, cleanup } = await tmpDir("folio-render-");
  try {
    const res = await run("pdftoppm", [
      "-r",
      String(dpi),
      "-gray",
      "-f",
      String(page),
      "-l",
      String(page),
      "-singlefile",
      file,
      path.join(dir, "p"),
    ]);
    if (res.code !== 0) throw new Error(`pdftoppm failed on ${file}: ${res.stderr}`);
    return parsePgm(await readFile(path.join(dir, "p.pgm")));
  } finally {
    await cleanup();
  }
}

/**
 * Mean SSIM (Wang et al. 2004) over 8×8 windows with stride 4, on 8-bit grayscale images of the
 * same size. 1 means identical.
 */
export function ssim(a: Gray, b: Gray): number {
  if (a.width !== b.width || a.height !== b.height) throw new Error(`size differs: ${a.width}x${a.height} vs ${b.width}x${b.height}`);
  const C1 = (0.01 * 255) ** 2;
  const C2 = (0.03 * 255) ** 2;
  const W = 8;
  let total = 0;
  let windows = 0;
  for (let y = 0; y + W <= a.height; y += 4) {
    for (let x = 0; x + W <= a.width; x += 4) {
      let sa = 0,
        sb = 0,
        saa = 0,
        sbb = 0,
        sab = 0;
      for (let j = 0; j < W; j++) {
        const row = (y + j) * a.width + x;
        for (let i = 0; i < W; i++) {
          const va = a.data[row + i]!;
          const vb = b.data[row + i]!;
          sa += va;
          sb += vb;
          saa += va * va;
          sbb += vb * vb;
          sab += va * vb;
        }
      }
      const n = W * W;
      const ma = sa / n,
        mb = sb / n;
      const va = saa / n - ma * ma,
        vb = sbb / n - mb * mb,
        cov = sab / n - ma * mb;
      total += ((2 * ma * mb + C1) * (2 * cov + C2)) / ((ma * ma + mb * mb + C1) * (va + vb + C2));
      windows++;
    }
  }
  return windows ? total / windows : 1;
}

/** Mean SSIM over every page of two PDFs with the same page count, rendered by poppler. */
export async function pdfSsim(a: string, b: string, dpi = 72): Promise<number> {
  const n = await pageCount(a);
  let sum = 0;
  for (let p = 1; p <= n; p++) sum += ssim(await renderGray(a, p, dpi), await renderGray(b, p, dpi));
  return sum / n;
}

/** Share of the words of `reference` (lower-cased, alphanumeric) found in `candidate`. */
export function wordRecall(reference: string, candidate: string): number {
  const words = (s: string): string[] => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const have = new Map<string, number>();
  for (const w of words(candidate)) have.set(w, (have.get(w) ?? 0) + 1);
  const ref = words(reference);
  let found = 0;
  for (const w of ref) {
    const n = have.get(w) ?? 0;
    if (n > 0) {
      found++;
      have.set(w, n - 1);
    }
  }
  return ref.length ? found / ref.length : 1;
}
