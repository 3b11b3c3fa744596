/**
 * The dashboard in Kubernetes mode, in Chromium: two API replicas (two `folio serve` containers of
 * the API image, FOLIO_BACKEND=kubernetes, one FOLIO_DASHBOARD_SECRET; test/e2e/containers.ts) on a
 * real control plane and MinIO. The
 * invite made by `folio users invite` lives in the cluster; the owner signs in on replica 1 and
 * makes a key there that works on the public API of both replicas; the same browser session is
 * valid on replica 2, and "sign out everywhere" there ends it on replica 1 at once. The audit log
 * is in the cluster. An operator on replica 2 suspends the tenant (its Tenant resource): its key
 * answers 403 tenant_suspended on replica 1 within 2 s, and works again once resumed.
 *
 * Webhook attempts and "redeliver" (`folio controller` in a container): a job whose receiver first fails
 * then answers shows both attempts (time, HTTP status, latency, next retry) from its PdfJob's
 * status on the job page; "redeliver" annotates the PdfJob, and the controller sends the same
 * message again, signed with the tenant's secret. A viewer sees no button and is refused.
 */
import { randomBytes } from "node:crypto";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { Webhook } from "standardwebhooks";
import { loadOrCreateTls } from "../../api/tls.ts";
import { newId } from "../../core/ids.ts";
import {
  LABELS,
  MANAGED_BY,
  PDFJOB_ANNOTATIONS,
  PDFJOB_API_VERSION,
  PDFJOB_FINALIZER,
  PDFJOB_GROUP,
  PDFJOB_KIND,
  PDFJOB_PLURAL,
  PDFJOB_VERSION,
  WEBHOOK_SECRETS_KEY,
  pdfJobName,
  type PdfJob,
} from "../../core/schemas/pdfjob.ts";
import { outputTag } from "../../core/schemas/storage-keys.ts";
import { TENANT_PLURAL } from "../../core/schemas/tenant.ts";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type Server } from "../api/harness.ts";
import { acceptInvite, launch, newContext, screenshot } from "../dashboard/browser.ts";
import { startApiContainer, startReadyController, type ReadyController } from "./containers.ts";
import { startE2eWorld, until, type E2eWorld } from "./support.ts";

const NS = "default";
let world: E2eWorld;
let kc: KubeConfig;
let api1: Server;
let api2: Server;
let browser: Browser;
let page: Page;
/** The owner's key, made through the dashboard on replica 1. */
let ownerKey: string;
let controller: ReadyController | undefined;
let receiver: https.Server | undefined;

async function replica(secret: string): Promise<Server> {
  return startApiContainer(world.platform, {
    FOLIO_BACKEND: "kubernetes",
    KUBECONFIG: world.platform.kubeconfig,
    FOLIO_JOBS_NAMESPACE: NS,
    FOLIO_DASHBOARD_SECRET: secret,
    FOLIO_METRICS_PORT: String(await freePort()),
    ...world.s3.env,
  });
}

beforeAll(async () => {
  world = await startE2eWorld("folio-e2e-dash-k8s-");
  kc = world.kc;
  // A new CRD's storage answers 429 "(re)initializing" for a moment after it is Established.
  const custom = kc.makeApiClient(CustomObjectsApi);
  await until("PdfJobs to be listable", () =>
    custom.listNamespacedCustomObject({ group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL, namespace: NS }).then(
      () => true,
      () => undefined,
    ),
  );
  const secret = randomBytes(36).toString("base64url");
  [api1, api2] = await Promise.all([replica(secret), replica(secret)]);
  browser = await launch();
  page = await (await newContext(browser, api1.base)).newPage();
}, 600_000);

afterAll(async () => {
  await controller?.stop();
  await controller?.cleanup();
  receiver?.closeAllConnections();
  receiver?.close();
  await browser?.close();
  await api1?.cleanup();
  await api2?.cleanup();
  await world?.stop();
});

