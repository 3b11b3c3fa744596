/**
 * Webhooks: the signing secret's state (the secret itself is shown once, when it is made),
 * rotation (the previous secret keeps signing during the grace period, shown as a countdown), and
 * a signed test event sent at once to a URL of the tenant's choice, through the same SSRF guard
 * as every delivery.
 */
import express, { type Request, type Response, type Router } from "express";
import { clientAddress, type Ctx, field } from "../context.ts";
import { canManageKeys, member, memberOf } from "../guards.ts";
import { type Html, html, time } from "../html.ts";
import { hiddenCsrf, renderPage } from "../layout.ts";

export function webhooksRouter(ctx: Ctx): Router {
  const r = express.Router();
  const writers = member(ctx, ["owner", "developer"]);

  const page = async (req: Request, res: Response, o: PageOptions = {}): Promise<void> => {
    const m = memberOf(res);
    const current = await ctx.d.tenants.webhookSecret(m.tenant.name);
    const rotated = (await ctx.d.stores.audit.list(m.tenant.id, 200)).find((e) => e.action === "webhook_secret.rotated");
    const prevUntil = typeof rotated?.detail.previous_valid_until === "string" ? Date.parse(rotated.detail.previous_valid_until) : null;
    const manage = canManageKeys(m.role);
    const csrf = hiddenCsrf(m.session);
    renderPage(req, res, ctx.signer, {
      title: "Webhooks",
      session: m.session,
      tenantName: m.tenant.name,
      path: "/dashboard/webhooks",
      status: o.error ? 422 : 200,
      ...(o.error ? { flash: { error: o.error } } : {}),
      body: html`${o.secret ? newSecretCard(o.secret) : ""} ${signingSecretSection(current, prevUntil, manage ? csrf : null, m.role)}
      ${manage ? testEventSection(csrf, o) : ""}`,
    });
  };

  r.get("/webhooks", member(ctx), (req, res) => page(req, res));

  r.post("/webhooks/rotate", writers, async (req, res) => {
    const m = memberOf(res);
    const t = await ctx.d.tenants.rotateWebhookSecret(m.tenant.name, ctx.d.config.FOLIO_KEY_ROTATION_GRACE_SECONDS * 1000);
    await ctx.d.stores.audit.record({
      tenant_id: m.tenant.id,
      actor: m.session.user.email,
      action: "webhook_secret.rotated",
      target: m.tenant.name,
      detail: { previous_valid_until: new Date(t.previous_valid_until).toISOString() },
      address: clientAddress(req, ctx.d.config.FOLIO_TRUST_PROXY),
    });
    await page(req, res, { secret: t.webhook_secret });
  });

  r.post("/webhooks/test", writers, async (req, res) => {
    const m = memberOf(res);
    const url = field(req, "url").trim();
    let parsed: URL | null = null;
    try {
      parsed = new URL(url);
    } catch {
      parsed = null;
    }
    if (!parsed || parsed.protocol !== "https:" || url.length > 2048)
      return page(req, res, { error: "Enter an https URL (at most 2048 characters).", url: url.slice(0, 2048) });
    const result = await ctx.d.sendTestWebhook(m.tenant, url);
    await ctx.d.stores.audit.record({
      tenant_id: m.tenant.id,
      actor: m.session.user.email,
      action: "webhook.test_sent",
      target: parsed.host,
      detail: { status: result.status },
      address: clientAddress(req, ctx.d.config.FOLIO_TRUST_PROXY),
    });
    await page(req, res, { test: { url, ...result }, url });
  });

  return r;
}

interface TestResult {
  url: string;
  status: number | null;
  latencyMs: number;
  error: string | null;
}

interface PageOptions {
  secret?: string;
  test?: TestResult;
  error?: string;
  url?: string;
}

/** The secret just made, shown once. */
function newSecretCard(secret: string): Html {
  return html`<section class="card new-key">
    <h2>Your new signing secret</h2>
    <p>Copy it now: it is shown <strong>once</strong>. The previous secret also signs for the grace period, so receivers can switch.</p>
    <div class="copy-row">
      <code id="new-secret" data-testid="new-webhook-secret">${secret}</code><button type="button" data-copy="new-secret">Copy</button>
    </div>
  </section>`;
}

/** The current secret's tail, the previous one's countdown while it still signs, and the rotate form (null csrf: the role may not rotate). */
function signingSecretSection(current: string, prevUntil: number | null, csrf: Html | null, role: string): Html {
  const prevValid = prevUntil !== null && prevUntil > Date.now();
  return html`<section>
    <h2>Signing secret</h2>
    <p>
      Each webhook is signed with your secret (Standard Webhooks: <code>webhook-signature: v1,…</code>); any receiver using the
      <code>standardwebhooks</code> library verifies it.
    </p>
    <p>
      Current secret: <code>whsec_…${current.slice(-4)}</code>${
        prevValid
          ? html` · the previous one also signs for
              <span data-countdown="${new Date(prevUntil).toISOString()}">${time(prevUntil)}</span>`
          : ""
      }
    </p>
    ${
      csrf
        ? html`<form
            method="post"
            action="/dashboard/webhooks/rotate"
            data-confirm="Make a new signing secret? The current one keeps signing for the grace period."
          >
            ${csrf}<button type="submit">Rotate signing secret</button>
          </form>`
        : html`<p class="muted">Your role (${role}) cannot rotate the secret or send test events.</p>`
    }
  </section>`;
}

/** The test-event form, with the last test's outcome when there is one. */
function testEventSection(csrf: Html, o: PageOptions): Html {
  return html`<section>
    <h2>Send a test event</h2>
    <form method="post" action="/dashboard/webhooks/test" class="card row">
      ${csrf}
      <label for="test-url">Receiver URL (https)</label>
      <input
        id="test-url"
        name="url"
        type="url"
        required
        maxlength="2048"
        placeholder="https://example.com/folio-hooks"
        value="${o.url ?? ""}"
      />
      <button type="submit" class="secondary">Send test event</button>
    </form>
    ${o.test ? testOutcome(o.test) : ""}
  </section>`;
}

function testOutcome(t: TestResult): Html {
  return html`<p role="status" data-testid="test-result" class="flash ${t.status !== null && t.status < 300 ? "ok" : "error"}">
    ${t.status !== null ? `HTTP ${t.status}` : "No answer"} in ${t.latencyMs} ms${t.error ? html` — ${t.error}` : ""}
  </p>`;
}
