/** The audit log: who did what to keys, secrets and members (and operators to tenants), as a page and as JSON. */
import express, { type Request, type Response, type Router } from "express";
import type { AuditEntry } from "../../store/audit.ts";
import type { Ctx } from "../context.ts";
import { member, memberOf, operator } from "../guards.ts";
import { html, time } from "../html.ts";
import { renderPage } from "../layout.ts";
import type { Session } from "../sessions.ts";

const LIMIT = 1000;

export const auditJson = (e: AuditEntry): Record<string, unknown> => ({
  time: new Date(e.at).toISOString(),
  actor: e.actor,
  action: e.action,
  target: e.target,
  detail: e.detail,
  address: e.address,
});

function page(
  ctx: Ctx,
  req: Request,
  res: Response,
  entries: AuditEntry[],
  o: { session: Session; tenantName?: string; path: string; exportHref: string },
): void {
  renderPage(req, res, ctx.signer, {
    title: "Audit log",
    session: o.session,
    ...(o.tenantName ? { tenantName: o.tenantName } : {}),
    path: o.path,
    body: html`<p>
        <a class="button secondary" href="${o.exportHref}" download>Export as JSON</a>
        <span class="muted">The latest ${LIMIT} entries.</span>
      </p>
      <table>
        <caption class="sr-only">
          Audit log
        </caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Who</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">Details</th>
            <th scope="col">Address</th>
          </tr>
        </thead>
        <tbody>
          ${
            entries.length
              ? entries.map(
                  (e) =>
                    html`<tr>
                      <td>${time(e.at)}</td>
                      <td>${e.actor}</td>
                      <td><code>${e.action}</code></td>
                      <td>${e.target ?? ""}</td>
                      <td>${Object.keys(e.detail).length ? html`<code>${JSON.stringify(e.detail)}</code>` : ""}</td>
                      <td>${e.address ?? ""}</td>
                    </tr>`,
                )
              : html`<tr>
                  <td colspan="6" class="muted">Nothing yet.</td>
                </tr>`
          }
        </tbody>
      </table>`,
  });
}

export function auditRouter(ctx: Ctx): Router {
  const r = express.Router();
  const { audit } = ctx.d.stores;
  const readers = member(ctx, ["owner", "developer"]);

  r.get("/audit", readers, async (req, res) => {
    const m = memberOf(res);
    page(ctx, req, res, await audit.list(m.tenant.id, LIMIT), {
      session: m.session,
      tenantName: m.tenant.name,
      path: "/dashboard/audit",
      exportHref: "/dashboard/audit.json",
    });
  });
  r.get("/audit.json", readers, async (_req, res) => {
    const m = memberOf(res);
    res.setHeader("Content-Disposition", `attachment; filename="folio-audit-${m.tenant.name}.json"`);
    res.json({
      tenant: m.tenant.name,
      exported_at: new Date().toISOString(),
      entries: (await audit.list(m.tenant.id, LIMIT)).map(auditJson),
    });
  });
  r.get("/operator/audit", operator, async (req, res) => {
    page(ctx, req, res, await audit.list(null, LIMIT), {
      session: res.locals.session as Session,
      path: "/dashboard/operator/audit",
      exportHref: "/dashboard/operator/audit.json",
    });
  });
  r.get("/operator/audit.json", operator, async (_req, res) => {
    res.setHeader("Content-Disposition", 'attachment; filename="folio-audit.json"');
    res.json({ exported_at: new Date().toISOString(), entries: (await audit.list(null, LIMIT)).map(auditJson) });
  });
  return r;
}
