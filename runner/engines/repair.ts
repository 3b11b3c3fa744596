/**
 * The repair path (issue #13): a PDF that qpdf opens only with warnings — a damaged or missing
 * cross-reference table, a broken trailer, a page tree whose root is a page, kids listed twice —
 * is reconstructed once, before any operation, by a plain qpdf rewrite (qpdf reconstructs the
 * cross-reference table from the objects and rebuilds the page tree as it writes), and the
 * operation then runs on the reconstruction. The reconstruction must open cleanly with at least
 * one page; what qpdf cannot reconstruct ends in invalid_pdf with a message that says what is
 * wrong, never in a damaged output reported as success or in internal_error.
 *
 * Page counts come from walking the page tree (qpdf --show-pages), not from the root's /Count,
 * which `--show-npages` reports as written: a wrong /Count (0, -1, or more pages than there are)
 * made a 4-page file that other readers open "a PDF with no pages". Such a file is repaired by
 * writing the true count into every page-tree node (qpdf --update-from-json).
 *
 * Files that open cleanly are not rewritten: the check is the inspection every input gets anyway
 * (qpdf's exit code 0, and /Count equal to the pages found).
 *
 * Walking the page tree is the dear part of the inspection: qpdf parses every page object (0.15 s
 * of CPU for 5,000 pages, half of what rotating them costs). An operation that can start without
 * it (edit: one qpdf run whose output is kept only if the walk agrees) opens its input with
 * `openEarly`: qpdf opens the file and reads the declared /Count (cheap), the operation starts on
 * that, and the walk runs beside it; if the walk finds anything the full path would have acted on,
 * the runner drops the operation's output and starts again from `reopen()` (the full path).
 */
import path from "node:path";
import { JobError } from "../../core/errors.ts";
import { writeFile } from "node:fs/promises";
import { exec } from "./exec.ts";
import type { RunnerLimits } from "../../core/schemas/job.ts";
import { dictAt, dumpObjects, isRef, type JsonDict } from "../pdf/pdf-json.ts";
import { checkPdfInflation } from "../pdf/pdf-inflation.ts";
import { QPDF_EXIT, type QpdfContext } from "./qpdf.ts";

export interface Inspection {
  code: number;
  /** Pages found by walking the page tree. */
  pages: number;
  /** The root's /Count as written. */
  declared: number;
  encrypted: boolean;
  needsPassword: boolean;
  /** qpdf's warnings and errors, for the message (never shown raw) and the logs. */
  stderr: string;
}

/**
 * `qpdf --show-npages --show-encryption FILE` (and `extra`): the declared /Count, encryption, and
 * what qpdf had to say; the output itself for the caller's own reading.
 */
async function show(
  q: QpdfContext,
  file: string,
  passwordFile: string | undefined,
  extra: readonly string[],
  maxOutput: number,
): Promise<{ stdout: string; opened: Omit<Inspection, "pages"> }> {
  const pw = passwordFile ? [`--password-file=${passwordFile}`] : [];
  const res = await exec(q.qpdf, [...pw, "--show-npages", "--show-encryption", ...extra, file], { signal: q.signal, maxOutput });
  const declared = Number.parseInt(res.stdout.split("\n", 1)[0] ?? "", 10);
  return {
    stdout: res.stdout,
    opened: {
      code: res.code,
      declared: Number.isFinite(declared) ? declared : -1,
      encrypted: !res.stdout.includes("File is not encrypted"),
      needsPassword: /invalid password|incorrect password supplied/i.test(res.stdout + res.stderr),
      stderr: res.stderr,
    },
  };
}

/** One qpdf run: the declared and the real page count, encryption, and what qpdf had to say. */
export async function inspect(q: QpdfContext, file: string, passwordFile?: string): Promise<Inspection> {
  const { stdout, opened } = await show(q, file, passwordFile, ["--show-pages"], 64 * 1024 * 1024);
  return { ...opened, pages: stdout.match(/^page \d+: /gm)?.length ?? 0 };
}

/**
 * The cheap half of `inspect`: qpdf opens the file (cross-reference table, trailer, encryption)
 * and prints the root's /Count as written, without walking the page tree. `pages` is not known.
 */
async function inspectOpen(q: QpdfContext, file: string, passwordFile?: string): Promise<Omit<Inspection, "pages">> {
  return (await show(q, file, passwordFile, [], 1024 * 1024)).opened;
}

/**
 * Writes the true number of leaves into every page-tree node whose /Count says otherwise
 * (ISO 32000-1 §7.7.3.2), through `qpdf --update-from-json`, which leaves every other object as
 * it was. Returns false when there was nothing to fix or the tree cannot be walked.
 */
