/**
 * The CustomResourceDefinitions — PdfJob, and the Tenant and AccessRequest of Kubernetes mode's
 * store — generated from the zod schemas in core/schemas/pdfjob.ts and tenant.ts
 * (`node controller/gen-crd.ts` writes crds/*.folio.dev.yaml; a test fails when one is stale).
 *
 * zod's OpenAPI 3.0 output is turned into a *structural* schema as apiextensions.k8s.io/v1
 * requires (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema):
 * references inlined, a `type` on every node, no anyOf/oneOf/allOf/not, `additionalProperties:
 * false` dropped (pruning already removes unknown fields), free-form objects marked
 * `x-kubernetes-preserve-unknown-fields`, annotation-only keywords (examples, readOnly, …)
 * dropped. Anything else it does not know makes generation fail, so a schema change that the
 * CRD cannot express is noticed at `make crds`, not on a cluster.
 */
import { z } from "zod";
import {
  PDFJOB_GROUP,
  PDFJOB_KIND,
  PDFJOB_PLURAL,
  PDFJOB_VERSION,
  PdfJobSpec,
  PdfJobStatus,
  SECRET_REF_RULE,
} from "../core/schemas/pdfjob.ts";
import {
  ACCESS_REQUEST_KIND,
  ACCESS_REQUEST_PLURAL,
  AccessRequestSpec,
  AccessRequestStatus,
  TENANT_KIND,
  TENANT_PLURAL,
  TenantSpec,
} from "../core/schemas/tenant.ts";

type Json = Record<string, unknown>;

export const CRD_NAME = `${PDFJOB_PLURAL}.${PDFJOB_GROUP}`;

/** Keywords a structural schema keeps as they are. */
const KEEP = new Set([
  "type",
  "format",
  "description",
  "required",
  "enum",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "nullable",
  "default",
]);
/** Annotations with no meaning to the API server. */
const DROP = new Set([
  "$schema",
  "$id",
  "id",
  "title",
  "examples",
  "readOnly",
  "writeOnly",
  "$comment",
  "propertyNames",
  "contentEncoding",
  "contentMediaType",
]);
const TYPES = new Set(["object", "array", "string", "integer", "number", "boolean"]);

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function resolveRef(node: Json, defs: Json, path: string): Json {
  if (typeof node.$ref !== "string") return node;
  const name = node.$ref.replace(/^#\/(definitions|\$defs)\//, "");
  const target = defs[name];
  if (!isObject(target)) throw new Error(`${path}: unresolvable $ref ${node.$ref}`);
  const { $ref: _ref, ...siblings } = node;
  return { ...resolveRef(target, defs, path), ...siblings };
}

function convertObject(node: Json, out: Json, defs: Json, path: string): void {
  if (isObject(node.properties)) {
    out.properties = Object.fromEntries(Object.entries(node.properties).map(([k, v]) => [k, toStructural(v, defs, `${path}.${k}`)]));
  }
  const extra = node.additionalProperties;
  if (extra === undefined || extra === false || out["x-kubernetes-preserve-unknown-fields"] === true) return;
  if (extra === true || (isObject(extra) && Object.keys(extra).length === 0)) {
    out["x-kubernetes-preserve-unknown-fields"] = true;
    return;
  }
  if (out.properties) throw new Error(`${path}: properties and additionalProperties together are not structural`);
  out.additionalProperties = toStructural(extra, defs, `${path}.*`);
}

/** Keywords whose children toStructural converts itself. */
const CHILDREN = new Set(["properties", "additionalProperties", "items", "definitions", "$defs"]);

/** The node's keywords a structural schema keeps (const as a one-value enum); throws on one it cannot express. */
function keptKeywords(node: Json, path: string): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (KEEP.has(k) || k.startsWith("x-kubernetes-")) out[k] = v;
    else if (k === "const") out.enum = [v];
    else if (!DROP.has(k) && !CHILDREN.has(k)) throw new Error(`${path}: "${k}" cannot be expressed in a structural schema`);
  }
  return out;
}

