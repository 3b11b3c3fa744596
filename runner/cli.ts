/**
 * `folio run <operation> [--options JSON|@FILE|-] [--name value …] INPUT… -o OUTDIR`
 *
 * For people and benchmarks: runs one operation on local files, writes the outputs into OUTDIR
 * and prints the result JSON on stdout, nothing else. On failure it prints
 * `{"error": {"code", "message"}}` on stdout and exits with the code of core/errors.ts EXIT.
 * `--name value` flags in kebab-case are a convenience over --options (`--level high`,
 * `--permissions.print none`); a merge input may carry pages as `INPUT@1-3,7`.
 */
import { existsSync, readFileSync } from "node:fs";
import { EXIT, JobError, toJobError } from "../core/errors.ts";
import { Operation } from "../core/schemas/options.ts";
import { parsePageRanges } from "../core/pages.ts";

export interface ParsedRunArgs {
  operation: Operation;
  options: Record<string, unknown>;
  inputs: { path: string; filename: string; pages?: string }[];
  outDir: string;
  outputFilename?: string;
}

export class UsageError extends Error {
  override readonly name = "UsageError";
}

export const RUN_USAGE = `usage: folio run <operation> [--options JSON|@FILE|-] [--name value ...] INPUT... -o OUTDIR
  operations: compress | merge | split | convert | protect | edit | ocr
  --options '{"level": "high"}'   the operation's options, exactly as in the API (API.md)
  --level high, --mode every --every 5, --permissions.print none
                                  the same options as kebab-case flags
  INPUT@1-3,7                     pages to take from an input (merge)
  --output-filename NAME          base name of the outputs
  -o, --output OUTDIR             where outputs are written (created if missing)
prints the result JSON on stdout; on failure {"error": {"code", "message"}} and exit code
  2 (invalid options), 3 (bad input: invalid_pdf, encrypted_input, ...), 4 (timeout), 1 (internal).`;

function scalar(value: string): unknown {
  if (value === "true") return true;
  if (value === "false") return false;
  if (/^-?\d+$/.test(value) && value.length < 16) return Number(value);
  return value;
}

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const keys = dotted.split(".").map((k) => k.replace(/-/g, "_"));
  let node = target;
  for (const k of keys.slice(0, -1)) {
    const next = node[k];
    node = (typeof next === "object" && next !== null ? next : (node[k] = {})) as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}

function readOptions(value: string, stdin: () => string): Record<string, unknown> {
  const text = value === "-" ? stdin() : value.startsWith("@") ? readFileSync(value.slice(1), "utf8") : value;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError("--options is not valid JSON");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new UsageError("--options must be a JSON object");
  return parsed as Record<string, unknown>;
}

function parseInput(arg: string): ParsedRunArgs["inputs"][number] {
  const at = arg.lastIndexOf("@");
  if (at > 0 && !existsSync(arg)) {
    const pages = arg.slice(at + 1);
    if (typeof parsePageRanges(pages) !== "string") {
      const file = arg.slice(0, at);
      return { path: file, filename: file.split("/").pop()!, pages };
    }
  }
  return { path: arg, filename: arg.split("/").pop()! };
}

/** What the arguments after the operation say, before the flags are merged into the options. */
interface ScannedArgs {
  options: Record<string, unknown>;
  flags: [string, unknown][];
  inputs: ParsedRunArgs["inputs"];
  outDir?: string;
  outputFilename?: string;
}

/** Walks the arguments after the operation: -o, --options, --output-filename, `--NAME[=VALUE]` flags, inputs (all after `--`). */
function scanRunArgs(rest: readonly string[], stdin: () => string): ScannedArgs {
  const out: ScannedArgs = { options: {}, flags: [], inputs: [] };
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const next = (): string => {
      const v = rest[++i];
      if (v === undefined) throw new UsageError(`${arg} needs a value`);
      return v;
    };
    if (arg === "-o" || arg === "--output") out.outDir = next();
    else if (arg === "--options") out.options = readOptions(next(), stdin);
    else if (arg === "--output-filename") out.outputFilename = next();
    else if (arg === "--") {
      out.inputs.push(...rest.slice(i + 1).map(parseInput));
      break;
    } else if (arg.startsWith("--")) {
      const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      out.flags.push([name, inline !== undefined ? scalar(inline) : scalar(next())]);
    } else out.inputs.push(parseInput(arg));
  }
  return out;
}

/** Parses `folio run` arguments (after "run"). */
export function parseRunArgs(argv: readonly string[], stdin: () => string = () => readFileSync(0, "utf8")): ParsedRunArgs {
  const [op, ...rest] = argv;
  const operation = Operation.safeParse(op);
  if (!operation.success) throw new UsageError(op ? `unknown operation "${op}"` : "missing operation");
  const { options, flags, inputs, outDir, outputFilename } = scanRunArgs(rest, stdin);
  for (const [name, value] of flags) setPath(options, name, value);
  if (!outDir) throw new UsageError("missing -o OUTDIR");
  // A convert of a web page (--url) has no input file.
  if (inputs.length === 0 && options.url === undefined) throw new UsageError("missing INPUT");
  return { operation: operation.data, options, inputs, outDir, ...(outputFilename ? { outputFilename } : {}) };
}

/** Prints a failure the documented way and returns the exit code. */
export function reportFailure(err: unknown, out: (line: string) => void): number {
  if (err instanceof UsageError) {
    out(JSON.stringify({ error: { code: "validation_failed", message: err.message } }));
    return EXIT.USAGE;
  }
  const jobError: JobError = toJobError(err);
  out(JSON.stringify({ error: jobError.toJSON() }));
  return jobError.exitCode;
}
