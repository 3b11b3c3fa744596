/**
 * `make bench-k8s`, the stateless API's sections (issue #12): `folio serve` replicas in
 * Kubernetes mode (test/e2e/replicas.ts: containers of the API image behind a round-robin TCP
 * proxy) on the local control plane (its kubelet only runs the replicas; no controller: jobs stay
 * queued unless the bench writes their status as the controller would) and MinIO.
 *
 *   1. apiserver requests per API request (kube-apiserver's own apiserver_request_total, watches
 *      excluded): GET /v1/jobs/{id}, GET /v1/jobs, GET /v1/files/{output id}, and a submission
 *      without and with an Idempotency-Key. Goal: 0 for reads, 1–2 for a submission.
 *   2. GET /v1/jobs/{id} throughput (autocannon, 32 connections, 10 s) through the proxy with 1
 *      and with 3 replicas.
 *   3. 200 concurrent `Prefer: wait=30` submissions: the apiserver's request rate while they wait,
 *      and how soon after their PdfJobs end (status written) they are answered.
 *   4. The API's memory (RSS of one replica after its caches have synced) with N retained PdfJobs
 *      (default 50,000), against none.
 *
 *   node bench/k8s-stateless.ts [--retained 50000] [--waiters 200] [--duration 10]
 */
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from "@kubernetes/client-node";
import autocannon from "autocannon";
import { KubernetesTenantAdmin } from "../api/store/kubernetes/tenant-admin.ts";
import { loadOrCreateTls } from "../api/tls.ts";
import { newId } from "../core/ids.ts";
import {
  LABELS,
  MANAGED_BY,
  PDFJOB_ANNOTATIONS,
  PDFJOB_API_VERSION,
  PDFJOB_GROUP,
  PDFJOB_KIND,
  PDFJOB_PLURAL,
  PDFJOB_VERSION,
  pdfJobName,
} from "../core/schemas/pdfjob.ts";
import { outputFileId, outputTag } from "../core/schemas/storage-keys.ts";
import { blob } from "../test/api/harness.ts";
import { applyCrds } from "../test/e2e/support.ts";
import { multipart, ReplicaSet, request } from "../test/e2e/replicas.ts";
import { textPdf } from "../test/fixtures/pdf-fixtures.ts";
import { tmpDir } from "../test/helpers/tools.ts";
import { delta, requestCounts } from "../test/k8s/apiserver-requests.ts";
import { loadKubeConfig } from "../test/k8s/kubeconfig.ts";
import { startPlatform, type Platform } from "../test/k8s/platform.ts";
import { startS3Server, type S3Server } from "../test/s3/server.ts";

const { values: args } = parseArgs({
  options: {
    retained: { type: "string", default: "50000" },
    waiters: { type: "string", default: "200" },
    duration: { type: "string", default: "10" },
  },
});
const RETAINED = Number(args.retained);
const WAITERS = Number(args.waiters);
const DURATION = Number(args.duration);
const NS = "default";
const CRD = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL, namespace: NS };
const load = (): string =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

interface Env {
  platform: Platform;
  s3: S3Server;
  kc: KubeConfig;
  dir: string;
  tls: { certFile: string; keyFile: string; cert: Buffer };
  key: string;
  pdf: Buffer;
}

async function replicas(e: Env, count: number): Promise<ReplicaSet> {
  const set = new ReplicaSet({
    platform: e.platform,
    count,
    env: {
      FOLIO_BACKEND: "kubernetes",
      KUBECONFIG: e.platform.kubeconfig,
      FOLIO_JOBS_NAMESPACE: NS,
      FOLIO_RATE_LIMIT_PER_MINUTE: "6000000",
      FOLIO_RATE_LIMIT_BURST: "1000000",
      FOLIO_MAX_UNFINISHED_JOBS: "100000",
      FOLIO_WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
      ...e.s3.env,
    },
    tls: e.tls,
    kc: e.kc,
    namespace: NS,
    service: `bench-api-${count}`,
    dir: path.join(e.dir, `set-${count}-${Date.now()}`),
  });
  await set.start();
  return set;
}

