/**
 * The chart test's live release: the chart's pods really run on the local control plane
 * (test/chart/platform.ts maps the chart's images to the checkout's `folio`), and this checks
 * what they do. Uses $KUBECONFIG (admin) and the env test/chart/platform.ts writes.
 *
 *   node test/chart/live.ts prepare NAMESPACE DIR
 *       What an admin creates before `helm install`: the S3 credentials Secret the chart names
 *       (storage.s3.existingSecret "folio-s3", keys accessKeyId/secretAccessKey) for the MinIO
 *       of platform.ts, and — for the webhook this test receives over HTTPS — a certificate in
 *       DIR/webhook-tls whose CA the controller trusts (Secret "chart-test-webhook-ca").
 *   node test/chart/live.ts kubeconfigs NAMESPACE FULLNAME
 *       The local kubelet does not project service-account tokens (and a local process cannot see
 *       /var/run/secrets/kubernetes.io/serviceaccount), so the API and the controller get their
 *       ServiceAccount's identity through a kubeconfig: a TokenRequest for <FULLNAME>-api and
 *       <FULLNAME>-controller, each written to Secret <FULLNAME>-<component>-kubeconfig, which
 *       values-live.yaml mounts and points KUBECONFIG at. Every call they make is judged by the
 *       chart's RBAC, as in a cluster.
 *   node test/chart/live.ts available NAMESPACE FULLNAME
 *       The API and controller Deployments become Available; every container's startup,
 *       liveness and readiness probe, as declared, answers 200 at the pod's address (the local
 *       kubelet reports a running container Ready without probing, so this does the probing);
 *       the controller pod holds the leader Lease.
 *   node test/chart/live.ts job NAMESPACE FULLNAME URL DIR
 *       One real job through the release: a tenant and a key created with `folio tenants create`
 *       / `folio keys create --kubernetes` from here with the admin kubeconfig (they are
 *       resources of the cluster, not files of a pod), a merge
 *       POSTed to URL over HTTPS (the API's own certificate verified), the output downloaded
 *       (pdfinfo: 2 pages), the controller's Job owned by the PdfJob, its runner pod run as the
 *       chart's runner ServiceAccount without a token, the webhook delivered to a receiver here
 *       and verified with `standardwebhooks`; then DELETE /v1/jobs/{id} removes the PdfJob.
 *
 * Exit status 1 if a check fails.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import {
  ApiException,
  AppsV1Api,
  BatchV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type V1Container,
  type V1Job,
  type V1Pod,
  type V1Probe,
  type V1Secret,
} from "@kubernetes/client-node";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { Webhook } from "standardwebhooks";
import { encodeForm, httpsRequest } from "../api/harness.ts";
import { loadOrCreateTls } from "../../api/tls.ts";
import { LABELS, PDFJOB_GROUP, PDFJOB_PLURAL, PDFJOB_VERSION, type PdfJob } from "../../core/schemas/pdfjob.ts";
import { loadKubeConfig } from "../k8s/kubeconfig.ts";
import { ROOT } from "../helpers/tools.ts";
import { execInPod } from "../k8s/exec.ts";

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (source the env file test/chart/platform.ts writes)`);
  return v;
};

const kc = loadKubeConfig(env("KUBECONFIG"));
const core = kc.makeApiClient(CoreV1Api);
const apps = kc.makeApiClient(AppsV1Api);
const batch = kc.makeApiClient(BatchV1Api);
const coordination = kc.makeApiClient(CoordinationV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const CRD = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL };

let failures = 0;
const ok = (what: string): void => {
  process.stdout.write(`  ok    ${what}\n`);
};
const fail = (what: string): void => {
  failures++;
  process.stdout.write(`  FAIL  ${what}\n`);
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const code = (err: unknown): number | undefined => (err instanceof ApiException ? err.code : undefined);

/** Polls `probe` until it returns a value, or undefined after `ms`. */
async function waitFor<T>(ms: number, probe: () => Promise<T | undefined>, everyMs = 500): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) return undefined;
    await sleep(everyMs);
  }
}

/** Creates the Secret, replacing one of the same name. */
async function putSecret(namespace: string, name: string, stringData: Record<string, string>): Promise<void> {
  const body: V1Secret = {
    metadata: { name, namespace, labels: { "app.kubernetes.io/part-of": "folio-chart-test" } },
    type: "Opaque",
    stringData,
  };
  try {
    await core.createNamespacedSecret({ namespace, body });
  } catch (err) {
    if (code(err) !== 409) throw err;
    await core.replaceNamespacedSecret({ namespace, name, body });
  }
}