async function fixPageCounts(q: QpdfContext, file: string, out: string): Promise<boolean> {
  const objs = await dumpObjects(q, file, 256 * 1024 * 1024);
  if (!objs) return false;
  const patch: Record<string, { value: JsonDict }> = {};
  const seen = new Set<string>();
  const leaves = (ref: string, depth: number): number => {
    const node = dictAt(objs, ref);
    if (!node || seen.has(ref) || depth > 64) return 0;
    seen.add(ref);
    const kids = node["/Kids"];
    if (!Array.isArray(kids) || node["/Type"] === "/Page") return 1;
    const n = kids.reduce((sum: number, k) => sum + (isRef(k) ? leaves(k, depth + 1) : 0), 0);
    if (node["/Count"] !== n) patch[`obj:${ref}`] = { value: { ...node, "/Count": n } };
    return n;
  };
  const root = dictAt(objs, objs.trailer["/Root"])?.["/Pages"];
  if (!isRef(root) || leaves(root, 0) === 0 || Object.keys(patch).length === 0) return false;
  const patchFile = `${out}.json`;
  await writeFile(patchFile, JSON.stringify({ qpdf: [objs.header, patch] }), { mode: 0o600 });
  const res = await exec(q.qpdf, [path.resolve(file), `--update-from-json=${patchFile}`, out], { signal: q.signal });
  return res.code === QPDF_EXIT.OK || res.code === QPDF_EXIT.WARNINGS;
}

