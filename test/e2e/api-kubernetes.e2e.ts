/**
 * The public API in Kubernetes mode, end to end: `folio serve` with FOLIO_BACKEND=kubernetes (a
 * real HTTPS server driven by a real client) and the controller, both containers of the API image,
 * a real kube-apiserver with the local kubelet running runner pods from the runner image, and MinIO. Every operation goes in through the API and its
 * result comes back out of it; the cluster and the bucket are then inspected directly.
 */
import { execFile } from "node:child_process";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { BatchV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { loadOrCreateTls } from "../../api/tls.ts";
import { PDFJOB_GROUP, PDFJOB_PLURAL, PDFJOB_VERSION, pdfJobName, type PdfJob } from "../../core/schemas/pdfjob.ts";
import { S3ObjectStore } from "../../core/storage/s3-store.ts";
import { blob, freePort, type Server } from "../api/harness.ts";
import type { FolioContainer } from "../k8s/folio-container.ts";
import { brokenPdf, textPdf } from "../fixtures/pdf-fixtures.ts";
import { unzip } from "../helpers/convert-quality.ts";
import { pageCount, pdftotext, qpdfCheck } from "../helpers/tools.ts";
import type { Platform } from "../k8s/platform.ts";
import type { S3Server } from "../s3/server.ts";
import { startApiContainer, startReadyController } from "./containers.ts";
import { type E2eWorld, startE2eWorld, until } from "./support.ts";

const execFileP = promisify(execFile);
const NS = "default";
const CRD = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL, namespace: NS };

let platform: Platform;
let s3: S3Server;
let store: S3ObjectStore;
let kc: KubeConfig;
let controller: FolioContainer;
let api: Server;
let key: string;
let otherKey: string;
let dir: string;
let metricsPort: number;
let receiver: https.Server;
const received: { headers: Record<string, string>; body: string }[] = [];
let world: E2eWorld;

async function tenantKey(name: string): Promise<string> {
  expect((await api.folio(["tenants", "create", name, "--plan", "business", "--json"])).code).toBe(0);
  const k = await api.folio(["keys", "create", "--tenant", name, "--json"]);
  expect(k.code).toBe(0);
  return (k.json as { key: string }).key;
}

/** Posts an operation with inline files and waits (Prefer: wait) for the job to end. */
async function run(
  operation: string,
  files: string[],
  fields: Record<string, string> = {},
  headers: Record<string, string> = {},
): Promise<any> {
  const form = new FormData();
  for (const f of files) form.append("file", blob(await readFile(f)), path.basename(f));
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await api.request("POST", `/v1/pdf/${operation}`, { key, form, headers: { Prefer: "wait=10", ...headers } });
  expect([200, 202], res.text).toContain(res.status);
  let job = res.json;
  const end = Date.now() + 180_000;
  while (job.status === "queued" || job.status === "running") {
    if (Date.now() > end) throw new Error(`job ${job.id} still ${job.status}`);
    // Reads come from the API's cache now, answered in a millisecond: poll at a pace the rate limit allows.
    await new Promise((r) => setTimeout(r, 250));
    const again = await api.request("GET", `/v1/jobs/${job.id}`, { key, headers: { Prefer: "wait=10" } });
    expect(again.status).toBe(200);
    job = again.json;
  }
  return job;
}

async function download(file: { download_url: string; filename: string }, k = key): Promise<string> {
  const res = await api.request("GET", file.download_url, { key: k });
  expect(res.status, res.text).toBe(200);
  const out = path.join(dir, `${Date.now()}-${file.filename}`);
  await writeFile(out, res.body);
  return out;
}

const pdfJob = async (jobId: string): Promise<PdfJob | null> => {
  try {
    return (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({ ...CRD, name: pdfJobName(jobId) })) as PdfJob;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return null;
    throw err;
  }
};

