/**
 * The decompressed-size cap for PDFs (API.md "Limits", issue #10 item 6): before an operation
 * decompresses a PDF's streams (compress recompresses every Flate stream, PDF → Office decodes
 * the content), the bytes they inflate to are counted, and a file past its allowance ends in
 * limit_exceeded — a 1 MB file that inflates to 1 GiB stops after its allowance is counted, not
 * after qpdf has spent seconds inflating and deflating it all.
 *
 * qpdf lists every stream (object streams' contents included, encryption removed) with its
 * dictionary and writes each one's data as stored (`--decode-level=none`), which costs a copy of
 * the file, no inflation; stream-filters.ts counts what each decodes to, stopping at the budget.
 * The allowance is office-zip.ts's: min(max_decompressed_bytes, max(64 MiB, ratio × file size)).
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { JobError } from "../../core/errors.ts";
import type { RunnerLimits } from "../../core/schemas/job.ts";
import { exec } from "../engines/exec.ts";
import { inflationAllowance, inflationError } from "../engines/office-zip.ts";
import { parseQpdfJson, type JsonDict, type JsonValue } from "./pdf-json.ts";
import { QPDF_EXIT, type QpdfContext } from "../engines/qpdf.ts";
import { countedFilters, decodedSize } from "./stream-filters.ts";

/** qpdf's JSON of a file with millions of objects is not worth parsing for this; refused instead. */
const MAX_JSON_BYTES = 512 * 1024 * 1024;

export interface InflationFigures {
  /** Streams whose filters expand. */
  streams: number;
  /** Bytes they inflate to. */
  inflated: number;
  allowance: number;
}

function filtersOf(dict: JsonDict): string[] {
  const f: JsonValue | undefined = dict["/Filter"];
  if (typeof f === "string") return [f];
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === "string") : [];
}

/**
 * Counts what the streams of `file` inflate to and throws limit_exceeded past the allowance.
 * A file qpdf cannot list is left to the operation, which meets the same damage and says so.
 */
export async function checkPdfInflation(q: QpdfContext, file: string, size: number, limits: RunnerLimits): Promise<InflationFigures> {
  const allowance = inflationAllowance(limits, size);
  const dir = path.join(q.work, `streams-${randomBytes(6).toString("hex")}`);
  await mkdir(dir, { mode: 0o700 });
  try {
    const json = path.join(dir, "objects.json");
    const job = path.join(dir, "job.json");
    const spec = {
      inputFile: file,
      outputFile: json,
      noWarn: "",
      json: "2",
      jsonKey: ["qpdf"],
      jsonStreamData: "file",
      jsonStreamPrefix: path.join(dir, "s"),
      decodeLevel: "none",
    };
    await writeFile(job, JSON.stringify(spec), { mode: 0o600 });
    const res = await exec(q.qpdf, [`--job-json-file=${job}`], { signal: q.signal });
    if (res.code !== QPDF_EXIT.OK && res.code !== QPDF_EXIT.WARNINGS) return { streams: 0, inflated: 0, allowance };
    if ((await stat(json)).size > MAX_JSON_BYTES) throw new JobError("limit_exceeded", "The PDF has too many objects to process.");
    const objects = (
      parseQpdfJson(await readFile(json, "utf8")) as {
        qpdf?: [unknown, Record<string, { stream?: { datafile?: string; dict?: JsonDict } }>];
      }
    ).qpdf?.[1];
    const figures: InflationFigures = { streams: 0, inflated: 0, allowance };
    for (const obj of Object.values(objects ?? {})) {
      const s = obj.stream;
      const filters = s?.dict ? countedFilters(filtersOf(s.dict)) : [];
      if (!s?.datafile || filters.length === 0) continue;
      const data = await readFile(s.datafile);
      figures.streams++;
      figures.inflated += await decodedSize(data, filters, allowance - figures.inflated);
      if (figures.inflated > allowance) throw inflationError("The PDF", allowance);
    }
    return figures;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
