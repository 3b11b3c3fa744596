/**
 * The operators' pages: tenants (create, change plan, suspend and resume, usage per tenant, an
 * owner invite), access requests (approve: the tenant and an owner invite link; reject), and the
 * service's health. Texts people sent with access requests are shown as text, never as markup.
 */
import express, { type Request, type Response, type Router } from "express";
import { PLANS, type Plan } from "../../store/tenants.ts";
import type { TenantSummary as Tenant } from "../tenants-port.ts";
import { clientAddress, type Ctx, param, field } from "../context.ts";
import { PageError } from "../errors.ts";
import { operator } from "../guards.ts";
import { html, time } from "../html.ts";
import { EMAIL, invite } from "../invites.ts";
import { hiddenCsrf, redirectWith, renderPage } from "../layout.ts";
import type { Session } from "../sessions.ts";
import { lastDays, usageCharts } from "./usage.ts";

export const TENANT_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export function operatorRouter(ctx: Ctx): Router {
  const r = express.Router();
  r.use(operator);
  const { tenants, accessRequests } = ctx.d;
  const { audit, usage } = ctx.d.stores;
  const s = (res: Response): Session => res.locals.session as Session;
  const record = async (req: Request, res: Response, action: string, target: string, detail: Record<string, unknown> = {}): Promise<void> =>
    await audit.record({
      tenant_id: null,
      actor: s(res).user.email,
      action,
      target,
      detail,
      address: clientAddress(req, ctx.d.config.FOLIO_TRUST_PROXY),
    });
  const suspended = (t: Tenant): boolean => t.suspended;
  const planSelect = (id: string, current: string) =>
    html`<select id="${id}" name="plan">
      ${PLANS.map((p) => html`<option value="${p}" ${p === current ? html` selected` : ""}>${p}</option>`)}
    </select>`;
  const byName = async (name: string): Promise<Tenant> => {
    const t = await tenants.tenant(name);
    if (!t) throw new PageError(404, "No such tenant.");
    return t;
  };

  // --- tenants ---------------------------------------------------------------------------------

  const list = async (
    req: Request,
    res: Response,
    o: { error?: string; created?: { tenant: string; url: string | null } } = {},
  ): Promise<void> => {
    const all = await tenants.listTenants();
    const days = lastDays(30);
    const rows = await usage.since(null, days[0]!);
    const jobs = (id: string): number => rows.filter((r) => r.tenant_id === id).reduce((a, r) => a + r.jobs, 0);
    const csrf = hiddenCsrf(s(res));
    renderPage(req, res, ctx.signer, {
      title: "Tenants",
      session: s(res),
      path: "/dashboard/operator/tenants",
      status: o.error ? 422 : 200,
      ...(o.error ? { flash: { error: o.error } } : {}),
      body: html`${
          o.created
            ? html`<section class="card new-key">
                <h2>Created ${o.created.tenant}</h2>
                ${
                  o.created.url
                    ? html`<p>Owner invite link (works once, for 24 hours):</p>
                        <div class="copy-row">
                          <code id="invite-url" data-testid="invite-url">${o.created.url}</code
                          ><button type="button" data-copy="invite-url">Copy</button>
                        </div>`
                    : ""
                }
              </section>`
            : ""
        }
        <form method="post" action="/dashboard/operator/tenants" class="card row">
          ${csrf}
          <label for="t-name">Name</label
          ><input id="t-name" name="name" required maxlength="63" pattern="[a-z0-9]([a-z0-9-]*[a-z0-9])?" placeholder="acme" />
          <label for="t-plan">Plan</label>${planSelect("t-plan", "business")} <label for="t-owner">Owner e-mail (optional)</label
          ><input id="t-owner" name="owner" type="email" maxlength="254" />
          <button type="submit">Create tenant</button>
        </form>
        <table>
          <caption class="sr-only">
            Tenants
          </caption>
          <thead>
            <tr>
              <th scope="col">Tenant</th>
              <th scope="col">Plan</th>
              <th scope="col">State</th>
              <th scope="col">Jobs (30 days)</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            ${all.map(
              (t) =>
                html`<tr>
                  <td><a href="/dashboard/operator/tenants/${t.name}">${t.name}</a></td>
                  <td>${t.plan}</td>
                  <td>${suspended(t) ? html`<span class="badge bad">suspended</span>` : html`<span class="badge ok">active</span>`}</td>
                  <td>${jobs(t.id)}</td>
                  <td>${time(t.created_at)}</td>
                </tr>`,
            )}
          </tbody>
        </table>`,
    });
  };

  r.get("/tenants", (req, res) => list(req, res));

  r.post("/tenants", async (req, res) => {
    const name = field(req, "name").trim();
    const plan = field(req, "plan") as Plan;
    const owner = field(req, "owner").trim().toLowerCase();
    if (!TENANT_NAME.test(name))
      return list(req, res, { error: "A tenant name is 1 to 63 lower-case letters, digits and dashes (not at either end)." });
    if (!PLANS.includes(plan)) return list(req, res, { error: `Choose a plan: ${PLANS.join(", ")}.` });
    if (owner && !EMAIL.test(owner)) return list(req, res, { error: "The owner's e-mail address is not valid." });
    if (await tenants.tenant(name)) return list(req, res, { error: `A tenant named ${name} exists already.` });
    const { tenant: t } = await tenants.createTenant(name, plan);
    await record(req, res, "tenant.created", name, { plan });
    let url: string | null = null;
    if (owner) {
      url = (await invite(ctx.d.stores.users, ctx.d.publicUrl, { email: owner, tenantId: t.id, role: "owner" })).url;
      await record(req, res, "member.invited", owner, { tenant: name, role: "owner" });
    }
    await list(req, res, { created: { tenant: name, url } });
  });

  const detail = async (req: Request, res: Response, t: Tenant, o: { url?: string; error?: string } = {}): Promise<void> => {
    const liveKeys = (await tenants.listKeys(t.name)).filter((k) => k.revoked_at === null).length;
    const days = lastDays(30);
    const csrf = hiddenCsrf(s(res));
    renderPage(req, res, ctx.signer, {
      title: `Tenant ${t.name}`,
      session: s(res),
      path: "/dashboard/operator/tenants",
      status: o.error ? 422 : 200,
      ...(o.error ? { flash: { error: o.error } } : {}),
      body: html`${
          o.url
            ? html`<section class="card new-key">
                <h2>Owner invite link</h2>
                <div class="copy-row">
                  <code id="invite-url" data-testid="invite-url">${o.url}</code><button type="button" data-copy="invite-url">Copy</button>
                </div>
              </section>`
            : ""
        }
        <dl class="facts">
          <dt>Plan</dt>
          <dd>${t.plan}</dd>
          <dt>State</dt>
          <dd data-testid="tenant-state">${suspended(t) ? "suspended" : "active"}</dd>
          <dt>Members</dt>
          <dd>${(await ctx.d.stores.users.byTenant(t.id)).length}</dd>
          <dt>API keys</dt>
          <dd>${liveKeys} not revoked</dd>
        </dl>
        <div class="row">
          <form method="post" action="/dashboard/operator/tenants/${t.name}/plan" class="card row">
            ${csrf} <label for="plan">Plan</label>${planSelect("plan", t.plan)}<button type="submit" class="secondary">Change plan</button>
          </form>
          ${
            suspended(t)
              ? html`<form method="post" action="/dashboard/operator/tenants/${t.name}/resume" class="card">
                  ${csrf}<button type="submit">Resume tenant</button>
                </form>`
              : html`<form
                  method="post"
                  action="/dashboard/operator/tenants/${t.name}/suspend"
                  class="card"
                  data-confirm="Suspend ${t.name}? Its keys get 403 until it is resumed."
                >
                  ${csrf}<button type="submit" class="danger">Suspend tenant</button>
                </form>`
          }
          <form method="post" action="/dashboard/operator/tenants/${t.name}/invite" class="card row">
            ${csrf} <label for="owner-email">Invite an owner</label
            ><input id="owner-email" name="email" type="email" required maxlength="254" />
            <button type="submit" class="secondary">Invite</button>
          </form>
        </div>
        <section>
          <h2>Usage, last 30 days</h2>
          ${usageCharts({ days, rows: await usage.since(t.id, days[0]!) })}
        </section>`,
    });
  };

  r.get("/tenants/:name", async (req, res) => detail(req, res, await byName(param(req, "name"))));

  r.post("/tenants/:name/plan", async (req, res) => {
    const t = await byName(param(req, "name"));
    const plan = field(req, "plan") as Plan;
    if (!PLANS.includes(plan)) return detail(req, res, t, { error: `Choose a plan: ${PLANS.join(", ")}.` });
    await tenants.setPlan(t.name, plan);
    await record(req, res, "tenant.plan_changed", t.name, { from: t.plan, to: plan });
    redirectWith(res, ctx.signer, `/dashboard/operator/tenants/${t.name}`, { ok: `${t.name} is now on ${plan}.` });
  });

  for (const [action, value] of [
    ["suspend", true],
    ["resume", false],
  ] as const) {
    r.post(`/tenants/:name/${action}`, async (req, res) => {
      const t = await byName(param(req, "name"));
      await tenants.setSuspended(t.name, value);
      await record(req, res, value ? "tenant.suspended" : "tenant.resumed", t.name);
      redirectWith(res, ctx.signer, `/dashboard/operator/tenants/${t.name}`, {
        ok: value ? `${t.name} is suspended: its keys get 403 tenant_suspended.` : `${t.name} is active again.`,
      });
    });
  }

  r.post("/tenants/:name/invite", async (req, res) => {
    const t = await byName(param(req, "name"));
    const email = field(req, "email").trim().toLowerCase();
    if (!EMAIL.test(email)) return detail(req, res, t, { error: "Enter a valid e-mail address." });
    const inv = await invite(ctx.d.stores.users, ctx.d.publicUrl, { email, tenantId: t.id, role: "owner" });
    await record(req, res, "member.invited", email, { tenant: t.name, role: "owner" });
    await detail(req, res, t, { url: inv.url });
  });

  // --- access requests -------------------------------------------------------------------------

  const requests = async (
    req: Request,
    res: Response,
    o: { error?: string; approved?: { tenant: string; url: string } } = {},
  ): Promise<void> => {
    const csrf = hiddenCsrf(s(res));
    const all = await accessRequests.list();
    const pending = all.filter((a) => a.status === "pending");
    const decided = all
      .filter((a) => a.status !== "pending")
      .reverse()
      .slice(0, 50);
    renderPage(req, res, ctx.signer, {
      title: "Access requests",
      session: s(res),
      path: "/dashboard/operator/access-requests",
      status: o.error ? 422 : 200,
      ...(o.error ? { flash: { error: o.error } } : {}),
      body: html`${
          o.approved
            ? html`<section class="card new-key">
                <h2>Approved: tenant ${o.approved.tenant}</h2>
                <p>Send this owner invite link (works once, for 24 hours):</p>
                <div class="copy-row">
                  <code id="invite-url" data-testid="invite-url">${o.approved.url}</code
                  ><button type="button" data-copy="invite-url">Copy</button>
                </div>
              </section>`
            : ""
        }
        <h2>Pending (${pending.length})</h2>
        ${pending.length ? "" : html`<p class="muted">None.</p>`}
        ${pending.map(
          (a) =>
            html`<article class="card request" data-request="${a.id}">
              <h3>${a.company}</h3>
              <dl class="facts">
                <dt>E-mail</dt>
                <dd>${a.email}</dd>
                <dt>Use case</dt>
                <dd>${a.use_case}</dd>
                <dt>Volume</dt>
                <dd>${a.expected_monthly_volume} a month</dd>
                <dt>File types</dt>
                <dd>${a.file_types.join(", ")}</dd>
                <dt>DPA</dt>
                <dd>${a.needs_dpa ? "needed" : "no"}</dd>
                <dt>Asked</dt>
                <dd>${time(a.created_at)}</dd>
              </dl>
              <p class="description" data-testid="request-description">${a.description}</p>
              <div class="row">
                <form method="post" action="/dashboard/operator/access-requests/${a.id}/approve" class="row">
                  ${csrf}
                  <label for="tn-${a.id}">Tenant name</label>
                  <input id="tn-${a.id}" name="tenant" required maxlength="63" value="${suggestName(a.company)}" />
                  <button type="submit">Approve</button>
                </form>
                <form method="post" action="/dashboard/operator/access-requests/${a.id}/reject" data-confirm="Reject this request?">
                  ${csrf} <button type="submit" class="danger">Reject</button>
                </form>
              </div>
            </article>`,
        )}
        <h2>Decided</h2>
        <table>
          <caption class="sr-only">
            Decided requests
          </caption>
          <thead>
            <tr>
              <th scope="col">Company</th>
              <th scope="col">E-mail</th>
              <th scope="col">Decision</th>
              <th scope="col">When</th>
            </tr>
          </thead>
          <tbody>
            ${decided.map(
              (a) =>
                html`<tr>
                  <td>${a.company}</td>
                  <td>${a.email}</td>
                  <td>${a.status}</td>
                  <td>${time(a.decided_at)}</td>
                </tr>`,
            )}
          </tbody>
        </table>`,
    });
  };

  r.get("/access-requests", (req, res) => requests(req, res));

  r.post("/access-requests/:id/approve", async (req, res) => {
    const a = await accessRequests.get(param(req, "id"));
    if (!a || a.status !== "pending") return requests(req, res, { error: "That request was decided already." });
    const name = field(req, "tenant").trim();
    if (!TENANT_NAME.test(name)) return requests(req, res, { error: "A tenant name is 1 to 63 lower-case letters, digits and dashes." });
    if (await tenants.tenant(name)) return requests(req, res, { error: `A tenant named ${name} exists already; choose another name.` });
    const { tenant: t } = await tenants.createTenant(name, "business");
    if (!(await accessRequests.decide(a.id, "approved", t.id))) return requests(req, res, { error: "That request was decided already." });
    const inv = await invite(ctx.d.stores.users, ctx.d.publicUrl, { email: a.email, tenantId: t.id, role: "owner" });
    await record(req, res, "access_request.approved", a.id, { tenant: name, owner: a.email });
    await requests(req, res, { approved: { tenant: name, url: inv.url } });
  });

  r.post("/access-requests/:id/reject", async (req, res) => {
    if (!(await accessRequests.decide(param(req, "id"), "rejected", null)))
      return requests(req, res, { error: "That request was decided already." });
    await record(req, res, "access_request.rejected", param(req, "id"));
    redirectWith(res, ctx.signer, "/dashboard/operator/access-requests", { ok: "Rejected." });
  });

  // --- health ----------------------------------------------------------------------------------

  r.get("/health", async (req, res) => {
    const h = await ctx.d.health();
    renderPage(req, res, ctx.signer, {
      title: "Service health",
      session: s(res),
      path: "/dashboard/operator/health",
      body: html`<dl class="facts health" data-testid="health">
          <dt>Ready</dt>
          <dd>${h.ready ? html`<span class="badge ok">ready</span>` : html`<span class="badge bad">not ready</span>`}</dd>
          <dt>Queued jobs</dt>
          <dd data-testid="queued">${h.queued}</dd>
          <dt>Running jobs</dt>
          <dd data-testid="running">${h.running}</dd>
          <dt>Engines busy</dt>
          <dd>${h.engines ? `${h.engines.busy} of ${h.engines.size}` : "—"}</dd>
          <dt>Webhook backlog</dt>
          <dd data-testid="webhook-backlog">${h.webhookBacklog ?? "kept by the controller (see its metrics)"}</dd>
        </dl>
        <p class="muted">Refreshed when you load the page; the metrics endpoint has the history.</p>`,
    });
  });

  return r;
}

function suggestName(company: string): string {
  return (
    company
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 63)
      .replace(/-+$/, "") || "tenant"
  );
}
