/**
 * Browser harness for the dashboard tests: Debian's Chromium (/usr/bin/chromium) driven headless
 * by playwright-core, with the flags this machine needs (no sandbox as root, no GPU, no background
 * connections to the closed network). Also: sign-in helpers, axe-core (run through the DevTools
 * protocol, so the page's strict CSP stays in force) and screenshots into docs/screenshots.
 */
import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { ROOT } from "../helpers/tools.ts";

export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

/** A fresh browser profile (cookies, storage) that trusts the server's self-signed certificate. */
export function newContext(browser: Browser, baseURL: string): Promise<BrowserContext> {
  return browser.newContext({ baseURL, ignoreHTTPSErrors: true, viewport: { width: 1280, height: 860 } });
}

/** Opens an invite link and sets the password; the page ends signed in on the Account page. */
export async function acceptInvite(page: Page, url: string, password: string): Promise<void> {
  await page.goto(new URL(url).pathname);
  await page.getByLabel("New password").fill(password);
  await page.getByLabel("Repeat it").fill(password);
  await page.getByRole("button", { name: "Set password and sign in" }).click();
  await page.waitForURL("**/dashboard/account");
}

export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto("/dashboard/sign-in");
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

const AXE = readFileSync(path.join(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical violations on the page as it is now (WCAG 2.1 A/AA rules). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, o: unknown) => Promise<{ violations: AxeViolation[] }> } }).axe;
    const r = await axe.run((globalThis as unknown as { document: unknown }).document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
    });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/**
 * Saves a full-page screenshot as NAME.png: into docs/screenshots when FOLIO_SCREENSHOTS=docs
 * (`make dashboard-screenshots`), else into dist/screenshots, so that test runs leave docs/ alone.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = path.join(ROOT, process.env.FOLIO_SCREENSHOTS === "docs" ? "docs/screenshots" : "dist/screenshots");
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}
