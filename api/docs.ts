/**
 * GET /docs: a readable API reference rendered on the server from the OpenAPI document — no
 * scripts, no CDN (self-hosted installs are often offline), just HTML and a little CSS.
 */
/** The parts of an OpenAPI 3.1 document this page reads. */
interface Schema {
  $ref?: string;
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  type?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  description?: string;
  default?: unknown;
}
interface Param {
  name: string;
  in: string;
  schema?: Schema;
  description?: string;
}
interface Op {
  operationId: string;
  summary?: string;
  parameters?: Param[];
  requestBody?: { content?: Record<string, { schema?: Schema } | undefined> };
  responses: Record<string, { description?: string }>;
}
interface Doc {
  info: { title: string; version: string; description: string };
  paths: Record<string, Record<string, Op>>;
  components: { schemas: Record<string, Schema> };
  "x-problem-codes": Record<string, { status: number; title: string }>;
  "x-job-error-codes": Record<string, string>;
}

const esc = (s: string | number | undefined): string =>
  String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const refName = (ref: string): string => ref.split("/").pop() ?? ref;

function resolve(doc: Doc, schema: Schema | undefined): Schema {
  return schema?.$ref ? (doc.components.schemas[refName(schema.$ref)] ?? {}) : (schema ?? {});
}

function typeOf(s: Schema): string {
  if (s.$ref) return `<a href="#schema-${esc(refName(s.$ref))}">${esc(refName(s.$ref))}</a>`;
  if (s.enum) return s.enum.map((v) => `<code>${esc(JSON.stringify(v))}</code>`).join(" | ");
  if (s.const !== undefined) return `<code>${esc(JSON.stringify(s.const))}</code>`;
  const union = s.anyOf ?? s.oneOf;
  if (union) return union.map(typeOf).join(" | ");
  if (s.type === "array") return `array of ${typeOf(s.items ?? {})}`;
  return esc(s.type ?? "any");
}

function propertiesTable(doc: Doc, schema: Schema): string {
  const s = resolve(doc, schema);
  const branches = s.oneOf ?? s.anyOf;
  if (branches && !s.properties) return branches.map((b, i) => `<p class="branch">Variant ${i + 1}</p>${propertiesTable(doc, b)}`).join("");
  const props = Object.entries(s.properties ?? {});
  if (!props.length) return "";
  const required = new Set(s.required ?? []);
  const rows = props
    .map(([name, p]) => {
      const meaning = [
        p.description ? esc(p.description) : "",
        p.default !== undefined ? `Default: <code>${esc(JSON.stringify(p.default))}</code>` : "",
      ].filter(Boolean);
      return `<tr><td><code>${esc(name)}</code>${required.has(name) ? ' <span class="req">required</span>' : ""}</td><td>${typeOf(p)}</td><td>${meaning.join("<br>")}</td></tr>`;
    })
    .join("");
  return `<table><tr><th>field</th><th>type</th><th>meaning</th></tr>${rows}</table>`;
}

/** The reference page for an OpenAPI document built by buildOpenApi(). */
export function renderDocs(openapi: Record<string, unknown>): string {
  const doc = openapi as unknown as Doc;
  const ops: string[] = [];
  const toc: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const anchor = `op-${op.operationId}`;
      toc.push(`<li><a href="#${anchor}"><span class="m ${method}">${method.toUpperCase()}</span> ${esc(path)}</a></li>`);
      const params = (op.parameters ?? [])
        .map(
          (p) =>
            `<tr><td><code>${esc(p.name)}</code> <small>${esc(p.in)}</small></td><td>${typeOf(p.schema ?? {})}</td><td>${esc(p.description)}</td></tr>`,
        )
        .join("");
      const json = op.requestBody?.content?.["application/json"]?.schema;
      const responses = Object.entries(op.responses)
        .map(([code, r]) => `<tr><td><code>${esc(code)}</code></td><td>${esc(r.description)}</td></tr>`)
        .join("");
      ops.push(`<section id="${anchor}"><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${esc(path)}</code></h3>
<p>${esc(op.summary)}</p>
${params ? `<h4>Parameters</h4><table><tr><th>name</th><th>type</th><th>meaning</th></tr>${params}</table>` : ""}
${json ? `<h4>JSON body</h4>${propertiesTable(doc, json)}` : ""}
${op.requestBody?.content?.["multipart/form-data"] && json ? "<p><small>Or multipart/form-data: the files as parts named <code>file</code>, the fields above as plain fields or one <code>options</code> part of JSON.</small></p>" : ""}
<h4>Responses</h4><table><tr><th>status</th><th>meaning</th></tr>${responses}</table></section>`);
    }
  }
  const schemas = ["Job", "File", "ResultFile", "Problem", "Permissions"]
    .filter((n) => doc.components.schemas[n])
    .map((n) => `<section id="schema-${n}"><h3>${n}</h3>${propertiesTable(doc, doc.components.schemas[n] ?? {})}</section>`)
    .join("");
  const codes = Object.entries(doc["x-problem-codes"])
    .map(([c, v]) => `<tr><td><code>${esc(c)}</code></td><td>${esc(v.status)}</td><td>${esc(v.title)}</td></tr>`)
    .join("");
  const jobCodes = Object.entries(doc["x-job-error-codes"])
    .map(([c, t]) => `<tr id="job-error-${esc(c)}"><td><code>${esc(c)}</code></td><td>${esc(t)}</td></tr>`)
    .join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(doc.info.title)} reference</title><style>
body{font:15px/1.5 system-ui,sans-serif;margin:0;display:flex;color:#1d2330}nav{width:290px;padding:1rem;background:#f4f6fa;height:100vh;overflow:auto;position:sticky;top:0;flex:none}
nav ul{list-style:none;padding:0}nav a{text-decoration:none;color:#1d2330;font-size:13px}main{padding:1rem 2rem;max-width:980px}
table{border-collapse:collapse;width:100%;margin:.5rem 0}td,th{border-bottom:1px solid #e3e6ee;padding:.3rem .5rem;text-align:left;vertical-align:top}
code{background:#f1f3f7;padding:0 .25rem;border-radius:3px}.m{font:700 11px monospace;padding:1px 5px;border-radius:3px;color:#fff}.get{background:#2f7d32}.post{background:#1565c0}.delete{background:#c62828}
.req{color:#c62828;font-size:11px}section{border-top:1px solid #d7dbe4;padding-top:.5rem;margin-top:1.5rem}.branch{font-weight:600;margin:.5rem 0 0}
</style></head><body><nav><strong>${esc(doc.info.title)} ${esc(doc.info.version)}</strong><ul>${toc.join("")}</ul><a href="/v1/openapi.json">openapi.json</a></nav>
<main><h1>${esc(doc.info.title)}</h1><p>${esc(doc.info.description)}</p>
<h2>Endpoints</h2>${ops.join("")}<h2>Objects</h2>${schemas}
<h2>Errors</h2><p>Every error is <code>application/problem+json</code> (RFC 9457) with a stable <code>code</code>.</p><table><tr><th>code</th><th>status</th><th>title</th></tr>${codes}</table>
<h3>Job error codes</h3><table><tr><th>code</th><th>meaning</th></tr>${jobCodes}</table></main></body></html>`;
}
