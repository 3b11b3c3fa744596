/**
 * The chart test's static checks (`node test/chart/check.ts [--verbose] PROMQL_OUT`), the ones no
 * tool does:
 *
 * 1. The chart's CRD (helm/folio/crds/) is byte-identical to the generated one in crds/.
 * 2. Every alert of helm/folio/files/alerts.yaml has a section in docs/runbooks.md that its
 *    runbook_url points at, a severity, and in test/chart/alerts.test.yaml both a case where it
 *    fires and one where it must not; every recording rule is used by an alert.
 * 3. Every metric the alerts and the dashboard query is one Folio exports: the API's (read
 *    from api/metrics.ts), the job metrics both components emit (core/metrics/job-metrics.ts),
 *    the controller's (controller/metrics.ts once it exists; until then the agreed list below) or
 *    Prometheus' own `up`.
 * 4. The Grafana dashboard is valid JSON with unique panel ids, a datasource variable and no
 *    overlapping panels; its queries are written to PROMQL_OUT as a rules file, so that
 *    `promtool check rules` parses every one of them.
 * 5. values.schema.json is self-contained (only local $refs) and closes every object.
 * 6. The Dockerfiles take their Debian packages from bin/debian-packages.txt: they copy it, and
 *    name no `runtime` package of it themselves (the one source of truth); they run as uid
 *    10001 under tini, have no compiler or npm in the final stage, and share one build stage.
 * 7. Every environment variable the chart sets is a core/config.ts key (or read by the AWS SDK,
 *    the engines or the test pod), so a misspelt or stale name fails here.
 *
 * `--prometheusrule MANIFEST OUT` checks a rendered PrometheusRule instead (see renderedRules).
 *
 * Prints the failed checks (every check with --verbose) and a count; exit status 1 if any failed.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
// js-yaml arrives with @kubernetes/client-node (whose own YAML helpers convert objects into its
// model classes); the raw parser keeps documents as they are.
import { load, loadAll } from "js-yaml";
import { CONFIG_KEYS } from "../../core/config.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const read = (p: string): string => readFileSync(join(ROOT, p), "utf8");

let failures = 0;
let passed = 0;
const verbose = process.argv.includes("--verbose");
const check = (good: boolean, what: string): void => {
  if (good) passed++;
  else failures++;
  if (!good || verbose) process.stdout.write(`  ${good ? "ok  " : "FAIL"}  ${what}\n`);
};

/**
 * The controller's metrics (controller-runtime style), as agreed for issue #4. When
 * controller/metrics.ts exists, the names it declares are used instead.
 */
const CONTROLLER_METRICS = [
  "folio_controller_reconcile_total",
  "folio_controller_reconcile_duration_seconds",
  "folio_controller_workqueue_depth",
  "folio_controller_workqueue_queue_duration_seconds",
  "folio_controller_workqueue_adds_total",
  "folio_controller_leader",
  "folio_controller_webhook_deliveries_total",
  "folio_controller_s3_errors_total",
  "folio_pdfjobs",
];

function declaredMetrics(file: string): string[] {
  return [...read(file).matchAll(/name:\s*"(folio_[a-z0-9_]+)"/g)].map((m) => m[1]!);
}

/** Metric names a series can have: histograms add _bucket, _sum and _count. */
function seriesNames(metrics: readonly string[]): Set<string> {
  const out = new Set<string>(["up"]);
  for (const m of metrics) for (const suffix of ["", "_bucket", "_sum", "_count"]) out.add(m + suffix);
  return out;
}

/** Metric names a PromQL expression selects: bare names (string literals aside) and __name__ regexes. */
function metricsIn(expr: string): string[] {
  const names = new Set<string>();
  for (const m of expr.matchAll(/__name__=~"([^"]+)"/g)) for (const n of m[1]!.split("|")) names.add(n);
  const code = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  for (const m of code.matchAll(/\b(folio_[a-z0-9_]+|up)\b/g)) names.add(m[1]!);
  return [...names];
}

