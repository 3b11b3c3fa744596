/**
 * The chart test's Kubernetes client: what run.sh asks of the real API server, with nothing but
 * the kubeconfig ($KUBECONFIG) and @kubernetes/client-node's config loading (no kubectl needed).
 *
 *   node test/chart/kube.ts dry-run NAMESPACE FILE...
 *       Server-side applies every object of the rendered manifests with dryRun=All and
 *       fieldValidation=Strict: the API server's own schema validation (unknown or misspelt
 *       fields are errors), defaulting and every admission plugin — PodSecurity included — run,
 *       nothing is stored. Warnings (PodSecurity `warn` on workload templates, deprecations)
 *       count as failures. Pod templates of Deployments are also dry-run as Pods, so that the
 *       PodSecurity level enforced on the namespace judges them (it only warns on Deployments).
 *       The ServiceAccounts are applied for real first: Pod admission requires them.
 *   node test/chart/kube.ts self-test NAMESPACE FILE
 *       Broken variants of the manifest's objects must be refused by the same dry run.
 *   node test/chart/kube.ts apply FILE...             server-side apply for real (CRDs: waits until Established)
 *   node test/chart/kube.ts namespace NAME [k=v ...]  creates or updates a namespace with labels
 *   node test/chart/kube.ts installed NAMESPACE MANIFEST
 *       Every object of a release's manifest (`helm get manifest`) exists; every Deployment has
 *       its pods (created by the ReplicaSet controller, so admitted by PodSecurity) and no
 *       FailedCreate event; prints what the pods are doing.
 *   node test/chart/kube.ts rollout NAMESPACE DEPLOYMENT CONTAINER ENV=VALUE
 *       The Deployment's template has the value, and a pod of that template exists (the upgrade
 *       reached the ReplicaSet controller and admission).
 *   node test/chart/kube.ts uninstalled NAMESPACE MANIFEST
 *       Every object of the manifest is gone (or being deleted), except those Helm keeps
 *       (helm.sh/resource-policy: keep); the CRDs are still there.
 *   node test/chart/kube.ts rbac NAMESPACE FULLNAME
 *       SubjectAccessReviews: each ServiceAccount may do what its component needs and nothing
 *       of a list of things it must not (least privilege), the runner's nothing at all.
 *   node test/chart/kube.ts runner-pod NAMESPACE FULLNAME RUNNER_IMAGE
 *       Builds a runner Job with the controller's own template (controller/job-template.ts) for
 *       the chart's runner ServiceAccount, dry-runs its pod under the namespace's PodSecurity
 *       level, and checks that the chart's NetworkPolicy selects it.
 *
 * Exit status 0 when every check passed; each failure is printed.
 */
import https from "node:https";
import { readFileSync } from "node:fs";
import { KubeConfig } from "@kubernetes/client-node";
// js-yaml arrives with @kubernetes/client-node; its own loadAllYaml would turn objects into the
// client's model classes (renaming fields such as x-kubernetes-validations), so the raw parser.
import { loadAll } from "js-yaml";

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [k: string]: unknown;
  };
  spec?: any;
  status?: any;
  [k: string]: unknown;
};

const FIELD_MANAGER = "folio-chart-test";
let failures = 0;
const ok = (what: string): void => {
  process.stdout.write(`  ok    ${what}\n`);
};
const fail = (what: string): void => {
  failures++;
  process.stdout.write(`  FAIL  ${what}\n`);
};

// --- a minimal REST client ------------------------------------------------------------------------

interface Reply {
  status: number;
  body: any;
  warnings: string[];
}

class Kube {
  readonly kc = new KubeConfig();
  readonly server: URL;
  readonly #resources = new Map<string, { plural: string; namespaced: boolean }>();

  constructor() {
    const file = process.env.KUBECONFIG;
    if (!file) throw new Error("KUBECONFIG is not set");
    this.kc.loadFromFile(file);
    const cluster = this.kc.getCurrentCluster();
    if (!cluster) throw new Error(`${file}: no current cluster`);
    this.server = new URL(cluster.server);
  }