const webhookTlsDir = (dir: string): string => {
  const d = join(dir, "webhook-tls");
  mkdirSync(d, { recursive: true });
  return d;
};

async function prepare(namespace: string, dir: string): Promise<void> {
  await putSecret(namespace, "folio-s3", {
    accessKeyId: env("CHART_S3_ACCESS_KEY_ID"),
    secretAccessKey: env("CHART_S3_SECRET_ACCESS_KEY"),
  });
  ok(`Secret folio-s3 (accessKeyId, secretAccessKey) for the S3 server at ${env("CHART_S3_ENDPOINT")}`);
  const tls = await loadOrCreateTls(webhookTlsDir(dir), {});
  await putSecret(namespace, "chart-test-webhook-ca", { "ca.crt": tls.cert.toString("utf8") });
  ok("Secret chart-test-webhook-ca: the webhook receiver's self-signed certificate, for FOLIO_WEBHOOK_CA_FILE");
}

/** The admin kubeconfig's CA, inline (the file path means nothing inside a pod). */
function clusterCa(): string {
  const cluster = kc.getCurrentCluster();
  if (cluster?.caData) return cluster.caData;
  if (cluster?.caFile) return readFileSync(cluster.caFile).toString("base64");
  throw new Error("the admin kubeconfig names no CA");
}

async function kubeconfigs(namespace: string, fullname: string): Promise<void> {
  for (const component of ["api", "controller"]) {
    const sa = `${fullname}-${component}`;
    const exists = await waitFor(30_000, async () =>
      (await core.readNamespacedServiceAccount({ namespace, name: sa })) ? true : undefined,
    );
    if (!exists) {
      fail(`ServiceAccount ${sa} not found`);
      continue;
    }
    const request = await core.createNamespacedServiceAccountToken({
      namespace,
      name: sa,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    const token = request.status?.token ?? "";
    const config = {
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "local", cluster: { server: env("FOLIO_K8S_SERVER"), "certificate-authority-data": clusterCa() } }],
      users: [{ name: sa, user: { token } }],
      contexts: [{ name: "local", context: { cluster: "local", user: sa, namespace } }],
      "current-context": "local",
    };
    await putSecret(namespace, `${sa}-kubeconfig`, { config: JSON.stringify(config, null, 2) });
    ok(`Secret ${sa}-kubeconfig: a TokenRequest token of ServiceAccount ${sa} (system:serviceaccount:${namespace}:${sa})`);
  }
}

// --- available --------------------------------------------------------------------------------------

/** The local kubelet's log of a pod (kept after the pod is gone), for failure messages. */
function podLog(pod: V1Pod): string {
  const { namespace = "", name = "", uid = "" } = pod.metadata ?? {};
  const file = join(env("FOLIO_KUBELET_DIR"), "logs", `${namespace}_${name}_${uid}`, `${pod.spec?.containers[0]?.name ?? ""}.log`);
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").slice(-25).join("\n") : "(no log)";
}

/** GET url (HTTPS without verifying, as the kubelet probes); the status code, or the error. */
function get(url: string, ca?: Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const lib = url.startsWith("https:") ? https : http;
    const req = lib.get(
      url,
      { timeout: 5000, ...(url.startsWith("https:") ? (ca ? { ca } : { rejectUnauthorized: false }) : {}) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
  });
}

/** The probe's port: a number as it is, a name as the container port of that name. */
function probePort(container: V1Container, port: number | string): number | undefined {
  return typeof port === "number" ? port : container.ports?.find((p) => p.name === port)?.containerPort;
}

