/**
 * Who may see and do what. Pages call these before anything else; a refused action changes
 * nothing and says why. Viewers see no key or secret actions, and the server refuses them anyway.
 */
import type { NextFunction, Request, Response } from "express";
import { tenantById, type TenantSummary } from "./tenants-port.ts";
import type { Role, TenantRole } from "../store/users.ts";
import type { Ctx } from "./context.ts";
import { PageError } from "./errors.ts";
import type { Session } from "./sessions.ts";

export interface Member {
  session: Session;
  tenant: TenantSummary;
  role: TenantRole;
}

/** Signed in, else off to the sign-in page (and back here after). */
export function signedIn(req: Request, res: Response, next: NextFunction): void {
  if (res.locals.session) return next();
  toSignIn(req, res);
}

function toSignIn(req: Request, res: Response): void {
  const back = req.method === "GET" ? `?next=${encodeURIComponent(req.originalUrl)}` : "";
  res.redirect(303, `/dashboard/sign-in${back}`);
}

/** A tenant member with one of `roles`. */
export function member(ctx: Ctx, roles: readonly TenantRole[] = ["owner", "developer", "viewer"]) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const s = res.locals.session as Session | null;
    if (!s) return toSignIn(req, res);
    if (s.user.role === "operator" || s.user.tenant_id === null)
      throw new PageError(403, "Operators manage tenants from the operator pages; tenant pages are for the tenant's members.");
    const tenant = await tenantById(ctx.d.tenants, s.user.tenant_id);
    if (!tenant) throw new PageError(403, "Your tenant no longer exists.");
    if (!roles.includes(s.user.role))
      throw new PageError(403, `Your role (${s.user.role}) cannot do this; ask an owner of ${tenant.name}.`);
    res.locals.member = { session: s, tenant, role: s.user.role } satisfies Member;
    next();
  };
}

export const memberOf = (res: Response): Member => res.locals.member as Member;

export function operator(req: Request, res: Response, next: NextFunction): void {
  const s = res.locals.session as Session | null;
  if (!s) return toSignIn(req, res);
  if (s.user.role !== "operator") throw new PageError(403, "Only operators of this installation may see this page.");
  next();
}

export const canManageKeys = (role: Role): boolean => role === "owner" || role === "developer";
