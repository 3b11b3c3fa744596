/**
 * API keys: list (name, prefix, created by whom, last used, status), create, rotate (the old key
 * keeps working for the grace period, shown as a countdown) and revoke. A new key is shown once,
 * in the response to the form that made it; Folio keeps only its hash. Viewers see the list
 * without actions, and the server refuses the actions to them.
 */
import express, { type Request, type Response, type Router } from "express";
import type { KeySummary } from "../tenants-port.ts";
import { clientAddress, type Ctx, param, field } from "../context.ts";
import { PageError } from "../errors.ts";
import { canManageKeys, member, memberOf, type Member } from "../guards.ts";
import { html, time, type Html } from "../html.ts";
import { hiddenCsrf, redirectWith, renderPage } from "../layout.ts";

const NAME = /^[\p{L}\p{N} ._-]{1,60}$/u;

function status(k: KeySummary, now: number): Html {
  if (k.revoked_at !== null) return html`<span class="badge bad">revoked</span>`;
  if (k.expires_at !== null && k.expires_at <= now) return html`<span class="badge bad">expired</span>`;
  if (k.expires_at !== null)
    return html`<span class="badge warn"
      >rotated · works for
      <span data-countdown="${new Date(k.expires_at).toISOString()}">${Math.ceil((k.expires_at - now) / 60_000)} min</span></span
    >`;
  return html`<span class="badge ok">active</span>`;
}

