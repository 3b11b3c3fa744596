/**
 * One-time sign-in links (24 h): made by `folio users invite`, by an owner on the Members page, by
 * an operator approving an access request, and on first start for the dev tenant's owner. The link
 * holds a random token; the store keeps only its hash. Inviting someone again (or a person who
 * forgot their password) makes a new link for the same person.
 */
import type { Config } from "../../core/config.ts";
import type { Role, User, UserStore } from "../store/users.ts";

export const INVITE_TTL_MS = 24 * 3_600_000;

/** The installation's public base URL: FOLIO_PUBLIC_URL, else https://localhost:PORT. */
export function publicUrl(config: Config): string {
  if (config.FOLIO_PUBLIC_URL) return config.FOLIO_PUBLIC_URL.replace(/\/+$/, "");
  const host = ["0.0.0.0", "::", "127.0.0.1", "::1"].includes(config.FOLIO_HOST) ? "localhost" : config.FOLIO_HOST;
  return `https://${host}:${config.FOLIO_PORT}`;
}

export const EMAIL = /^[^\s@<>"']{1,64}@[^\s@<>"']{1,190}\.[^\s@<>"']{1,63}$/;

export interface Invite {
  url: string;
  user: User;
  created: boolean;
  expiresAt: number;
}

/** Finds or creates the person (by e-mail within the tenant, or among operators) and makes a link. */
export async function invite(
  users: UserStore,
  base: string,
  who: { email: string; tenantId: string | null; role: Role },
  now = Date.now(),
): Promise<Invite> {
  const email = who.email.trim().toLowerCase();
  if (!EMAIL.test(email)) throw new Error("not an e-mail address");
  const existing = (await users.byEmail(email)).find(
    (u) => u.tenant_id === who.tenantId && (who.tenantId !== null || u.role === "operator"),
  );
  const user = existing ?? (await users.create({ email, tenantId: who.tenantId, role: who.role }, now));
  if (existing && existing.role !== who.role) await users.setRole(existing.id, who.role);
  const token = await users.createInvite(user.id, INVITE_TTL_MS, now);
  return {
    url: `${base}/dashboard/invite/${token}`,
    user: (await users.byId(user.id))!,
    created: !existing,
    expiresAt: now + INVITE_TTL_MS,
  };
}
