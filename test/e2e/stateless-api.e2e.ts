/**
 * The API without a single point of failure (issue #12), end to end: three `folio serve`
 * replicas in Kubernetes mode behind a round-robin proxy (test/e2e/replicas.ts), each a container
 * of the API image, the controller in a container of the same image, runner pods of the runner
 * image on the local kubelet, MinIO. No replica holds state: tenants and keys are Tenant
 * resources and Secrets made with the admin CLI on the cluster, jobs are PdfJobs, uploads are S3
 * objects.
 *
 * - A key created with the CLI works on every replica at once; a revoked key stops on all three
 *   within 2 s (measured per replica, straight to each, not through the proxy).
 * - Chaos: N jobs (FOLIO_E2E_STATELESS_JOBS, default 60; `make bench-k8s` runs 300) from three
 *   tenants, each with an Idempotency-Key, submitted by concurrent clients through the proxy
 *   while one replica is SIGKILLed and brought back, then every replica restarted one by one.
 *   Clients retry every failed request with the same key (and back off on 429). Every job
 *   exists exactly once (one PdfJob per key), ends succeeded, and its webhook arrives exactly
 *   once (one delivery per webhook-id) at a real HTTPS receiver. No replica's data directory
 *   holds a database file.
 * - Rate limits hold across replicas: a key's requests spread over three replicas are refused
 *   past the plan's figure (burst + rate), not three times it; the error is printed.
 */
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import https from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOrCreateTls } from "../../api/tls.ts";
import { LABELS, PDFJOB_GROUP, PDFJOB_PLURAL, PDFJOB_VERSION, type PdfJob } from "../../core/schemas/pdfjob.ts";
import { blob } from "../api/harness.ts";
import type { FolioContainer } from "../k8s/folio-container.ts";
import { startReadyController } from "./containers.ts";
import { textPdf } from "../fixtures/pdf-fixtures.ts";
import { ROOT } from "../helpers/tools.ts";
import type { Platform } from "../k8s/platform.ts";
import type { S3Server } from "../s3/server.ts";
import { multipart, ReplicaSet, request } from "./replicas.ts";
import { type E2eWorld, startE2eWorld, sleep, until } from "./support.ts";

const NS = "default";
const SERVICE = "folio-api-e2e";
const JOBS = Number(process.env.FOLIO_E2E_STATELESS_JOBS ?? 60);
const CLIENTS = 12;
const TENANTS = ["north", "south", "west"];
const CRD = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL, namespace: NS };

let platform: Platform;
let s3: S3Server;
let kc: KubeConfig;
let controller: FolioContainer;
let set: ReplicaSet;
let dir: string;
let world: E2eWorld;
let ca: Buffer;
let receiver: https.Server;
const keys: Record<string, string> = {};
/** Webhook deliveries: webhook-id → job ids seen under it, and how many times. */
const deliveries = new Map<string, { jobId: string; count: number }>();

