/**
 * GET /docs: a readable API reference rendered on the server from the OpenAPI document — no
 * scripts, no CDN (self-hosted installs are often offline), just HTML and a little CSS.
 */
type Json = Record<string, any>;

const esc = (s: unknown): string =>
  String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

function resolve(doc: Json, schema: Json | undefined): Json {
  const ref = schema?.$ref as string | undefined;
  return ref ? (doc.components.schemas[ref.split("/").pop()!] as Json) : (schema ?? {});
}

function typeOf(doc: Json, s: Json): string {
  if (s.$ref) return `<a href="#schema-${esc(s.$ref.split("/").pop())}">${esc(s.$ref.split("/").pop())}</a>`;
  if (s.enum) return s.enum.map((v: unknown) => `<code>${esc(JSON.stringify(v))}</code>`).join(" | ");
  if (s.const !== undefined) return `<code>${esc(JSON.stringify(s.const))}</code>`;
  if (s.anyOf || s.oneOf) return (s.anyOf ?? s.oneOf).map((x: Json) => typeOf(doc, x)).join(" | ");
  if (s.type === "array") return `array of ${typeOf(doc, s.items ?? {})}`;
  return esc(s.type ?? "any");
}

function propertiesTable(doc: Json, schema: Json): string {
  const s = resolve(doc, schema);
  const branches = (s.oneOf ?? s.anyOf) as Json[] | undefined;
  if (branches && !s.properties) return branches.map((b, i) => `<p class="branch">Variant ${i + 1}</p>${propertiesTable(doc, b)}`).join("");
  const props = Object.entries((s.properties ?? {}) as Json);
  if (!props.length) return "";
  const required = new Set((s.required ?? []) as string[]);
  const rows = props
    .map(([name, p]: [string, Json]) => {
      const d = [p.description, p.default !== undefined ? `Default: <code>${esc(JSON.stringify(p.default))}</code>` : ""].filter(Boolean);
      return `<tr><td><code>${esc(name)}</code>${required.has(name) ? ' <span class="req">required</span>' : ""}</td><td>${typeOf(doc, p)}</td><td>${d.map((x) => (x.startsWith("Default") ? x : esc(x))).join("<br>")}</td></tr>`;
    })
    .join("");
  return `<table><tr><th>field</th><th>type</th><th>meaning</th></tr>${rows}</table>`;
}

export function renderDocs(doc: Json): string {
  const ops: string[] = [];
  const toc: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(methods as Json) as [string, Json][]) {
      const anchor = `op-${op.operationId as string}`;
      toc.push(`<li><a href="#${anchor}"><span class="m ${method}">${method.toUpperCase()}</span> ${esc(path)}</a></li>`);
      const params = ((op.parameters ?? []) as Json[])
        .map((p) => `<tr><td><code>${esc(p.name)}</code> <small>${esc(p.in)}</small></td><td>${typeOf(doc, p.schema ?? {})}</td><td>${esc(p.description)}</td></tr>`)
        .join("");
      const json = op.requestBody?.content?.["application/json"]?.schema as Json | undefined;
      const responses = Object.entries(op.responses as Json)
        .map(([code, r]: [string, Json]) => `<tr><td><code>${esc(code)}</code></td><td>${esc(r.description)}</td></tr>`)
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
    .map((n) => `<section id="schema-${n}"><h3>${n}</h3>${propertiesTable(doc, doc.components.schemas[n] as Json)}</section>`)
    .join("");
  const codes = Object.entries(doc["x-problem-codes"] as Json)
    .map(([c, v]: [string, Json]) => `<tr><td><code>${esc(c)}</code></td><td>${esc(v.status)}</td><td>${esc(v.title)}</td></tr>`)
    .join("");
  const jobCodes = Object.entries(doc["x-job-error-codes"] as Json)
    .map(([c, t]) => `<tr><td><code>${esc(c)}</code></td><td>${esc(t)}</td></tr>`)
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