const auth = (e: Env): Record<string, string> => ({ Authorization: `Bearer ${e.key}` });

async function submit(e: Env, set: ReplicaSet, headers: Record<string, string> = {}): Promise<{ id: string; status: number }> {
  const form = new FormData();
  form.append("file", blob(e.pdf), "a.pdf");
  form.append("level", "lossless");
  const { body, headers: h } = await multipart(form);
  const res = await request(set.base, e.tls.cert, "POST", "/v1/pdf/compress", { ...h, ...auth(e), ...headers }, body);
  if (res.status !== 202 && res.status !== 200) throw new Error(`submit: ${res.status} ${res.text}`);
  return { id: res.json.id as string, status: res.status };
}

/** Writes a PdfJob's end as the controller would (status subresource). */
async function succeed(e: Env, jobId: string, outputs: number): Promise<void> {
  const custom = e.kc.makeApiClient(CustomObjectsApi);
  const list = (await custom.listNamespacedCustomObject({ ...CRD, labelSelector: `${LABELS.jobId}=${jobId}` })) as {
    items: { metadata: { name: string } }[];
  };
  const name = list.items[0]!.metadata.name;
  const now = new Date().toISOString();
  const files = Array.from({ length: outputs }, (_, i) => ({
    key: `bench/${jobId}/${outputFileId("bench", jobId, i)}`,
    filename: `out-${i}.pdf`,
    contentType: "application/pdf",
    size: 3,
    sha256: "c".repeat(64),
  }));
  await custom.patchNamespacedCustomObjectStatus(
    {
      ...CRD,
      name,
      body: {
        status: { phase: "Succeeded", completionTime: now, expireTime: new Date(Date.now() + 3600_000).toISOString(), outputs: files },
      },
    },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
}

async function requestsPerRequest(e: Env): Promise<void> {
  const set = await replicas(e, 3);
  try {
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await submit(e, set)).id);
    await succeed(e, ids[0]!, 2);
    const output = outputFileId("bench", ids[0]!, 1);
    await new Promise((r) => setTimeout(r, 1000));
    const measure = async (label: string, n: number, fn: (i: number) => Promise<unknown>): Promise<void> => {
      const before = await requestCounts(e.kc);
      for (let i = 0; i < n; i++) await fn(i);
      await new Promise((r) => setTimeout(r, 300));
      const d = delta(before, await requestCounts(e.kc));
      console.log(`  ${label.padEnd(52)} ${(d.total / n).toFixed(2).padStart(6)}   ${d.byKind || "—"}`);
    };
    console.log(`1. apiserver requests per API request (3 replicas, round robin; load ${load()})`);
    console.log(`  ${"request".padEnd(52)} ${"per req".padStart(6)}   what`);
    await measure("GET /v1/jobs/{id} (job known to every cache)", 300, (i) =>
      request(set.base, e.tls.cert, "GET", `/v1/jobs/${ids[i % ids.length]}`, auth(e)),
    );
    await measure("GET /v1/jobs?limit=100", 300, () => request(set.base, e.tls.cert, "GET", "/v1/jobs?limit=100", auth(e)));
    await measure("GET /v1/files/{output id}", 300, () => request(set.base, e.tls.cert, "GET", `/v1/files/${output}`, auth(e)));
    await measure("GET /v1/jobs/{unknown id} (404: read through)", 100, () =>
      request(set.base, e.tls.cert, "GET", `/v1/jobs/${newId("job")}`, auth(e)),
    );
    await measure("POST /v1/pdf/compress (inline file)", 50, () => submit(e, set));
    await measure("POST /v1/pdf/compress + Idempotency-Key", 50, (i) => submit(e, set, { "Idempotency-Key": `bench-${Date.now()}-${i}` }));
    await measure("POST /v1/pdf/compress + webhook_url (its Secret)", 50, async () => {
      const form = new FormData();
      form.append("file", blob(e.pdf), "a.pdf");
      form.append("webhook_url", "https://127.0.0.1:9/hooks");
      const { body, headers } = await multipart(form);
      const res = await request(set.base, e.tls.cert, "POST", "/v1/pdf/compress", { ...headers, ...auth(e) }, body);
      if (res.status !== 202) throw new Error(`submit with a webhook: ${res.status} ${res.text}`);
    });
  } finally {
    await set.stop();
  }
}

