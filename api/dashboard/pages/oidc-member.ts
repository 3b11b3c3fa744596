/** The dashboard person for an identity an OpenID Connect provider vouched for. */
import type { User } from "../../store/users.ts";
import type { Ctx } from "../context.ts";
import { PageError } from "../errors.ts";
import { EMAIL } from "../invites.ts";
import type { OidcIdentity } from "../oidc.ts";

export async function oidcMember(ctx: Ctx, who: OidcIdentity): Promise<User> {
  const { users } = ctx.d.stores;
  if (!EMAIL.test(who.email)) throw new PageError(403, "Your identity provider did not share an e-mail address.");
  if (!who.role)
    throw new PageError(403, `Your identity provider did not give you a Folio role (claim ${ctx.d.config.FOLIO_OIDC_ROLE_CLAIM}).`);
  let tenantId: string | null = null;
  if (who.role !== "operator") {
    const tenant = who.tenant ? await ctx.d.tenants.tenant(who.tenant) : null;
    if (!tenant)
      throw new PageError(403, `Your identity provider names no tenant that exists here (claim ${ctx.d.config.FOLIO_OIDC_TENANT_CLAIM}).`);
    tenantId = tenant.id;
  }
  const email = who.email.toLowerCase();
  let user = (await users.byEmail(email)).find((u) => u.tenant_id === tenantId && (tenantId !== null || u.role === "operator"));
  if (user && user.oidc_subject && user.oidc_subject !== who.subject)
    throw new PageError(403, "This e-mail address belongs to another identity here; ask an operator.");
  user ??= await users.create({ email, tenantId, role: who.role });
  if (user.role !== who.role) await users.setRole(user.id, who.role);
  if (!user.oidc_subject) await users.linkOidc(user.id, who.subject);
  await ctx.d.stores.audit.record({
    tenant_id: tenantId,
    actor: email,
    action: "member.signed_in_oidc",
    target: email,
    detail: { role: who.role },
    address: null,
  });
  return (await users.byId(user.id))!;
}