  async request(method: string, path: string, body?: unknown, contentType = "application/json"): Promise<Reply> {
    const opts: https.RequestOptions = {
      method,
      hostname: this.server.hostname,
      port: this.server.port,
      path,
      headers: { Accept: "application/json", ...(body === undefined ? {} : { "Content-Type": contentType }) },
    };
    await this.kc.applyToHTTPSOptions(opts);
    return new Promise<Reply>((resolve, reject) => {
      const req = https.request(opts, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          const raw = res.headers.warning;
          const warnings = (Array.isArray(raw) ? raw : raw ? [raw] : [])
            .flatMap((w) => w.split(/,(?=\s*299 )/))
            .map((w) => w.replace(/^\s*299 - /, "").replace(/^"|"$/g, ""));
          resolve({ status: res.statusCode ?? 0, body: parsed, warnings });
        });
      });
      req.on("error", reject);
      if (body !== undefined) req.write(typeof body === "string" ? body : JSON.stringify(body));
      req.end();
    });
  }

  /** The REST resource of apiVersion/kind, from discovery (cached). */
  async resource(apiVersion: string, kind: string): Promise<{ plural: string; namespaced: boolean }> {
    const key = `${apiVersion}/${kind}`;
    const cached = this.#resources.get(key);
    if (cached) return cached;
    const reply = await this.request("GET", apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`);
    if (reply.status !== 200) throw new Error(`discovery of ${apiVersion}: HTTP ${reply.status} (is its CRD installed?)`);
    for (const r of reply.body.resources as { name: string; kind: string; namespaced: boolean }[]) {
      if (!r.name.includes("/")) this.#resources.set(`${apiVersion}/${r.kind}`, { plural: r.name, namespaced: r.namespaced });
    }
    const found = this.#resources.get(key);
    if (!found) throw new Error(`the API server does not serve ${kind} in ${apiVersion}`);
    return found;
  }

  async path(
    o: Pick<Obj, "apiVersion" | "kind"> & { metadata: { name?: string; namespace?: string } },
    defaultNamespace?: string,
  ): Promise<string> {
    const { plural, namespaced } = await this.resource(o.apiVersion, o.kind);
    const base = o.apiVersion.includes("/") ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
    const ns = o.metadata.namespace ?? defaultNamespace;
    if (namespaced && !ns) throw new Error(`${o.kind}/${o.metadata.name}: namespaced, but no namespace`);
    return `${base}${namespaced ? `/namespaces/${ns}` : ""}/${plural}${o.metadata.name ? `/${o.metadata.name}` : ""}`;
  }

  /** Server-side apply (create or update); dryRun when asked. */
  async apply(o: Obj, defaultNamespace: string | undefined, dryRun: boolean): Promise<Reply> {
    const q = new URLSearchParams({ fieldManager: FIELD_MANAGER, fieldValidation: "Strict", force: "true" });
    if (dryRun) q.set("dryRun", "All");
    return this.request("PATCH", `${await this.path(o, defaultNamespace)}?${q.toString()}`, o, "application/apply-patch+yaml");
  }

  /** Create with dryRun=All (for objects that must be judged as new, e.g. a Pod). */
  async dryRunCreate(o: Obj, namespace: string): Promise<Reply> {
    const { metadata, ...rest } = o;
    const collection = await this.path({ ...o, metadata: { namespace: metadata.namespace ?? namespace } }, namespace);
    return this.request("POST", `${collection}?dryRun=All&fieldValidation=Strict`, { ...rest, metadata });
  }

  async get(o: Pick<Obj, "apiVersion" | "kind"> & { metadata: { name: string; namespace?: string } }, namespace?: string): Promise<Reply> {
    return this.request("GET", await this.path(o, namespace));
  }

  async list(apiVersion: string, kind: string, namespace: string, labelSelector?: string): Promise<any[]> {
    const path = await this.path({ apiVersion, kind, metadata: { namespace } }, namespace);
    const reply = await this.request("GET", labelSelector ? `${path}?labelSelector=${encodeURIComponent(labelSelector)}` : path);
    if (reply.status !== 200) throw new Error(`list ${kind} in ${namespace}: HTTP ${reply.status} ${message(reply)}`);
    return reply.body.items as any[];
  }
}

function message(r: Reply): string {
  return typeof r.body === "object" && r.body && "message" in r.body ? String(r.body.message) : String(r.body).slice(0, 300);
}

function readObjects(files: readonly string[]): Obj[] {
  const out: Obj[] = [];
  for (const f of files) {
    for (const doc of loadAll(readFileSync(f, "utf8"))) {
      if (doc && typeof doc === "object" && "kind" in doc) out.push(doc as Obj);
    }
  }
  return out;
}

const id = (o: Obj): string => `${o.kind}/${o.metadata.name}`;

/** A Pod of a workload's template (what the ReplicaSet controller would create). */
function podOf(o: Obj): Obj | undefined {
  const template = o.kind === "Deployment" ? o.spec?.template : undefined;
  if (!template) return undefined;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: `${o.metadata.name}-dry-run`, labels: template.metadata?.labels, annotations: template.metadata?.annotations },
    spec: template.spec,
  };
}

// --- commands ---------------------------------------------------------------------------------------

async function dryRun(k: Kube, namespace: string, files: readonly string[]): Promise<void> {
  const objects = readObjects(files);
  if (objects.length === 0) fail(`no objects in ${files.join(" ")}`);
  // Pods are admitted only if their ServiceAccount exists (ServiceAccount admission), so the
  // manifests' ServiceAccounts are applied for real first (the namespace is a throwaway).
  for (const o of objects.filter((x) => x.kind === "ServiceAccount")) {
    const r = await k.apply(o, namespace, false);
    if (r.status >= 300) fail(`${id(o)}: HTTP ${r.status} ${message(r)}`);
  }
  for (const o of objects) {
    const r = o.kind === "Pod" ? await k.dryRunCreate(o, namespace) : await k.apply(o, namespace, true);
    if (r.status >= 300) fail(`${id(o)}: HTTP ${r.status} ${message(r)}`);
    else if (r.warnings.length) fail(`${id(o)}: warnings: ${r.warnings.join(" | ")}`);
    else ok(`${id(o)} (${o.apiVersion})`);
    const pod = podOf(o);
    if (pod) {
      const p = await k.dryRunCreate(pod, namespace);
      if (p.status >= 300) fail(`${id(o)} pod template as a Pod: HTTP ${p.status} ${message(p)}`);
      else if (p.warnings.length) fail(`${id(o)} pod template as a Pod: warnings: ${p.warnings.join(" | ")}`);
      else ok(`${id(o)} pod template admitted as a Pod`);
    }
  }
}

/**
 * The validator must bite: broken variants of the manifest's objects are each refused (an unknown
 * field, a pod that breaks the restricted level, a misspelt field of a custom resource).
 */
async function selfTest(k: Kube, namespace: string, manifest: string): Promise<void> {
  const objects = readObjects([manifest]);
  const deployment = objects.find((o) => o.kind === "Deployment");
  const monitor = objects.find((o) => o.kind === "ServiceMonitor");
  if (!deployment || !monitor) return fail(`${manifest} lacks a Deployment or a ServiceMonitor`);
  const copy = (o: Obj): any => JSON.parse(JSON.stringify(o));
  const typo = copy(deployment);
  typo.spec.template.spec.containers[0].securityContex = { runAsNonRoot: true };
  const loose = copy(deployment);
  delete loose.spec.template.spec.securityContext.runAsNonRoot;
  delete loose.spec.template.spec.containers[0].securityContext.runAsNonRoot;
  loose.spec.template.spec.containers[0].securityContext.allowPrivilegeEscalation = true;
  const crTypo = copy(monitor);
  crTypo.spec.endpoint = crTypo.spec.endpoints;
  const cases: [string, () => Promise<Reply>][] = [
    ["an unknown field in a Deployment", () => k.apply(typo, namespace, true)],
    ["a Deployment whose pods break PodSecurity restricted", () => k.apply(loose, namespace, true)],
    ["a Pod that breaks PodSecurity restricted", async () => k.dryRunCreate(podOf(loose)!, namespace)],
    ["a misspelt field of a ServiceMonitor", () => k.apply(crTypo, namespace, true)],
  ];
  for (const [what, run] of cases) {
    const r = await run();
    if (r.status >= 300) ok(`refused: ${what} (HTTP ${r.status}: ${message(r).slice(0, 140)})`);
    else if (r.warnings.length) ok(`refused: ${what} (warning: ${r.warnings.join(" | ").slice(0, 140)})`);
    else fail(`accepted: ${what}`);
  }
}

async function waitFor(what: string, ms: number, fn: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await fn()) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  fail(`timed out after ${ms} ms: ${what}`);
  return false;
}

async function apply(k: Kube, files: readonly string[]): Promise<void> {
  for (const o of readObjects(files)) {
    const r = await k.apply(o, undefined, false);
    if (r.status >= 300) {
      fail(`apply ${id(o)}: HTTP ${r.status} ${message(r)}`);
      continue;
    }
    if (o.kind === "CustomResourceDefinition") {
      const established = await waitFor(`${id(o)} Established`, 30_000, async () => {
        const g = await k.get(o);
        return (g.body?.status?.conditions ?? []).some((c: any) => c.type === "Established" && c.status === "True");
      });
      if (established) ok(`${id(o)} established`);
    } else {
      ok(`applied ${id(o)}`);
    }
  }
}

async function namespace(k: Kube, name: string, labels: readonly string[]): Promise<void> {
  const o: Obj = {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: Object.fromEntries(labels.map((l) => l.split("=", 2) as [string, string])) },
  };
  const r = await k.apply(o, undefined, false);
  if (r.status >= 300) fail(`namespace ${name}: HTTP ${r.status} ${message(r)}`);
  else ok(`namespace ${name} ${labels.join(" ")}`);
}

/** Helm installs crds/ outside the release manifest: the CRD must be there and Established. */
async function crdEstablished(k: Kube): Promise<void> {
  const crd = await k.get({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "pdfjobs.folio.dev" },
  });
  const established = (crd.body?.status?.conditions ?? []).some((c: any) => c.type === "Established" && c.status === "True");
  if (crd.status === 200 && established) ok("CustomResourceDefinition/pdfjobs.folio.dev installed from the chart's crds/ and established");
  else fail(`CustomResourceDefinition/pdfjobs.folio.dev: HTTP ${crd.status}, established: ${established}`);
}

/** A pod's phase, the reason it waits and its node, for the report. */
function podState(p: any): string {
  const waiting = p.status?.containerStatuses?.[0]?.state?.waiting?.reason;
  return `${p.metadata.name} ${p.status?.phase ?? "?"}${waiting ? ` (${waiting})` : ""}${p.spec?.nodeName ? ` on ${p.spec.nodeName}` : ""}`;
}

/** A Deployment's pods were created and admitted, as many as its replicas. */
async function deploymentPods(k: Kube, ns: string, o: Obj): Promise<void> {
  const want = Number(o.spec?.replicas ?? 1);
  const selector = Object.entries(o.spec.selector.matchLabels as Record<string, string>)
    .map(([a, b]) => `${a}=${b}`)
    .join(",");
  const seen = await waitFor(`${want} pods of ${id(o)}`, 60_000, async () => (await k.list("v1", "Pod", ns, selector)).length >= want);
  const pods = await k.list("v1", "Pod", ns, selector);
  if (seen) ok(`${id(o)}: ${pods.length}/${want} pods created and admitted: ${pods.map(podState).join("; ")}`);
}

async function installed(k: Kube, ns: string, manifest: string): Promise<void> {
  await crdEstablished(k);
  const objects = readObjects([manifest]);
  for (const o of objects) {
    const r = await k.get(o, ns);
    if (r.status !== 200) {
      fail(`${id(o)} not found: HTTP ${r.status}`);
      continue;
    }
    ok(`${id(o)} exists`);
    if (o.kind === "Deployment") await deploymentPods(k, ns, o);
  }
  const events = await k.list("v1", "Event", ns);
  const refused = events.filter((e) => e.reason === "FailedCreate");
  for (const e of refused) fail(`FailedCreate on ${e.involvedObject?.kind}/${e.involvedObject?.name}: ${e.message}`);
  if (refused.length === 0) ok(`no FailedCreate events in ${ns}`);
}

async function rollout(k: Kube, ns: string, deployment: string, container: string, assignment: string): Promise<void> {
  const [name, value] = assignment.split("=", 2) as [string, string];
  const d = await k.get({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: deployment } }, ns);
  if (d.status !== 200) return fail(`Deployment/${deployment}: HTTP ${d.status}`);
  const envOf = (spec: any): string | undefined =>
    (spec?.containers ?? []).find((c: any) => c.name === container)?.env?.find((e: any) => e.name === name)?.value;
  const inTemplate = envOf(d.body.spec.template.spec);
  if (inTemplate !== value) return fail(`Deployment/${deployment} ${container} ${name}=${inTemplate}, expected ${value}`);
  ok(`Deployment/${deployment} template has ${name}=${value} (generation ${d.body.metadata.generation})`);
  const selector = Object.entries(d.body.spec.selector.matchLabels as Record<string, string>)
    .map(([a, b]) => `${a}=${b}`)
    .join(",");
  const found = await waitFor(`a pod of ${deployment} with ${name}=${value}`, 60_000, async () =>
    (await k.list("v1", "Pod", ns, selector)).some((p) => envOf(p.spec) === value),
  );
  if (found) ok(`a pod with ${name}=${value} was created and admitted`);
}

async function uninstalled(k: Kube, ns: string, manifest: string): Promise<void> {
  for (const o of readObjects([manifest])) {
    const keep = o.metadata.annotations?.["helm.sh/resource-policy"] === "keep";
    const r = await k.get(o, ns);
    const gone = r.status === 404 || (r.status === 200 && r.body.metadata?.deletionTimestamp);
    if (keep) {
      if (r.status === 200) ok(`${id(o)} kept (helm.sh/resource-policy: keep)`);
      else fail(`${id(o)} should have been kept: HTTP ${r.status}`);
    } else if (gone) ok(`${id(o)} deleted`);
    else fail(`${id(o)} still exists after uninstall`);
  }
  const crd = await k.get({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "pdfjobs.folio.dev" },
  });
  if (crd.status === 200 && !crd.body.metadata.deletionTimestamp) ok("CustomResourceDefinition/pdfjobs.folio.dev remains");
  else fail(`CustomResourceDefinition/pdfjobs.folio.dev is gone after uninstall: HTTP ${crd.status}`);
}

/**
 * What each ServiceAccount may (true) and must not (false) do in the release's namespace: exactly
 * the calls the code makes (api/jobs/pdfjob-client.ts; controller/main.ts's informers and Lease,
 * controller/apply.ts, controller/webhooks.ts), and the nearest verbs it does not need refused.
 */
function rbacExpectations(
  ns: string,
  fullname: string,
): { sa: string; verb: string; group: string; resource: string; name?: string; subresource?: string; allowed: boolean }[] {
  const c = `${fullname}-controller`;
  const a = `${fullname}-api`;
  const r = `${fullname}-runner`;
  const lease = "folio-controller"; // controller/main.ts
  const may = (
    sa: string,
    group: string,
    resource: string,
    verbs: string[],
    allowed: boolean,
    more: { subresource?: string; name?: string } = {},
  ) => verbs.map((verb) => ({ sa, verb, group, resource, allowed, ...more }));
  return [
    // controller: informers, finalizers (merge patch), retention delete, status replace
    ...may(c, "folio.dev", "pdfjobs", ["list", "watch", "patch", "delete"], true),
    ...may(c, "folio.dev", "pdfjobs", ["create", "update", "get"], false),
    ...may(c, "folio.dev", "pdfjobs", ["update"], true, { subresource: "status" }),
    ...may(c, "folio.dev", "pdfjobs", ["patch"], false, { subresource: "status" }),
    ...may(c, "folio.dev", "pdfjobs", ["update"], true, { subresource: "finalizers" }),
    ...may(c, "batch", "jobs", ["list", "watch", "create", "delete"], true),
    ...may(c, "batch", "jobs", ["get", "update", "patch"], false),
    ...may(c, "", "pods", ["list", "watch"], true),
    ...may(c, "", "pods", ["get", "create", "delete", "update"], false),
    ...may(c, "", "pods", ["get"], false, { subresource: "log" }),
    ...may(c, "", "secrets", ["get", "create", "delete"], true),
    ...may(c, "", "secrets", ["list", "watch", "update"], false),
    ...may(c, "", "events", ["create"], true),
    ...may(c, "", "events", ["list", "delete"], false),
    ...may(c, "events.k8s.io", "events", ["create"], false),
    ...may(c, "coordination.k8s.io", "leases", ["create"], true),
    ...may(c, "coordination.k8s.io", "leases", ["get", "update"], true, { name: lease }),
    ...may(c, "coordination.k8s.io", "leases", ["delete"], false, { name: lease }),
    ...may(c, "coordination.k8s.io", "leases", ["update"], false, { name: "someone-elses-lease" }),
    ...may(c, "apps", "deployments", ["create"], false),
    ...may(c, "", "configmaps", ["get"], false),
    // api: PdfJobs, and the Secrets it creates already owned by them (the garbage collector
    // deletes them with the PdfJob: the API never reads, changes or deletes one)
    // (watch: the informer cache every replica reads through, docs/adr/0009)
    ...may(a, "folio.dev", "pdfjobs", ["create", "get", "list", "watch", "patch", "delete"], true),
    ...may(a, "folio.dev", "pdfjobs", ["update"], false),
    ...may(a, "folio.dev", "pdfjobs", ["update", "patch"], false, { subresource: "status" }),
    ...may(a, "folio.dev", "pdfjobs", ["update"], true, { subresource: "finalizers" }),
    // and the dashboard's people, invites (Secrets), audit log, usage and key labels (ConfigMaps)
    // (watch and patch: the key store's cache and revocations, docs/adr/0008)
    ...may(a, "", "secrets", ["create", "get", "list", "watch", "update", "patch"], true),
    ...may(a, "", "secrets", ["delete"], false),
    ...may(a, "", "configmaps", ["create", "get", "list", "update"], true),
    ...may(a, "", "configmaps", ["watch", "patch", "delete"], false),
    ...may(a, "batch", "jobs", ["create"], false),
    ...may(a, "", "pods", ["list"], false),
    ...may(a, "coordination.k8s.io", "leases", ["create"], false),
    // runner: nothing at all
    ...[
      ["get", "", "pods"],
      ["list", "", "secrets"],
      ["get", "", "secrets"],
      ["get", "folio.dev", "pdfjobs"],
      ["create", "batch", "jobs"],
      ["get", "", "configmaps"],
      ["create", "", "events"],
    ].map(([verb, group, resource]) => ({ sa: r, verb: verb!, group: group!, resource: resource!, allowed: false })),
  ].map((e) => ({ ...e, ns }));
}

type RbacExpectation = ReturnType<typeof rbacExpectations>[number];

/** How the report names an expectation: "folio-api may get folio.dev/pdfjobs/status NAME". */
function describeAccess(e: RbacExpectation): string {
  const resource = `${e.group ? `${e.group}/` : ""}${e.resource}${e.subresource ? `/${e.subresource}` : ""}`;
  return `${e.sa} ${e.allowed ? "may" : "may not"} ${e.verb} ${resource}${e.name ? ` ${e.name}` : ""}`;
}

/** Asks the API server (SubjectAccessReview) whether the ServiceAccount may do what `e` says, and checks the answer. */
async function reviewAccess(k: Kube, ns: string, e: RbacExpectation): Promise<void> {
  const review = {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: {
      user: `system:serviceaccount:${ns}:${e.sa}`,
      groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`, "system:authenticated"],
      resourceAttributes: {
        namespace: ns,
        verb: e.verb,
        group: e.group,
        resource: e.resource,
        ...(e.subresource ? { subresource: e.subresource } : {}),
        ...(e.name ? { name: e.name } : {}),
      },
    },
  };
  const r = await k.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review);
  const what = describeAccess(e);
  if (r.status >= 300) fail(`${what}: HTTP ${r.status} ${message(r)}`);
  else if (Boolean(r.body.status?.allowed) === e.allowed) ok(what);
  else fail(`${what}: the API server says ${r.body.status?.allowed ? "allowed" : "denied"}`);
}