async function throughput(e: Env): Promise<void> {
  console.log(
    `\n2. GET /v1/jobs/{id} through the proxy, autocannon 32 connections × ${DURATION} s (load ${load()}; 2 cores shared by everything)`,
  );
  for (const count of [1, 3]) {
    const set = await replicas(e, count);
    try {
      const { id } = await submit(e, set);
      const r = await autocannon({
        url: `${set.base}/v1/jobs/${id}`,
        connections: 32,
        duration: DURATION,
        headers: auth(e),
        tlsOptions: { rejectUnauthorized: false },
      });
      console.log(
        `  ${count} replica${count > 1 ? "s" : " "}: ${Math.round(r.requests.average)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`,
      );
    } finally {
      await set.stop();
    }
  }
}

async function waiters(e: Env): Promise<void> {
  const set = await replicas(e, 3);
  try {
    console.log(`\n3. ${WAITERS} concurrent POSTs with Prefer: wait=60 (3 replicas; load ${load()})`);
    const custom = e.kc.makeApiClient(CustomObjectsApi);
    type Item = { metadata: { name: string; labels: Record<string, string> }; status?: { phase?: string } };
    const list = async (): Promise<Item[]> =>
      ((await custom.listNamespacedCustomObject({ ...CRD, labelSelector: `${LABELS.tenant}=bench` })) as { items: Item[] }).items;
    const before = new Set((await list()).map((pj) => pj.metadata.name));
    const mine = async (): Promise<Item[]> => (await list()).filter((pj) => !before.has(pj.metadata.name));
    const ids: (string | undefined)[] = [];
    const answered: number[] = [];
    const waiting = Array.from({ length: WAITERS }, async (_, i) => {
      const form = new FormData();
      form.append("file", blob(e.pdf), "a.pdf");
      const { body, headers } = await multipart(form);
      const res = await request(set.base, e.tls.cert, "POST", "/v1/pdf/compress", { ...headers, ...auth(e), Prefer: "wait=60" }, body);
      ids[i] = res.json?.id as string | undefined;
      answered[i] = Date.now();
      return res.status;
    });
    // Wait for every PdfJob to exist, then measure the apiserver's rate while they all wait.
    while ((await mine()).length < WAITERS) await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 1000));
    const counted = await requestCounts(e.kc);
    const t = Date.now();
    await new Promise((r) => setTimeout(r, 5000));
    const idle = delta(counted, await requestCounts(e.kc));
    console.log(
      `  while ${WAITERS} requests wait: ${(idle.total / ((Date.now() - t) / 1000)).toFixed(2)} apiserver requests/s from the API${idle.byKind ? ` (${idle.byKind})` : ""}`,
    );
    // End them as the controller would, and see how soon each waiter is answered.
    const ended = new Map<string, number>();
    for (const pj of await mine()) {
      const jobId = pj.metadata.labels[LABELS.jobId]!;
      await custom.patchNamespacedCustomObjectStatus(
        {
          ...CRD,
          name: pj.metadata.name,
          body: {
            status: { phase: "Failed", completionTime: new Date().toISOString(), error: { code: "internal_error", message: "bench" } },
          },
        },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
      ended.set(jobId, Date.now());
    }
    const statuses = await Promise.all(waiting);
    const histogram = new Map<number, number>();
    for (const st of statuses) histogram.set(st, (histogram.get(st) ?? 0) + 1);
    const lag = ids.flatMap((id, i) => (id && ended.has(id) ? [answered[i]! - ended.get(id)!] : [])).sort((a, b) => a - b);
    console.log(
      `  answers: ${[...histogram].map(([st, n]) => `${n} × ${st}`).join(", ")}; status write → answer p50 ${lag[Math.floor(lag.length / 2)]} ms, max ${lag.at(-1)} ms`,
    );
  } finally {
    await set.stop();
  }
}

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
}