function crdCopy(): void {
  const generated = "crds/pdfjobs.folio.dev.yaml";
  const copy = "helm/folio/crds/pdfjobs.folio.dev.yaml";
  check(
    existsSync(join(ROOT, copy)) && read(copy) === read(generated),
    `${copy} is a copy of ${generated} (refresh: cp ${generated} ${copy})`,
  );
}

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function alerts(known: Set<string>): void {
  const rules = ((load(read("helm/folio/files/alerts.yaml")) as { groups?: { rules: Rule[] }[] }).groups ?? []).flatMap((g) => g.rules);
  const runbooks = read("docs/runbooks.md");
  const anchors = new Set([...runbooks.matchAll(/^## +(\S+)\s*$/gm)].map((m) => m[1]!.toLowerCase()));
  const tests = (
    load(read("test/chart/alerts.test.yaml")) as { tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[] }
  ).tests;
  const cases = tests.flatMap((t) => t.alert_rule_test ?? []);
  const alertRules = rules.filter((r) => r.alert);
  check(alertRules.length > 0, `${alertRules.length} alerts in helm/folio/files/alerts.yaml`);
  for (const r of alertRules) {
    const name = r.alert!;
    const url = r.annotations?.runbook_url ?? "";
    const anchor = url.split("#")[1] ?? "";
    check(
      url.includes("docs/runbooks.md#") && anchor === name.toLowerCase() && anchors.has(anchor),
      `${name}: runbook_url points at its section of docs/runbooks.md`,
    );
    check(["critical", "warning"].includes(r.labels?.severity ?? ""), `${name}: severity ${r.labels?.severity}`);
    const mine = cases.filter((c) => c.alertname === name);
    check(
      mine.some((c) => (c.exp_alerts ?? []).length > 0),
      `${name}: a promtool case where it fires`,
    );
    check(
      mine.some((c) => (c.exp_alerts ?? []).length === 0),
      `${name}: a promtool case where it does not fire`,
    );
  }
  for (const r of rules.filter((x) => x.record)) {
    check(
      alertRules.some((a) => a.expr.includes(r.record!)),
      `recording rule ${r.record} is used by an alert`,
    );
  }
  for (const r of rules) {
    const unknown = metricsIn(r.expr).filter((m) => !known.has(m) && !m.startsWith("folio:"));
    check(
      unknown.length === 0,
      `${r.alert ?? r.record}: queries only known metrics${unknown.length ? ` (unknown: ${unknown.join(", ")})` : ""}`,
    );
  }
}

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: { expr: string; refId: string }[];
}

/** The first two panels that share a grid cell (or one wider than the 24-column grid), or "" when none do. */
function panelOverlap(panels: readonly Panel[]): string {
  const cells = new Map<string, string>();
  let overlap = "";
  for (const p of panels) {
    for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++) {
      for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
        const key = `${x},${y}`;
        if (cells.has(key) && !overlap) overlap = `${cells.get(key)} and ${p.title}`;
        cells.set(key, p.title);
      }
    }
    if (p.gridPos.x + p.gridPos.w > 24 && !overlap) overlap = `${p.title} is wider than the grid`;
  }
  return overlap;
}

/** Every panel query as a recording rule (Grafana's variables filled in), checking that each queries only known metrics. */
function panelQueries(panels: readonly Panel[], known: Set<string>): { record: string; expr: string }[] {
  const rules: { record: string; expr: string }[] = [];
  for (const p of panels) {
    for (const t of p.targets ?? []) {
      const expr = t.expr.replaceAll("$__rate_interval", "5m").replaceAll("$namespace", "folio");
      rules.push({ record: `dashboard:panel_${p.id}_${t.refId}`, expr });
      const unknown = metricsIn(expr).filter((m) => !known.has(m));
      check(
        unknown.length === 0,
        `panel "${p.title}" ${t.refId}: queries only known metrics${unknown.length ? ` (unknown: ${unknown.join(", ")})` : ""}`,
      );
    }
  }
  return rules;
}