async function rbac(k: Kube, ns: string, fullname: string): Promise<void> {
  for (const e of rbacExpectations(ns, fullname)) await reviewAccess(k, ns, e);
  // Cluster-wide: nothing.
  for (const sa of [`${fullname}-controller`, `${fullname}-api`, `${fullname}-runner`]) {
    const r = await k.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: `system:serviceaccount:${ns}:${sa}`,
        groups: ["system:serviceaccounts", "system:authenticated"],
        resourceAttributes: { namespace: "kube-system", verb: "get", resource: "secrets" },
      },
    });
    if (r.body?.status?.allowed) fail(`${sa} may read secrets in kube-system`);
    else ok(`${sa} may not get secrets in kube-system`);
  }
}

/** Whether one of a selector's matchExpressions holds for the labels. */
function expressionHolds(e: { key: string; operator: string; values: string[] }, labels: Record<string, string>): boolean {
  const has = e.key in labels;
  switch (e.operator) {
    case "Exists":
      return has;
    case "DoesNotExist":
      return !has;
    case "In":
      return has && e.values.includes(labels[e.key]!);
    case "NotIn":
      return !(has && e.values.includes(labels[e.key]!));
    default:
      return true;
  }
}

function selects(selector: { matchLabels?: Record<string, string>; matchExpressions?: any[] }, labels: Record<string, string>): boolean {
  for (const [key, v] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== v) return false;
  return (selector.matchExpressions ?? []).every((e) => expressionHolds(e, labels));
}

