/**
 * Jobs: a list filtered by status, operation and date that updates itself (the page's script
 * polls /dashboard/jobs.json with the same filters), and a page per job with its inputs, options
 * (passwords are never in a job record; anything secret-looking is hidden anyway), metadata,
 * outputs to download, the error code linked to its documentation and every webhook attempt with
 * "redeliver".
 */
import express, { type Request, type Router } from "express";
import { JOB_STATUSES, type JobObject } from "../../../core/schemas/api.ts";
import { OPERATIONS } from "../../../core/schemas/options.ts";
import { clientAddress, type Ctx, param } from "../context.ts";
import { PageError } from "../errors.ts";
import { canManageKeys, member, memberOf } from "../guards.ts";
import { bytes, html, time, type Html } from "../html.ts";
import { hiddenCsrf, redirectWith, renderPage } from "../layout.ts";

const DAY = 86_400_000;

interface Filters {
  status?: string;
  operation?: string;
  from?: string;
  to?: string;
}

function filtersOf(req: Request): Filters {
  const q = req.query as Record<string, unknown>;
  const pick = (v: unknown, ok: (s: string) => boolean): string | undefined => (typeof v === "string" && v && ok(v) ? v : undefined);
  const date = (s: string): boolean => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s));
  const f: Filters = {};
  const status = pick(q.status, (s) => (JOB_STATUSES as readonly string[]).includes(s));
  const operation = pick(q.operation, (s) => (OPERATIONS as readonly string[]).includes(s));
  const from = pick(q.from, date);
  const to = pick(q.to, date);
  if (status) f.status = status;
  if (operation) f.operation = operation;
  if (from) f.from = from;
  if (to) f.to = to;
  return f;
}

async function listJobs(ctx: Ctx, tenantId: string, f: Filters): Promise<JobObject[]> {
  const from = f.from ? Date.parse(f.from) : -Infinity;
  const to = f.to ? Date.parse(f.to) + DAY : Infinity;
  const out: JobObject[] = [];
  let after: string | undefined;
  // Newest first; at most 5 pages of 100 (records live an hour after a job ends).
  for (let i = 0; i < 5 && out.length < 100; i++) {
    const page = await ctx.d.backend.listJobs(tenantId, {
      limit: 100,
      ...(f.status ? { status: f.status as JobObject["status"] } : {}),
      ...(f.operation ? { operation: f.operation as JobObject["operation"] } : {}),
      ...(after ? { startingAfter: after } : {}),
    });
    for (const j of page.data) {
      const t = Date.parse(j.created_at);
      if (t >= from && t < to) out.push(j);
    }
    const last = page.data.at(-1);
    if (!page.has_more || !last || Date.parse(last.created_at) < from) break;
    after = last.id;
  }
  return out.slice(0, 100);
}

/** The row the page and jobs.json both describe (the script builds the same cells from JSON). */
const summary = (j: JobObject) => ({
  id: j.id,
  operation: j.operation,
  status: j.status,
  created_at: j.created_at,
  inputs: j.inputs.map((i) => i.filename).join(", "),
  error: j.error?.code ?? null,
});

export const SECRETISH = /pass|secret|token|key/i;

function statusBadge(s: string): Html {
  const cls =
    s === "succeeded" || s === "delivered" ? "ok" : s === "failed" || s === "gave_up" ? "bad" : s === "canceled" ? "muted" : "warn";
  return html`<span class="badge ${cls}">${s}</span>`;
}

