/**
 * The OpenAPI 3.1 document, walked from the route table the server mounts (api/routes/table.ts)
 * and generated from the zod schemas the server validates with (zod's JSON Schema output is draft
 * 2020-12, which OpenAPI 3.1 uses as is). Request bodies are each operation's options merged with
 * the common fields, as the server parses them.
 */
import { z } from "zod";
import { API_ERRORS, JOB_ERRORS, type ApiErrorCode } from "../core/errors.ts";
import { CommonRequestFields, Problem } from "../core/schemas/api.ts";
import type { Route } from "./routes/route.ts";
import { ROUTES } from "./routes/table.ts";

type Json = Record<string, unknown>;

const REF = (id: string): Json => ({ $ref: `#/components/schemas/${id}` });

/**
 * A schema as JSON Schema, with its named sub-schemas (zod `.meta({id})`) hoisted into
 * `defs` and referenced as components; a root that is itself named is returned inline.
 */
function schemaOf(s: z.ZodType, io: "input" | "output", defs: Json): Json {
  const raw = JSON.stringify(z.toJSONSchema(s, { target: "draft-2020-12", io, unrepresentable: "any" }));
  const out = JSON.parse(raw.replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
  delete out.$schema;
  const own = (out.$defs ?? {}) as Json;
  delete out.$defs;
  let root = out;
  const ref = typeof out.$ref === "string" ? out.$ref.replace("#/components/schemas/", "") : null;
  if (ref && own[ref]) {
    root = { ...(own[ref] as Json), ...Object.fromEntries(Object.entries(out).filter(([k]) => k !== "$ref")) };
    delete own[ref];
  }
  Object.assign(defs, own);
  return root;
}

/** Common fields merged into an options schema (object, or each branch of a oneOf/anyOf). */
function withCommon(options: Json, common: Json): Json {
  const merge = (o: Json): Json => ({
    ...o,
    properties: { ...(common.properties as Json), ...(o.properties as Json) },
    required: [...((o.required as string[]) ?? [])],
    additionalProperties: false,
  });
  const branches = (options.oneOf ?? options.anyOf) as Json[] | undefined;
  if (branches) return { ...options, [options.oneOf ? "oneOf" : "anyOf"]: branches.map(merge) };
  return merge(options);
}

function problemResponses(codes: ApiErrorCode[]): Json {
  const out: Json = {};
  for (const code of codes) {
    const status = String(API_ERRORS[code].status);
    const prior = out[status] as Json | undefined;
    const description = prior ? `${prior.description as string}; ${code}` : `${API_ERRORS[code].title} (${code})`;
    out[status] = { description, content: { "application/problem+json": { schema: REF("Problem") } } };
  }
  return out;
}

/** What every route behind an API key may answer, before its own codes. */
const AUTHED: ApiErrorCode[] = ["unauthorized", "plan_required", "tenant_suspended", "https_required", "rate_limited", "internal_error"];

/** Writes JSON Schemas into the document's components as they are met. */
class Components {
  readonly schemas: Json = {};
  private readonly common: Json;

  constructor() {
    this.common = schemaOf(CommonRequestFields, "input", this.schemas);
    this.named(Problem, "output");
  }

  /** A schema as a reference to its component when it has an id, else inline. */
  named(s: z.ZodType, io: "input" | "output", component?: string): Json {
    const id = component ?? z.globalRegistry.get(s)?.id;
    if (!id) return schemaOf(s, io, this.schemas);
    this.schemas[id] ??= schemaOf(s, io, this.schemas);
    return REF(id);
  }

  /** A schema written out in place (parameters are listed field by field, never referenced). */
  inline(s: z.ZodType, io: "input" | "output"): Json {
    return schemaOf(s, io, this.schemas);
  }

  /** An operation's options with the common fields, as its component. */
  withCommon(s: z.ZodType, component: string): Json {
    this.schemas[component] = withCommon(schemaOf(s, "input", this.schemas), this.common);
    return REF(component);
  }
}

/** A route's path, query and header schemas as OpenAPI parameters (descriptions on the parameter). */
function parametersOf(r: Route, components: Components): Json[] {
  const groups = [
    ["path", r.params],
    ["query", r.query],
    ["header", r.headers],
  ] as const;
  return groups.flatMap(([where, shape]) => {
    if (!shape) return [];
    const object = components.inline(shape, "input");
    const required = new Set((object.required as string[] | undefined) ?? []);
    return Object.entries(object.properties as Record<string, Json>).map(([name, { description, ...schema }]) => ({
      name,
      in: where,
      ...(where === "path" || required.has(name) ? { required: true } : {}),
      schema,
      ...(description === undefined ? {} : { description }),
    }));
  });
}

function requestBodyOf(r: Route, components: Components): Json | undefined {
  const { json, multipart } = r.body ?? {};
  if (!json && !multipart) return undefined;
  const content: Json = {};
  if (json) {
    const schema = json.withCommonFields
      ? components.withCommon(json.schema, json.component ?? r.operationId)
      : components.named(json.schema, "input", json.component);
    content["application/json"] = { schema };
  }
  if (multipart) content["multipart/form-data"] = { schema: multipart };
  return { required: true, content };
}

function responsesOf(r: Route, components: Components): Json {
  const out: Json = {};
  for (const [status, { description, schema, content, headers }] of Object.entries(r.responses)) {
    const media = schema ? { "application/json": { schema: components.named(schema, "output") } } : content;
    out[status] = { description, ...(headers ? { headers } : {}), ...(media ? { content: media } : {}) };
  }
  return { ...out, ...problemResponses([...(r.auth === false ? [] : AUTHED), ...r.errors]) };
}

/**
 * What a route must declare to be described truthfully: a schema for each parameter of its path,
 * and the 422 (and the 415 of a JSON-only body) of the validation the router does for it.
 */
function checkDeclared(r: Route): void {
  const inPath = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
  const declared = Object.keys(r.params?.shape ?? {}).sort();
  if (inPath.join() !== declared.join())
    throw new Error(`${r.method.toUpperCase()} ${r.path} declares path parameters [${declared.join()}], not [${inPath.join()}]`);
  const validates = r.query || r.headers || r.body?.json?.validate;
  const missing = [
    ...(validates && !r.errors.includes("validation_failed") ? ["validation_failed"] : []),
    ...(r.body?.json?.validate && !r.errors.includes("unsupported_media_type") ? ["unsupported_media_type"] : []),
  ];
  if (missing.length)
    throw new Error(`${r.method.toUpperCase()} ${r.path} validates its request but does not declare ${missing.join(", ")}`);
}

function operationOf(r: Route, components: Components): Json {
  checkDeclared(r);
  const parameters = parametersOf(r, components);
  const requestBody = requestBodyOf(r, components);
  return {
    operationId: r.operationId,
    summary: r.summary,
    tags: [r.tag],
    ...(r.auth === false ? { security: [] } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: responsesOf(r, components),
  };
}

/** The document of a route table: the server's own (api/routes/table.ts) unless another is given (tests). */
export function buildOpenApi(version: string, routes: readonly Route[] = ROUTES): Json {
  const components = new Components();
  const paths: Record<string, Json> = {};
  for (const r of routes) {
    const item = (paths[r.path] ??= {});
    if (item[r.method]) throw new Error(`${r.method.toUpperCase()} ${r.path} is declared twice`);
    item[r.method] = operationOf(r, components);
  }
  const tags = [...new Set(routes.map((r) => r.tag))].map((name) => ({ name }));
  const schemas = components.schemas;
  return {
    openapi: "3.1.0",
    info: {
      title: "Folio API",
      version,
      description:
        "PDF automation: compress, merge, split, convert and protect. HTTPS only; `Authorization: Bearer folio_sk_…` on the business plan. " +
        "Errors are RFC 9457 problem details. Every response carries X-Request-Id and the IETF RateLimit headers.",
    },
    servers: [{ url: "/" }],
    security: [{ bearer: [] }],
    tags,
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "folio_sk_<key_id>_<secret>" } },
      schemas,
    },
    "x-problem-codes": Object.fromEntries(Object.entries(API_ERRORS).map(([code, v]) => [code, { status: v.status, title: v.title }])),
    "x-job-error-codes": Object.fromEntries(
      Object.entries(JOB_ERRORS)
        .filter(([code]) => code !== "validation_failed")
        .map(([code, v]) => [code, v.title]),
    ),
  };
}
