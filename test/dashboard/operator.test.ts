/**
 * The operators' dashboard in Chromium against the real `folio serve`: an operator invited with
 * `folio users invite --operator`, tenants created with an owner invite, plans changed (and the
 * tenant's keys answering accordingly), a tenant suspended and resumed (its keys: 403
 * tenant_suspended, then 200), access requests with markup in their texts shown as text, approved
 * into a tenant whose owner then signs in, or rejected; service health; the wall between operator
 * and tenant pages; axe-core and screenshots.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type Server } from "../api/harness.ts";
import { acceptInvite, launch, newContext, screenshot, seriousViolations } from "./browser.ts";

const XSS_COMPANY = `<b>Evil & Co</b>`;
const XSS_TEXT = `We convert invoices.\n<script>window.__xss=3</script><img src=x onerror=window.__xss=4>`;

let s: Server;
let browser: Browser;
let ops: BrowserContext;
let page: Page;

async function accessRequest(company: string, description: string): Promise<string> {
  const res = await s.request("POST", "/v1/access_requests", {
    key: null,
    json: {
      email: "cto@example.com",
      company,
      use_case: "document_pipeline",
      description,
      expected_monthly_volume: 5000,
      file_types: ["pdf", "docx"],
      needs_dpa: true,
    },
  });
  expect(res.status, res.text).toBe(202);
  return res.json.id as string;
}

beforeAll(async () => {
  s = await startServer({ FOLIO_DASHBOARD_SIGNIN_PER_MINUTE: "60" });
  browser = await launch();
  ops = await newContext(browser, s.base);
  page = await ops.newPage();
  page.on("dialog", (d) => void d.accept());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await s?.cleanup();
});

describe("the operators' dashboard in Chromium", () => {
  it("signs an operator in through the link `folio users invite --operator` prints", async () => {
    const r = await s.folio(["users", "invite", "--operator", "--email", "ops@example.com", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.url).toMatch(/^https:\/\/localhost:\d+\/dashboard\/invite\/[A-Za-z0-9_-]{43}$/);
    await acceptInvite(page, r.json.url, "operator password 01");
    await page.goto("/dashboard");
    expect(new URL(page.url()).pathname).toBe("/dashboard/operator/tenants");
  });

  it("creates a tenant with an owner invite; a bad name is refused with a message and creates nothing", async () => {
    await page.getByLabel("Name").fill("Bad Name!");
    await page.getByRole("button", { name: "Create tenant" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("lower-case letters");
    const before = (await s.folio(["tenants", "list", "--json"])).json.length;
    await page.getByLabel("Name").fill("acme");
    await page.getByLabel("Plan").selectOption("business");
    await page.getByLabel("Owner e-mail (optional)").fill("boss@acme.example");
    await page.getByRole("button", { name: "Create tenant" }).click();
    await expect(page.getByTestId("invite-url").textContent()).resolves.toMatch(/\/dashboard\/invite\//);
    expect((await s.folio(["tenants", "list", "--json"])).json.length).toBe(before + 1);
    await page.getByLabel("Name").fill("acme");
    await page.getByRole("button", { name: "Create tenant" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("exists already");
    expect((await s.folio(["tenants", "list", "--json"])).json.length).toBe(before + 1);
    await screenshot(page, "dashboard-operator-tenants");
  });

  it("changes a tenant's plan, and its keys answer accordingly (free: 403 plan_required)", async () => {
    const key = (await s.folio(["keys", "create", "--tenant", "acme", "--json"])).json.key as string;
    expect((await s.request("GET", "/v1/jobs", { key })).status).toBe(200);
    await page.goto("/dashboard/operator/tenants/acme");
    await page.getByLabel("Plan").selectOption("free");
    await page.getByRole("button", { name: "Change plan" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("now on free");
    const refused = await s.request("GET", "/v1/jobs", { key });
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe("plan_required");
    await page.getByLabel("Plan").selectOption("business");
    await page.getByRole("button", { name: "Change plan" }).click();
    expect((await s.request("GET", "/v1/jobs", { key })).status).toBe(200);
    await screenshot(page, "dashboard-operator-tenant");
  });

  it("suspends a tenant (its keys answer 403 tenant_suspended) and resumes it (they work again)", async () => {
    const key = (await s.folio(["keys", "create", "--tenant", "acme", "--json"])).json.key as string;
    expect((await s.request("GET", "/v1/jobs", { key })).status).toBe(200);
    await page.goto("/dashboard/operator/tenants/acme");
    await page.getByRole("button", { name: "Suspend tenant" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("acme is suspended");
    await expect(page.getByTestId("tenant-state").textContent()).resolves.toBe("suspended");
    const refused = await s.request("GET", "/v1/jobs", { key });
    expect(refused.status).toBe(403);
    expect(refused.json.code).toBe("tenant_suspended");
    await page.getByRole("button", { name: "Resume tenant" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("acme is active again");
    await expect(page.getByTestId("tenant-state").textContent()).resolves.toBe("active");
    expect((await s.request("GET", "/v1/jobs", { key })).status).toBe(200);
  });

  it("shows access requests' texts as text, approves one into a tenant whose owner signs in, and rejects another", async () => {
    const good = await accessRequest(XSS_COMPANY, XSS_TEXT);
    const bad = await accessRequest("Spam Ltd", "buy now");
    await page.goto("/dashboard/operator/access-requests");
    const card = page.locator(`[data-request="${good}"]`);
    await expect(card.getByRole("heading").textContent()).resolves.toBe(XSS_COMPANY);
    await expect(card.getByTestId("request-description").textContent()).resolves.toBe(XSS_TEXT);
    expect(await page.evaluate(() => (globalThis as any).__xss)).toBeUndefined();
    await screenshot(page, "dashboard-operator-access-requests");
    await card.getByLabel("Tenant name").fill("evil-co");
    await card.getByRole("button", { name: "Approve" }).click();
    const url = (await page.getByTestId("invite-url").textContent())!.trim();
    const tenants = (await s.folio(["tenants", "list", "--json"])).json.map((t: any) => t.tenant);
    expect(tenants).toContain("evil-co");
    await page.locator(`[data-request="${bad}"]`).getByRole("button", { name: "Reject" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("Rejected");
    const list = (await s.folio(["access-requests", "list", "--json"])).json;
    expect(list.find((r: any) => r.id === good).status).toBe("approved");
    expect(list.find((r: any) => r.id === bad).status).toBe("rejected");

    const ownerCtx = await newContext(browser, s.base);
    const owner = await ownerCtx.newPage();
    await acceptInvite(owner, url, "evil co owner pass");
    await expect(owner.locator("header").textContent()).resolves.toContain("evil-co");
    await expect(owner.locator("header").textContent()).resolves.toContain("owner");
    // The wall: a tenant member gets no operator page, an operator no tenant page.
    const res = await owner.goto("/dashboard/operator/tenants");
    expect(res?.status()).toBe(403);
    const back = await page.goto("/dashboard/keys");
    expect(back?.status()).toBe(403);
    await ownerCtx.close();
  });

  it("shows the service's health", async () => {
    await page.goto("/dashboard/operator/health");
    await expect(page.getByTestId("queued").textContent()).resolves.toMatch(/^\d+$/);
    await expect(page.getByTestId("running").textContent()).resolves.toMatch(/^\d+$/);
    await expect(page.getByTestId("webhook-backlog").textContent()).resolves.toMatch(/^\d+$/);
    await screenshot(page, "dashboard-operator-health");
  });

  it("has no serious or critical axe-core violation on any operator page", async () => {
    const found: Record<string, unknown> = {};
    for (const url of [
      "/dashboard/operator/tenants",
      "/dashboard/operator/tenants/acme",
      "/dashboard/operator/access-requests",
      "/dashboard/operator/health",
      "/dashboard/operator/audit",
      "/dashboard/nope",
    ]) {
      await page.goto(url);
      const v = await seriousViolations(page);
      if (v.length) found[url] = v;
    }
    expect(found).toEqual({});
    await page.goto("/dashboard/operator/audit");
    const text = (await page.locator("main").textContent())!;
    for (const a of [
      "tenant.created",
      "tenant.plan_changed",
      "tenant.suspended",
      "tenant.resumed",
      "access_request.approved",
      "access_request.rejected",
    ])
      expect(text).toContain(a);
  });
});