async function memory(e: Env): Promise<void> {
  console.log(`\n4. API memory with retained PdfJobs in its cache (load ${load()})`);
  const measure = async (label: string): Promise<void> => {
    const set = await replicas(e, 1);
    try {
      await new Promise((r) => setTimeout(r, 2000));
      const r0 = set.replicas[0]!;
      await request(set.base, e.tls.cert, "GET", "/v1/jobs?limit=100", auth(e));
      console.log(`  ${label.padEnd(40)} RSS ${rssMiB(r0.pid).toFixed(0)} MiB`);
    } finally {
      await set.stop();
    }
  };
  await measure("no PdfJob");
  const custom = e.kc.makeApiClient(CustomObjectsApi);
  const t = Date.now();
  let made = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (made < RETAINED) {
        const i = made++;
        const jobId = newId("job");
        const tenant = `t${i % 50}`;
        await custom.createNamespacedCustomObject({
          ...CRD,
          body: {
            apiVersion: PDFJOB_API_VERSION,
            kind: PDFJOB_KIND,
            metadata: {
              name: pdfJobName(jobId),
              labels: {
                [LABELS.tenant]: tenant,
                [LABELS.jobId]: jobId,
                [LABELS.outputTag]: outputTag(jobId),
                [LABELS.managedBy]: MANAGED_BY,
              },
              annotations: { [PDFJOB_ANNOTATIONS.createdMs]: String(Date.now()) },
            },
            spec: {
              tenant,
              operation: "merge",
              inputs: [0, 1].map((k) => ({
                key: `${tenant}/file_${"A".repeat(23)}${k}`,
                fileId: `file_${"A".repeat(23)}${k}`,
                filename: `input-${k}.pdf`,
                contentType: "application/pdf",
                size: 123456,
                sha256: "d".repeat(64),
                pageCount: 12,
              })),
              options: { outline: "keep" },
              deadlineSeconds: 360,
              retentionSeconds: 3600,
              metadata: { customer: "acme", order: String(i) },
            },
          },
        });
      }
    }),
  );
  console.log(`  (${RETAINED} PdfJobs created in ${((Date.now() - t) / 1000).toFixed(0)} s)`);
  await measure(`${RETAINED.toLocaleString("en")} PdfJobs`);
}

async function main(): Promise<void> {
  const { dir, cleanup } = await tmpDir("folio-bench-stateless-");
  const [platform, s3] = await Promise.all([startPlatform(), startS3Server()]);
  try {
    const kc = loadKubeConfig(platform.kubeconfig);
    await applyCrds(kc);
    const tls = await loadOrCreateTls(dir, {});
    const admin = new KubernetesTenantAdmin(kc, NS);
    await admin.createTenant("bench", "business");
    const { key } = await admin.createKey("bench");
    const pdf = readFileSync(await textPdf(path.join(dir, "a.pdf"), 1, "bench"));
    const e: Env = {
      platform,
      s3,
      kc,
      dir,
      tls: { certFile: tls.certPath, keyFile: path.join(dir, "tls-key.pem"), cert: tls.cert },
      key,
      pdf,
    };
    console.log(
      `folio stateless API benchmark — ${new Date().toISOString()} — ${os.cpus().length} cores, load ${load()}, node ${process.version}\n`,
    );
    await requestsPerRequest(e);
    await throughput(e);
    if (WAITERS > 0) await waiters(e);
    if (RETAINED > 0) await memory(e);
  } finally {
    await s3.stop();
    await platform.stop();
    await cleanup();
  }
}

await main();