describe("the dashboard in Kubernetes mode, two API replicas", () => {
  it("keeps the invite in the cluster; the owner signs in and makes a key on replica 1 that works on the public API of both", async () => {
    expect((await api1.folio(["tenants", "create", "acme", "--plan", "business", "--json"])).code).toBe(0);
    const inv = await api1.folio(["users", "invite", "--tenant", "acme", "--email", "owner@acme.example", "--json"]);
    expect(inv.code, inv.stderr).toBe(0);
    const core = kc.makeApiClient(CoreV1Api);
    const secrets = await core.listNamespacedSecret({ namespace: NS, labelSelector: "folio.dev/part-of=dashboard" });
    const kinds = secrets.items.map((s) => s.metadata?.labels?.["folio.dev/dashboard"]);
    expect(kinds).toContain("user");
    expect(kinds).toContain("invite");
    // Only hashes and the record are stored: the link's token is nowhere in the cluster.
    const token = String(inv.json.url).split("/").pop()!;
    expect(JSON.stringify(secrets.items)).not.toContain(token);

    await acceptInvite(page, inv.json.url, "kubernetes owner password");
    await page.goto("/dashboard/keys");
    await page.getByLabel("Name").fill("cluster key");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (ownerKey = (await page.getByTestId("new-api-key").textContent())!.trim());
    expect((await api1.request("GET", "/v1/jobs", { key })).status).toBe(200);
    // Made through replica 1, it works on replica 2 as soon as its watch delivers the key's Secret.
    await until(
      "the key on replica 2",
      async () => ((await api2.request("GET", "/v1/jobs", { key })).status === 200 ? true : undefined),
      2000,
    );
    await page.goto("/dashboard/jobs");
    expect(await page.locator("h1").textContent()).toBe("Jobs");
    await page.goto("/dashboard/usage");
    expect(await page.getByTestId("usage-jobs").textContent()).toBe("0");
    await screenshot(page, "dashboard-kubernetes-usage");
  });

  it("accepts the session on the other replica, where sign out everywhere ends it on both", async () => {
    await page.goto(`${api2.base}/dashboard/account`);
    await expect(page.locator("main").textContent()).resolves.toContain("owner@acme.example");
    await page.getByRole("button", { name: "Sign out everywhere" }).click();
    await page.waitForURL("**/dashboard/sign-in");
    await page.goto(`${api1.base}/dashboard/keys`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
  });

  it("writes the audit log to the cluster", async () => {
    const core = kc.makeApiClient(CoreV1Api);
    const maps = await core.listNamespacedConfigMap({ namespace: NS, labelSelector: "folio.dev/dashboard=audit" });
    const text = JSON.stringify(maps.items.map((m) => m.data));
    for (const a of ["member.invited", "member.password_set", "key.created", "member.signed_out_everywhere"]) expect(text).toContain(a);
  });

  it("shows operators the service's health from the PdfJobs, and suspends and resumes a tenant on every replica", async () => {
    const inv = await api2.folio(["users", "invite", "--operator", "--email", "ops@cluster.example", "--json"]);
    expect(inv.code, inv.stderr).toBe(0);
    const ops = await (await newContext(browser, api2.base)).newPage();
    await acceptInvite(ops, inv.json.url, "cluster operator password");
    await ops.goto("/dashboard/operator/health");
    await expect(ops.getByTestId("queued").textContent()).resolves.toBe("0");
    await expect(ops.getByTestId("running").textContent()).resolves.toBe("0");

    // Suspended on replica 2 (Tenant spec.suspended, through KubernetesTenantAdmin), refused on replica 1.
    await ops.goto("/dashboard/operator/tenants/acme");
    ops.on("dialog", (d) => void d.accept());
    await ops.getByRole("button", { name: "Suspend tenant" }).click();
    await expect(ops.getByTestId("tenant-state").textContent()).resolves.toBe("suspended");
    const tenant = (await kc
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: TENANT_PLURAL, namespace: NS, name: "acme" })) as {
      spec: { suspended?: boolean };
    };
    expect(tenant.spec.suspended).toBe(true);
    const suspended = Date.now();
    const refused = await until(
      "the suspension on replica 1",
      async () => {
        const res = await api1.request("GET", "/v1/jobs", { key: ownerKey });
        return res.status === 403 ? res : undefined;
      },
      2000,
    );
    console.log(`suspended through replica 2 → refused by replica 1 ${Date.now() - suspended} ms after the dashboard answered`);
    expect(refused.json.code).toBe("tenant_suspended");
    await ops.getByRole("button", { name: "Resume tenant" }).click();
    await expect(ops.getByTestId("tenant-state").textContent()).resolves.toBe("active");
    await until(
      "the resumption on replica 1",
      async () => ((await api1.request("GET", "/v1/jobs", { key: ownerKey })).status === 200 ? true : undefined),
      2000,
    );
    await ops.context().close();
  });
});

