/**
 * Fail-over of the controller (issue #4): 50 jobs with webhooks submitted through the public API
 * in Kubernetes mode (`folio serve`, FOLIO_BACKEND=kubernetes), the controller as a real
 * `folio controller` — both containers of the API image `make images` built (issue #11) — SIGKILLed
 * in the middle; two replicas take over with Lease leader election, and their leader is SIGKILLed too. Every PdfJob must end Succeeded
 * exactly once (one Job, one runner pod each) and every webhook must arrive at a real HTTPS
 * receiver, verified with the stock `standardwebhooks` library, under one webhook-id per job.
 *
 * The platform is the real one (test/k8s/platform.ts: kube-apiserver, kube-controller-manager, the
 * local kubelet running the runner image) with a real MinIO. The API gives each PdfJob a Secret it owns
 * holding the tenant's signing secrets; the tenant's secret is rotated half-way, so the later jobs
 * are signed with both (`folio tenants rotate-secret`). The
 * receiver's self-signed CA is trusted through FOLIO_WEBHOOK_CA_FILE, and loopback is allowed
 * through the operator allow-list FOLIO_WEBHOOK_ALLOWED_HOSTS.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import https from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { BatchV1Api, CoordinationV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOrCreateTls } from "../../api/tls.ts";
import { jobIdOf } from "../../core/pdfjob-view.ts";
import { LABELS, MANAGED_BY, PDFJOB_GROUP, PDFJOB_PLURAL, PDFJOB_VERSION, pdfJobName, type PdfJob } from "../../core/schemas/pdfjob.ts";
import { textPdf } from "../fixtures/pdf-fixtures.ts";
import type { Platform } from "../k8s/platform.ts";
import type { S3Server } from "../s3/server.ts";
import { blob, freePort, type Server } from "../api/harness.ts";
import type { FolioContainer } from "../k8s/folio-container.ts";
import { runnerImage } from "../k8s/images.ts";
import { startApiContainer, startControllerContainer } from "./containers.ts";
import { metricSum } from "../helpers/prometheus-text.ts";
import { type E2eWorld, startE2eWorld } from "./support.ts";

const NS = "default";
const JOBS = 50;
/** Jobs submitted while the first controller runs; the rest while none does. */
const FIRST_BATCH = 30;
/** The tenant's webhook secret is rotated before this job: the later ones are signed with both. */
const ROTATE_AT = 25; // a multiple of 5: see submit()
const CRD = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL, namespace: NS };
const LEASE = "folio-controller";
/** The tenant's webhook secret before and after the rotation. */
let OLD = "";
let NEW = "";
/** A token in the webhook URL's path: it must never reach a log line or an event. */
const TOKEN = randomBytes(12).toString("hex");

let platform: Platform;
let s3: S3Server;
let kc: KubeConfig;
let custom: CustomObjectsApi;
let dir: string;
let world: E2eWorld;
let receiver: Receiver;
let caFile: string;
let api: Server;
let apiKey: string;
let pdfs: Buffer[];
const replicas: Replica[] = [];

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 180_000, everyMs = 250): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${replicas.map((r) => r.tail()).join("\n")}`);
    await sleep(everyMs);
  }
}

// --- the webhook receiver ----------------------------------------------------------------------------

interface Delivery {
  id: string;
  jobId: string;
  /** Verified with the old secret, which every job's Secret holds. */
  verifiedOld: boolean;
  /** Verified with the new one, which only the jobs caught mid-rotation hold. */
  verifiedNew: boolean;
}

/** An HTTPS receiver on 127.0.0.1 verifying every request with `standardwebhooks`. */
class Receiver {
  readonly deliveries: Delivery[] = [];
  readonly server: https.Server;
  url = "";

  constructor(key: Buffer, cert: Buffer) {
    const verifies = (secret: string, body: string, headers: Record<string, string>): boolean => {
      try {
        new Webhook(secret).verify(body, headers);
        return true;
      } catch {
        return false;
      }
    };
    this.server = https.createServer({ key, cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const headers = req.headers as Record<string, string>;
        const payload = JSON.parse(body) as { data?: { id?: string } };
        this.deliveries.push({
          id: headers["webhook-id"] ?? "",
          jobId: payload.data?.id ?? "",
          verifiedOld: verifies(OLD, body, headers),
          verifiedNew: verifies(NEW, body, headers),
        });
        res.writeHead(req.url === `/hooks/${TOKEN}` ? 204 : 404).end();
      });
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `https://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/${TOKEN}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