export function jobsRouter(ctx: Ctx): Router {
  const r = express.Router();
  const { backend } = ctx.d;

  r.get("/jobs", member(ctx), async (req, res) => {
    const m = memberOf(res);
    const f = filtersOf(req);
    const jobs = await listJobs(ctx, m.tenant.id, f);
    const option = (value: string, current: string | undefined): Html =>
      html`<option value="${value}" ${value === (current ?? "") ? html` selected` : ""}>${value || "any"}</option>`;
    renderPage(req, res, ctx.signer, {
      title: "Jobs",
      session: m.session,
      tenantName: m.tenant.name,
      path: "/dashboard/jobs",
      body: html`<form method="get" action="/dashboard/jobs" class="filters row" aria-label="Filter jobs">
          <label for="f-status">Status</label>
          <select id="f-status" name="status">
            ${["", ...JOB_STATUSES].map((s) => option(s, f.status))}
          </select>
          <label for="f-operation">Operation</label>
          <select id="f-operation" name="operation">
            ${["", ...OPERATIONS].map((s) => option(s, f.operation))}
          </select>
          <label for="f-from">From</label><input id="f-from" type="date" name="from" value="${f.from ?? ""}" /> <label for="f-to">To</label
          ><input id="f-to" type="date" name="to" value="${f.to ?? ""}" />
          <button type="submit" class="secondary">Filter</button>
        </form>
        <p class="muted" aria-live="polite">
          <span data-live-status>This list updates by itself.</span> Job records are kept
          ${Math.round(ctx.d.config.FOLIO_RETENTION_SECONDS / 60)} min after a job ends; the Usage page keeps the totals.
        </p>
        <table data-live-jobs="/dashboard/jobs.json${req.url.includes("?") ? req.url.slice(req.url.indexOf("?")) : ""}">
          <caption class="sr-only">
            Jobs
          </caption>
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">Operation</th>
              <th scope="col">Status</th>
              <th scope="col">Inputs</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            ${
              jobs.length
                ? jobs.map(
                    (j) =>
                      html`<tr data-job="${j.id}">
                        <td><a href="/dashboard/jobs/${j.id}">${j.id}</a></td>
                        <td>${j.operation}</td>
                        <td>${statusBadge(j.status)}${j.error ? html` <code>${j.error.code}</code>` : ""}</td>
                        <td>${j.inputs.map((i) => i.filename).join(", ")}</td>
                        <td>${time(Date.parse(j.created_at))}</td>
                      </tr>`,
                  )
                : html`<tr>
                    <td colspan="5" class="muted">No jobs match.</td>
                  </tr>`
            }
          </tbody>
        </table>`,
    });
  });

  r.get("/jobs.json", member(ctx), async (req, res) => {
    const jobs = await listJobs(ctx, memberOf(res).tenant.id, filtersOf(req));
    res.json({ data: jobs.map(summary) });
  });

  r.get("/jobs/:id", member(ctx), async (req, res) => {
    const m = memberOf(res);
    const j = await backend.getJob(m.tenant.id, param(req, "id"));
    if (!j) throw new PageError(404, "No such job: it may have expired (records are kept for a while after a job ends) or been deleted.");
    const hooks = await ctx.d.stores.attempts?.forJob(m.tenant.id, j.id);
    const manage = canManageKeys(m.role);
    const options = Object.entries(j.options).filter(([k]) => !SECRETISH.test(k));
    const figures = j.result ? Object.entries(j.result).filter(([k]) => k !== "files") : [];
    renderPage(req, res, ctx.signer, {
      title: `Job ${j.id}`,
      session: m.session,
      tenantName: m.tenant.name,
      path: "/dashboard/jobs",
      body: html`<dl class="facts">
          <dt>Operation</dt>
          <dd>${j.operation}</dd>
          <dt>Status</dt>
          <dd data-testid="job-status">${statusBadge(j.status)}</dd>
          <dt>Created</dt>
          <dd>${time(Date.parse(j.created_at))}</dd>
          <dt>Started</dt>
          <dd>${time(j.started_at ? Date.parse(j.started_at) : null)}</dd>
          <dt>Completed</dt>
          <dd>${time(j.completed_at ? Date.parse(j.completed_at) : null)}</dd>
          <dt>Expires</dt>
          <dd>${time(j.expires_at ? Date.parse(j.expires_at) : null)}</dd>
        </dl>
        ${
          j.error
            ? html`<section class="card error-box">
                <h2>Error</h2>
                <p>
                  <a href="/docs#job-error-${j.error.code}"><code>${j.error.code}</code></a
                  >: ${j.error.message}
                </p>
              </section>`
            : ""
        }
        <section>
          <h2>Inputs</h2>
          <table>
            <caption class="sr-only">
              Inputs
            </caption>
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">Size</th>
                <th scope="col">Pages</th>
              </tr>
            </thead>
            <tbody>
              ${j.inputs.map(
                (i) =>
                  html`<tr>
                    <td data-testid="input-filename">${i.filename}</td>
                    <td>${bytes(i.size)}</td>
                    <td>${i.pages ?? "—"}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
        </section>
        <section>
          <h2>Options</h2>
          ${
            options.length
              ? html`<dl class="facts">
                  ${options.map(
                    ([k, v]) =>
                      html`<dt>${k}</dt>
                        <dd><code>${JSON.stringify(v)}</code></dd>`,
                  )}
                </dl>`
              : html`<p class="muted">Defaults.</p>`
          }
          <p class="muted">Passwords are never stored with a job and never shown.</p>
        </section>
        <section>
          <h2>Metadata</h2>
          ${
            Object.keys(j.metadata).length
              ? html`<dl class="facts" data-testid="metadata">
                  ${Object.entries(j.metadata).map(
                    ([k, v]) =>
                      html`<dt>${k}</dt>
                        <dd>${v}</dd>`,
                  )}
                </dl>`
              : html`<p class="muted">None.</p>`
          }
        </section>
        <section>
          <h2>Outputs</h2>
          ${
            j.result?.files.length
              ? html`<ul>
                  ${j.result.files.map(
                    (f) =>
                      html`<li>
                        <a href="/dashboard/jobs/${j.id}/files/${f.id}" download>${f.filename}</a>
                        <span class="muted">${bytes(f.size)}${f.pages !== null ? html`, ${f.pages} pages` : ""}</span>
                      </li>`,
                  )}
                </ul>`
              : html`<p class="muted">${j.status === "succeeded" ? "The outputs have expired." : "None yet."}</p>`
          }
          ${
            figures.length
              ? html`<dl class="facts">
                  ${figures.map(
                    ([k, v]) =>
                      html`<dt>${k}</dt>
                        <dd>${JSON.stringify(v)}</dd>`,
                  )}
                </dl>`
              : ""
          }
        </section>
        <section>
          <h2>Webhook</h2>
          ${webhookSection(j, hooks, manage ? hiddenCsrf(m.session) : null)}
        </section>`,
    });
  });

  r.get("/jobs/:id/files/:fileId", member(ctx), async (req, res) => {
    const m = memberOf(res);
    const j = await backend.getJob(m.tenant.id, param(req, "id"));
    if (!j?.result?.files.some((f) => f.id === param(req, "fileId"))) throw new PageError(404, "No such output.");
    const content = await backend.openFile(m.tenant.id, param(req, "fileId"));
    if (!content) throw new PageError(404, "This output has expired.");
    const ascii = content.file.filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
    res.setHeader("Content-Type", content.file.content_type);
    res.setHeader("Content-Length", String(content.file.size));
    res.setHeader("Content-Disposition", `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(content.file.filename)}`);
    content.body.on("error", () => res.destroy());
    content.body.pipe(res);
  });

  r.post("/jobs/:id/deliveries/:delivery/redeliver", member(ctx, ["owner", "developer"]), async (req, res) => {
    const m = memberOf(res);
    const ok = (await ctx.d.stores.attempts?.redeliver(m.tenant.id, param(req, "id"), param(req, "delivery"))) ?? false;
    if (ok)
      await ctx.d.stores.audit.record({
        tenant_id: m.tenant.id,
        actor: m.session.user.email,
        action: "webhook.redelivered",
        target: param(req, "delivery"),
        detail: { job: param(req, "id") },
        address: clientAddress(req, ctx.d.config.FOLIO_TRUST_PROXY),
      });
    redirectWith(
      res,
      ctx.signer,
      `/dashboard/jobs/${encodeURIComponent(param(req, "id"))}`,
      ok
        ? { ok: "Queued again: it is sent within seconds, with the same webhook-id." }
        : { error: "Only a delivered or abandoned webhook can be sent again; one being retried is sent on its schedule." },
    );
  });

  return r;
}

function webhookSection(
  j: JobObject,
  hooks: Awaited<ReturnType<NonNullable<Ctx["d"]["stores"]["attempts"]>["forJob"]>> | undefined,
  csrf: Html | null,
): Html {
  if (!j.webhook) return html`<p class="muted">This job has no webhook URL.</p>`;
  const head = html`<p><code>${j.webhook.url}</code> · ${statusBadge(j.webhook.status)} · ${j.webhook.attempts} attempt(s)</p>`;
  if (!hooks)
    return html`${head}
      <p class="muted">Attempts are recorded by the controller in the PdfJob's status.</p>`;
  return html`${head}${hooks.deliveries.map((d) => {
    const attempts = hooks.attempts.filter((a) => a.delivery_id === d.id);
    return html`<h3>${d.event_type} <span class="muted">(${d.id})</span></h3>
      <table>
        <caption class="sr-only">
          Attempts of ${d.id}
        </caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">HTTP status</th>
            <th scope="col">Latency</th>
            <th scope="col">Error</th>
            <th scope="col">Next retry</th>
          </tr>
        </thead>
        <tbody>
          ${attempts.map(
            (a) =>
              html`<tr>
                <td>${time(a.at)}</td>
                <td>${a.status_code ?? "—"}</td>
                <td>${a.latency_ms !== null ? `${a.latency_ms} ms` : "—"}</td>
                <td>${a.error ?? ""}</td>
                <td>${time(a.next_attempt_at)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${
        // Kubernetes mode keeps the last few attempts in the PdfJob's status (RECENT_ATTEMPTS_MAX).
        attempts.length < d.attempts ? html`<p class="muted">The last ${attempts.length} of ${d.attempts} attempts.</p>` : ""
      }
      ${
        csrf && (d.status === "delivered" || d.status === "gave_up")
          ? html`<form method="post" action="/dashboard/jobs/${j.id}/deliveries/${d.id}/redeliver">
              ${csrf}<button type="submit" class="secondary">Redeliver</button>
            </form>`
          : ""
      }`;
  })}`;
}