/** `folio ARGS --kubernetes --json` with the admin kubeconfig, as an operator runs it. */
function folio(args: string[]): any {
  const r = spawnSync(process.execPath, [path.join(ROOT, "bin/folio.ts"), ...args, "--kubernetes", "--namespace", NS, "--json"], {
    encoding: "utf8",
    env: { ...process.env, KUBECONFIG: platform.kubeconfig },
  });
  if (r.status !== 0) throw new Error(`folio ${args.join(" ")}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * Submits one logical job until it is accepted, retrying with the same Idempotency-Key. `run`
 * names the test's attempt: a retried test (vitest --retry) submits new jobs under new keys, where
 * the old keys with a new upload would be refused (409 idempotency_conflict, API.md).
 */
async function submitWithRetries(
  run: string,
  tenant: string,
  i: number,
  pdf: Buffer,
  webhookUrl: string,
): Promise<{ id: string; tries: number }> {
  const form = new FormData();
  form.append("file", blob(pdf), `doc-${tenant}-${i}.pdf`);
  form.append("level", "lossless");
  form.append("webhook_url", webhookUrl);
  const { body, headers } = await multipart(form);
  const idemKey = `${tenant}-${run}-order-${i}`;
  for (let tries = 1; ; tries++) {
    try {
      const res = await request(
        set.base,
        ca,
        "POST",
        "/v1/pdf/compress",
        { ...headers, Authorization: `Bearer ${keys[tenant]}`, "Idempotency-Key": idemKey },
        body,
      );
      if (res.status === 202 || res.status === 200) return { id: res.json.id as string, tries };
      // The cap (20 unfinished per tenant), a rate limit, a replica stopping mid-request: wait and retry.
      if (![429, 500, 502, 503].includes(res.status)) throw new Error(`${idemKey}: ${res.status} ${res.text}`);
      await sleep(res.status === 429 ? 1000 + Math.random() * 1000 : 200);
    } catch (err) {
      if (err instanceof Error && /^\S+-order-\d+: \d{3} /.test(err.message)) throw err;
      await sleep(200); // connection reset by a killed replica: retry
    }
    if (tries > 400) throw new Error(`${idemKey}: gave up after ${tries} tries`);
  }
}

async function pdfJobsOf(tenant: string): Promise<PdfJob[]> {
  const res = (await kc
    .makeApiClient(CustomObjectsApi)
    .listNamespacedCustomObject({ ...CRD, labelSelector: `${LABELS.tenant}=${tenant}` })) as {
    items: PdfJob[];
  };
  return res.items.filter((pj) => !pj.metadata.annotations?.["folio.dev/rejected"]);
}

describe("three stateless API replicas on a real control plane", () => {
  beforeAll(async () => {
    world = await startE2eWorld("folio-e2e-stateless-");
    ({ dir, platform, s3, kc } = world);
    const tls = await loadOrCreateTls(dir, {});
    ca = tls.cert;
    receiver = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const id = String(req.headers["webhook-id"]);
        const jobId = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data: { id: string } }).data.id;
        const seen = deliveries.get(id);
        deliveries.set(id, { jobId, count: (seen?.count ?? 0) + 1 });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    // `folio controller` in a container of the API image, configured as the chart configures it.
    controller = await startReadyController(
      platform,
      {
        ...s3.env,
        FOLIO_CONTROLLER_WORKERS: "4",
        FOLIO_MAX_RUNNING_JOBS: "4",
        FOLIO_WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        FOLIO_WEBHOOK_CA_FILE: tls.certPath,
      },
      [tls.certPath],
    );
    set = new ReplicaSet({
      platform,
      count: 3,
      env: {
        FOLIO_BACKEND: "kubernetes",
        KUBECONFIG: platform.kubeconfig,
        FOLIO_JOBS_NAMESPACE: NS,
        FOLIO_WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        FOLIO_RATE_LIMIT_PER_MINUTE: "600",
        FOLIO_RATE_LIMIT_BURST: "100",
        // Every client here is 127.0.0.1: the revocation test's 401s must not close the failed-auth
        // gate (per address) on the requests that follow.
        FOLIO_AUTH_FAILURES_PER_MINUTE: "60000",
        FOLIO_AUTH_FAILURE_BURST: "10000",
        ...s3.env,
      },
      tls: { certFile: tls.certPath, keyFile: path.join(dir, "tls-key.pem"), cert: tls.cert },
      kc,
      namespace: NS,
      service: SERVICE,
      dir,
    });
    await set.start();
    for (const t of TENANTS) {
      folio(["tenants", "create", t, "--plan", "business"]);
      keys[t] = folio(["keys", "create", "--tenant", t]).key as string;
    }
  }, 600_000);

  afterAll(async () => {
    await set?.stop();
    receiver?.closeAllConnections();
    receiver?.close();
    await controller?.stop();
    await controller?.cleanup();
    await world?.stop();
  });

  it("accepts a key made with the CLI on every replica at once, and stops a revoked key on all three within 2 s", async () => {
    const { key_id, key } = folio(["keys", "create", "--tenant", "north"]) as { key_id: string; key: string };
    for (const r of set.replicas) {
      await until(
        `the new key on ${r.name}`,
        async () => ((await r.request("GET", "/v1/jobs", key, ca)).status === 200 ? true : undefined),
        2000,
      );
    }
    folio(["keys", "revoke", key_id]);
    // From the moment the revocation is written (the CLI has returned).
    const revoked = Date.now();
    const stopped = await Promise.all(
      set.replicas.map(async (r) => {
        await until(
          `the revocation on ${r.name}`,
          async () => ((await r.request("GET", "/v1/jobs", key, ca)).status === 401 ? true : undefined),
          2000,
        );
        return Date.now() - revoked;
      }),
    );
    console.log(`revoked key refused by the 3 replicas ${stopped.join(", ")} ms after the revocation was written`);
    expect(Math.max(...stopped)).toBeLessThan(2000);
  });

  it(
    `runs ${JOBS} keyed jobs from three tenants exactly once, webhooks once each, through a replica's SIGKILL and a rolling restart`,
    { timeout: 1_800_000 },
    async () => {
      const hookUrl = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
      // This attempt's jobs only: a retried test finds the jobs (and late webhooks) of the one before.
      const run = randomBytes(4).toString("hex");
      const earlier = new Set((await Promise.all(TENANTS.map(pdfJobsOf))).flat().map((pj) => pj.metadata.labels?.[LABELS.jobId]));
      const ours = async (): Promise<PdfJob[]> =>
        (await Promise.all(TENANTS.map(pdfJobsOf))).flat().filter((pj) => !earlier.has(pj.metadata.labels?.[LABELS.jobId]));
      const ourDeliveries = (): { jobId: string; count: number }[] => [...deliveries.values()].filter((d) => !earlier.has(d.jobId));
      const pdf = await readFile(await textPdf(path.join(dir, "in.pdf"), 1, "stateless"));
      const work = Array.from({ length: JOBS }, (_, i) => ({ tenant: TENANTS[i % 3]!, i }));
      const accepted = new Map<string, string>();
      let retries = 0;
      let next = 0;
      const clients = Array.from({ length: CLIENTS }, async () => {
        while (next < work.length) {
          const w = work[next++]!;
          const got = await submitWithRetries(run, w.tenant, w.i, pdf, hookUrl);
          retries += got.tries - 1;
          accepted.set(`${w.tenant}-${w.i}`, got.id);
        }
      });
      // The chaos, while the clients submit: a crash, a revival, then a rolling restart of all three.
      const chaos = (async () => {
        await until("a third of the jobs accepted", () => Promise.resolve(accepted.size >= JOBS / 3 ? true : undefined), 600_000);
        await set.kill(1);
        await sleep(3000);
        await set.revive(1);
        await until("two thirds accepted", () => Promise.resolve(accepted.size >= (2 * JOBS) / 3 ? true : undefined), 600_000);
        await set.rollingRestart();
      })();
      await Promise.all([...clients, chaos]);
      expect(accepted.size).toBe(JOBS);

      // Exactly once: one PdfJob per key, and the answers name it.
      const all = await ours();
      expect(all).toHaveLength(JOBS);
      expect(new Set(all.map((pj) => pj.metadata.labels?.[LABELS.jobId]))).toEqual(new Set(accepted.values()));
      // Every job ends succeeded.
      await until(
        "every job to succeed",
        async () => {
          const now = await ours();
          const failed = now.filter((pj) => pj.status?.phase === "Failed" || pj.status?.phase === "Canceled");
          if (failed.length)
            throw new Error(`failed: ${failed.map((pj) => `${pj.metadata.name} ${JSON.stringify(pj.status?.error)}`).join("; ")}`);
          return now.every((pj) => pj.status?.phase === "Succeeded") ? true : undefined;
        },
        1_500_000,
      );
      // Every webhook once: one delivery per job, each under its own webhook-id.
      await until("every webhook", () => Promise.resolve(ourDeliveries().length >= JOBS ? true : undefined), 300_000).catch(
        async (err: unknown) => {
          // What a timeout needs to be understood: how many arrived, and what the missing jobs' statuses say of their webhooks.
          const delivered = new Set(ourDeliveries().map((d) => d.jobId));
          const missing = (await ours()).filter((pj) => !delivered.has(pj.metadata.labels?.[LABELS.jobId] ?? ""));
          const statuses = missing.slice(0, 5).map((pj) => `${pj.metadata.name}: ${JSON.stringify(pj.status?.webhook ?? null)}`);
          throw new Error(
            `${String(err)}: ${delivered.size} of ${JOBS} delivered; missing, first 5: ${statuses.join("; ")}\n${controller.logs().slice(-4000)}`,
          );
        },
      );
      const byJob = new Map<string, number>();
      for (const d of ourDeliveries()) byJob.set(d.jobId, (byJob.get(d.jobId) ?? 0) + d.count);
      expect(new Set(byJob.keys())).toEqual(new Set(accepted.values()));
      // The jobs whose webhook came more than once, named (none).
      expect(Object.fromEntries([...byJob].filter(([, n]) => n !== 1))).toEqual({});
      console.log(`${JOBS} jobs, ${CLIENTS} clients, ${retries} retried requests; ${byJob.size} webhooks, each once`);
      // No replica kept state of its own: no database file in any replica's data directory.
      const files = (await Promise.all(set.replicas.map((r) => readdir(path.join(dir, r.name), { recursive: true })))).flat();
      expect(files.filter((f) => /\.(db|sqlite3?)(-wal|-shm|-journal)?$/.test(f))).toEqual([]);
    },
  );

  it("holds a key's rate limit across the three replicas: the plan's burst + rate, not three times it", async () => {
    const { key } = folio(["keys", "create", "--tenant", "west"]) as { key: string };
    for (const r of set.replicas) {
      await until(
        `the key on ${r.name}`,
        async () => ((await r.request("GET", "/v1/jobs/job_000000000000000000000000", key, ca)).status === 404 ? true : undefined),
        5000,
      );
    }
    // The plan here: 600/min, burst 100. Fire 800 requests as fast as we can through the proxy.
    const started = Date.now();
    let ok = 0;
    let limited = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next++ < 800) {
          const res = await request(set.base, ca, "GET", "/v1/jobs?limit=1", { Authorization: `Bearer ${key}` });
          if (res.status === 200) ok++;
          else if (res.status === 429) limited++;
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;
    const allowed = 100 + (600 / 60) * seconds;
    const error = (ok - allowed) / allowed;
    console.log(
      `rate limit across 3 replicas: ${ok} passed, ${limited} refused in ${seconds.toFixed(1)} s; the plan allows ${allowed.toFixed(0)} → error ${(error * 100).toFixed(1)} %`,
    );
    expect(limited).toBeGreaterThan(0);
    // Without sharing, three replicas would pass up to 3 × the burst.
    expect(Math.abs(error)).toBeLessThan(0.25);
  });
});