export function keysRouter(ctx: Ctx): Router {
  const r = express.Router();
  const { tenants } = ctx.d;
  const { keyLabels, audit } = ctx.d.stores;
  const writers = member(ctx, ["owner", "developer"]);

  const page = async (
    req: Request,
    res: Response,
    o: { newKey?: { key: string; name: string; note?: string }; error?: string } = {},
  ): Promise<void> => {
    const m = memberOf(res);
    const now = Date.now();
    const labels = await keyLabels.forTenant(m.tenant.id);
    const keys = (await tenants.listKeys(m.tenant.name)).reverse();
    const manage = canManageKeys(m.role);
    const csrf = hiddenCsrf(m.session);
    const shown = o.newKey
      ? html`<section class="card new-key" aria-labelledby="new-key-title">
          <h2 id="new-key-title">Your new key “${o.newKey.name}”</h2>
          <p>
            Copy it now: it is shown <strong>once</strong>. Folio keeps only a hash of it.${o.newKey.note ? html` ${o.newKey.note}` : ""}
          </p>
          <div class="copy-row">
            <code data-testid="new-api-key" id="new-api-key">${o.newKey.key}</code>
            <button type="button" data-copy="new-api-key">Copy</button>
          </div>
        </section>`
      : "";
    const rows = keys.map((k) => {
      const l = labels.get(k.key_id);
      const active = k.revoked_at === null && (k.expires_at === null || k.expires_at > now);
      return html`<tr>
        <td>${l?.name ?? html`<span class="muted">(unnamed)</span>`}</td>
        <td><code>folio_sk_${k.key_id}_…</code></td>
        <td>${time(k.created_at)}${l ? html`<br /><span class="muted">by ${l.created_by}</span>` : ""}</td>
        <td>${time(k.last_used_at)}</td>
        <td>${status(k, now)}</td>
        ${
          manage
            ? html`<td class="actions">
                ${
                  active && k.expires_at === null
                    ? html`<form method="post" action="/dashboard/keys/${k.key_id}/rotate" class="inline">
                        ${csrf}<button type="submit" class="secondary">Rotate</button>
                      </form>`
                    : ""
                }
                ${
                  k.revoked_at === null
                    ? html`<form
                        method="post"
                        action="/dashboard/keys/${k.key_id}/revoke"
                        class="inline"
                        data-confirm="Revoke this key? Requests with it fail at once."
                      >
                        ${csrf}<button type="submit" class="danger">Revoke</button>
                      </form>`
                    : ""
                }
              </td>`
            : ""
        }
      </tr>`;
    });
    renderPage(req, res, ctx.signer, {
      title: "API keys",
      session: m.session,
      tenantName: m.tenant.name,
      path: "/dashboard/keys",
      status: o.error ? 422 : 200,
      ...(o.error ? { flash: { error: o.error } } : {}),
      body: html`${shown}
        ${
          manage
            ? html`<form method="post" action="/dashboard/keys" class="card row">
                ${csrf}
                <label for="key-name">Name</label>
                <input id="key-name" name="name" required maxlength="60" placeholder="e.g. production invoices" />
                <button type="submit">Create key</button>
              </form>`
            : html`<p class="muted">Your role (${m.role}) can see the keys but not create, rotate or revoke them.</p>`
        }
        <table>
          <caption class="sr-only">
            API keys of ${m.tenant.name}
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              ${manage ? html`<th scope="col">Actions</th>` : ""}
            </tr>
          </thead>
          <tbody>
            ${
              rows.length
                ? rows
                : html`<tr>
                    <td colspan="6" class="muted">No keys yet.</td>
                  </tr>`
            }
          </tbody>
        </table>
        <p class="muted">
          Rotating keeps the old key working for ${Math.round(ctx.d.config.FOLIO_KEY_ROTATION_GRACE_SECONDS / 3600)} h so your systems can
          switch; revoking stops it at once.
        </p>`,
    });
  };

  const record = async (req: Request, m: Member, action: string, target: string, detail: Record<string, unknown> = {}): Promise<void> =>
    await audit.record({
      tenant_id: m.tenant.id,
      actor: m.session.user.email,
      action,
      target,
      detail,
      address: clientAddress(req, ctx.d.config.FOLIO_TRUST_PROXY),
    });

  const ownKey = async (m: Member, keyId: string): Promise<KeySummary> => {
    const k = await tenants.key(keyId);
    if (!k || k.tenant !== m.tenant.name) throw new PageError(404, "No such key.");
    return k;
  };

  r.get("/keys", member(ctx), (req, res) => page(req, res));

  r.post("/keys", writers, async (req, res) => {
    const m = memberOf(res);
    const name = field(req, "name").trim();
    if (!NAME.test(name))
      return page(req, res, { error: "Give the key a name of 1 to 60 letters, digits, spaces, dots, dashes or underscores." });
    const k = await tenants.createKey(m.tenant.name);
    await keyLabels.set({ key_id: k.key_id, tenant_id: m.tenant.id, name, created_by: m.session.user.email, replaces: null });
    await record(req, m, "key.created", k.key_id, { name });
    await page(req, res, { newKey: { key: k.key, name } });
  });

  r.post("/keys/:id/rotate", writers, async (req, res) => {
    const m = memberOf(res);
    const old = await ownKey(m, param(req, "id"));
    if (old.revoked_at !== null || (old.expires_at !== null && old.expires_at <= Date.now()))
      return redirectWith(res, ctx.signer, "/dashboard/keys", { error: "Only an active key can be rotated." });
    const graceMs = ctx.d.config.FOLIO_KEY_ROTATION_GRACE_SECONDS * 1000;
    const k = await tenants.rotateKey(old.key_id, graceMs);
    const name = (await keyLabels.forTenant(m.tenant.id)).get(old.key_id)?.name ?? "rotated key";
    await keyLabels.set({ key_id: k.key_id, tenant_id: m.tenant.id, name, created_by: m.session.user.email, replaces: old.key_id });
    await record(req, m, "key.rotated", old.key_id, {
      new_key_id: k.key_id,
      old_valid_until: new Date(k.previous_expires_at).toISOString(),
    });
    await page(req, res, {
      newKey: { key: k.key, name, note: `The old key folio_sk_${old.key_id}_… keeps working for the grace period.` },
    });
  });

  r.post("/keys/:id/revoke", writers, async (req, res) => {
    const m = memberOf(res);
    const k = await ownKey(m, param(req, "id"));
    if (!(await tenants.revokeKey(k.key_id)))
      return redirectWith(res, ctx.signer, "/dashboard/keys", { error: "That key was already revoked." });
    await record(req, m, "key.revoked", k.key_id);
    redirectWith(res, ctx.signer, "/dashboard/keys", { ok: `Revoked folio_sk_${k.key_id}_…; requests with it now fail.` });
  });

  return r;
}
