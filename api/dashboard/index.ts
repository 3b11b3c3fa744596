/**
 * The dashboard (/dashboard): server-rendered pages with small ES modules, served by the API
 * process on its HTTPS port, in both modes. People sign in with sessions (sessions.ts); API keys
 * never authenticate here. This file wires the routers and the guards every page passes.
 */
import express, { type NextFunction, type Request, type Response, type Router } from "express";
import { planLimits } from "../../core/plans.ts";
import { CookieSigner } from "./cookies.ts";
import { clientAddress, type Ctx, type DashboardDeps } from "./context.ts";
import { PageError } from "./errors.ts";
import { html } from "./html.ts";
import { renderPage } from "./layout.ts";
import { authRouter } from "./pages/auth.ts";
import { auditRouter } from "./pages/audit.ts";
import { jobsRouter } from "./pages/jobs.ts";
import { keysRouter } from "./pages/keys.ts";
import { membersRouter } from "./pages/members.ts";
import { operatorRouter } from "./pages/operator.ts";
import { usageRouter } from "./pages/usage.ts";
import { webhooksRouter } from "./pages/webhooks.ts";
import { anonymousCsrf, sameOrigin, securityHeaders, tokenMatches } from "./security.ts";
import { Sessions } from "./sessions.ts";
import { assetsRouter } from "./static.ts";
import { Throttle } from "./throttle.ts";

export type { DashboardDeps } from "./context.ts";

export function dashboardRouter(d: DashboardDeps): Router {
  const signer = new CookieSigner(d.signingKey);
  const ctx: Ctx = {
    d,
    signer,
    sessions: new Sessions(signer, d.stores.users, {
      idleMs: d.config.FOLIO_DASHBOARD_IDLE_MINUTES * 60_000,
      absoluteMs: d.config.FOLIO_DASHBOARD_SESSION_HOURS * 3_600_000,
    }),
    throttle: new Throttle(d.stores.users, d.config.FOLIO_DASHBOARD_SIGNIN_PER_MINUTE),
    planLimits: (plan) => planLimits(plan, d.config),
  };
  const r = express.Router();
  r.use("/assets", assetsRouter());
  r.use(securityHeaders);
  r.use(express.urlencoded({ extended: false, limit: "64kb", parameterLimit: 100 }));

  // The session (if any) of every request, and the CSRF check of every state change.
  r.use(async (req: Request, res: Response, next: NextFunction) => {
    const s = await ctx.sessions.read(req, res);
    res.locals.session = s;
    if (req.method === "GET" || req.method === "HEAD") return next();
    const body = req.body as Record<string, unknown> | undefined;
    const given = body?._csrf ?? req.get("X-CSRF-Token");
    const expected = s ? s.csrf : anonymousCsrf(req, res, signer);
    if (!sameOrigin(req) || !tokenMatches(expected, given)) {
      d.log.warn(
        { path: req.path, address: clientAddress(req, d.config.FOLIO_TRUST_PROXY) },
        "Refused a dashboard request without a valid CSRF token",
      );
      throw new PageError(403, "This form was not sent from a Folio page (or it is too old). Reload the page and try again.");
    }
    next();
  });

  r.use(authRouter(ctx));
  r.use(keysRouter(ctx));
  r.use(jobsRouter(ctx));
  r.use(webhooksRouter(ctx));
  r.use(usageRouter(ctx));
  r.use(membersRouter(ctx));
  r.use(auditRouter(ctx));
  r.use("/operator", operatorRouter(ctx));

  r.use((req, res) => {
    renderPage(req, res, signer, {
      title: "Not found",
      session: (res.locals.session as never) ?? null,
      path: req.path,
      status: 404,
      body: html`<p>There is no such page. <a href="/dashboard">Back to the dashboard</a>.</p>`,
    });
  });
  r.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = err instanceof PageError ? err.status : 500;
    if (!(err instanceof PageError)) d.log.error({ err, path: req.path }, "Dashboard page failed");
    const message = err instanceof PageError ? err.message : "Something went wrong on our side; nothing was changed. Try again.";
    if (res.headersSent) return void res.destroy();
    renderPage(req, res, signer, {
      title: status === 403 ? "Not allowed" : status === 404 ? "Not found" : "Error",
      session: (res.locals.session as never) ?? null,
      path: req.path,
      status,
      body: html`<p class="flash error" role="alert">${message}</p>
        <p><a href="/dashboard">Back to the dashboard</a></p>`,
    });
  });
  return r;
}
