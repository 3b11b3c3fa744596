/**
 * A PDF's objects through qpdf JSON v2 (qpdf manual, "qpdf JSON"): qpdf parses, repairs and
 * decrypts, and we read plain JSON. The same format goes back in with `--update-from-json`, which
 * replaces only the objects we name and leaves every other object — fonts, forms, annotations,
 * outlines, structure — exactly as qpdf read it.
 *
 * Values as qpdf writes them: names "/Name", references "12 0 R", strings "u:text" or "b:hex",
 * numbers, booleans, null, arrays and dictionaries (keys are names).
 */
import { randomBytes } from "node:crypto";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { exec } from "../engines/exec.ts";
import { QPDF_EXIT, QpdfError, type QpdfContext } from "../engines/qpdf.ts";

export type JsonValue = null | boolean | number | string | JsonValue[] | JsonDict;
export interface JsonDict {
  [key: string]: JsonValue;
}

/** One indirect object: a plain value, or a stream (its dictionary; the data stays in the PDF). */
export interface PdfObject {
  value?: JsonValue;
  stream?: { dict: JsonDict };
}

export interface PdfObjects {
  /** The first element of qpdf's "qpdf" array (jsonversion, maxobjectid, …), echoed in patches. */
  header: JsonDict;
  /** By reference, "12 0 R". */
  objects: Map<string, PdfObject>;
  trailer: JsonDict;
}

const REF = /^\d+ \d+ R$/;

/**
 * JSON.parse for qpdf's JSON, which writes real numbers as the PDF has them: "0." and "-.5" are
 * PDF numbers (ISO 32000-1 §7.3.3) but not JSON ones. Outside strings, such numbers are completed
 * ("0.0", "-0.5") before parsing.
 */
export function parseQpdfJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const fixed = text.replace(
      /("(?:[^"\\]|\\.)*")|(-?)(\d*)\.(\d*)(?=[\s,\]}])/g,
      (m, str: string | undefined, sign: string, int: string, frac: string) =>
        str !== undefined ? m : `${sign}${int || "0"}.${frac || "0"}`,
    );
    return JSON.parse(fixed);
  }
}

/** A reference ("12 0 R")? */
export function isRef(v: JsonValue | undefined): v is string {
  return typeof v === "string" && REF.test(v);
}