function dashboard(known: Set<string>, promqlOut: string): void {
  let d: { uid?: string; panels: Panel[]; templating: { list: { name: string; type: string }[] } };
  try {
    d = JSON.parse(read("helm/folio/files/dashboard.json"));
  } catch (err) {
    check(false, `helm/folio/files/dashboard.json is JSON: ${String(err)}`);
    return;
  }
  check(typeof d.uid === "string" && d.uid.length > 0, `dashboard uid ${d.uid}`);
  check(
    d.templating.list.some((v) => v.type === "datasource"),
    "dashboard has a datasource variable",
  );
  const ids = d.panels.map((p) => p.id);
  check(new Set(ids).size === ids.length, `${ids.length} panels with unique ids`);
  const overlap = panelOverlap(d.panels);
  check(!overlap, `dashboard panels do not overlap${overlap ? ` (${overlap})` : ""}`);
  const rules = panelQueries(d.panels, known);
  // A rules file of every query: `promtool check rules` then parses each as PromQL.
  writeFileSync(promqlOut, JSON.stringify({ groups: [{ name: "dashboard-queries", rules }] }, null, 2));
  check(rules.length > 0, `${rules.length} dashboard queries written to ${promqlOut} for promtool`);
  const wanted = [
    "folio_http_requests_total",
    "folio_http_request_duration_seconds_bucket",
    "folio_jobs_total",
    "folio_jobs_queued",
    "folio_job_queue_wait_seconds_bucket",
    "folio_job_duration_seconds_bucket",
    "folio_webhook_deliveries_total",
    "folio_controller_reconcile_total",
    "folio_controller_workqueue_depth",
  ];
  const all = rules.map((r) => r.expr).join("\n");
  for (const m of wanted) check(all.includes(m), `the dashboard shows ${m}`);
}

function dockerfiles(): void {
  const runtime = read("bin/debian-packages.txt")
    .split("\n")
    .filter((l) => !/^\s*#/.test(l) && l.trim())
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[1] === "runtime")
    .map((f) => f[0]!);
  check(runtime.length > 0, `bin/debian-packages.txt lists ${runtime.length} runtime packages`);
  for (const f of ["docker/api.Dockerfile", "docker/runner.Dockerfile"]) {
    const text = read(f);
    const code = text
      .split("\n")
      .filter((l) => !/^\s*#/.test(l))
      .join("\n");
    check(/COPY bin\/debian-packages\.txt/.test(code), `${f} reads bin/debian-packages.txt`);
    const named = runtime.filter((p) => new RegExp(`install[^\\n]*\\b${p.replaceAll(".", "\\.")}\\b`).test(code));
    check(named.length === 0, `${f} names no runtime package itself${named.length ? ` (${named.join(", ")})` : ""}`);
    check(/^USER 10001/m.test(code), `${f} runs as uid 10001`);
    check(/tini/.test(code) && /ENTRYPOINT \["folio"\]/.test(code), `${f}: tini (via /usr/local/bin/folio) and ENTRYPOINT folio`);
    const stages = code.split(/^FROM /m).slice(1);
    const final = stages[stages.length - 1] ?? "";
    check(
      stages.length >= 2 && !/\b(gcc|g\+\+|make|build-essential|npm)\b/.test(final),
      `${f}: multi-stage, no compiler or npm in the final stage`,
    );
  }
  check(/awk[^\n]*runtime/.test(read("docker/runner.Dockerfile")), "docker/runner.Dockerfile installs every `runtime` line");
  const buildStage = (f: string): string => /^FROM [^\n]* AS build\n[\s\S]*?(?=^FROM )/m.exec(read(f))?.[0] ?? "";
  check(
    buildStage("docker/api.Dockerfile") !== "" && buildStage("docker/api.Dockerfile") === buildStage("docker/runner.Dockerfile"),
    "the two Dockerfiles share the same build stage",
  );
}

/**
 * Environment the chart sets that core/config.ts does not define but something else reads: the
 * AWS SDK's credentials, the engines' HOME, the `helm test` pod's script and Node.
 */
const ENV_READ_ELSEWHERE = [
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "HOME",
  "FOLIO_URL",
  "NODE_TLS_REJECT_UNAUTHORIZED",
  "NODE_NO_WARNINGS",
];

/** Every environment variable the chart's templates set is one a process reads (no misspelt key). */
function chartEnv(configKeys: ReadonlySet<string>): void {
  const templates = ["_helpers.tpl", "api/deployment.yaml", "controller/deployment.yaml", "tests/readyz.yaml"];
  const names = new Set(
    templates.flatMap((t) => [...read(`helm/folio/templates/${t}`).matchAll(/^\s*- name: ([A-Z][A-Z0-9_]*)\s*$/gm)].map((m) => m[1]!)),
  );
  const unknown = [...names].filter((n) => !configKeys.has(n) && !ENV_READ_ELSEWHERE.includes(n));
  check(
    names.size > 20 && unknown.length === 0,
    `the chart sets ${names.size} environment variables, each a core/config.ts key or read elsewhere${unknown.length ? ` (unknown: ${unknown.join(", ")})` : ""}`,
  );
}

/**
 * `--prometheusrule MANIFEST OUT`: the chart's rendered PrometheusRule carries exactly the rules
 * of files/alerts.yaml (runbook links aside, which follow runbookBaseUrl); its spec is written to
 * OUT so that promtool checks what would be installed.
 */
function renderedRules(manifest: string, out: string): number {
  const docs = loadAll(readFileSync(manifest, "utf8")) as { kind?: string; spec?: { groups: { rules: Rule[] }[] } }[];
  const rule = docs.find((d) => d?.kind === "PrometheusRule");
  if (!rule?.spec) {
    check(false, `a PrometheusRule in ${manifest}`);
    return 1;
  }
  // Key order aside (Helm's toYaml sorts keys) and runbook links cut to their anchors.
  const anchorsOnly = (groups: unknown): string =>
    JSON.stringify(groups, (k, v: unknown) => {
      if (k === "runbook_url" && typeof v === "string") return v.slice(v.indexOf("#"));
      if (v && typeof v === "object" && !Array.isArray(v))
        return Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)));
      return v;
    });
  const file = load(read("helm/folio/files/alerts.yaml")) as { groups: unknown };
  check(
    anchorsOnly(rule.spec.groups) === anchorsOnly(file.groups),
    "the rendered PrometheusRule has the rules of helm/folio/files/alerts.yaml",
  );
  writeFileSync(out, JSON.stringify({ groups: rule.spec.groups }, null, 2));
  process.stdout.write(`rendered PrometheusRule: ${passed} passed, ${failures} failed (rules written to ${out})\n`);
  return failures ? 1 : 0;
}