/** What qpdf's messages say is wrong, in words a client can act on (qpdf's own text never leaves). */
const DAMAGE: [RegExp, string][] = [
  [/can't find PDF header/i, "it has no PDF header"],
  [/xref|cross-reference|startxref/i, "its cross-reference table is damaged"],
  [/\(trailer|trailer dictionary/i, "its trailer is damaged"],
  [/\/Pages|pages tree|page tree|getAllPages/i, "its page tree is damaged"],
  [/endstream|\/Length|decoding stream data|stream data/i, "the data of some streams is damaged"],
  [/expected endobj|expected \d+ \d+ obj|unknown token|unexpected|object has offset 0|treating as/i, "some of its objects are damaged"],
  [/end of file|EOF|premature|truncat/i, "it is cut short"],
];

export function describeDamage(stderr: string): string {
  const found = DAMAGE.filter(([re]) => re.test(stderr)).map(([, words]) => words);
  return found.length ? found.slice(0, 3).join(", ") : "qpdf cannot read its structure";
}

/** The job error for a PDF that is not readable even after repair. */
export function unreadable(filename: string, stderr: string): JobError {
  // qpdf refuses structures nested deeper than it reads (its limit is 500): a limit, not damage.
  if (/deeply nested/i.test(stderr)) {
    return new JobError("limit_exceeded", `Input "${filename}" nests objects deeper than Folio reads (500 levels).`);
  }
  return new JobError("invalid_pdf", `Input "${filename}" is not a readable PDF, even after repair: ${describeDamage(stderr)}.`);
}

/**
 * The last gate of a reconstruction: qpdf --check, which decodes every stream (after the
 * decompressed-size cap, so that a damaged bomb costs no more than its allowance). Damage a
 * rewrite cannot undo — a page's content stream whose data does not decode — would be copied
 * into every output: such a file is refused, naming the pages.
 */
async function checkReconstruction(q: QpdfContext, file: string, filename: string, size: number, limits: RunnerLimits): Promise<void> {
  await checkPdfInflation(q, file, size, limits);
  const res = await exec(q.qpdf, ["--check", file], { signal: q.signal });
  if (res.code !== QPDF_EXIT.ERROR) return;
  const pages = [...new Set([...(res.stdout + res.stderr).matchAll(/page (\d+): content stream/g)].map((m) => m[1]))];
  const what = pages.length
    ? `the content of page${pages.length > 1 ? "s" : ""} ${pages.slice(0, 5).join(", ")} cannot be decoded`
    : describeDamage(res.stdout + res.stderr);
  throw new JobError("invalid_pdf", `Input "${filename}" is damaged beyond repair: ${what}.`);
}

export interface Opened {
  /** The file operations should read: the input itself, or its reconstruction. */
  path: string;
  pages: number;
  encrypted: boolean;
  repaired: boolean;
}

/** qpdf read the file, with or without warnings. */
const readable = (code: number): boolean => code === QPDF_EXIT.OK || code === QPDF_EXIT.WARNINGS;

/** Read without a warning, with pages, and as many as the root's /Count says. */
const clean = (i: Inspection): boolean => i.code === QPDF_EXIT.OK && i.pages >= 1 && i.pages === i.declared;

/** A file on the way to being opened, and what qpdf last found in it. */
interface Stage {
  path: string;
  inspection: Inspection;
}

/** 1. qpdf's reconstruction (cross-reference table, trailer, page tree shape), when it warned. */
async function rewriteWithQpdf(
  q: QpdfContext,
  file: string,
  first: Inspection,
  filename: string,
  index: number,
  passwordFile?: string,
): Promise<Stage> {
  if (first.code !== QPDF_EXIT.WARNINGS) return { path: file, inspection: first };
  const pw = passwordFile ? [`--password-file=${passwordFile}`] : [];
  const rewritten = path.join(q.work, `repaired-${index}.pdf`);
  // --rotate=+0 changes no page, but makes qpdf walk the page tree before writing, so that the
  // corrections it makes while walking (a root that is a page, kids listed twice) are written.
  const res = await exec(q.qpdf, [...pw, path.resolve(file), "--rotate=+0", rewritten], { signal: q.signal });
  if (!readable(res.code)) throw unreadable(filename, `${first.stderr}\n${res.stderr}`);
  return { path: rewritten, inspection: await inspect(q, rewritten, passwordFile) };
}

/**
 * 2. Page counts that do not match the tree (not for a file opened with the client's password:
 * qpdf JSON and --check would need it too, and such a file is only ever edited).
 */
async function recountPages(q: QpdfContext, stage: Stage, index: number, passwordFile?: string): Promise<Stage> {
  const now = stage.inspection;
  if (now.pages < 1 || now.pages === now.declared || passwordFile) return stage;
  const counted = path.join(q.work, `repaired-${index}-counts.pdf`);
  if (!(await fixPageCounts(q, stage.path, counted))) return stage;
  return { path: counted, inspection: await inspect(q, counted) };
}

/**
 * Opens an input as every operation will, reconstructing it first when qpdf had to repair it
 * (see above). Throws encrypted_input, invalid_pdf or limit_exceeded.
 */
export async function openOrRepair(
  q: QpdfContext,
  file: string,
  input: { filename: string; size: number; index: number },
  limits: RunnerLimits,
  passwordFile?: string,
  /** The file's inspection, when it was already made (openEarly's walk). */
  inspected?: Inspection,
): Promise<Opened> {
  const { filename, size, index } = input;
  const first = inspected ?? (await inspect(q, file, passwordFile));
  if (first.needsPassword) throw new JobError("encrypted_input", "The PDF is password-protected; remove the password first.");
  if (clean(first)) return { path: file, pages: first.pages, encrypted: first.encrypted, repaired: false };
  if (!readable(first.code)) throw unreadable(filename, first.stderr);
  const rewritten = await rewriteWithQpdf(q, file, first, filename, index, passwordFile);
  const { path: current, inspection: now } = await recountPages(q, rewritten, index, passwordFile);
  if (now.pages < 1 && readable(now.code)) throw new JobError("invalid_pdf", `Input "${filename}" has no pages, even after repair.`);
  if (!clean(now)) throw unreadable(filename, `${first.stderr}\n${now.stderr}${now.pages !== now.declared ? "\npage tree" : ""}`);
  if (!passwordFile) await checkReconstruction(q, current, filename, size, limits);
  return { path: current, pages: now.pages, encrypted: now.encrypted, repaired: true };
}

/** An input opened before its page tree was walked (see the top of this file). */
export interface EarlyOpened extends Opened {
  /**
   * Resolves once the walk is done: true when it found exactly what `openOrRepair` would have
   * found for a clean file (no warning, and as many pages as the /Count the operation started on).
   */
  stands: Promise<boolean>;
  /** The full path (`openOrRepair`, reusing the walk), for when `stands` is false. */
  reopen(): Promise<Opened>;
}

/**
 * Opens an input for an operation that may start before the page tree is walked. A file qpdf
 * opens with a warning, or whose /Count is below 1, goes the full path at once (it is returned
 * with `stands` already true); otherwise the operation gets the declared /Count and the walk runs
 * beside it. Throws what openOrRepair throws.
 */
export async function openEarly(
  q: QpdfContext,
  file: string,
  input: { filename: string; size: number; index: number },
  limits: RunnerLimits,
  passwordFile?: string,
): Promise<EarlyOpened> {
  const first = await inspectOpen(q, file, passwordFile);
  if (first.needsPassword) throw new JobError("encrypted_input", "The PDF is password-protected; remove the password first.");
  if (first.code !== QPDF_EXIT.OK || first.declared < 1) {
    const opened = await openOrRepair(q, file, input, limits, passwordFile);
    return { ...opened, stands: Promise.resolve(true), reopen: () => Promise.resolve(opened) };
  }
  const walked = inspect(q, file, passwordFile).catch(() => null);
  const stands = walked.then((w) => w !== null && clean(w) && w.declared === first.declared && w.encrypted === first.encrypted);
  return {
    path: file,
    pages: first.declared,
    encrypted: first.encrypted,
    repaired: false,
    stands,
    reopen: async () => {
      const w = await walked;
      return openOrRepair(q, file, input, limits, passwordFile, w ?? undefined);
    },
  };
}
