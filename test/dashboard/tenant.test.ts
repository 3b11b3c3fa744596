/**
 * The tenant's dashboard in a real browser (Debian Chromium through playwright-core) against the
 * real `folio serve` (embedded mode): the dev owner's first-start link, API keys made in the browser
 * and used on the public API, rotation and revocation taking effect, a viewer refused, a cross-site
 * form post refused, an expired invite refused, jobs updating live with markup shown as text,
 * webhook attempts and redelivery, the signing secret, usage, members, audit, TOTP, sign out
 * everywhere, the per-account throttle; axe-core on every page, and screenshots into docs/.
 */
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { mkdtemp, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { base32Decode, hotp, totpStep } from "../../api/dashboard/totp.ts";
import { loadOrCreateTls } from "../../api/tls.ts";
import { textPdf } from "../api/fixtures.ts";
import { blob, startServer, waitForJob, type Server } from "../api/harness.ts";
import { acceptInvite, launch, newContext, screenshot, seriousViolations, signIn } from "./browser.ts";

const OWNER_PASSWORD = "owner password 0001";
const VIEWER_PASSWORD = "viewer password 0002";
const XSS_NAME = `<img src=x onerror=window.__xss=1>.pdf`;
const XSS_META = `<script>window.__xss=2</script>`;

let s: Server;
let browser: Browser;
let owner: BrowserContext;
let page: Page;
let receiver: https.Server;
let receiverUrl = "";
const received: { id: string; body: string; headers: Record<string, string> }[] = [];
let viewerEmail = "";

async function until<T>(check: () => T | Promise<T>, ms = 20_000): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function keyCount(): Promise<number> {
  const r = await s.folio(["keys", "list", "--tenant", "dev", "--json"]);
  return (r.json as unknown[]).length;
}

async function submitMerge(webhook?: string): Promise<string> {
  const form = new FormData();
  form.append("file", blob(await textPdf(2, "a"), "application/pdf"), XSS_NAME);
  form.append("file", blob(await textPdf(1, "b"), "application/pdf"), "b.pdf");
  form.append("metadata[note]", XSS_META);
  if (webhook) form.append("webhook_url", webhook);
  const res = await s.request("POST", "/v1/pdf/merge", { form });
  expect(res.status, res.text).toBe(202);
  return res.json.id as string;
}

beforeAll(async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), "folio-dash-hook-"));
  const tls = await loadOrCreateTls(dir, {});
  receiver = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({
        id: String(req.headers["webhook-id"]),
        body: Buffer.concat(chunks).toString(),
        headers: req.headers as Record<string, string>,
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
  receiverUrl = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  s = await startServer({
    FOLIO_WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
    NODE_EXTRA_CA_CERTS: tls.certPath,
    FOLIO_DASHBOARD_SIGNIN_PER_MINUTE: "60",
  });
  browser = await launch();
  owner = await newContext(browser, s.base);
  page = await owner.newPage();
  page.on("dialog", (d) => void d.accept());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  receiver?.close();
  await s?.cleanup();
});