async function runnerPod(k: Kube, ns: string, fullname: string, image: string): Promise<void> {
  const { buildJob } = await import("../../controller/job-template.ts");
  const pj = {
    apiVersion: "folio.dev/v1alpha1",
    kind: "PdfJob",
    metadata: { name: "job-0123456789abcdefghijklmn", namespace: ns, uid: "00000000-0000-0000-0000-000000000001" },
    spec: {
      tenant: "acme",
      operation: "compress",
      inputs: [
        {
          key: "acme/in/file_0123456789abcdefghijklmn",
          fileId: "file_0123456789abcdefghijklmn",
          filename: "in.pdf",
          contentType: "application/pdf",
          size: 1,
          sha256: "0".repeat(64),
        },
      ],
      options: { level: "medium" },
      deadlineSeconds: 300,
      retentionSeconds: 3600,
    },
  };
  // What the controller will be configured with by the chart (FOLIO_RUNNER_*; see the chart's
  // controller Deployment).
  const job = buildJob(pj as never, pj.spec as never, {
    image,
    serviceAccountName: `${fullname}-runner`,
    storage: {
      bucket: "folio-documents",
      region: "eu-central-1",
      endpoint: "http://minio.storage.svc.cluster.local:9000",
      forcePathStyle: true,
      credentialsSecret: { name: "folio-s3" },
    },
  }) as any;
  const template = job.spec.template;
  const pod: Obj = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "runner-dry-run", labels: template.metadata.labels },
    spec: template.spec,
  };
  const r = await k.dryRunCreate(pod, ns);
  if (r.status >= 300) fail(`runner pod: HTTP ${r.status} ${message(r)}`);
  else if (r.warnings.length) fail(`runner pod: warnings: ${r.warnings.join(" | ")}`);
  else {
    const spec = r.body.spec;
    ok(`a runner pod of controller/job-template.ts is admitted in ${ns} (service account ${spec.serviceAccountName})`);
    const mounted = (spec.volumes ?? []).some((v: any) => v.projected?.sources?.some((s: any) => s.serviceAccountToken));
    if (mounted || spec.automountServiceAccountToken !== false) fail("the runner pod gets a service-account token");
    else ok("the runner pod has no service-account token");
  }
  const policies = await k.list("networking.k8s.io/v1", "NetworkPolicy", ns);
  const matching = policies.filter((p) => selects(p.spec.podSelector, template.metadata.labels));
  if (matching.length === 0) fail("no NetworkPolicy selects the runner pods");
  else ok(`NetworkPolicy ${matching.map((p) => p.metadata.name).join(", ")} selects the runner pods`);
  const job2 = await k.dryRunCreate(job as Obj, ns);
  if (job2.status >= 300) fail(`runner Job: HTTP ${job2.status} ${message(job2)}`);
  else ok("the runner Job itself passes validation (dry run)");
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const k = new Kube();
  switch (command) {
    case "dry-run":
      await dryRun(k, args[0]!, args.slice(1));
      break;
    case "self-test":
      await selfTest(k, args[0]!, args[1]!);
      break;
    case "apply":
      await apply(k, args);
      break;
    case "namespace":
      await namespace(k, args[0]!, args.slice(1));
      break;
    case "installed":
      await installed(k, args[0]!, args[1]!);
      break;
    case "rollout":
      await rollout(k, args[0]!, args[1]!, args[2]!, args[3]!);
      break;
    case "uninstalled":
      await uninstalled(k, args[0]!, args[1]!);
      break;
    case "rbac":
      await rbac(k, args[0]!, args[1]!);
      break;
    case "runner-pod":
      await runnerPod(k, args[0]!, args[1]!, args[2]!);
      break;
    default:
      process.stderr.write(
        "usage: node test/chart/kube.ts dry-run|self-test|apply|namespace|installed|rollout|uninstalled|rbac|runner-pod ...\n",
      );
      return 2;
  }
  return failures ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`kube.ts: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
