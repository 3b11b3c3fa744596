/**
 * Turns an operation request — a JSON body, or multipart form fields — into validated common
 * fields and operation options, with every problem reported at its path (API.md "Operations").
 * JSON bodies carry the options as top-level fields next to `inputs`, `webhook_url`, `metadata`
 * and `output_filename`; multipart requests send them as plain fields (`level=high`,
 * `permissions.print=none` or `permissions[print]=none`) or as one `options` field of JSON.
 */
import { z } from "zod";
import { COMMON_FIELDS, CommonRequestFields } from "../../core/schemas/api.ts";
import { OPTIONS_SCHEMAS, type Operation } from "../../core/schemas/options.ts";
import { fieldErrors, type FieldError } from "../http/problem.ts";

export type CommonFields = z.infer<typeof CommonRequestFields>;

/** Fields whose values are text even when they look like numbers ("1234" as a password). */
const TEXT_FIELDS = new Set([
  "user_password",
  "owner_password",
  "password",
  "ranges",
  "output_filename",
  "webhook_url",
  "pages",
  "file_id",
  "url",
  "text",
  "format",
]);

function setPath(target: Record<string, unknown>, keys: string[], value: unknown): void {
  let node = target;
  for (const k of keys.slice(0, -1)) {
    const next = node[k];
    node = (typeof next === "object" && next !== null && !Array.isArray(next) ? next : (node[k] = {})) as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}

function typed(name: string, value: string): unknown {
  if (TEXT_FIELDS.has(name)) return value;
  if (value === "true" || value === "false") return value === "true";
  if (/^-?\d{1,15}$/.test(value)) return Number(value);
  return value;
}

/** A field whose value is JSON: `options` always; `metadata` and `inputs` when they look like it. */
function isJsonField(name: string, value: string): boolean {
  const v = value.trim();
  return (
    name === "options" || ((name === "metadata" || name === "inputs") && v.startsWith("{")) || (name === "inputs" && v.startsWith("["))
  );
}

/** Puts a JSON field into `body` (`options` spread into it, which must be an object); false when it is not JSON. */
function putJsonField(body: Record<string, unknown>, name: string, value: string): boolean {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return false;
  }
  if (name !== "options") body[name] = parsed;
  else if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) Object.assign(body, parsed);
  else return false;
  return true;
}

const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** Multipart fields as a body object; `options` and `metadata`/`inputs` may be JSON. */
export function fieldsToBody(fields: Map<string, string>): { body: Record<string, unknown>; errors: FieldError[] } {
  const body: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  for (const [name, value] of fields) {
    if (isJsonField(name, value)) {
      if (!putJsonField(body, name, value)) errors.push({ path: name, message: "must be JSON" });
      continue;
    }
    const keys = name
      .replace(/\[([^\]]*)\]/g, ".$1")
      .split(".")
      .filter(Boolean);
    if (keys.length === 0 || keys.some((k) => FORBIDDEN_KEYS.has(k))) {
      errors.push({ path: name, message: "not a valid field name" });
      continue;
    }
    setPath(body, keys, typed(keys[keys.length - 1]!, value));
  }
  return { body, errors };
}

/** Splits a body into common fields and the operation's options and validates both. */
export function parseOperationBody(
  operation: Operation,
  body: unknown,
): { ok: true; common: CommonFields; options: Record<string, unknown> } | { ok: false; errors: FieldError[] } {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return { ok: false, errors: [{ path: "(body)", message: "must be a JSON object" }] };
  const commonIn: Record<string, unknown> = {};
  const optionsIn: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) (COMMON_FIELDS.includes(k) ? commonIn : optionsIn)[k] = v;
  const common = CommonRequestFields.safeParse(commonIn);
  const options = OPTIONS_SCHEMAS[operation].safeParse(optionsIn);
  const errors = [...(common.success ? [] : fieldErrors(common.error)), ...(options.success ? [] : fieldErrors(options.error))];
  if (!common.success || !options.success) return { ok: false, errors };
  return { ok: true, common: common.data, options: options.data };
}
