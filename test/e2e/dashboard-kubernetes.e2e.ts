/**
 * The dashboard in Kubernetes mode, in Chromium: two API replicas (two `folio serve` processes,
 * FOLIO_BACKEND=kubernetes, one FOLIO_DASHBOARD_SECRET) on a real kube-apiserver and MinIO. The
 * invite made by `folio users invite` lives in the cluster; the owner signs in on replica 1 and
 * makes a key there that works on the public API of both replicas; the same browser session is
 * valid on replica 2, and "sign out everywhere" there ends it on replica 1 at once. The audit log
 * is in the cluster. An operator on replica 2 suspends the tenant (its Tenant resource): its key
 * answers 403 tenant_suspended on replica 1 within 2 s, and works again once resumed.
 */
import { randomBytes } from "node:crypto";
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { PDFJOB_GROUP, PDFJOB_PLURAL, PDFJOB_VERSION } from "../../core/schemas/pdfjob.ts";
import { TENANT_PLURAL } from "../../core/schemas/tenant.ts";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startServer, type Server } from "../api/harness.ts";
import { acceptInvite, launch, newContext, screenshot } from "../dashboard/browser.ts";
import { startControlPlane, type ControlPlane } from "../k8s/control-plane.ts";
import { loadKubeConfig } from "../k8s/kubeconfig.ts";
import { startS3Server, type S3Server } from "../s3/server.ts";
import { applyCrds, until } from "./support.ts";

const NS = "default";
let cp: ControlPlane;
let s3: S3Server;
let kc: KubeConfig;
let api1: Server;
let api2: Server;
let browser: Browser;
let page: Page;
/** The owner's key, made through the dashboard on replica 1. */
let ownerKey: string;

async function replica(secret: string): Promise<Server> {
  return startServer({
    FOLIO_BACKEND: "kubernetes",
    KUBECONFIG: cp.kubeconfigs.admin,
    FOLIO_JOBS_NAMESPACE: NS,
    FOLIO_DASHBOARD_SECRET: secret,
    FOLIO_METRICS_PORT: String(await freePort()),
    ...s3.env,
  });
}

beforeAll(async () => {
  [cp, s3] = await Promise.all([startControlPlane(), startS3Server()]);
  kc = loadKubeConfig(cp.kubeconfigs.admin);
  await applyCrds(kc);
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
  // The admin CLI reads the same configuration as the server: it writes people to the cluster.
  Object.assign(process.env, { FOLIO_BACKEND: "kubernetes", KUBECONFIG: cp.kubeconfigs.admin, FOLIO_JOBS_NAMESPACE: NS, ...s3.env });
  browser = await launch();
  page = await (await newContext(browser, api1.base)).newPage();
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await api1?.cleanup();
  await api2?.cleanup();
  await s3?.stop();
  await cp?.stop();
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
