/**
 * Usage: the plan and its limits, the rate-limit state of each active key right now, and 30 days
 * of jobs by operation and by outcome, pages and bytes processed, and p50/p95 durations — read
 * from the daily aggregates (api/store/usage.ts), since job records expire after an hour.
 */
import express, { type Router } from "express";
import { quantile, utcDay, type UsageRow } from "../../store/usage.ts";
import { stackedBars } from "../charts.ts";
import type { Ctx } from "../context.ts";
import { member, memberOf } from "../guards.ts";
import { bytes, html, type Html } from "../html.ts";
import { renderPage } from "../layout.ts";

const DAY = 86_400_000;

export interface UsageView {
  days: string[];
  rows: UsageRow[];
}

export function lastDays(n: number, now = Date.now()): string[] {
  return Array.from({ length: n }, (_, i) => utcDay(now - (n - 1 - i) * DAY));
}

/** Per-day sums of `value`, one series per distinct `by`. */
function seriesBy(v: UsageView, by: (r: UsageRow) => string, value: (r: UsageRow) => number): { name: string; values: number[] }[] {
  const names = [...new Set(v.rows.map(by))].sort();
  return names.map((name) => ({
    name,
    values: v.days.map((d) => v.rows.filter((r) => r.day === d && by(r) === name).reduce((a, r) => a + value(r), 0)),
  }));
}

function mergedHistogram(rows: UsageRow[]): number[] {
  const out: number[] = [];
  for (const r of rows) r.durations.forEach((n, i) => (out[i] = (out[i] ?? 0) + n));
  return out;
}

const ms = (v: number | null): string => (v === null ? "—" : v < 1000 ? `${v} ms` : `${(v / 1000).toFixed(1)} s`);

/** The charts and totals of a usage view (also used for one tenant on the operator pages). */
export function usageCharts(v: UsageView): Html {
  const total = (f: (r: UsageRow) => number): number => v.rows.reduce((a, r) => a + f(r), 0);
  const finished = v.rows.filter((r) => r.outcome !== "canceled");
  const p = (q: number): number | null => quantile(mergedHistogram(finished), q);
  const durations = v.days.map((d) => mergedHistogram(finished.filter((r) => r.day === d)));
  return html`<dl class="facts totals" data-testid="usage-totals">
      <dt>Jobs (30 days)</dt>
      <dd data-testid="usage-jobs">${total((r) => r.jobs)}</dd>
      <dt>Pages processed</dt>
      <dd data-testid="usage-pages">${total((r) => r.pages)}</dd>
      <dt>Bytes in / out</dt>
      <dd>${bytes(total((r) => r.bytes_in))} / ${bytes(total((r) => r.bytes_out))}</dd>
      <dt>Duration p50 / p95</dt>
      <dd data-testid="usage-p50-p95">${ms(p(0.5))} / ${ms(p(0.95))}</dd>
    </dl>
    <div class="charts">
      ${stackedBars(
        "Jobs per day by operation",
        v.days,
        seriesBy(
          v,
          (r) => r.operation,
          (r) => r.jobs,
        ),
      )}
      ${stackedBars(
        "Jobs per day by outcome",
        v.days,
        seriesBy(
          v,
          (r) => r.outcome,
          (r) => r.jobs,
        ),
      )}
      ${stackedBars("Pages processed per day", v.days, [{ name: "pages", values: v.days.map((d) => v.rows.filter((r) => r.day === d).reduce((a, r) => a + r.pages, 0)) }])}
      ${stackedBars("Kilobytes in per day", v.days, [{ name: "kB in", values: v.days.map((d) => Math.round(v.rows.filter((r) => r.day === d).reduce((a, r) => a + r.bytes_in, 0) / 1e3)) }], " kB")}
      ${stackedBars("p95 duration per day (seconds)", v.days, [{ name: "p95", values: durations.map((h) => (quantile(h, 0.95) ?? 0) / 1000) }], " s")}
    </div>`;
}

export function usageRouter(ctx: Ctx): Router {
  const r = express.Router();
  r.get("/usage", member(ctx), async (req, res) => {
    const m = memberOf(res);
    await ctx.d.collectUsage?.(m.tenant.id);
    const days = lastDays(30);
    const rows = await ctx.d.stores.usage.since(m.tenant.id, days[0]!);
    const limits = ctx.planLimits(m.tenant.plan);
    const policy = { perMinute: limits.requestsPerMinute, burst: limits.burst };
    const now = Date.now();
    const keys = (await ctx.d.tenants.listKeys(m.tenant.name)).filter(
      (k) => k.revoked_at === null && (k.expires_at === null || k.expires_at > now),
    );
    const labels = await ctx.d.stores.keyLabels.forTenant(m.tenant.id);
    const unfinished = await ctx.d.backend.countUnfinished(m.tenant.id);
    renderPage(req, res, ctx.signer, {
      title: "Usage",
      session: m.session,
      tenantName: m.tenant.name,
      path: "/dashboard/usage",
      body: html`<section>
          <h2>Plan: ${m.tenant.plan}</h2>
          ${limits.apiAccess ? "" : html`<p class="flash error">The ${m.tenant.plan} plan has no API access: keys answer 403 plan_required.</p>`}
          <dl class="facts">
            <dt>Requests</dt>
            <dd>${limits.requestsPerMinute} a minute per key, bursts of ${limits.burst}</dd>
            <dt>Unfinished jobs</dt>
            <dd>${unfinished} of ${limits.maxUnfinishedJobs}</dd>
            <dt>File size</dt>
            <dd>${bytes(limits.maxFileBytes)} per file, ${bytes(limits.maxRequestBytes)} per request</dd>
            <dt>Pages</dt>
            <dd>${limits.maxPages} per input; ${limits.maxMergeFiles} files per merge</dd>
            <dt>Retention</dt>
            <dd>${Math.round(limits.retentionMs / 60_000)} min after a job ends</dd>
          </dl>
        </section>
        <section>
          <h2>Rate limits now</h2>
          <table>
            <caption class="sr-only">
              Rate-limit state per key
            </caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Requests left in the bucket</th>
                <th scope="col">Full again in</th>
              </tr>
            </thead>
            <tbody>
              ${keys.map((k) => {
                const st = ctx.d.rateLimitState?.(k.key_id, policy) ?? null;
                return html`<tr>
                  <td>${labels.get(k.key_id)?.name ?? ""} <code>folio_sk_${k.key_id}_…</code></td>
                  <td>${st ? `${st.remaining} of ${policy.burst}` : `${policy.burst} of ${policy.burst} (unused)`}</td>
                  <td>${st ? `${st.resetSeconds} s` : "—"}</td>
                </tr>`;
              })}
            </tbody>
          </table>
          <p class="muted">As counted by the API replica that served this page.</p>
        </section>
        <section>
          <h2>Last 30 days</h2>
          ${usageCharts({ days, rows })}
        </section>`,
    });
  });
  return r;
}
