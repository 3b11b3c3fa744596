/**
 * The metadata step: the document information dictionary (ISO 32000-1 §14.3.3) updated through
 * qpdf's `--update-from-json` (qpdf manual, "qpdf JSON", update mode) in the same run as the other
 * steps. Entries the client does not name are kept; a string sets one (as a Unicode text string),
 * null removes it. A document without an information dictionary gets a new one, as the object
 * after the highest in use, referenced from the trailer.
 */
import { JobError } from "../../core/errors.ts";
import { qpdfJson, type QpdfContext } from "../engines/qpdf.ts";

type Json = Record<string, unknown>;

/** Trailer keys that describe a cross-reference stream (§7.5.8.2), not the document. */
const XREF_STREAM_KEYS = new Set(["/Type", "/W", "/Index", "/Filter", "/DecodeParms", "/Length", "/Prev", "/XRefStm"]);

function objects(json: unknown): { header: Json; objects: Json } {
  const parts = (json as { qpdf?: unknown[] }).qpdf;
  if (!Array.isArray(parts) || parts.length < 2) throw new JobError("invalid_pdf", "The document's trailer could not be read.");
  return { header: parts[0] as Json, objects: parts[1] as Json };
}

/** The qpdf JSON update that sets `info` (PDF key → value, null to remove) on `input`. */
export async function documentInfoUpdate(
  qctx: QpdfContext,
  pw: readonly string[],
  input: string,
  info: Record<string, string | null>,
): Promise<Json> {
  const first = objects(await qpdfJson(qctx, [...pw, "--json-key=qpdf", "--json-object=trailer"], input));
  const trailer = ((first.objects.trailer as Json | undefined)?.value ?? {}) as Json;
  const ref = typeof trailer["/Info"] === "string" ? /^(\d+) (\d+) R$/.exec(trailer["/Info"]) : null;
  let current: Json = {};
  if (ref) {
    const second = objects(await qpdfJson(qctx, [...pw, "--json-key=qpdf", `--json-object=${ref[1]},${ref[2]}`], input));
    const value = (second.objects[`obj:${ref[0]}`] as Json | undefined)?.value;
    if (value && typeof value === "object" && !Array.isArray(value)) current = value as Json;
  }
  const merged: Json = { ...current };
  for (const [key, value] of Object.entries(info)) {
    if (value === null) delete merged[`/${key}`];
    else merged[`/${key}`] = `u:${value}`;
  }
  const header = { jsonversion: 2, pushedinheritedpageresources: false, calledgetallpages: false, maxobjectid: first.header.maxobjectid };
  if (ref) return { qpdf: [header, { [`obj:${ref[0]}`]: { value: merged } }] };
  const id = Number(first.header.maxobjectid) + 1;
  const kept = Object.fromEntries(Object.entries(trailer).filter(([k]) => !XREF_STREAM_KEYS.has(k)));
  return {
    qpdf: [header, { [`obj:${id} 0 R`]: { value: merged }, trailer: { value: { ...kept, "/Info": `${id} 0 R`, "/Size": id + 1 } } }],
  };
}