describe("webhook attempts and redelivery in Kubernetes mode", () => {
  const received: { headers: Record<string, string>; body: string }[] = [];

  /**
   * A PdfJob as the API writes it (labels, creation time, finalizer, its own Secret holding the
   * tenant's signing secret), with options the controller refuses: it ends Failed at once, with
   * no runner, and its job.failed webhook is what is watched here.
   */
  async function failingJob(tenantId: string, secret: string, url: string): Promise<string> {
    const jobId = newId("job");
    const name = pdfJobName(jobId);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const pj = (await custom.createNamespacedCustomObject({
      group: PDFJOB_GROUP,
      version: PDFJOB_VERSION,
      plural: PDFJOB_PLURAL,
      namespace: NS,
      body: {
        apiVersion: PDFJOB_API_VERSION,
        kind: PDFJOB_KIND,
        metadata: {
          name,
          labels: {
            [LABELS.tenant]: tenantId,
            [LABELS.jobId]: jobId,
            [LABELS.outputTag]: outputTag(jobId),
            [LABELS.managedBy]: MANAGED_BY,
          },
          annotations: { [PDFJOB_ANNOTATIONS.createdMs]: String(Date.now()) },
          finalizers: [PDFJOB_FINALIZER],
        },
        spec: {
          tenant: tenantId,
          operation: "compress",
          inputs: [],
          options: { not_an_option: true },
          secretRef: { name },
          webhook: { url },
          deadlineSeconds: 60,
          retentionSeconds: 3600,
        },
      },
    })) as PdfJob;
    await kc.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: NS,
      body: {
        metadata: {
          name,
          ownerReferences: [{ apiVersion: PDFJOB_API_VERSION, kind: PDFJOB_KIND, name, uid: pj.metadata.uid!, controller: true }],
        },
        data: { [WEBHOOK_SECRETS_KEY]: Buffer.from(secret).toString("base64") },
      },
    });
    return jobId;
  }

  beforeAll(async () => {
    const tls = await loadOrCreateTls(world.dir, {});
    // The first request of each message fails with 500; every later one is answered 204.
    receiver = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const headers = req.headers as Record<string, string>;
        const first = !received.some((r) => r.headers["webhook-id"] === headers["webhook-id"]);
        received.push({ headers, body: Buffer.concat(chunks).toString("utf8") });
        res.writeHead(first ? 500 : 204).end();
      });
    });
    await new Promise<void>((resolve) => receiver!.listen(0, "127.0.0.1", resolve));
    controller = await startReadyController(
      world.platform,
      {
        ...world.s3.env,
        FOLIO_CONTROLLER_NAMESPACE: NS,
        FOLIO_CONTROLLER_WORKERS: "1",
        // The job is refused before any runner Job: no image is ever pulled.
        FOLIO_RUNNER_IMAGE: "folio-runner:never-started",
        FOLIO_WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        FOLIO_WEBHOOK_CA_FILE: tls.certPath,
      },
      [tls.certPath],
    );
  }, 180_000);

  it("shows each attempt from the PdfJob's status, redelivers the same message signed with the tenant's secret, and refuses a viewer", async () => {
    const tenant = ((await api1.folio(["tenants", "list", "--json"])).json as { tenant: string; id: string }[]).find(
      (t) => t.tenant === "acme",
    )!;
    const secret = (await api1.folio(["tenants", "show-secret", "acme", "--json"])).json.webhook_secret as string;
    const url = `https://127.0.0.1:${(receiver!.address() as AddressInfo).port}/hooks/acme`;
    const jobId = await failingJob(tenant.id, secret, url);
    // This job's deliveries only: a retry of this test must not read the first run's.
    const mine = (): typeof received => received.filter((r) => r.body.includes(jobId));
    const dev = await api1.folio(["users", "invite", "--tenant", "acme", "--email", "dev@acme.example", "--role", "developer", "--json"]);
    const viewer = await api1.folio([
      "users",
      "invite",
      "--tenant",
      "acme",
      "--email",
      "viewer@acme.example",
      "--role",
      "viewer",
      "--json",
    ]);
    expect([dev.code, viewer.code]).toEqual([0, 0]);
    const dp = await (await newContext(browser, api1.base)).newPage();
    await acceptInvite(dp, dev.json.url, "kubernetes developer password");

    // 500 first, then (the ledger's retry, ~5 s later) 204: both on the job page, read from the PdfJob.
    await until("the second attempt", () => Promise.resolve(mine().length >= 2 ? true : undefined), 120_000);
    const attempts = dp.getByRole("table", { name: /Attempts of/ });
    await until(
      "both attempts on the job page",
      async () => {
        await dp.goto(`/dashboard/jobs/${jobId}`);
        return (await attempts.locator("tbody tr").count()) === 2 ? true : undefined;
      },
      30_000,
    );
    const rows = await attempts.locator("tbody tr").evaluateAll((trs) =>
      trs.map((tr) =>
        [...tr.querySelectorAll("td")].map((td) => ({
          text: td.textContent!.trim(),
          time: td.querySelector("time")?.getAttribute("datetime") ?? null,
        })),
      ),
    );
    const [failed, ok] = rows;
    expect(failed!.map((c) => c.text).slice(1, 4)).toEqual(["500", expect.stringMatching(/^\d+ ms$/), "HTTP 500"]);
    expect(Date.parse(failed![0]!.time)).toBeGreaterThan(Date.now() - 120_000);
    // The next retry of the failed attempt is when the second one was made (the schedule's ~5 s).
    expect(Date.parse(failed![4]!.time) - Date.parse(failed![0]!.time)).toBeGreaterThanOrEqual(3000);
    expect(ok!.map((c) => c.text).slice(1, 5)).toEqual(["204", expect.stringMatching(/^\d+ ms$/), "", "—"]);
    const messageId = mine()[0]!.headers["webhook-id"]!;
    await expect(dp.locator("h3").textContent()).resolves.toContain(messageId);

    // A viewer sees the attempts but no button, and the server refuses the form anyway.
    const vp = await (await newContext(browser, api1.base)).newPage();
    await acceptInvite(vp, viewer.json.url, "kubernetes viewer password");
    await vp.goto(`/dashboard/jobs/${jobId}`);
    expect(
      await vp
        .getByRole("table", { name: /Attempts of/ })
        .locator("tbody tr")
        .count(),
    ).toBe(2);
    expect(await vp.getByRole("button", { name: "Redeliver" }).count()).toBe(0);
    const refused = await vp.evaluate(async (action) => {
      const csrf: string = (globalThis as any).document.querySelector('meta[name="csrf-token"]').content;
      const res = await fetch(action, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: `_csrf=${encodeURIComponent(csrf)}`,
      });
      return res.status;
    }, `/dashboard/jobs/${jobId}/deliveries/${messageId}/redeliver`);
    expect(refused).toBe(403);
    await vp.context().close();
    const annotations = async (): Promise<Record<string, string>> =>
      (
        (await kc.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
          group: PDFJOB_GROUP,
          version: PDFJOB_VERSION,
          plural: PDFJOB_PLURAL,
          namespace: NS,
          name: pdfJobName(jobId),
        })) as PdfJob
      ).metadata.annotations ?? {};
    expect(await annotations()).not.toHaveProperty(PDFJOB_ANNOTATIONS.redeliverRequested);

    // The developer redelivers: the same message (webhook-id), signed with the tenant's secret.
    const asked = Date.now();
    await dp.getByRole("button", { name: "Redeliver" }).click();
    await expect(dp.getByRole("status").textContent()).resolves.toContain("Queued again");
    const again = await until("the redelivery", () => Promise.resolve(mine()[2]), 30_000);
    console.log(`redeliver clicked → received by the receiver ${Date.now() - asked} ms later`);
    expect(again.headers["webhook-id"]).toBe(messageId);
    const payload = new Webhook(secret).verify(again.body, again.headers) as { type: string; data: { id: string; status: string } };
    expect(payload).toMatchObject({ type: "job.failed", data: { id: jobId, status: "failed" } });
    expect(Date.parse((await annotations())[PDFJOB_ANNOTATIONS.redeliverRequested]!)).toBeGreaterThanOrEqual(asked - 1000);
    await until(
      "the third attempt on the job page",
      async () => {
        await dp.goto(`/dashboard/jobs/${jobId}`);
        return (await attempts.locator("tbody tr").count()) === 3 ? true : undefined;
      },
      30_000,
    );
    await expect(attempts.locator("tbody tr").last().textContent()).resolves.toContain("204");
    await screenshot(dp, "dashboard-kubernetes-job");
    const maps = await kc.makeApiClient(CoreV1Api).listNamespacedConfigMap({ namespace: NS, labelSelector: "folio.dev/dashboard=audit" });
    expect(JSON.stringify(maps.items.map((m) => m.data))).toContain("webhook.redelivered");
    expect(mine()).toHaveLength(3);
    await dp.context().close();
  });
});