describe("the tenant's dashboard in Chromium", () => {
  it("prints the dev owner's one-time link on first start; it sets a password and works only once", async () => {
    const link = /dashboard:\s+(https:\S+)/.exec(s.logs())?.[1];
    expect(link).toMatch(/\/dashboard\/invite\/[A-Za-z0-9_-]{43}$/);
    await acceptInvite(page, link!, OWNER_PASSWORD);
    await expect(page.locator("h1").textContent()).resolves.toBe("Account");
    await screenshot(page, "dashboard-account");
    const again = await owner.newPage();
    const res = await again.goto(new URL(link!).pathname);
    expect(res?.status()).toBe(410);
    await expect(again.getByRole("alert").textContent()).resolves.toContain("used already");
    await again.close();
  });

  it("serves every page with a strict CSP, frame-ancestors 'none', HSTS and no inline script", async () => {
    const res = await page.goto("/dashboard/keys");
    const h = res!.headers();
    expect(h["content-security-policy"]).toContain("script-src 'self'");
    expect(h["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(h["content-security-policy"]).not.toContain("unsafe-inline");
    expect(h["strict-transport-security"]).toMatch(/max-age=\d+/);
    const cookie = (await owner.cookies()).find((c) => c.name === "__Host-folio_session")!;
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: "Strict", path: "/" });
    const inline = await page.evaluate(() => [...(globalThis as any).document.scripts].filter((sc: any) => !sc.src).length);
    expect(inline).toBe(0);
  });

  it("creates a key shown once with a copy button, which then works on the public API", async () => {
    await page.goto("/dashboard/keys");
    await page.getByLabel("Name").fill("production");
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("new-api-key").textContent())!.trim();
    expect(key).toMatch(/^folio_sk_[0-9A-Za-z]{16}_[0-9A-Za-z]{32}$/);
    await expect(page.getByRole("button", { name: "Copy" }).count()).resolves.toBe(1);
    await screenshot(page, "dashboard-keys-new");
    expect((await s.request("GET", "/v1/jobs", { key })).status).toBe(200);
    await page.goto("/dashboard/keys");
    expect(await page.content()).not.toContain(key.slice(-32));
    expect(await page.getByRole("row", { name: /production/ }).count()).toBe(1);
  });

  it("rotates a key (both work during the grace period, shown as a countdown), then revokes the old one (401 at once)", async () => {
    await page.goto("/dashboard/keys");
    await page.getByLabel("Name").fill("rotating");
    await page.getByRole("button", { name: "Create key" }).click();
    const oldKey = (await page.getByTestId("new-api-key").textContent())!.trim();
    const oldId = oldKey.split("_")[2]!;
    await page.goto("/dashboard/keys");
    await page
      .getByRole("row", { name: new RegExp(oldId) })
      .getByRole("button", { name: "Rotate" })
      .click();
    const newKey = (await page.getByTestId("new-api-key").textContent())!.trim();
    expect(newKey).not.toBe(oldKey);
    expect((await s.request("GET", "/v1/jobs", { key: oldKey })).status).toBe(200);
    expect((await s.request("GET", "/v1/jobs", { key: newKey })).status).toBe(200);
    await page.goto("/dashboard/keys");
    const oldRow = page.getByRole("row", { name: new RegExp(oldId) });
    await expect(oldRow.textContent()).resolves.toMatch(/rotated · works for\s+\d+ h \d+ min/);
    await oldRow.getByRole("button", { name: "Revoke" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("Revoked");
    expect((await s.request("GET", "/v1/jobs", { key: oldKey })).status).toBe(401);
    expect((await s.request("GET", "/v1/jobs", { key: newKey })).status).toBe(200);
  });

  it("shows bad input as a clear message on the page and changes nothing", async () => {
    const before = await keyCount();
    await page.goto("/dashboard/keys");
    await page.getByLabel("Name").fill("<b>bold</b>");
    await page.getByRole("button", { name: "Create key" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("Give the key a name");
    expect(await keyCount()).toBe(before);
    await page.goto("/dashboard/members");
    await page.getByLabel("E-mail", { exact: true }).fill("not-an-email@x");
    await page.getByRole("button", { name: "Invite" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("valid e-mail");
  });

  it("lets an owner invite a viewer, who sees no key actions and whose forged key actions the server refuses", async () => {
    viewerEmail = "viewer@example.com";
    await page.goto("/dashboard/members");
    await page.getByLabel("E-mail", { exact: true }).fill(viewerEmail);
    await page.getByLabel("Role", { exact: true }).selectOption("viewer");
    await page.getByRole("button", { name: "Invite" }).click();
    const url = (await page.getByTestId("invite-url").textContent())!.trim();
    await screenshot(page, "dashboard-members");
    const viewer = await newContext(browser, s.base);
    const vp = await viewer.newPage();
    await acceptInvite(vp, url, VIEWER_PASSWORD);
    await vp.goto("/dashboard/keys");
    expect(await vp.getByRole("button", { name: /Create key|Rotate|Revoke/ }).count()).toBe(0);
    expect(await vp.getByRole("row", { name: /production/ }).count()).toBe(1);
    const before = await keyCount();
    const statuses = await vp.evaluate(async () => {
      const csrf: string = (globalThis as any).document.querySelector('meta[name="csrf-token"]').content;
      const post = (url: string, body: string) =>
        fetch(url, {
          method: "POST",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: `_csrf=${encodeURIComponent(csrf)}&${body}`,
        }).then((r) => r.status);
      return [
        await post("/dashboard/keys", "name=sneaky"),
        await post("/dashboard/webhooks/rotate", ""),
        await post("/dashboard/members", "email=x%40example.com&role=owner"),
      ];
    });
    expect(statuses).toEqual([403, 403, 403]);
    expect(await keyCount()).toBe(before);
    await viewer.close();
  });

  it("refuses a cross-site form post (another site's page submitting to /dashboard/keys)", async () => {
    const before = await keyCount();
    const evil = http.createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/html" }).end(`<!doctype html><form id="f" method="post" action="${s.base}/dashboard/keys">
        <input name="name" value="planted"></form><script>document.getElementById("f").submit()</script>`);
    });
    await new Promise<void>((r) => evil.listen(0, "127.0.0.1", () => r()));
    const evilPage = await owner.newPage();
    const landed = evilPage.waitForURL(`${s.base}/dashboard/keys`);
    await evilPage.goto(`http://localhost:${(evil.address() as AddressInfo).port}/`);
    await landed;
    await expect(evilPage.locator("body").textContent()).resolves.toContain("was not sent from a Folio page");
    expect(await keyCount()).toBe(before);
    await evilPage.close();
    evil.close();
  });

  it("refuses an expired invite link", async () => {
    const r = await s.folio(["users", "invite", "--tenant", "dev", "--email", "late@example.com", "--role", "developer", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const url = r.json.url as string;
    const db = new DatabaseSync(path.join(s.dataDir, "folio.db"));
    db.prepare("UPDATE invites SET expires_at = ? WHERE user_id = (SELECT id FROM users WHERE email = 'late@example.com')").run(
      Date.now() - 1,
    );
    db.close();
    const p = await (await newContext(browser, s.base)).newPage();
    const res = await p.goto(new URL(url).pathname);
    expect(res?.status()).toBe(410);
    await expect(p.getByRole("alert").textContent()).resolves.toContain("expired");
    expect(await p.getByLabel("New password").count()).toBe(0);
    await p.context().close();
  });

  it("lists jobs live, shows markup in filenames and metadata as text, and the job page has outputs, options and webhook attempts with redeliver", async () => {
    await page.goto("/dashboard/jobs");
    const id = await submitMerge(receiverUrl);
    // No reload: the page's script brings the new job in.
    const row = page.locator(`tr[data-job="${id}"]`);
    await row.waitFor({ timeout: 20_000 });
    await expect(row.textContent()).resolves.toContain(XSS_NAME);
    await waitForJob(s, id);
    await until(() => received.some((r) => JSON.parse(r.body).data?.id === id));
    await page.goto(`/dashboard/jobs/${id}`);
    await expect(page.getByTestId("input-filename").first().textContent()).resolves.toBe(XSS_NAME);
    await expect(page.getByTestId("metadata").textContent()).resolves.toContain(XSS_META);
    expect(await page.evaluate(() => (globalThis as any).__xss)).toBeUndefined();
    const attempts = page.getByRole("table", { name: /Attempts of/ });
    await expect(attempts.textContent()).resolves.toContain("200");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page
        .getByRole("link", { name: /\.pdf$/ })
        .first()
        .click(),
    ]);
    const bytes = await readFile(await download.path());
    expect(bytes.subarray(0, 5).toString()).toBe("%PDF-");
    await screenshot(page, "dashboard-job");
    const first = received.find((r) => JSON.parse(r.body).data?.id === id)!;
    await page.getByRole("button", { name: "Redeliver" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("Queued again");
    await until(() => received.filter((r) => r.id === first.id).length === 2);
    await page.reload();
    await until(
      async () =>
        (await page
          .getByRole("table", { name: /Attempts of/ })
          .getByRole("row")
          .count()) === 3,
    );
    expect(await page.evaluate(() => (globalThis as any).__xss)).toBeUndefined();
  });

  it("links a failed job's error code to its documentation", async () => {
    const form = new FormData();
    form.append("file", blob("%PDF-1.7\nthis is not really a PDF\n%%EOF\n", "application/pdf"), "broken.pdf");
    const res = await s.request("POST", "/v1/pdf/compress", { form });
    expect(res.status, res.text).toBe(202);
    const job = await waitForJob(s, res.json.id);
    expect(job.status).toBe("failed");
    await page.goto(`/dashboard/jobs/${job.id}`);
    const link = page.getByRole("link", { name: job.error.code });
    expect(await link.getAttribute("href")).toBe(`/docs#job-error-${job.error.code}`);
    await link.click();
    await expect(page.locator(`#job-error-${job.error.code}`).count()).resolves.toBe(1);
  });

  it("rotates the webhook signing secret (shown once) and sends a test event signed with it", async () => {
    await page.goto("/dashboard/webhooks");
    await page.getByRole("button", { name: "Rotate signing secret" }).click();
    const secret = (await page.getByTestId("new-webhook-secret").textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await page.getByLabel("Receiver URL (https)").fill(receiverUrl);
    await page.getByRole("button", { name: "Send test event" }).click();
    await expect(page.getByTestId("test-result").textContent()).resolves.toContain("HTTP 200");
    const test = received.find((r) => JSON.parse(r.body).type === "webhook.test")!;
    expect(() => new Webhook(secret).verify(test.body, test.headers)).not.toThrow();
    await screenshot(page, "dashboard-webhooks");
    await page.goto("/dashboard/webhooks");
    expect(await page.content()).not.toContain(secret);
    await page.getByLabel("Receiver URL (https)").fill("http://127.0.0.1/hooks");
    await page.getByRole("button", { name: "Send test event" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("https URL");
  });

  it("shows usage: plan, limits, rate-limit state and 30-day charts from the daily aggregates", async () => {
    await page.goto("/dashboard/usage");
    expect(Number(await page.getByTestId("usage-jobs").textContent())).toBeGreaterThanOrEqual(2);
    expect(Number(await page.getByTestId("usage-pages").textContent())).toBeGreaterThanOrEqual(3);
    await expect(page.getByTestId("usage-p50-p95").textContent()).resolves.toMatch(/\d+ (ms|s) \/ \d/);
    expect(await page.locator("figure.chart svg rect").count()).toBeGreaterThan(0);
    await expect(page.getByRole("table", { name: "Rate-limit state per key" }).textContent()).resolves.toMatch(/\d+ of 100/);
    await screenshot(page, "dashboard-usage");
  });

  it("keeps an audit log of keys, secrets and members, exportable as JSON", async () => {
    await page.goto("/dashboard/audit");
    const text = (await page.locator("main").textContent())!;
    for (const a of ["key.created", "key.rotated", "key.revoked", "webhook_secret.rotated", "member.invited", "webhook.redelivered"])
      expect(text).toContain(a);
    const res = await page.request.get("/dashboard/audit.json");
    expect(res.headers()["content-disposition"]).toContain("attachment");
    const body = await res.json();
    expect(body.entries.map((e: { action: string }) => e.action)).toContain("key.revoked");
    expect(body.entries.every((e: { actor: string }) => typeof e.actor === "string")).toBe(true);
    await screenshot(page, "dashboard-audit");
  });

  it("adds TOTP; sign-in then asks for a code, and a code is accepted only once", async () => {
    await page.goto("/dashboard/account");
    await page.getByRole("button", { name: "Add two-factor sign-in" }).click();
    const secret = (await page.getByTestId("totp-secret").textContent())!.trim();
    const code = (offset = 0): string => hotp(base32Decode(secret), totpStep(Date.now()) + offset);
    await page.getByLabel("Code").fill(code());
    await page.getByRole("button", { name: "Turn on two-factor sign-in" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("Two-factor sign-in is on");
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await signIn(page, "owner@dev.localhost", OWNER_PASSWORD);
    await page.waitForURL("**/dashboard/sign-in/code");
    // The code used to turn TOTP on cannot be used again.
    await page.getByLabel(/6-digit code/).fill(code());
    await page.getByRole("button", { name: "Verify" }).click();
    if ((await page.getByRole("alert").count()) > 0) {
      await page.getByLabel(/6-digit code/).fill(code(1));
      await page.getByRole("button", { name: "Verify" }).click();
    }
    await page.waitForURL("**/dashboard/jobs");
  });

  it("signs out everywhere: the person's other browsers lose their session at once", async () => {
    const a = await (await newContext(browser, s.base)).newPage();
    const b = await (await newContext(browser, s.base)).newPage();
    for (const p of [a, b]) {
      await signIn(p, viewerEmail, VIEWER_PASSWORD);
      await p.waitForURL("**/dashboard/jobs");
    }
    await a.goto("/dashboard/account");
    await a.getByRole("button", { name: "Sign out everywhere" }).click();
    await a.waitForURL("**/dashboard/sign-in");
    await b.goto("/dashboard/jobs");
    expect(new URL(b.url()).pathname).toBe("/dashboard/sign-in");
    await a.context().close();
    await b.context().close();
  });

  it("locks an account after 5 wrong passwords, the right one included, with the same message", async () => {
    const p = await (await newContext(browser, s.base)).newPage();
    for (let i = 0; i < 5; i++) {
      await signIn(p, viewerEmail, `wrong password ${i}`);
      await expect(p.getByRole("alert").textContent()).resolves.toBe("E-mail or password is wrong.");
    }
    await signIn(p, viewerEmail, VIEWER_PASSWORD);
    await expect(p.getByRole("alert").textContent()).resolves.toBe("E-mail or password is wrong.");
    expect(new URL(p.url()).pathname).toBe("/dashboard/sign-in");
    await p.context().close();
  });

  it("has no serious or critical axe-core violation on any tenant page, and screenshots of each", async () => {
    const jobs = (await s.request("GET", "/v1/jobs?limit=1")).json.data;
    const pages: [string, string][] = [
      ["/dashboard/jobs", "dashboard-jobs"],
      [`/dashboard/jobs/${jobs[0].id}`, ""],
      ["/dashboard/keys", "dashboard-keys"],
      ["/dashboard/webhooks", ""],
      ["/dashboard/usage", ""],
      ["/dashboard/members", ""],
      ["/dashboard/audit", ""],
      ["/dashboard/account", ""],
    ];
    const found: Record<string, unknown> = {};
    for (const [url, shot] of pages) {
      await page.goto(url);
      const v = await seriousViolations(page);
      if (v.length) found[url] = v;
      if (shot) await screenshot(page, shot);
    }
    const anon = await (await newContext(browser, s.base)).newPage();
    await anon.goto("/dashboard/sign-in");
    const v = await seriousViolations(anon);
    if (v.length) found["/dashboard/sign-in"] = v;
    await screenshot(anon, "dashboard-sign-in");
    const inv = await s.folio(["users", "invite", "--tenant", "dev", "--email", "new@example.com", "--json"]);
    await anon.goto(new URL(inv.json.url).pathname);
    const vi = await seriousViolations(anon);
    if (vi.length) found["/dashboard/invite"] = vi;
    await screenshot(anon, "dashboard-invite");
    await anon.context().close();
    expect(found).toEqual({});
  });
});
