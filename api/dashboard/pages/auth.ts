/**
 * Signing in and out: e-mail and password (then a TOTP code when the person has one), OpenID
 * Connect when configured, the one-time invite link where a person sets a password, and sign out
 * (this browser, or everywhere). Failures all read "E-mail or password is wrong" so that nothing
 * tells whether an account exists or is locked.
 */
import express, { type Request, type Response, type Router } from "express";
import type { User } from "../../store/users.ts";
import { readCookie, setCookie, clearCookie } from "../cookies.ts";
import { clientAddress, type Ctx, param, field } from "../context.ts";
import { PageError } from "../errors.ts";
import { signedIn } from "../guards.ts";
import { html, type Html } from "../html.ts";
import { redirectWith, renderPage } from "../layout.ts";
import { hashPassword, passwordProblem, verifyPassword } from "../passwords.ts";
import { anonymousCsrf } from "../security.ts";
import type { Session } from "../sessions.ts";
import { accountRouter } from "./account.ts";
import { oidcMember } from "./oidc-member.ts";
import { verifyTotp } from "../totp.ts";
import { tenantById } from "../tenants-port.ts";

const MFA_COOKIE = "__Host-folio_mfa";
const OIDC_COOKIE = "__Host-folio_oidc";
const WRONG = "E-mail or password is wrong.";

/** Only paths inside the dashboard are followed after sign-in (no open redirect). */
export function safeNext(next: unknown): string {
  return typeof next === "string" && /^\/dashboard(\/[A-Za-z0-9/_.?=&%-]*)?$/.test(next) && !next.includes("..") ? next : "/dashboard";
}

export function home(user: User): string {
  return user.role === "operator" ? "/dashboard/operator/tenants" : "/dashboard/jobs";
}

function signInForm(ctx: Ctx, req: Request, res: Response, o: { email?: string; next: string; error?: string; status?: number }): void {
  const csrf = anonymousCsrf(req, res, ctx.signer);
  const body: Html = html`<form method="post" action="/dashboard/sign-in" class="card narrow">
      <input type="hidden" name="_csrf" value="${csrf}" />
      <input type="hidden" name="next" value="${o.next}" />
      <label for="email">E-mail</label>
      <input id="email" name="email" type="email" autocomplete="username" required value="${o.email ?? ""}" />
      <label for="password">Password</label>
      <input id="password" name="password" type="password" autocomplete="current-password" required />
      <button type="submit">Sign in</button>
    </form>
    ${ctx.d.oidc ? html`<p class="narrow"><a class="button secondary" href="/dashboard/oidc/start">Sign in with your identity provider</a></p>` : ""}
    <p class="narrow muted">No account yet? Ask an owner of your tenant (or the operator of this installation) for an invite link.</p>`;
  renderPage(req, res, ctx.signer, {
    title: "Sign in",
    session: null,
    path: req.path,
    body,
    status: o.status ?? (o.error ? 401 : 200),
    ...(o.error ? { flash: { error: o.error } } : {}),
  });
}

async function audit(ctx: Ctx, req: Request, user: User, action: string): Promise<void> {
  await ctx.d.stores.audit.record({
    tenant_id: user.tenant_id,
    actor: user.email,
    action,
    target: user.email,
    detail: {},
    address: clientAddress(req, ctx.d.config.FOLIO_TRUST_PROXY),
  });
}