/** One probe request: the status when it passes (2xx or 3xx, as the kubelet counts), else what went wrong. */
async function probeOnce(url: string): Promise<{ passed: number } | { failed: string }> {
  try {
    const res = await get(url);
    if (res.status >= 200 && res.status < 400) return { passed: res.status };
    return { failed: `→ ${res.status} ${res.body}` };
  } catch (err) {
    return { failed: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Runs a container's httpGet probe the way the kubelet does, at the pod's address: every
 * periodSeconds, passing at the first success, failing after failureThreshold failures in a row
 * (the local kubelet marks a started container Ready at once, so the process may still be starting).
 */
async function runProbe(pod: V1Pod, container: V1Container, kind: string, probe: V1Probe): Promise<void> {
  const name = pod.metadata?.name;
  const action = probe.httpGet;
  if (!action) return fail(`${name} ${kind} probe is not httpGet`);
  const port = probePort(container, action.port);
  if (port === undefined) return fail(`${name} ${kind} probe: no container port named ${String(action.port)}`);
  const scheme = action.scheme ?? "HTTP";
  const url = `${scheme.toLowerCase()}://${pod.status?.podIP ?? "127.0.0.1"}:${port}${action.path ?? "/"}`;
  const attempts = Math.max(1, probe.failureThreshold ?? 3);
  let last = "";
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const result = await probeOnce(url);
    if ("passed" in result) {
      const retried = attempt > 1 ? ` (attempt ${attempt})` : "";
      return ok(`${name}: ${kind} probe ${scheme} ${action.path} on port ${String(action.port)} (${port}) → ${result.passed}${retried}`);
    }
    last = result.failed;
    if (attempt < attempts) await new Promise((r) => setTimeout(r, (probe.periodSeconds ?? 10) * 1000));
  }
  fail(`${name}: ${kind} probe ${url}: ${last} (${attempts} attempts)`);
}

async function deploymentAvailable(namespace: string, name: string): Promise<V1Pod[]> {
  const started = Date.now();
  const d = await waitFor(120_000, async () => {
    const dep = await apps.readNamespacedDeployment({ namespace, name });
    const want = dep.spec?.replicas ?? 1;
    const available = dep.status?.conditions?.some((c) => c.type === "Available" && c.status === "True");
    return available && dep.status?.availableReplicas === want && dep.status.updatedReplicas === want ? dep : undefined;
  });
  const selector = Object.entries((await apps.readNamespacedDeployment({ namespace, name })).spec?.selector.matchLabels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const pods = (await core.listNamespacedPod({ namespace, labelSelector: selector })).items.filter((p) => !p.metadata?.deletionTimestamp);
  if (!d) {
    fail(`Deployment/${name} not Available within 120 s`);
    for (const p of pods)
      process.stdout.write(
        `        pod ${p.metadata?.name} ${p.status?.phase} ${JSON.stringify(p.status?.containerStatuses?.[0]?.state)}\n${podLog(p).replace(/^/gm, "        | ")}\n`,
      );
    return [];
  }
  ok(
    `Deployment/${name} Available: ${d.status?.availableReplicas}/${d.spec?.replicas} replicas in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  const running = pods.filter(
    (p) => p.status?.phase === "Running" && p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
  );
  if (running.length === (d.spec?.replicas ?? 1))
    ok(`Deployment/${name}: pods Running and Ready: ${running.map((p) => p.metadata?.name).join(", ")}`);
  else fail(`Deployment/${name}: ${running.length} pods Running and Ready of ${pods.length}`);
  return running;
}

/** The container's `metrics` port answers GET /metrics with Prometheus text, as the ServiceMonitor scrapes it. */
async function scrape(pod: V1Pod, container: V1Container): Promise<void> {
  const port = container.ports?.find((p) => p.name === "metrics")?.containerPort;
  if (port === undefined) return fail(`${pod.metadata?.name}: no container port named metrics`);
  const url = `http://${pod.status?.podIP ?? "127.0.0.1"}:${port}/metrics`;
  try {
    const res = await get(url);
    if (res.status === 200 && /^folio_/m.test(res.body))
      ok(`${pod.metadata?.name}: GET /metrics on port metrics (${port}) → 200, folio_* series`);
    else fail(`${pod.metadata?.name}: ${url} → ${res.status}`);
  } catch (err) {
    fail(`${pod.metadata?.name}: ${url}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function available(namespace: string, fullname: string): Promise<void> {
  let controllerPods: V1Pod[] = [];
  for (const component of ["api", "controller"]) {
    const pods = await deploymentAvailable(namespace, `${fullname}-${component}`);
    if (component === "controller") controllerPods = pods;
    for (const pod of pods) {
      const c = pod.spec?.containers[0];
      if (!c) continue;
      const probes: [string, V1Probe | undefined][] = [
        ["startup", c.startupProbe],
        ["liveness", c.livenessProbe],
        ["readiness", c.readinessProbe],
      ];
      if (!c.readinessProbe || !c.livenessProbe) fail(`${pod.metadata?.name}: a readiness and a liveness probe are declared`);
      for (const [kind, probe] of probes) if (probe) await runProbe(pod, c, kind, probe);
      await scrape(pod, c);
    }
  }
  const names = controllerPods.map((p) => p.metadata?.name ?? "");
  const lease = await waitFor(30_000, async () => {
    const l = await coordination.readNamespacedLease({ namespace, name: "folio-controller" });
    return names.some((n) => l.spec?.holderIdentity?.startsWith(`${n}_`)) ? l : undefined;
  });
  if (lease) ok(`Lease folio-controller held by ${lease.spec?.holderIdentity} (lease ${lease.spec?.leaseDurationSeconds} s)`);
  else fail(`Lease ${namespace}/folio-controller is not held by a controller pod (${names.join(", ")})`);
}

// --- job ----------------------------------------------------------------------------------------------

interface Reply {
  status: number;
  body: Buffer;
  json: any;
}

/** An HTTPS request to the API, verifying its certificate against `ca`. */
async function call(
  method: string,
  url: string,
  o: { key: string; ca: Buffer; form?: FormData; headers?: Record<string, string> },
): Promise<Reply> {
  let body: Buffer | undefined;
  const headers: Record<string, string> = { Authorization: `Bearer ${o.key}`, ...o.headers };
  if (o.form) {
    const encoded = await encodeForm(o.form);
    body = encoded.body;
    headers["Content-Type"] = encoded.contentType;
  }
  const res = await httpsRequest(url, o.ca, method, url, headers, body, { timeoutMs: 60_000 });
  return { status: res.status, body: res.body, json: res.json };
}

/** A one-page PDF saying `text`. */
async function onePager(text: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([595, 842]).drawText(text, { x: 72, y: 760, size: 20, font });
  return doc.save();
}

/**
 * `folio ARGS --kubernetes --namespace NS --json` from this machine with the admin kubeconfig, as
 * an operator runs it: tenants and keys live in the cluster (docs/adr/0008), not in a pod.
 */
function folioAdmin(namespace: string, args: string[]): any {
  const out = execFileSync(process.execPath, [join(ROOT, "bin", "folio.ts"), ...args, "--kubernetes", "--namespace", namespace, "--json"], {
    encoding: "utf8",
    env: { ...process.env, KUBECONFIG: env("KUBECONFIG") },
  });
  return JSON.parse(out);
}

interface Delivery {
  type: string;
  jobId: string;
  verified: boolean;
}

/** An HTTPS webhook receiver on 127.0.0.1 verifying signatures with `standardwebhooks`. */
async function startReceiver(
  dir: string,
  secret: () => string,
): Promise<{ url: string; deliveries: Delivery[]; close: () => Promise<void> }> {
  const tls = await loadOrCreateTls(webhookTlsDir(dir), {});
  const deliveries: Delivery[] = [];
  const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let verified = true;
      try {
        new Webhook(secret()).verify(body, req.headers as Record<string, string>);
      } catch {
        verified = false;
      }
      const payload = JSON.parse(body) as { type?: string; data?: { id?: string } };
      deliveries.push({ type: payload.type ?? "", jobId: payload.data?.id ?? "", verified });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/chart-test`,
    deliveries,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A running API pod of the release. */
async function apiPod(namespace: string, fullname: string): Promise<V1Pod | undefined> {
  const pods = (await core.listNamespacedPod({ namespace, labelSelector: "app.kubernetes.io/component=api" })).items.filter(
    (p) => p.status?.phase === "Running" && p.metadata?.name?.startsWith(`${fullname}-api-`),
  );
  return pods[0];
}

/** The finished job (polling GET /v1/jobs/{id} with Prefer: wait). */
async function finished(base: string, id: string, key: string, ca: Buffer): Promise<any> {
  const end = Date.now() + 180_000;
  for (;;) {
    const r = await call("GET", `${base}/v1/jobs/${id}`, { key, ca, headers: { Prefer: "wait=10" } });
    if (r.status !== 200) throw new Error(`GET /v1/jobs/${id}: ${r.status} ${r.body.toString("utf8")}`);
    if (r.json.status !== "queued" && r.json.status !== "running") return r.json;
    if (Date.now() > end) throw new Error(`job ${id} still ${r.json.status} after 180 s`);
  }
}

/** The PdfJob of an API job id (by its job-id label). */
async function pdfJobOf(namespace: string, jobId: string): Promise<PdfJob | undefined> {
  const list = (await custom.listNamespacedCustomObject({ ...CRD, namespace, labelSelector: `${LABELS.jobId}=${jobId}` })) as {
    items: PdfJob[];
  };
  return list.items[0];
}

/** The Job is the PdfJob's, with the owner reference OwnerReferencesPermissionEnforcement judged. */
function ownership(pj: PdfJob, job: V1Job): void {
  const owner = job.metadata?.ownerReferences?.find((o) => o.controller);
  if (owner?.kind === "PdfJob" && owner.uid === pj.metadata.uid && owner.blockOwnerDeletion) {
    ok(
      `PdfJob ${pj.metadata.name} owns Job ${job.metadata?.name} (blockOwnerDeletion, admitted under OwnerReferencesPermissionEnforcement)`,
    );
  } else fail(`Job ${job.metadata?.name} is not controlled by PdfJob ${pj.metadata.name}: ${JSON.stringify(owner)}`);
}

/** The runner pod template as the chart configures the controller: image, ServiceAccount, no token. */
function runnerTemplate(job: V1Job, fullname: string): void {
  const spec = job.spec?.template.spec;
  ok(`the controller's Job runs ${spec?.containers[0]?.image ?? "?"}; ${job.status?.succeeded ?? 0} succeeded`);
  if (spec?.serviceAccountName === `${fullname}-runner`) ok(`runner pods run as ${fullname}-runner (FOLIO_RUNNER_SERVICE_ACCOUNT)`);
  else fail(`runner pods run as ${spec?.serviceAccountName ?? "default"}, not ${fullname}-runner`);
  if (spec?.automountServiceAccountToken === false) ok("runner pods get no service-account token");
  else fail("the runner pod template mounts a service-account token");
}

async function runnerPods(namespace: string, job: V1Job): Promise<void> {
  const pods = (await core.listNamespacedPod({ namespace, labelSelector: `batch.kubernetes.io/job-name=${job.metadata?.name ?? ""}` }))
    .items;
  const phases = pods.map(
    (p) => `${p.metadata?.name} ${p.status?.phase} (exit ${p.status?.containerStatuses?.[0]?.state?.terminated?.exitCode ?? "?"})`,
  );
  if (pods.some((p) => p.status?.phase === "Succeeded")) ok(`runner pod ran to completion on the local kubelet: ${phases.join("; ")}`);
  else fail(`no runner pod succeeded: ${phases.join("; ") || "none"}`);
}

async function runnerChecks(namespace: string, fullname: string, jobId: string): Promise<void> {
  const pj = await pdfJobOf(namespace, jobId);
  const jobs = (await batch.listNamespacedJob({ namespace, labelSelector: `${LABELS.jobId}=${jobId}` })).items;
  const job = jobs[0];
  if (!pj || jobs.length !== 1 || !job) return fail(`one PdfJob and one batch Job for ${jobId}: found ${pj ? 1 : 0} and ${jobs.length}`);
  ownership(pj, job);
  runnerTemplate(job, fullname);
  await runnerPods(namespace, job);
}

/** Where and how the test calls the API: its URL, a tenant's key, and the API's certificate to verify. */
interface ApiClient {
  base: string;
  key: string;
  ca: Buffer;
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** Downloads the output through the API and checks it is the two-page merge (pdfinfo). */
async function downloadChecked(api: ApiClient, downloadUrl: string, dir: string): Promise<void> {
  const got = await call("GET", `${api.base}${downloadUrl}`, api);
  const out = join(dir, "merged.pdf");
  writeFileSync(out, got.body);
  const pages = /^Pages:\s+(\d+)/m.exec(execFileSync("pdfinfo", [out], { encoding: "utf8" }))?.[1];
  if (got.status === 200 && pages === "2")
    ok(`output downloaded from S3 through the API: ${got.body.length} bytes, ${pages} pages (pdfinfo)`);
  else fail(`download ${downloadUrl}: ${got.status}, pages ${pages ?? "?"}`);
}

/** The controller delivered job.succeeded for the job, signed with the tenant's secret. */
async function webhookDelivered(receiver: Receiver, jobId: string): Promise<void> {
  const delivered = await waitFor(60_000, () => Promise.resolve(receiver.deliveries.find((d) => d.jobId === jobId)));
  if (delivered?.verified && delivered.type === "job.succeeded")
    ok(
      `webhook ${delivered.type} delivered by the controller, signature verified (standardwebhooks) with the tenant's secret read from the PdfJob's Secret`,
    );
  else fail(`webhook for ${jobId}: ${delivered ? JSON.stringify(delivered) : "not delivered within 60 s"}`);
}

/** DELETE: the API deletes the PdfJob; the controller deletes its S3 objects, then lets it go; the output no longer downloads. */
async function deletedChecked(api: ApiClient, namespace: string, jobId: string, downloadUrl: string): Promise<void> {
  const deleted = await call("DELETE", `${api.base}/v1/jobs/${jobId}`, api);
  const gone = deleted.status === 204 && (await waitFor(60_000, async () => ((await pdfJobOf(namespace, jobId)) ? undefined : true)));
  if (gone) ok(`DELETE /v1/jobs/${jobId}: 204, and the PdfJob is gone (the controller released it)`);
  else fail(`DELETE /v1/jobs/${jobId}: ${deleted.status}, PdfJob ${gone ? "gone" : "still there after 60 s"}`);
  const after = await call("GET", `${api.base}${downloadUrl}`, api);
  if (after.status === 404) ok("the output no longer downloads (404)");
  else fail(`the output still answers ${after.status} after DELETE`);
}

/** One merge through the API, the controller and a runner pod, followed from the upload to the deletion. */
async function mergeJob(api: ApiClient, namespace: string, fullname: string, dir: string, receiver: Receiver): Promise<void> {
  const form = new FormData();
  form.append("file", new Blob([await onePager("chart test, page one")], { type: "application/pdf" }), "one.pdf");
  form.append("file", new Blob([await onePager("chart test, page two")], { type: "application/pdf" }), "two.pdf");
  form.append("webhook_url", receiver.url);
  const started = Date.now();
  const posted = await call("POST", `${api.base}/v1/pdf/merge`, { ...api, form, headers: { Prefer: "wait=30" } });
  if (posted.status !== 200 && posted.status !== 202) return fail(`POST /v1/pdf/merge: ${posted.status} ${posted.body.toString("utf8")}`);
  ok(`POST ${api.base}/v1/pdf/merge over HTTPS (the API's certificate verified): ${posted.status}, job ${posted.json.id}`);
  const done = await finished(api.base, posted.json.id as string, api.key, api.ca);
  if (done.status !== "succeeded") return fail(`job ${done.id} ${done.status}: ${JSON.stringify(done.error)}`);
  ok(`job ${done.id} succeeded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const file = done.result?.files?.[0] as { download_url: string } | undefined;
  if (!file) return fail(`job ${done.id} has no output file`);
  await downloadChecked(api, file.download_url, dir);
  await runnerChecks(namespace, fullname, done.id as string);
  await webhookDelivered(receiver, done.id as string);
  await deletedChecked(api, namespace, done.id as string, file.download_url);
}

async function job(namespace: string, fullname: string, base: string, dir: string): Promise<void> {
  const pod = await apiPod(namespace, fullname);
  if (!pod) return fail("no running API pod");
  const tenant = folioAdmin(namespace, ["tenants", "create", "acme", "--plan", "business"]) as { tenant: string; webhook_secret: string };
  const { key } = folioAdmin(namespace, ["keys", "create", "--tenant", "acme"]) as { key: string };
  ok(`folio tenants create acme / folio keys create --kubernetes with the admin kubeconfig (${tenant.tenant}, key ${key.slice(0, 8)}…)`);
  const dataDir = pod.spec?.containers[0]?.env?.find((e) => e.name === "FOLIO_DATA_DIR")?.value ?? "/var/lib/folio";
  const ca = Buffer.from(execInPod(env("FOLIO_KUBELET_DIR"), pod, ["cat", `${dataDir}/tls-cert.pem`]));
  const receiver = await startReceiver(dir, () => tenant.webhook_secret);
  try {
    await mergeJob({ base, key, ca }, namespace, fullname, dir, receiver);
  } finally {
    await receiver.close();
  }
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case "prepare":
      await prepare(args[0]!, args[1]!);
      break;
    case "kubeconfigs":
      await kubeconfigs(args[0]!, args[1]!);
      break;
    case "available":
      await available(args[0]!, args[1]!);
      break;
    case "job":
      await job(args[0]!, args[1]!, args[2]!, args[3]!);
      break;
    default:
      process.stderr.write("usage: node test/chart/live.ts prepare|kubeconfigs|available|job ...\n");
      return 2;
  }
  return failures ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (status) => {
    process.exitCode = status;
  },
  (err: unknown) => {
    process.stderr.write(`live.ts: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  },
);
