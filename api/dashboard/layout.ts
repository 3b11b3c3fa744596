/**
 * The page shell: header with the navigation a person's role allows, the one-shot message of the
 * previous action (a signed cookie, so no link can plant a message), and the main content. Every
 * form carries the CSRF token.
 */
import type { Request, Response } from "express";
import type { Role } from "../store/users.ts";
import { clearCookie, readCookie, setCookie, type CookieSigner } from "./cookies.ts";
import { html, raw, type Html } from "./html.ts";
import type { Session } from "./sessions.ts";

const FLASH_COOKIE = "__Host-folio_flash";

export interface Flash {
  ok?: string;
  error?: string;
}

/** Redirects (303) after a change, with a message for the next page. */
export function redirectWith(res: Response, signer: CookieSigner, to: string, flash?: Flash): void {
  if (flash) setCookie(res, FLASH_COOKIE, signer.sign("flash", flash), 60);
  res.redirect(303, to);
}

function takeFlash(req: Request, res: Response, signer: CookieSigner): Flash | null {
  const f = signer.verify<Flash>("flash", readCookie(req, FLASH_COOKIE));
  if (readCookie(req, FLASH_COOKIE)) clearCookie(res, FLASH_COOKIE);
  return f;
}

const TENANT_NAV: [string, string, Role[]][] = [
  ["/dashboard/jobs", "Jobs", ["owner", "developer", "viewer"]],
  ["/dashboard/keys", "API keys", ["owner", "developer", "viewer"]],
  ["/dashboard/webhooks", "Webhooks", ["owner", "developer", "viewer"]],
  ["/dashboard/usage", "Usage", ["owner", "developer", "viewer"]],
  ["/dashboard/members", "Members", ["owner", "developer", "viewer"]],
  ["/dashboard/audit", "Audit log", ["owner", "developer"]],
];
const OPERATOR_NAV: [string, string][] = [
  ["/dashboard/operator/tenants", "Tenants"],
  ["/dashboard/operator/access-requests", "Access requests"],
  ["/dashboard/operator/health", "Service health"],
  ["/dashboard/operator/audit", "Audit log"],
];

export interface PageOptions {
  title: string;
  session: Session | null;
  /** Tenant name shown beside the user, for members. */
  tenantName?: string;
  body: Html;
  /** Path of the current page, to mark the navigation. */
  path: string;
  status?: number;
  /** A message to show now (a form re-rendered with its error). */
  flash?: Flash;
}

export function hiddenCsrf(s: Session | { csrf: string }): Html {
  return html`<input type="hidden" name="_csrf" value="${s.csrf}" />`;
}

function nav(o: PageOptions): Html {
  const s = o.session;
  if (!s) return html``;
  const items: [string, string][] =
    s.user.role === "operator" ? OPERATOR_NAV : TENANT_NAV.filter(([, , roles]) => roles.includes(s.user.role)).map(([h, t]) => [h, t]);
  return html`<nav aria-label="Main">
    <ul>
      ${items.map(([href, text]) => html`<li><a href="${href}" ${o.path.startsWith(href) ? raw(' aria-current="page"') : ""}>${text}</a></li>`)}
    </ul>
  </nav>`;
}

function account(o: PageOptions): Html {
  const s = o.session;
  if (!s) return html``;
  return html`<div class="account">
    <span>${s.user.email}${o.tenantName ? html` · <strong>${o.tenantName}</strong>` : ""} · ${s.user.role}</span>
    <a href="/dashboard/account">Account</a>
    <form method="post" action="/dashboard/sign-out" class="inline">
      ${hiddenCsrf(s)}<button type="submit" class="link">Sign out</button>
    </form>
  </div>`;
}

export function renderPage(req: Request, res: Response, signer: CookieSigner, o: PageOptions): void {
  const flash = o.flash ?? takeFlash(req, res, signer);
  const doc = html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        ${o.session ? html`<meta name="csrf-token" content="${o.session.csrf}" />` : ""}
        <title>${o.title} · Folio</title>
        <link rel="stylesheet" href="/dashboard/assets/app.css" />
        <script type="module" src="/dashboard/assets/app.js"></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
          <a class="brand" href="/dashboard">Folio</a>
          ${nav(o)} ${account(o)}
        </header>
        <main id="main">
          <h1>${o.title}</h1>
          ${flash?.ok ? html`<p class="flash ok" role="status">${flash.ok}</p>` : ""}
          ${flash?.error ? html`<p class="flash error" role="alert">${flash.error}</p>` : ""} ${o.body}
        </main>
      </body>
    </html>`;
  res
    .status(o.status ?? 200)
    .type("html")
    .send(doc.value);
}