export function isDict(v: JsonValue | undefined): v is JsonDict {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A name's text without the slash, or null when `v` is not a name. */
export function nameOf(v: JsonValue | undefined): string | null {
  return typeof v === "string" && v.startsWith("/") ? v.slice(1) : null;
}

/** Follows a reference to the value it names (a stream's dictionary for a stream). */
export function deref(objs: PdfObjects, v: JsonValue | undefined): JsonValue | undefined {
  if (!isRef(v)) return v;
  const o = objs.objects.get(v);
  return o?.stream ? o.stream.dict : o?.value;
}

export function dictAt(objs: PdfObjects, v: JsonValue | undefined): JsonDict | null {
  const d = deref(objs, v);
  return isDict(d) ? d : null;
}

function isQpdfFailure(code: number): boolean {
  return code !== QPDF_EXIT.OK && code !== QPDF_EXIT.WARNINGS;
}

/**
 * Every object's dictionary or value, without stream data. Returns null when the JSON would be
 * larger than `maxBytes` (a document with millions of objects): the caller then skips the work
 * that needs it rather than risk the runner's memory.
 */
export async function dumpObjects(ctx: QpdfContext, file: string, maxBytes: number): Promise<PdfObjects | null> {
  const out = path.join(ctx.work, `objects-${randomBytes(6).toString("hex")}.json`);
  try {
    const res = await exec(ctx.qpdf, ["--no-warn", file, "--json-output=2", "--json-stream-data=none", out], { signal: ctx.signal });
    if (isQpdfFailure(res.code)) throw new QpdfError(res.code, res.stderr);
    if ((await stat(out)).size > maxBytes) return null;
    const parsed = JSON.parse(await readFile(out, "utf8")) as { qpdf?: [JsonDict, Record<string, PdfObject>] };
    const [header, body] = parsed.qpdf ?? [];
    if (!header || !body) return null;
    const objects = new Map<string, PdfObject>();
    let trailer: JsonDict = {};
    for (const [key, obj] of Object.entries(body)) {
      if (key === "trailer") trailer = isDict(obj.value) ? obj.value : {};
      else if (key.startsWith("obj:")) objects.set(key.slice(4), obj);
    }
    return { header, objects, trailer };
  } finally {
    await rm(out, { force: true });
  }
}

export interface ExtractedStream {
  /** The data, with qpdf's generalized filters (Flate, LZW, ASCII85, ASCIIHex) removed. */
  file: string;
  /** The dictionary as it describes `file`: /Filter lists only the filters still applied. */
  dict: JsonDict;
}

interface SelectOptions {
  /** "12 0 R" references, or "trailer". */
  refs: readonly string[];
  data: "file" | "inline" | "none";
  prefix?: string;
  maxOutput: number;
}

type Selected = Record<string, { value?: JsonValue; stream?: { datafile?: string; data?: string; dict?: JsonDict } }>;

/**
 * `qpdf --json=2` limited to the given objects, their stream data decoded as far as qpdf's
 * generalized level goes: Flate and LZW (with predictors), ASCII85 and ASCIIHex are undone; DCT,
 * JPX, JBIG2 and CCITT are not. The object list goes through a job file, not the command line,
 * and qpdf writes the JSON into a file, read whole: JSON larger than `maxOutput` is declined
 * (null) as a whole, never read cut short.
 */
async function selectObjects(ctx: QpdfContext, file: string, o: SelectOptions): Promise<Selected | null> {
  const id = randomBytes(6).toString("hex");
  const job = path.join(ctx.work, `select-${id}.json`);
  const out = path.join(ctx.work, `selected-${id}.json`);
  const spec = {
    inputFile: file,
    outputFile: out,
    noWarn: "",
    json: "2",
    jsonKey: ["qpdf"],
    jsonObject: o.refs.map((r) => r.split(" ").slice(0, 2).join(",")),
    jsonStreamData: o.data,
    ...(o.prefix ? { jsonStreamPrefix: o.prefix } : {}),
    decodeLevel: "generalized",
  };
  await writeFile(job, JSON.stringify(spec), { mode: 0o600 });
  try {
    const res = await exec(ctx.qpdf, [`--job-json-file=${job}`], { signal: ctx.signal });
    if (isQpdfFailure(res.code)) throw new QpdfError(res.code, res.stderr);
    if ((await stat(out)).size > o.maxOutput) return null;
    try {
      return (JSON.parse(await readFile(out, "utf8")) as { qpdf?: [JsonDict, Selected] }).qpdf?.[1] ?? {};
    } catch {
      return null;
    }
  } finally {
    await rm(job, { force: true });
    await rm(out, { force: true });
  }
}

/**
 * Writes the data of the given streams (images) into files under `dir`, one qpdf run per batch.
 * The dictionary returned describes the file: /Filter lists only the filters still applied.
 */
export async function extractStreams(
  ctx: QpdfContext,
  file: string,
  refs: readonly string[],
  dir: string,
): Promise<Map<string, ExtractedStream>> {
  const result = new Map<string, ExtractedStream>();
  if (refs.length === 0) return result;
  const selected = await selectObjects(ctx, file, { refs, data: "file", prefix: path.join(dir, "s"), maxOutput: 64 * 1024 * 1024 });
  for (const [key, obj] of Object.entries(selected ?? {})) {
    const s = obj.stream;
    if (key.startsWith("obj:") && s?.datafile && s.dict) result.set(key.slice(4), { file: s.datafile, dict: s.dict });
  }
  return result;
}

/**
 * The fully decoded data of the given streams (content streams), in memory; a stream qpdf could
 * not decode, or a batch whose output exceeded `maxOutput`, is missing from the result.
 */
export async function readStreams(
  ctx: QpdfContext,
  file: string,
  refs: readonly string[],
  maxOutput: number,
): Promise<Map<string, Buffer>> {
  const result = new Map<string, Buffer>();
  if (refs.length === 0) return result;
  const selected = await selectObjects(ctx, file, { refs, data: "inline", maxOutput });
  for (const [key, obj] of Object.entries(selected ?? {})) {
    const s = obj.stream;
    const filtered = s?.dict?.["/Filter"] !== undefined;
    if (key.startsWith("obj:") && typeof s?.data === "string" && !filtered) result.set(key.slice(4), Buffer.from(s.data, "base64"));
  }
  return result;
}

/** A replacement for one stream: its new data (a file) and its complete new dictionary. */
export interface StreamUpdate {
  ref: string;
  datafile: string;
  dict: JsonDict;
}

/** Writes a patch for `qpdf --update-from-json` that replaces exactly the given streams. */
export async function writePatch(file: string, header: JsonDict, updates: readonly StreamUpdate[]): Promise<void> {
  const body: Record<string, unknown> = {};
  for (const u of updates) body[`obj:${u.ref}`] = { stream: { datafile: u.datafile, dict: u.dict } };
  await writeFile(file, JSON.stringify({ qpdf: [header, body] }), { mode: 0o600 });
}

/**
 * The document's XMP metadata packet (the catalog's /Metadata stream, ISO 32000-1 §14.3.2) as
 * text, or null when there is none or it cannot be read. Three small qpdf runs: trailer, catalog,
 * stream; each reads only the cross-reference table and the objects asked for.
 */
export async function catalogMetadata(ctx: QpdfContext, file: string): Promise<string | null> {
  const small = 16 * 1024 * 1024;
  const trailer = (await selectObjects(ctx, file, { refs: ["trailer"], data: "none", maxOutput: small }))?.trailer?.value;
  const root = isDict(trailer) ? trailer["/Root"] : undefined;
  if (!isRef(root)) return null;
  const catalog = (await selectObjects(ctx, file, { refs: [root], data: "none", maxOutput: small }))?.[`obj:${root}`]?.value;
  const meta = isDict(catalog) ? catalog["/Metadata"] : undefined;
  if (!isRef(meta)) return null;
  return (await readStreams(ctx, file, [meta], small)).get(meta)?.toString("utf8") ?? null;
}