// --- controller processes ------------------------------------------------------------------------

/**
 * One `folio controller` replica: a container of the API image (test/e2e/containers.ts),
 * configured by the environment as in a pod. SIGKILL kills the whole container, as a node's
 * OOM killer or a crash would; SIGTERM goes to its PID 1.
 */
class Replica {
  readonly name: string;
  readonly port: number;
  readonly container: FolioContainer;
  #exit: number | undefined;

  private constructor(name: string, port: number, container: FolioContainer) {
    this.name = name;
    this.port = port;
    this.container = container;
    void container.exited.then((e) => (this.#exit = e.exitCode));
    replicas.push(this);
  }

  static async start(name: string, port: number): Promise<Replica> {
    const env: Record<string, string> = {
      ...s3.env,
      FOLIO_RUNNER_IMAGE: runnerImage(),
      FOLIO_RUNNER_IMAGE_PULL_POLICY: "Never",
      FOLIO_CONTROLLER_NAMESPACE: NS,
      FOLIO_CONTROLLER_LEADER_ELECTION: "true",
      FOLIO_CONTROLLER_WORKERS: "4",
      FOLIO_METRICS_PORT: String(port),
      FOLIO_WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
      FOLIO_WEBHOOK_CA_FILE: caFile,
      FOLIO_LOG_LEVEL: "debug",
    };
    return new Replica(name, port, await startControllerContainer(platform, name, env, [caFile]));
  }

  get alive(): boolean {
    return this.#exit === undefined;
  }

  get output(): string {
    return this.container.logs();
  }

  /** Signals the container; its exit code (137 after SIGKILL, the process's own after SIGTERM). */
  async kill(signal: "SIGTERM" | "SIGKILL"): Promise<number> {
    if (this.alive) this.container.kill(signal);
    return (await this.container.exited).exitCode;
  }

  async get(p: string): Promise<{ status: number; text: string } | undefined> {
    try {
      const res = await fetch(`http://127.0.0.1:${this.port}${p}`, { signal: AbortSignal.timeout(5000) });
      return { status: res.status, text: await res.text() };
    } catch {
      return undefined;
    }
  }

  tail(): string {
    return `--- ${this.name} (${this.alive ? "running" : "exited"}) ---\n${this.output.split("\n").slice(-15).join("\n")}`;
  }
}

// --- the cluster side -------------------------------------------------------------------------------

/** A merge with a webhook, through the public API; the PdfJob's name. */
async function createPdfJob(): Promise<string> {
  const form = new FormData();
  form.append("file", blob(pdfs[0]!), "a.pdf");
  form.append("file", blob(pdfs[1]!), "b.pdf");
  form.append("outline", "keep");
  form.append("webhook_url", receiver.url);
  const res = await api.request("POST", "/v1/pdf/merge", { key: apiKey, form });
  expect(res.status, res.text).toBe(202);
  return pdfJobName((res.json as { id: string }).id);
}

/**
 * Submits jobs `from`…`to - 1`, five at a time (so that many are still pending when a controller
 * dies), rotating the tenant's webhook secret before job ROTATE_AT; the PdfJob names, in order.
 */
async function submit(from: number, to: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = from; i < to; i += 5) {
    if (i === ROTATE_AT) {
      const rotated = await api.folio(["tenants", "rotate-secret", "failover", "--json"]);
      expect(rotated.code, rotated.stderr).toBe(0);
      NEW = (rotated.json as { webhook_secret: string }).webhook_secret;
    }
    names.push(...(await Promise.all(Array.from({ length: Math.min(5, to - i) }, () => createPdfJob()))));
  }
  return names;
}

const listPdfJobs = async (): Promise<PdfJob[]> => ((await custom.listNamespacedCustomObject(CRD)) as { items: PdfJob[] }).items;
const holder = async (): Promise<string> =>
  (await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: NS, name: LEASE })).spec?.holderIdentity ?? "";

