/**
 * Sign-in through a real OpenID Connect provider (panva's oidc-provider, certified, running on
 * loopback in this test) and invites sent through a real SMTP server (smtp-server, on loopback):
 * the provider's claims map the person to a tenant and role; a person without a tenant claim is
 * refused; an invite made by the CLI and one made on the Members page arrive by mail with the link.
 */
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import type { Browser } from "playwright-core";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startServer, type Server } from "../api/harness.ts";
import { acceptInvite, launch, newContext } from "./browser.ts";

const ACCOUNTS: Record<string, Record<string, string>> = {
  alice: { email: "alice@acme.example", folio_tenant: "dev", folio_role: "developer" },
  olga: { email: "olga@ops.example", folio_role: "operator" },
  mallory: { email: "mallory@nowhere.example", folio_role: "owner" },
};

let s: Server;
let browser: Browser;
let provider: ReturnType<Provider["listen"]>;
let smtp: SMTPServer;
const mails: string[] = [];

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    onData(stream, _session, done) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push(Buffer.concat(chunks).toString());
        done();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, "127.0.0.1", () => r()));
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  const idpPort = await freePort();
  const issuer = `http://127.0.0.1:${idpPort}`;
  s = await startServer({
    FOLIO_OIDC_ISSUER: issuer,
    FOLIO_OIDC_CLIENT_ID: "folio-dashboard",
    FOLIO_OIDC_CLIENT_SECRET: "a-client-secret-of-sufficient-length-0123456789",
    FOLIO_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    FOLIO_SMTP_FROM: "Folio <folio@test.example>",
  });
  const oidc = new Provider(issuer, {
    clients: [
      {
        client_id: "folio-dashboard",
        client_secret: "a-client-secret-of-sufficient-length-0123456789",
        redirect_uris: [`https://localhost:${s.port}/dashboard/oidc/callback`],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    claims: { openid: ["sub"], email: ["email"], profile: ["folio_tenant", "folio_role"] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, ...(ACCOUNTS[sub] ?? {}) }) }),
    cookies: { keys: ["test-cookie-key-0123456789"] },
  });
  provider = oidc.listen(idpPort, "127.0.0.1");
  browser = await launch();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  provider?.close();
  smtp?.close();
  await s?.cleanup();
});

/** Signs in through the provider's login and consent pages; returns the page where Folio lands. */
async function oidcSignIn(login: string) {
  // The redirect URI names localhost, so the browser uses that host from the start (cookies are per host).
  const ctx = await newContext(browser, `https://localhost:${s.port}`);
  const page = await ctx.newPage();
  await page.goto("/dashboard/sign-in");
  await page.getByRole("link", { name: "Sign in with your identity provider" }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("whatever");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
  await page.waitForLoadState("load");
  return page;
}

describe("identity: OpenID Connect sign-in and SMTP invites", () => {
  it("signs a tenant member in with the provider's tenant and role claims", async () => {
    const page = await oidcSignIn("alice");
    await page.waitForURL("**/dashboard/jobs");
    const header = (await page.locator("header").textContent())!;
    expect(header).toContain("alice@acme.example");
    expect(header).toContain("dev");
    expect(header).toContain("developer");
    await page.goto("/dashboard/members");
    await expect(page.getByRole("row", { name: /alice@acme\.example/ }).textContent()).resolves.toContain("identity provider");
    await page.context().close();
  });

  it("signs an operator in by the role claim", async () => {
    const page = await oidcSignIn("olga");
    await page.waitForURL("**/dashboard/operator/tenants");
    await page.context().close();
  });

  it("refuses a person whose claims name no tenant", async () => {
    const page = await oidcSignIn("mallory");
    await expect(page.getByRole("alert").textContent()).resolves.toContain("names no tenant");
    await page.goto("/dashboard/jobs");
    expect(new URL(page.url()).pathname).toBe("/dashboard/sign-in");
    await page.context().close();
  });

  it("e-mails invites made by the CLI and on the Members page, with the one-time link", async () => {
    // The CLI reads the same configuration as the server.
    process.env.FOLIO_SMTP_URL = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
    process.env.FOLIO_SMTP_FROM = "Folio <folio@test.example>";
    const r = await s.folio(["users", "invite", "--tenant", "dev", "--email", "bob@acme.example", "--role", "viewer", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.emailed).toBe(true);
    const cliMail = mails.find((m) => m.includes("To: bob@acme.example"))!;
    expect(cliMail).toContain("From: Folio <folio@test.example>");
    expect(cliMail.replace(/=\r?\n/g, "")).toContain(r.json.url);

    const owner = await (await newContext(browser, s.base)).newPage();
    await acceptInvite(owner, /dashboard:\s+(https:\S+)/.exec(s.logs())![1]!, "the owner password");
    await owner.goto("/dashboard/members");
    await owner.getByLabel("E-mail", { exact: true }).fill("carol@acme.example");
    await owner.getByRole("button", { name: "Invite" }).click();
    const url = (await owner.getByTestId("invite-url").textContent())!.trim();
    await expect(owner.locator("main").textContent()).resolves.toContain("We e-mailed it too");
    const mail = mails.find((m) => m.includes("To: carol@acme.example"))!;
    expect(mail.replace(/=\r?\n/g, "")).toContain(url);
    await owner.context().close();
  });
});