/** values.schema.json validates offline: every $ref is local, and every object is closed. */
function valuesSchema(): void {
  const schema = JSON.parse(read("helm/folio/values.schema.json")) as unknown;
  const refs: string[] = [];
  const open: string[] = [];
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) return node.forEach((n, i) => walk(n, `${path}/${i}`));
    if (!node || typeof node !== "object") return;
    const o = node as Record<string, unknown>;
    if (typeof o.$ref === "string") refs.push(o.$ref);
    // A closed object: additionalProperties false, or a map whose values have a schema.
    if (o.type === "object" && o.properties && o.additionalProperties !== false) open.push(path);
    for (const [k, v] of Object.entries(o)) walk(v, `${path}/${k}`);
  };
  walk(schema, "");
  const remote = refs.filter((r) => !r.startsWith("#/"));
  check(
    refs.length > 0 && remote.length === 0,
    `values.schema.json: ${refs.length} $refs, all local${remote.length ? ` (remote: ${remote.join(", ")})` : ""}`,
  );
  check(
    open.length === 0,
    `values.schema.json: every object with properties rejects unknown keys${open.length ? ` (open: ${open.join(", ")})` : ""}`,
  );
}

function main(): number {
  const at = process.argv.indexOf("--prometheusrule");
  if (at > 0) return renderedRules(process.argv[at + 1]!, process.argv[at + 2]!);
  const promqlOut = process.argv.slice(2).find((a) => !a.startsWith("--")) ?? "/tmp/folio-dashboard-queries.yaml";
  const controllerFile = "controller/metrics.ts";
  const controller = existsSync(join(ROOT, controllerFile)) ? declaredMetrics(controllerFile) : CONTROLLER_METRICS;
  const shared = "core/metrics/job-metrics.ts";
  const known = seriesNames([...declaredMetrics("api/metrics.ts"), ...declaredMetrics(shared), ...controller]);
  process.stdout.write(
    `static checks (metrics: api/metrics.ts + ${shared} + ${existsSync(join(ROOT, controllerFile)) ? controllerFile : "the agreed controller list"})\n`,
  );
  crdCopy();
  valuesSchema();
  alerts(known);
  dashboard(known, promqlOut);
  dockerfiles();
  chartEnv(new Set(Object.keys(CONFIG_KEYS)));
  process.stdout.write(`static checks: ${passed} passed, ${failures} failed\n`);
  return failures ? 1 : 0;
}

process.exitCode = main();