/** Every Job uid seen per PdfJob, over the whole test: a re-created Job would show a second one. */
const jobUids = new Map<string, Set<string>>();
async function recordJobs(): Promise<void> {
  const jobs = await kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: NS, labelSelector: `${LABELS.managedBy}=${MANAGED_BY}` });
  for (const j of jobs.items) {
    const owner = j.metadata?.labels?.[LABELS.pdfJob] ?? "?";
    jobUids.set(owner, (jobUids.get(owner) ?? new Set()).add(j.metadata?.uid ?? ""));
  }
}

/** The PdfJobs by phase (and the Jobs recorded on the way). */
async function phases(): Promise<{ succeeded: number; ended: number; delivered: number; items: PdfJob[] }> {
  await recordJobs();
  const items = await listPdfJobs();
  const ended = items.filter((p) => ["Succeeded", "Failed", "Canceled"].includes(p.status?.phase ?? ""));
  return {
    succeeded: items.filter((p) => p.status?.phase === "Succeeded").length,
    ended: ended.length,
    delivered: items.filter((p) => p.status?.webhook?.status === "delivered").length,
    items,
  };
}

/** The replica whose identity holds the Lease (identities are `${POD_NAME}_${random}`). */
async function leaderAmong(candidates: Replica[], timeoutMs: number): Promise<Replica> {
  return until(
    `one of ${candidates.map((r) => r.name).join(", ")} to lead`,
    async () => {
      const h = await holder().catch(() => "");
      return candidates.find((r) => h.startsWith(`${r.name}_`));
    },
    timeoutMs,
    500,
  );
}

/** Exactly once: one Job per PdfJob over the whole test (by uid), each succeeded by one runner pod. */
async function expectOneJobEach(names: readonly string[]): Promise<void> {
  await recordJobs();
  expect([...jobUids.keys()].sort()).toEqual([...names].sort());
  for (const [owner, uids] of jobUids) expect(uids.size, `Jobs of ${owner}`).toBe(1);
  const jobs = await kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: NS, labelSelector: `${LABELS.managedBy}=${MANAGED_BY}` });
  expect(jobs.items).toHaveLength(JOBS);
  for (const j of jobs.items)
    expect({ name: j.metadata?.name, succeeded: j.status?.succeeded, failed: j.status?.failed ?? 0 }).toEqual({
      name: j.metadata?.name,
      succeeded: 1,
      failed: 0,
    });
  const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NS, labelSelector: `${LABELS.managedBy}=${MANAGED_BY}` });
  expect(pods.items).toHaveLength(JOBS);
}

/** Every webhook arrived, verified, under its job's one webhook-id (a repeat reuses it), signed as the rotation says. */
function expectDeliveries(items: readonly PdfJob[], names: readonly string[], deliveries: readonly Delivery[]): void {
  const byJob = new Map<string, Delivery[]>();
  for (const d of deliveries) byJob.set(d.jobId, [...(byJob.get(d.jobId) ?? []), d]);
  expect(byJob.size).toBe(JOBS);
  expect(new Set(deliveries.map((d) => d.id)).size).toBe(JOBS);
  for (const pj of items) {
    const index = names.indexOf(pj.metadata.name);
    const got = byJob.get(jobIdOf(pj)) ?? [];
    expect(got.length, `deliveries of ${pj.metadata.name}`).toBeGreaterThanOrEqual(1);
    expect(new Set(got.map((d) => d.id))).toEqual(new Set([pj.status!.webhook!.messageId]));
    expect(got.every((d) => d.verifiedOld)).toBe(true);
    // Jobs submitted after the rotation were signed with both secrets; the others with the old one only.
    expect(
      got.every((d) => d.verifiedNew === index >= ROTATE_AT),
      `rotation of ${pj.metadata.name}`,
    ).toBe(true);
    expect(pj.status?.webhook).toMatchObject({ status: "delivered", eventType: "job.succeeded" });
    expect(pj.status?.conditions?.find((x) => x.type === "WebhookDelivered")).toMatchObject({ status: "True", reason: "Delivered" });
  }
}

