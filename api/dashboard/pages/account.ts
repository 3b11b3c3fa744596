/**
 * The person's own account: adding TOTP (a new secret is kept in a signed cookie until a code from
 * the app confirms it), removing it (with the password), and "sign out everywhere".
 */
import express, { type Request, type Response, type Router } from "express";
import { clearCookie, readCookie, setCookie } from "../cookies.ts";
import { clientAddress, type Ctx, field } from "../context.ts";
import { signedIn } from "../guards.ts";
import { html } from "../html.ts";
import { hiddenCsrf, redirectWith, renderPage } from "../layout.ts";
import { verifyPassword } from "../passwords.ts";
import type { Session } from "../sessions.ts";
import { tenantById } from "../tenants-port.ts";
import { newTotpSecret, otpauthUri, verifyTotp } from "../totp.ts";

const ENROL_COOKIE = "__Host-folio_totp";

export function accountRouter(ctx: Ctx): Router {
  const r = express.Router();
  const { users, audit } = ctx.d.stores;
  const record = async (req: Request, s: Session, action: string): Promise<void> =>
    await audit.record({
      tenant_id: s.user.tenant_id,
      actor: s.user.email,
      action,
      target: s.user.email,
      detail: {},
      address: clientAddress(req, ctx.d.config.FOLIO_TRUST_PROXY),
    });

  const page = async (req: Request, res: Response, error?: string): Promise<void> => {
    const s = res.locals.session as Session;
    const pending = ctx.signer.verify<{ uid: string; secret: string }>("totp-enrol", readCookie(req, ENROL_COOKIE));
    const enrolling = pending && pending.uid === s.user.id ? pending.secret : null;
    const tenant = s.user.tenant_id ? await tenantById(ctx.d.tenants, s.user.tenant_id) : null;
    const totp = s.user.totp_secret
      ? html`<p>Two-factor sign-in (TOTP) is <strong>on</strong>.</p>
          <form method="post" action="/dashboard/account/totp/remove" class="card">
            ${hiddenCsrf(s)}
            <label for="rm-password">Your password, to turn it off</label>
            <input id="rm-password" name="password" type="password" autocomplete="current-password" required />
            <button type="submit" class="danger">Turn off two-factor sign-in</button>
          </form>`
      : enrolling
        ? html`<ol>
              <li>
                Add this key to your authenticator app (or open the link on your phone):
                <code class="secret" data-testid="totp-secret">${enrolling}</code>
                <a href="${otpauthUri(enrolling, s.user.email)}">otpauth link</a>
              </li>
              <li>Type the 6-digit code it shows.</li>
            </ol>
            <form method="post" action="/dashboard/account/totp/confirm" class="card">
              ${hiddenCsrf(s)}
              <label for="code">Code</label>
              <input id="code" name="code" inputmode="numeric" pattern="[0-9]{6}" maxlength="6" autocomplete="one-time-code" required />
              <button type="submit">Turn on two-factor sign-in</button>
            </form>`
        : html`<p>Two-factor sign-in (TOTP) is off.</p>
            <form method="post" action="/dashboard/account/totp/start">
              ${hiddenCsrf(s)}<button type="submit">Add two-factor sign-in</button>
            </form>`;
    renderPage(req, res, ctx.signer, {
      title: "Account",
      session: s,
      ...(tenant ? { tenantName: tenant.name } : {}),
      path: req.path,
      status: error ? 422 : 200,
      ...(error ? { flash: { error } } : {}),
      body: html`<section>
          <h2>You</h2>
          <dl>
            <dt>E-mail</dt>
            <dd>${s.user.email}</dd>
            <dt>Role</dt>
            <dd>${s.user.role}${tenant ? html` in ${tenant.name}` : ""}</dd>
          </dl>
        </section>
        <section>
          <h2>Two-factor sign-in</h2>
          ${totp}
        </section>
        <section>
          <h2>Sessions</h2>
          <p>Signs you out in every browser and device, this one included.</p>
          <form method="post" action="/dashboard/sign-out-everywhere">
            ${hiddenCsrf(s)}<button type="submit" class="danger">Sign out everywhere</button>
          </form>
        </section>`,
    });
  };

  r.get("/account", signedIn, (req, res) => page(req, res));

  r.post("/account/totp/start", signedIn, (_req, res) => {
    const s = res.locals.session as Session;
    setCookie(res, ENROL_COOKIE, ctx.signer.sign("totp-enrol", { uid: s.user.id, secret: newTotpSecret() }), 900);
    res.redirect(303, "/dashboard/account");
  });

  r.post("/account/totp/confirm", signedIn, async (req, res) => {
    const s = res.locals.session as Session;
    const pending = ctx.signer.verify<{ uid: string; secret: string }>("totp-enrol", readCookie(req, ENROL_COOKIE));
    if (!pending || pending.uid !== s.user.id)
      return redirectWith(res, ctx.signer, "/dashboard/account", { error: "Start again: add two-factor sign-in." });
    const step = verifyTotp(pending.secret, field(req, "code").trim());
    if (step === null) return page(req, res, "That code does not match; check the time on your phone and try the next code.");
    await users.setTotp(s.user.id, pending.secret);
    await users.useTotpStep(s.user.id, step);
    clearCookie(res, ENROL_COOKIE);
    await record(req, s, "member.totp_enabled");
    redirectWith(res, ctx.signer, "/dashboard/account", { ok: "Two-factor sign-in is on: you will be asked for a code when you sign in." });
  });

  r.post("/account/totp/remove", signedIn, async (req, res) => {
    const s = res.locals.session as Session;
    if (!(await verifyPassword(field(req, "password"), s.user.password_hash)))
      return page(req, res, "That password is wrong; two-factor sign-in stays on.");
    await users.setTotp(s.user.id, null);
    await record(req, s, "member.totp_disabled");
    redirectWith(res, ctx.signer, "/dashboard/account", { ok: "Two-factor sign-in is off." });
  });

  return r;
}
