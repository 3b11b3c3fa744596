/**
 * Bearer API keys (API.md "Transport and auth"), the plan check, and the per-key token bucket.
 * Missing, malformed, unknown, revoked and expired keys all get the same 401.
 */
import type { NextFunction, Request, Response } from "express";
import type { Config } from "../../core/config.ts";
import { planLimits, type PlanLimits } from "../../core/plans.ts";
import type { KeyAuthenticator, TenantInfo } from "../store/tenants.ts";
import { ApiError } from "./problem.ts";
import { rateLimitHeaders, TokenBuckets } from "./rate-limit.ts";

export interface AuthLocals {
  tenant: TenantInfo;
  keyId: string;
  limits: PlanLimits;
}

export function authenticate(tenants: KeyAuthenticator, config: Config, buckets: TokenBuckets) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const header = req.get("Authorization") ?? "";
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    const found = m ? tenants.authenticate(m[1]!) : null;
    if (!found)
      throw new ApiError("unauthorized", m ? "The API key is not valid." : "Send your API key as 'Authorization: Bearer folio_sk_…'.");
    if (found.tenant.suspended)
      throw new ApiError("tenant_suspended", "This tenant is suspended; its operator can lift the suspension (folio tenants unsuspend).");
    const limits = planLimits(found.tenant.plan, config);
    if (!limits.apiAccess) throw new ApiError("plan_required", "API access needs the business plan.");
    const policy = { perMinute: limits.requestsPerMinute, burst: limits.burst };
    const taken = buckets.take(`key:${found.keyId}`, policy);
    const headers = rateLimitHeaders(policy, taken);
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    if (!taken.allowed) throw new ApiError("rate_limited", `Too many requests; retry after ${taken.retryAfterSeconds} s.`, { headers });
    res.locals.auth = { tenant: found.tenant, keyId: found.keyId, limits } satisfies AuthLocals;
    next();
  };
}

export function auth(res: Response): AuthLocals {
  return res.locals.auth as AuthLocals;
}