describe("controller fail-over on a real control plane", () => {
  beforeAll(async () => {
    world = await startE2eWorld("folio-failover-");
    ({ dir, platform, s3, kc, custom } = world);
    const tls = await loadOrCreateTls(path.join(dir), {});
    caFile = tls.certPath;
    receiver = new Receiver(tls.key, tls.cert);
    await receiver.listen();
    pdfs = [
      await readFile(await textPdf(path.join(dir, "a.pdf"), 2, "alpha")),
      await readFile(await textPdf(path.join(dir, "b.pdf"), 1, "beta")),
    ];
    api = await startApiContainer(platform, {
      FOLIO_BACKEND: "kubernetes",
      KUBECONFIG: platform.kubeconfig,
      FOLIO_JOBS_NAMESPACE: NS,
      FOLIO_WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
      FOLIO_MAX_UNFINISHED_JOBS: String(JOBS),
      FOLIO_METRICS_PORT: "0",
      ...s3.env,
    });
    expect((await api.folio(["tenants", "create", "failover", "--plan", "business"])).code).toBe(0);
    apiKey = ((await api.folio(["keys", "create", "--tenant", "failover", "--json"])).json as { key: string }).key;
    OLD = ((await api.folio(["tenants", "show-secret", "failover", "--json"])).json as { webhook_secret: string }).webhook_secret;
  });

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.kill("SIGKILL")));
    await Promise.all(replicas.map((r) => r.container.cleanup()));
    await api?.cleanup();
    await receiver?.close();
    await world?.stop();
  });

  it("should finish 50 PdfJobs exactly once and deliver every webhook across two leader kills", { timeout: 900_000 }, async () => {
    // 1. One controller process works while the first PdfJobs arrive; it is killed mid-way.
    const a = await Replica.start("a", await freePort());
    await leaderAmong([a], 60_000);
    expect(await until("a to be ready", async () => ((await a.get("/readyz"))?.status === 200 ? true : undefined), 60_000)).toBe(true);
    const names: string[] = [];
    names.push(...(await submit(0, FIRST_BATCH)));
    const atFirstKill = await until("a first PdfJob to succeed", async () => {
      const p = await phases();
      return p.succeeded > 0 ? p : undefined;
    });
    expect(await a.kill("SIGKILL")).toBe(137);
    // In the middle: some ended, some not (still Pending, Running, or without a Job at all).
    expect(atFirstKill.ended).toBeLessThan(FIRST_BATCH);
    names.push(...(await submit(FIRST_BATCH, JOBS)));

    // 2. Two replicas: one takes the Lease once the dead one's expires; the other follows.
    const [b, c] = await Promise.all([Replica.start("b", await freePort()), Replica.start("c", await freePort())]);
    const leader = await leaderAmong([b, c], 90_000);
    const follower = leader === b ? c : b;
    const scrape = await until(
      `${leader.name} to report leading and reconciling`,
      async () => {
        const m = await leader.get("/metrics");
        return m && metricSum(m.text, "folio_controller_leader") === 1 && (metricSum(m.text, "folio_controller_reconcile_total") ?? 0) > 0
          ? m.text
          : undefined;
      },
      60_000,
    );
    expect(metricSum(scrape, "folio_controller_workqueue_adds_total")).toBeGreaterThan(0);
    expect(metricSum(scrape, "folio_controller_workqueue_queue_duration_seconds_count")).toBeGreaterThan(0);
    expect(metricSum(scrape, "folio_controller_workqueue_depth")).toBeGreaterThanOrEqual(0);
    expect(metricSum(scrape, "folio_controller_reconcile_duration_seconds_count")).toBeGreaterThan(0);
    expect(metricSum(scrape, "folio_pdfjobs")).toBe(JOBS);
    expect(metricSum(scrape, "folio_process_resident_memory_bytes")).toBeGreaterThan(0);
    const followerScrape = await until(
      `${follower.name} to be ready`,
      async () => ((await follower.get("/readyz"))?.status === 200 ? follower.get("/metrics") : undefined),
      60_000,
    );
    expect(metricSum(followerScrape.text, "folio_controller_leader")).toBe(0);
    expect(metricSum(followerScrape.text, "folio_controller_reconcile_total")).toBe(0);
    // Only the active replica reports PdfJobs, so that sums over replicas count each once.
    expect(metricSum(followerScrape.text, "folio_pdfjobs")).toBeUndefined();

    // 3. The new leader is killed too: the follower takes over and finishes the work.
    const atSecondKill = await phases();
    expect(await leader.kill("SIGKILL")).toBe(137);
    expect(atSecondKill.delivered).toBeLessThan(JOBS);
    // What the dead leaders recorded; the survivor delivers (and counts) exactly the rest.
    const afterSecondKill = await phases();
    expect(await leaderAmong([follower], 90_000)).toBe(follower);
    const done = await until(
      "every PdfJob to succeed and its webhook to be delivered",
      async () => {
        const p = await phases();
        if (p.items.some((x) => x.status?.phase === "Failed"))
          throw new Error(`a PdfJob failed: ${JSON.stringify(p.items.find((x) => x.status?.phase === "Failed")?.status)}`);
        return p.succeeded === JOBS && p.delivered === JOBS ? p : undefined;
      },
      400_000,
      1000,
    );
    process.stderr.write(
      `[failover] at the first kill ${atFirstKill.succeeded}/${FIRST_BATCH} succeeded; at the second ${atSecondKill.succeeded}/${JOBS} succeeded, ` +
        `${atSecondKill.delivered} webhooks delivered; ${receiver.deliveries.length} requests received for ${JOBS} webhooks\n`,
    );

    // Exactly once: one Job per PdfJob over the whole test, each succeeded by one runner pod.
    expect(done.items.map((p) => p.metadata.name).sort()).toEqual([...names].sort());
    await expectOneJobEach(names);

    // Every webhook arrived, verified, under its job's one webhook-id (a repeat reuses it).
    expectDeliveries(done.items, names, receiver.deliveries);

    const final = await follower.get("/metrics");
    expect(metricSum(final!.text, "folio_controller_leader")).toBe(1);
    expect(metricSum(final!.text, "folio_controller_reconcile_total", 'result="success"')).toBeGreaterThan(0);
    expect(metricSum(final!.text, "folio_controller_reconcile_total", 'result="requeue"')).toBeGreaterThan(0);
    expect(metricSum(final!.text, "folio_pdfjobs", 'phase="Succeeded"')).toBe(JOBS);
    expect(metricSum(final!.text, "folio_controller_s3_errors_total")).toBe(0);
    expect(metricSum(final!.text, "folio_controller_webhook_deliveries_total", 'outcome="delivered"')).toBe(
      JOBS - afterSecondKill.delivered,
    );

    // No secret and no webhook URL in the logs or the Events.
    const events = await kc.makeApiClient(CoreV1Api).listNamespacedEvent({ namespace: NS });
    const texts = [...replicas.map((r) => r.output), api.logs(), JSON.stringify(events.items)];
    for (const text of texts) {
      for (const secret of [OLD, NEW, OLD.slice(6), NEW.slice(6), TOKEN, s3.secretAccessKey]) expect(text.includes(secret)).toBe(false);
    }

    // The survivor stops cleanly on SIGTERM.
    expect(await follower.kill("SIGTERM")).toBe(0);
  });
});