export function authRouter(ctx: Ctx): Router {
  const r = express.Router();
  const { users } = ctx.d.stores;

  r.get("/", (_req, res) => {
    const s = res.locals.session as Session | null;
    res.redirect(303, s ? home(s.user) : "/dashboard/sign-in");
  });

  r.get("/sign-in", (req, res) => {
    const s = res.locals.session as Session | null;
    if (s) return res.redirect(303, safeNext(req.query.next));
    signInForm(ctx, req, res, { next: safeNext(req.query.next) });
  });

  r.post("/sign-in", async (req, res) => {
    const email = field(req, "email").slice(0, 254);
    const next = safeNext(field(req, "next"));
    const wait = ctx.throttle.address(clientAddress(req, ctx.d.config.FOLIO_TRUST_PROXY));
    if (wait > 0)
      return signInForm(ctx, req, res, {
        email,
        next,
        status: 429,
        error: `Too many sign-in attempts from your address; try again in ${wait} s.`,
      });
    const password = field(req, "password");
    const candidates = (await users.byEmail(email)).filter((u) => u.password_hash !== null);
    let found: User | null = null;
    for (const u of candidates) {
      // Verify even when locked, so that timing does not reveal the lock.
      const ok = await verifyPassword(password, u.password_hash);
      if (ok && !ctx.throttle.locked(u) && !found) found = u;
      else if (!ok || ctx.throttle.locked(u)) await ctx.throttle.failed(u);
    }
    if (candidates.length === 0) await verifyPassword(password, null);
    if (!found) {
      ctx.d.log.info({ address: clientAddress(req, ctx.d.config.FOLIO_TRUST_PROXY) }, "Refused a dashboard sign-in");
      return signInForm(ctx, req, res, { email, next, error: WRONG });
    }
    if (found.totp_secret) {
      setCookie(res, MFA_COOKIE, ctx.signer.sign("mfa", { uid: found.id, exp: Date.now() + 5 * 60_000, next }), 300);
      return res.redirect(303, "/dashboard/sign-in/code");
    }
    await users.signInSucceeded(found.id);
    ctx.sessions.issue(res, found, "pwd");
    res.redirect(303, next === "/dashboard" ? home(found) : next);
  });

  const pendingMfa = async (req: Request): Promise<{ user: User; next: string } | null> => {
    const p = ctx.signer.verify<{ uid: string; exp: number; next: string }>("mfa", readCookie(req, MFA_COOKIE));
    const user = p && p.exp > Date.now() ? await users.byId(p.uid) : undefined;
    return user && user.totp_secret && user.disabled_at === null ? { user, next: safeNext(p!.next) } : null;
  };

  const codeForm = (req: Request, res: Response, error?: string): void => {
    const csrf = anonymousCsrf(req, res, ctx.signer);
    renderPage(req, res, ctx.signer, {
      title: "Two-factor code",
      session: null,
      path: req.path,
      status: error ? 401 : 200,
      ...(error ? { flash: { error } } : {}),
      body: html`<form method="post" action="/dashboard/sign-in/code" class="card narrow">
        <input type="hidden" name="_csrf" value="${csrf}" />
        <label for="code">The 6-digit code from your authenticator app</label>
        <input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required />
        <button type="submit">Verify</button>
      </form>`,
    });
  };

  r.get("/sign-in/code", async (req, res) => {
    if (!(await pendingMfa(req))) return res.redirect(303, "/dashboard/sign-in");
    codeForm(req, res);
  });

  r.post("/sign-in/code", async (req, res) => {
    const p = await pendingMfa(req);
    if (!p) return redirectWith(res, ctx.signer, "/dashboard/sign-in", { error: "Your sign-in took too long; start again." });
    if (ctx.throttle.address(clientAddress(req, ctx.d.config.FOLIO_TRUST_PROXY)) > 0)
      return codeForm(req, res, "Too many attempts; wait a minute.");
    const code = field(req, "code").trim();
    const step = ctx.throttle.locked(p.user) ? null : verifyTotp(p.user.totp_secret!, code);
    if (step === null || !(await users.useTotpStep(p.user.id, step))) {
      await ctx.throttle.failed(p.user);
      return codeForm(req, res, "That code is not valid (or was used already). Wait for the next one and try again.");
    }
    clearCookie(res, MFA_COOKIE);
    await users.signInSucceeded(p.user.id);
    ctx.sessions.issue(res, p.user, "pwd+totp");
    res.redirect(303, p.next === "/dashboard" ? home(p.user) : p.next);
  });

  r.post("/sign-out", async (_req, res) => {
    const s = res.locals.session as Session | null;
    if (s) await ctx.sessions.end(res, s);
    redirectWith(res, ctx.signer, "/dashboard/sign-in", { ok: "You are signed out." });
  });

  r.post("/sign-out-everywhere", signedIn, async (req, res) => {
    const s = res.locals.session as Session;
    await ctx.sessions.endAll(res, s);
    await audit(ctx, req, s.user, "member.signed_out_everywhere");
    redirectWith(res, ctx.signer, "/dashboard/sign-in", { ok: "You are signed out on every device." });
  });

  // --- invite links ---------------------------------------------------------------------------

  const inviteProblem = (error: "unknown" | "expired" | "used"): PageError =>
    error === "expired"
      ? new PageError(410, "This invite link has expired (links work for 24 hours). Ask for a new one.")
      : error === "used"
        ? new PageError(410, "This invite link was used already; sign in instead, or ask for a new link.")
        : new PageError(404, "This invite link is not valid. Check that you copied all of it, or ask for a new one.");

  const inviteForm = async (req: Request, res: Response, user: User, error?: string): Promise<void> => {
    const csrf = anonymousCsrf(req, res, ctx.signer);
    const tenant = user.tenant_id ? await tenantById(ctx.d.tenants, user.tenant_id) : null;
    renderPage(req, res, ctx.signer, {
      title: "Set your password",
      session: null,
      path: req.path,
      status: error ? 422 : 200,
      ...(error ? { flash: { error } } : {}),
      body: html`<p class="narrow">
          Welcome, <strong>${user.email}</strong>. You join
          ${tenant ? html`<strong>${tenant.name}</strong> as ${user.role}` : html`this installation as an operator`}.
        </p>
        <form method="post" class="card narrow">
          <input type="hidden" name="_csrf" value="${csrf}" />
          <input type="text" name="username" autocomplete="username" value="${user.email}" hidden />
          <label for="password">New password (at least 12 characters)</label>
          <input id="password" name="password" type="password" autocomplete="new-password" minlength="12" maxlength="256" required />
          <label for="confirm">Repeat it</label>
          <input id="confirm" name="confirm" type="password" autocomplete="new-password" required />
          <button type="submit">Set password and sign in</button>
        </form>`,
    });
  };

  r.get("/invite/:token", async (req, res) => {
    const found = await users.peekInvite(param(req, "token"));
    if ("error" in found) throw inviteProblem(found.error);
    return inviteForm(req, res, found.user);
  });

  r.post("/invite/:token", async (req, res) => {
    const found = await users.peekInvite(param(req, "token"));
    if ("error" in found) throw inviteProblem(found.error);
    const password = field(req, "password");
    const problem = passwordProblem(password) ?? (password !== field(req, "confirm") ? "The two passwords differ." : null);
    if (problem) return inviteForm(req, res, found.user, problem);
    const hash = await hashPassword(password);
    if (!(await users.useInvite(param(req, "token")))) throw inviteProblem("used");
    await users.setPassword(found.user.id, hash);
    // A new password ends every older session of the person.
    await users.bumpEpoch(found.user.id);
    const user = (await users.byId(found.user.id))!;
    await audit(ctx, req, user, "member.password_set");
    await users.signInSucceeded(user.id);
    ctx.sessions.issue(res, user, "pwd");
    redirectWith(res, ctx.signer, "/dashboard/account", {
      ok: "Your password is set and you are signed in. You can add a second factor (TOTP) below.",
    });
  });

  // --- OpenID Connect -------------------------------------------------------------------------

  r.get("/oidc/start", async (_req, res) => {
    if (!ctx.d.oidc) throw new PageError(404, "Sign-in with an identity provider is not set up here.");
    const start = await ctx.d.oidc.start(`${ctx.d.publicUrl}/dashboard/oidc/callback`);
    setCookie(res, OIDC_COOKIE, ctx.signer.sign("oidc", { ...start, url: undefined, exp: Date.now() + 10 * 60_000 }), 600, "Lax");
    res.redirect(303, start.url);
  });

  r.get("/oidc/callback", async (req, res) => {
    if (!ctx.d.oidc) throw new PageError(404, "Sign-in with an identity provider is not set up here.");
    const checks = ctx.signer.verify<{ state: string; nonce: string; verifier: string; exp: number }>("oidc", readCookie(req, OIDC_COOKIE));
    clearCookie(res, OIDC_COOKIE);
    if (!checks || checks.exp < Date.now()) throw new PageError(400, "This sign-in took too long or did not start here; start again.");
    let who;
    try {
      who = await ctx.d.oidc.finish(new URL(req.originalUrl, ctx.d.publicUrl), checks);
    } catch (err) {
      ctx.d.log.warn({ err }, "OpenID Connect sign-in failed");
      throw new PageError(401, "The identity provider's answer could not be verified; start again.");
    }
    const user = await oidcMember(ctx, who);
    await users.signInSucceeded(user.id);
    ctx.sessions.issue(res, user, "oidc");
    // This response ends a navigation that began on the provider's site, so a redirect would not
    // carry the new SameSite=Strict cookie; a same-site refresh from this page does.
    res.type("html").send(
      html`<!doctype html>
        <html lang="en">
          <head>
            <meta charset="utf-8" />
            <meta http-equiv="refresh" content="0;url=${home(user)}" />
            <title>Signed in · Folio</title>
          </head>
          <body>
            <main>
              <p>Signed in. <a href="${home(user)}">Continue to the dashboard</a>.</p>
            </main>
          </body>
        </html>`.value,
    );
  });

  r.use(accountRouter(ctx));
  return r;
}