describe("the public API in Kubernetes mode", () => {
  beforeAll(async () => {
    world = await startE2eWorld("folio-e2e-api-");
    ({ dir, platform, s3, store, kc } = world);
    const tls = await loadOrCreateTls(dir, {});
    receiver = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString("utf8") });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    // Loopback is allowed for the test receiver only, through the operator allow-list, in both processes.
    metricsPort = await freePort();
    controller = await startReadyController(
      platform,
      {
        ...s3.env,
        FOLIO_CONTROLLER_NAMESPACE: NS,
        FOLIO_CONTROLLER_WORKERS: "2",
        FOLIO_WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        FOLIO_WEBHOOK_CA_FILE: tls.certPath,
      },
      [tls.certPath],
    );
    api = await startApiContainer(platform, {
      FOLIO_BACKEND: "kubernetes",
      KUBECONFIG: platform.kubeconfig,
      FOLIO_JOBS_NAMESPACE: NS,
      FOLIO_WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
      FOLIO_METRICS_PORT: String(metricsPort),
      ...s3.env,
    });
    key = await tenantKey("acme");
    otherKey = await tenantKey("globex");
  });

  afterAll(async () => {
    receiver?.closeAllConnections();
    receiver?.close();
    await api?.cleanup();
    await controller?.stop();
    await controller?.cleanup();
    await world?.stop();
  });

  it("should be ready only with the apiserver and the bucket behind it, and print no dev tenant", async () => {
    const res = await api.request("GET", "/readyz", { key: null });
    expect(res.status).toBe(200);
    expect(api.logs()).toContain("(kubernetes) listening on");
    expect(api.logs()).not.toContain("API key:");
  });

  it("should serve /metrics on its own port, not on the public one (API.md)", async () => {
    expect((await api.request("GET", "/metrics", { key: null })).status).toBe(404);
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^folio_http_requests_total\{/m);
  });

  it("should merge through the API: one PdfJob, one batch Job, an output that downloads", async () => {
    const a = await textPdf(path.join(dir, "a.pdf"), 3, "alpha");
    const b = await textPdf(path.join(dir, "b.pdf"), 2, "bravo");
    const job = await run("merge", [a, b], { outline: "per_file" });
    expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
    const out = await download(job.result.files[0]);
    expect(await pageCount(out)).toBe(5);
    expect(await qpdfCheck(out)).toBe(true);
    expect(await pdftotext(out)).toMatch(/alpha[\s\S]*bravo/);
    const pj = await pdfJob(job.id);
    expect(pj?.spec.operation).toBe("merge");
    expect(pj?.metadata.labels?.["folio.dev/tenant"]).toBe("acme");
    const jobs = await kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: NS, labelSelector: `folio.dev/job-id=${job.id}` });
    expect(jobs.items).toHaveLength(1);
    // The inputs went when the job ended (API.md "Retention").
    for (const input of pj?.spec.inputs ?? []) expect(await store.exists(input.key)).toBe(false);
    expect((await api.request("GET", `/v1/files/${job.inputs[0].file_id}`, { key })).status).toBe(404);
  });

  it("should compress, split and convert through the API", async () => {
    const src = await textPdf(path.join(dir, "c.pdf"), 4, "charlie");
    const compressed = await run("compress", [src], { level: "lossless" });
    expect(compressed.status, JSON.stringify(compressed.error)).toBe("succeeded");
    expect(await pageCount(await download(compressed.result.files[0]))).toBe(4);

    const split = await run("split", [src], { mode: "every", every: "2" });
    expect(split.status, JSON.stringify(split.error)).toBe("succeeded");
    const parts = split.result.files.filter((f: { content_type: string }) => f.content_type === "application/pdf");
    expect(parts).toHaveLength(2);
    for (const p of parts) expect(await pageCount(await download(p))).toBe(2);

    const rtf = path.join(dir, "memo.rtf");
    await writeFile(rtf, "{\\rtf1\\ansi{\\fonttbl{\\f0 Helvetica;}}\\f0\\fs24 Kubernetes conversion memo: quokka marmalade.\\par}");
    const converted = await run("convert", [rtf], { to: "pdf" });
    expect(converted.status, JSON.stringify(converted.error)).toBe("succeeded");
    expect(await pdftotext(await download(converted.result.files[0]))).toContain("quokka marmalade");

    const docx = await run("convert", [src], { to: "docx" });
    expect(docx.status, JSON.stringify(docx.error)).toBe("succeeded");
    expect(docx.result.files[0].content_type).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    const word = unzip(await readFile(await download(docx.result.files[0]))).get("word/document.xml");
    expect(word?.toString("utf8")).toContain("charlie");
  });

  it("should protect with a password that lives only in the PdfJob's own Secret", async () => {
    const password = "e2e-Secret-Pa55word";
    const src = await textPdf(path.join(dir, "p.pdf"), 1, "papa");
    const job = await run("protect", [src], { user_password: password });
    expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
    const out = await download(job.result.files[0]);
    await expect(execFileP("pdfinfo", [out])).rejects.toThrow();
    expect(await pdftotext(out, password)).toContain("papa");
    const pj = await pdfJob(job.id);
    expect(JSON.stringify(pj)).not.toContain(password);
    expect(JSON.stringify(job)).not.toContain(password);
    const secret = await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: NS, name: pj!.spec.secretRef!.name });
    expect(secret.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: "PdfJob",
      name: pj!.metadata.name,
      uid: pj!.metadata.uid,
      controller: true,
    });
  });

  it("should fail a bad input through podFailurePolicy and show invalid_pdf", async () => {
    const bad = await brokenPdf(path.join(dir, "broken.pdf"));
    const job = await run("compress", [bad]);
    expect(job.status).toBe("failed");
    expect(job.error.code).toBe("invalid_pdf");
    const batch = await kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: NS, labelSelector: `folio.dev/job-id=${job.id}` });
    expect(batch.items[0]?.status?.conditions?.find((c) => c.type === "Failed")?.reason).toBe("PodFailurePolicy");
  });

  it("should keep tenants apart, replay idempotent requests, and list newest first", async () => {
    const src = await textPdf(path.join(dir, "i.pdf"), 1, "india");
    const first = await run("compress", [src], {}, { "Idempotency-Key": "e2e-idem-1" });
    const again = await run("compress", [src], {}, { "Idempotency-Key": "e2e-idem-1" });
    expect(again.id).toBe(first.id);
    const owner = await api.request("GET", `/v1/jobs/${first.id}`, { key });
    expect(owner.status).toBe(200);
    expect((await api.request("GET", `/v1/jobs/${first.id}`, { key: otherKey })).status).toBe(404);
    expect((await api.request("GET", first.result.files[0].download_url, { key: otherKey })).status).toBe(404);
    expect((await api.request("DELETE", `/v1/jobs/${first.id}`, { key: otherKey })).status).toBe(404);
    const list = await api.request("GET", "/v1/jobs?limit=2", { key });
    expect(list.status).toBe(200);
    expect(list.json.data[0].id).toBe(first.id);
    expect(list.json.has_more).toBe(true);
    expect((await api.request("GET", "/v1/jobs", { key: otherKey })).json.data).toEqual([]);
  });

  it("should delete a job: the PdfJob, its batch Job, its pods and its objects go, and the API answers 404", async () => {
    const src = await textPdf(path.join(dir, "d.pdf"), 2, "delta");
    const job = await run("compress", [src], { level: "lossless" });
    expect(job.status).toBe("succeeded");
    const pj = await pdfJob(job.id);
    const outputKey = pj?.status?.outputs?.[0]?.key;
    expect(outputKey && (await store.exists(outputKey))).toBe(true);
    expect((await api.request("DELETE", `/v1/jobs/${job.id}`, { key })).status).toBe(204);
    expect((await api.request("GET", `/v1/jobs/${job.id}`, { key })).status).toBe(404);
    expect((await api.request("GET", job.result.files[0].download_url, { key })).status).toBe(404);
    await until("the PdfJob to be gone", async () => ((await pdfJob(job.id)) === null ? true : undefined), 60_000);
    expect(await store.exists(outputKey!)).toBe(false);
    await until(
      "the batch Job and its pods to be gone",
      async () => {
        const jobs = await kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: NS, labelSelector: `folio.dev/job-id=${job.id}` });
        const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NS, labelSelector: `folio.dev/job-id=${job.id}` });
        return jobs.items.length === 0 && pods.items.length === 0 ? true : undefined;
      },
      60_000,
    );
  });

  it("should delete one output on request and keep the job", async () => {
    const src = await textPdf(path.join(dir, "o.pdf"), 4, "oscar");
    const job = await run("split", [src], { mode: "every", every: "2" });
    expect(job.status).toBe("succeeded");
    const [gone, kept] = job.result.files as { id: string; download_url: string; filename: string }[];
    expect((await api.request("DELETE", `/v1/files/${gone!.id}`, { key })).status).toBe(204);
    expect((await api.request("GET", `/v1/files/${gone!.id}`, { key })).status).toBe(404);
    const after = await api.request("GET", `/v1/jobs/${job.id}`, { key });
    expect(after.json.result.files.map((f: { id: string }) => f.id)).not.toContain(gone!.id);
    expect(await pageCount(await download(kept!))).toBe(2);
  });

  it("should send the job's webhook from the controller, signed with the tenant's secret", async () => {
    const shown = await api.folio(["tenants", "show-secret", "acme", "--json"]);
    const secret = (shown.json as { webhook_secret: string }).webhook_secret;
    expect(secret).toMatch(/^whsec_/);
    const url = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/acme`;
    const src = await textPdf(path.join(dir, "w.pdf"), 1, "whiskey");
    const job = await run("compress", [src], { webhook_url: url });
    expect(job.status).toBe("succeeded");
    const delivery = await until("the webhook", () => Promise.resolve(received.find((r) => r.body.includes(job.id))), 60_000);
    const payload = new Webhook(secret).verify(delivery.body, delivery.headers) as { type: string; data: { id: string; status: string } };
    expect(payload).toMatchObject({ type: "job.succeeded", data: { id: job.id, status: "succeeded" } });
    const seen = await until(
      "the ledger to say delivered",
      async () => {
        const res = await api.request("GET", `/v1/jobs/${job.id}`, { key });
        return res.json.webhook?.status === "delivered" ? res.json : undefined;
      },
      30_000,
    );
    expect(seen.webhook).toMatchObject({ url, attempts: 1, last_error: null });
    // The signing secret sits in the job's own Secret, never in the PdfJob.
    expect(JSON.stringify(await pdfJob(job.id))).not.toContain(secret);
  });
});