/** Drops zod's bounds and patterns that say nothing to the API server, and makes the rest RE2. */
function tidyBounds(out: Json): void {
  // zod bounds every integer by the safe-integer range; Kubernetes integers are int64 anyway.
  if (out.minimum === Number.MIN_SAFE_INTEGER) delete out.minimum;
  if (out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum;
  // The API server checks date-time itself; zod's equivalent regex would only add noise.
  if (out.format === "date-time") delete out.pattern;
  if (typeof out.pattern === "string") out.pattern = re2(out.pattern);
}

/** One node of zod's OpenAPI 3.0 output as a structural schema node; throws on what CRDs cannot express. */
export function toStructural(input: unknown, defs: Json, path = "$"): Json {
  if (!isObject(input)) throw new Error(`${path}: not a schema`);
  const node = resolveRef(input, defs, path);
  const out = keptKeywords(node, path);
  if (typeof out.type !== "string" || !TYPES.has(out.type))
    throw new Error(`${path}: every node needs a type (got ${JSON.stringify(out.type)})`);
  tidyBounds(out);
  if (out.type === "object") convertObject(node, out, defs, path);
  if (out.type === "array") out.items = toStructural(node.items, defs, `${path}[]`);
  return ordered(out);
}

/**
 * A JavaScript regex source as Go's RE2 syntax, which the API server compiles patterns with:
 * `\uXXXX` becomes `\x{XXXX}` and the needless `\/` a plain slash.
 */
export function re2(pattern: string): string {
  // Escapes are consumed pairwise, so an escaped backslash followed by "u" stays what it is.
  return pattern.replace(/\\(u[0-9a-fA-F]{4}|.)/gsu, (m, esc: string) =>
    esc === "/" ? "/" : esc.length === 5 ? `\\x{${esc.slice(1)}}` : m,
  );
}

/** Keywords in reading order: what the node is first, then its bounds, then its children. */
const ORDER = [
  "description",
  "type",
  "format",
  "nullable",
  "enum",
  "default",
  "minimum",
  "exclusiveMinimum",
  "maximum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "required",
];

function ordered(node: Json): Json {
  const rank = (k: string): number => {
    const i = ORDER.indexOf(k);
    if (i >= 0) return i;
    return k.startsWith("x-kubernetes-") ? ORDER.length : ORDER.length + 1;
  };
  return Object.fromEntries(Object.entries(node).sort(([a], [b]) => rank(a) - rank(b)));
}

/** A zod schema as a structural schema. */
export function structuralOf(schema: z.ZodType): Json {
  const raw = z.toJSONSchema(schema, { target: "openapi-3.0", io: "input", unrepresentable: "throw" }) as Json;
  const defs = { ...((raw.definitions ?? {}) as Json), ...((raw.$defs ?? {}) as Json) };
  return toStructural(raw, defs);
}

const PRINTER_COLUMNS = [
  { name: "Operation", type: "string", jsonPath: ".spec.operation" },
  { name: "Tenant", type: "string", jsonPath: ".spec.tenant" },
  { name: "Phase", type: "string", jsonPath: ".status.phase" },
  { name: "Queue", type: "integer", jsonPath: ".status.queuePosition", priority: 1 },
  { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  { name: "Reason", type: "string", jsonPath: '.status.conditions[?(@.type=="Succeeded")].reason' },
];

interface CrdShape {
  kind: string;
  plural: string;
  shortNames: string[];
  description: string;
  spec: z.ZodType;
  status?: z.ZodType;
  printerColumns: Json[];
  /** CEL rules on the whole object (they may read metadata.name). */
  validations?: Json[];
}

/** A namespaced CustomResourceDefinition (apiextensions.k8s.io/v1) of Folio's group. */
function crdOf(c: CrdShape): Json {
  const openAPIV3Schema = {
    type: "object",
    description: c.description,
    properties: {
      apiVersion: { type: "string", description: "APIVersion defines the versioned schema of this representation of an object." },
      kind: { type: "string", description: "Kind is a string value representing the REST resource this object represents." },
      metadata: { type: "object" },
      spec: structuralOf(c.spec),
      ...(c.status ? { status: structuralOf(c.status) } : {}),
    },
    required: ["spec"],
    ...(c.validations ? { "x-kubernetes-validations": c.validations } : {}),
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${c.plural}.${PDFJOB_GROUP}`, labels: { "app.kubernetes.io/part-of": "folio" } },
    spec: {
      group: PDFJOB_GROUP,
      scope: "Namespaced",
      names: {
        kind: c.kind,
        listKind: `${c.kind}List`,
        plural: c.plural,
        singular: c.kind.toLowerCase(),
        shortNames: c.shortNames,
        categories: ["folio"],
      },
      versions: [
        {
          name: PDFJOB_VERSION,
          served: true,
          storage: true,
          ...(c.status ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: c.printerColumns,
          schema: { openAPIV3Schema },
        },
      ],
    },
  };
}

/** The PdfJob CustomResourceDefinition. */
export function pdfJobCrd(): Json {
  return crdOf({
    kind: PDFJOB_KIND,
    plural: PDFJOB_PLURAL,
    shortNames: ["pj"],
    description: "A PDF operation requested through the Folio API, run by the controller as a batch/v1 Job.",
    spec: PdfJobSpec,
    status: PdfJobStatus,
    printerColumns: PRINTER_COLUMNS,
    validations: [{ rule: SECRET_REF_RULE, message: "spec.secretRef.name must be the PdfJob's own Secret (its name)" }],
  });
}

/** The Tenant CustomResourceDefinition (core/schemas/tenant.ts). */
export function tenantCrd(): Json {
  return crdOf({
    kind: TENANT_KIND,
    plural: TENANT_PLURAL,
    shortNames: ["ft"],
    description: "A Folio tenant: its plan, whether it is suspended, and the Secret of its webhook signing secrets.",
    spec: TenantSpec,
    printerColumns: [
      { name: "Plan", type: "string", jsonPath: ".spec.plan" },
      { name: "Suspended", type: "boolean", jsonPath: ".spec.suspended" },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}

/** The AccessRequest CustomResourceDefinition (core/schemas/tenant.ts). */
export function accessRequestCrd(): Json {
  return crdOf({
    kind: ACCESS_REQUEST_KIND,
    plural: ACCESS_REQUEST_PLURAL,
    shortNames: ["far"],
    description: "A request for early access sent to POST /v1/access_requests; an operator approves or rejects it.",
    spec: AccessRequestSpec,
    status: AccessRequestStatus,
    printerColumns: [
      { name: "Company", type: "string", jsonPath: ".spec.company" },
      { name: "Email", type: "string", jsonPath: ".spec.email" },
      { name: "Phase", type: "string", jsonPath: ".status.phase" },
      { name: "Tenant", type: "string", jsonPath: ".status.tenant" },
      { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
    ],
  });
}

/** Every CRD of the product, by file name (crds/<name>.yaml). */
export const CRDS: readonly { name: string; object: () => Json; source: string }[] = [
  { name: CRD_NAME, object: pdfJobCrd, source: "core/schemas/pdfjob.ts" },
  { name: `${TENANT_PLURAL}.${PDFJOB_GROUP}`, object: tenantCrd, source: "core/schemas/tenant.ts" },
  { name: `${ACCESS_REQUEST_PLURAL}.${PDFJOB_GROUP}`, object: accessRequestCrd, source: "core/schemas/tenant.ts" },
];

// --- a small YAML emitter -------------------------------------------------------------------------
// Block style for maps and lists; a string is written plain only when YAML cannot read it as
// anything else, otherwise as a JSON string (every JSON string is a valid YAML double-quoted scalar).

const RESERVED = /^(?:y|n|yes|no|on|off|true|false|null|~)$/i;

function scalar(v: unknown): string | null {
  if (v === null) return "null";
  if (typeof v === "boolean") return String(v);
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error(`cannot write ${v} as YAML`);
    return String(v);
  }
  if (typeof v === "string") return /^[A-Za-z][A-Za-z0-9_./-]*$/.test(v) && !RESERVED.test(v) ? v : JSON.stringify(v);
  if (Array.isArray(v) && v.length === 0) return "[]";
  if (isObject(v) && Object.keys(v).length === 0) return "{}";
  if (Array.isArray(v) || isObject(v)) return null;
  throw new Error(`cannot write ${typeof v} as YAML`);
}

function block(value: unknown, pad: string): string[] {
  if (Array.isArray(value)) {
    return value.flatMap((item) => {
      const s = scalar(item);
      if (s !== null) return [`${pad}- ${s}`];
      const lines = block(item, `${pad}  `);
      lines[0] = `${pad}- ${lines[0]!.slice(pad.length + 2)}`;
      return lines;
    });
  }
  if (!isObject(value)) throw new Error("not a YAML block");
  return Object.entries(value).flatMap(([k, v]) => {
    if (v === undefined) return [];
    const key = scalar(k)!;
    const s = scalar(v);
    return s !== null ? [`${pad}${key}: ${s}`] : [`${pad}${key}:`, ...block(v, `${pad}  `)];
  });
}

/** A JSON-compatible value as a YAML document. */
export function toYaml(value: unknown): string {
  const s = scalar(value);
  return s !== null ? `${s}\n` : block(value, "").join("\n") + "\n";
}

/** A committed file's content: a header and the CRD (the PdfJob one by default). */
export function crdYaml(crd: Json = pdfJobCrd(), source = "core/schemas/pdfjob.ts"): string {
  return (
    `# Generated by controller/gen-crd.ts from the zod schemas in ${source}: do not edit.\n` +
    "# Regenerate with `make crds`; the test suite fails when this file is stale.\n" +
    "---\n" +
    toYaml(crd)
  );
}
