/**
 * Members of the tenant: everyone sees who is in it; owners invite (a one-time link, e-mailed when
 * SMTP is set up, shown on the page in any case), change roles and remove people. A tenant always
 * keeps at least one owner.
 */
import express, { type Request, type Response, type Router } from "express";
import { TENANT_ROLES, type TenantRole, type User } from "../../store/users.ts";
import { clientAddress, type Ctx, param, field } from "../context.ts";
import { PageError } from "../errors.ts";
import { member, memberOf, type Member } from "../guards.ts";
import { html, time } from "../html.ts";
import { EMAIL, invite } from "../invites.ts";
import { hiddenCsrf, redirectWith, renderPage } from "../layout.ts";

export function membersRouter(ctx: Ctx): Router {
  const r = express.Router();
  const { users, audit } = ctx.d.stores;
  const owners = member(ctx, ["owner"]);

  const record = async (req: Request, m: Member, action: string, target: string, detail: Record<string, unknown> = {}): Promise<void> =>
    await audit.record({
      tenant_id: m.tenant.id,
      actor: m.session.user.email,
      action,
      target,
      detail,
      address: clientAddress(req, ctx.d.config.FOLIO_TRUST_PROXY),
    });

  const page = async (
    req: Request,
    res: Response,
    o: { link?: { email: string; url: string; mailed: boolean }; error?: string } = {},
  ): Promise<void> => {
    const m = memberOf(res);
    const people = await users.byTenant(m.tenant.id);
    const isOwner = m.role === "owner";
    const csrf = hiddenCsrf(m.session);
    const roleSelect = (id: string, current: string): ReturnType<typeof html> =>
      html`<select id="${id}" name="role">
        ${TENANT_ROLES.map((r) => html`<option value="${r}" ${r === current ? html` selected` : ""}>${r}</option>`)}
      </select>`;
    renderPage(req, res, ctx.signer, {
      title: "Members",
      session: m.session,
      tenantName: m.tenant.name,
      path: "/dashboard/members",
      status: o.error ? 422 : 200,
      ...(o.error ? { flash: { error: o.error } } : {}),
      body: html`${
          o.link
            ? html`<section class="card new-key">
                <h2>Invite link for ${o.link.email}</h2>
                <p>${o.link.mailed ? "We e-mailed it too. " : ""}It works once, for 24 hours. Send it to them by a channel you trust.</p>
                <div class="copy-row">
                  <code id="invite-url" data-testid="invite-url">${o.link.url}</code
                  ><button type="button" data-copy="invite-url">Copy</button>
                </div>
              </section>`
            : ""
        }
        ${
          isOwner
            ? html`<form method="post" action="/dashboard/members" class="card row">
                ${csrf}
                <label for="invite-email">E-mail</label><input id="invite-email" name="email" type="email" required maxlength="254" />
                <label for="invite-role">Role</label>${roleSelect("invite-role", "developer")}
                <button type="submit">Invite</button>
              </form>`
            : ""
        }
        <table>
          <caption class="sr-only">
            Members of ${m.tenant.name}
          </caption>
          <thead>
            <tr>
              <th scope="col">E-mail</th>
              <th scope="col">Role</th>
              <th scope="col">Two-factor</th>
              <th scope="col">Last sign-in</th>
              ${isOwner ? html`<th scope="col">Actions</th>` : ""}
            </tr>
          </thead>
          <tbody>
            ${people.map(
              (u: User) =>
                html`<tr>
                  <td>${u.email}${u.password_hash === null && !u.oidc_subject ? html` <span class="badge warn">invited</span>` : ""}</td>
                  <td>${u.role}</td>
                  <td>${u.totp_secret ? "on" : u.oidc_subject ? "identity provider" : "off"}</td>
                  <td>${time(u.last_login_at)}</td>
                  ${
                    isOwner
                      ? html`<td class="actions">
                          <form method="post" action="/dashboard/members/${u.id}/role" class="inline">
                            ${csrf}
                            <label class="sr-only" for="role-${u.id}">Role of ${u.email}</label>${roleSelect(`role-${u.id}`, u.role)}
                            <button type="submit" class="secondary">Change</button>
                          </form>
                          <form
                            method="post"
                            action="/dashboard/members/${u.id}/remove"
                            class="inline"
                            data-confirm="Remove this member? Their sessions end at once."
                          >
                            ${csrf} <button type="submit" class="danger">Remove</button>
                          </form>
                        </td>`
                      : ""
                  }
                </tr>`,
            )}
          </tbody>
        </table>
        <p class="muted">Owners manage members; developers manage keys and webhooks; viewers see everything but change nothing.</p>`,
    });
  };

  const target = async (m: Member, id: string): Promise<User> => {
    const u = await users.byId(id);
    if (!u || u.tenant_id !== m.tenant.id || u.disabled_at !== null) throw new PageError(404, "No such member.");
    return u;
  };
  const lastOwner = async (m: Member, u: User): Promise<boolean> =>
    u.role === "owner" && (await users.byTenant(m.tenant.id)).filter((x) => x.role === "owner").length === 1;

  r.get("/members", member(ctx), (req, res) => page(req, res));

  r.post("/members", owners, async (req, res) => {
    const m = memberOf(res);
    const email = field(req, "email").trim().toLowerCase();
    const role = field(req, "role") as TenantRole;
    if (!EMAIL.test(email)) return page(req, res, { error: "Enter a valid e-mail address." });
    if (!TENANT_ROLES.includes(role)) return page(req, res, { error: "Choose owner, developer or viewer." });
    const inv = await invite(users, ctx.d.publicUrl, { email, tenantId: m.tenant.id, role });
    await record(req, m, "member.invited", email, { role });
    let mailed = false;
    if (ctx.d.mailer) {
      try {
        await ctx.d.mailer.sendInvite(email, inv.url, `the tenant ${m.tenant.name}`);
        mailed = true;
      } catch (err) {
        ctx.d.log.warn({ err }, "Could not e-mail an invite");
      }
    }
    await page(req, res, { link: { email, url: inv.url, mailed } });
  });

  r.post("/members/:id/role", owners, async (req, res) => {
    const m = memberOf(res);
    const u = await target(m, param(req, "id"));
    const role = field(req, "role") as TenantRole;
    if (!TENANT_ROLES.includes(role)) return page(req, res, { error: "Choose owner, developer or viewer." });
    if (role !== "owner" && (await lastOwner(m, u)))
      return page(req, res, { error: "A tenant needs at least one owner; make someone else owner first." });
    await users.setRole(u.id, role);
    await record(req, m, "member.role_changed", u.email, { from: u.role, to: role });
    redirectWith(res, ctx.signer, "/dashboard/members", { ok: `${u.email} is now ${role}.` });
  });

  r.post("/members/:id/remove", owners, async (req, res) => {
    const m = memberOf(res);
    const u = await target(m, param(req, "id"));
    if (await lastOwner(m, u)) return page(req, res, { error: "A tenant needs at least one owner; make someone else owner first." });
    await users.disable(u.id);
    await record(req, m, "member.removed", u.email);
    redirectWith(res, ctx.signer, "/dashboard/members", { ok: `${u.email} was removed and signed out.` });
  });

  return r;
}
