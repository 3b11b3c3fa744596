/**
 * Bearer API keys (API.md "Transport and auth"), the plan check, and the per-key token bucket.
 * Missing, malformed, unknown, revoked and expired keys all get the same 401; wrong credentials
 * are throttled per address and per key id (auth-throttle.ts).
 */
import type { NextFunction, Request, Response } from "express";
import type { Config } from "../../core/config.ts";
import { planLimits, type PlanLimits } from "../../core/plans.ts";
import type { KeyAuthenticator, TenantInfo } from "../store/tenants.ts";
import type { AuthThrottle } from "./auth-throttle.ts";
import { ApiError } from "./problem.ts";
import { type BucketTable, rateLimitHeaders } from "./rate-limit.ts";

export interface AuthLocals {
  tenant: TenantInfo;
  keyId: string;
  limits: PlanLimits;
}

/** The key id of a presented `folio_sk_<key_id>_<secret>`, whatever the secret looks like. */
const KEY_ID = /^folio_sk_([0-9A-Za-z]{16})_/;

export interface AuthDeps {
  tenants: KeyAuthenticator;
  config: Config;
  keyBuckets: BucketTable;
  throttle: AuthThrottle;
  clientAddress: (req: Request) => string;
}

export function authenticate({ tenants, config, keyBuckets, throttle, clientAddress }: AuthDeps) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const header = req.get("Authorization") ?? "";
    const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!m) throw new ApiError("unauthorized", "Send your API key as 'Authorization: Bearer folio_sk_…'.");
    const address = clientAddress(req);
    const claimedKeyId = KEY_ID.exec(m[1]!)?.[1] ?? null;
    const gate = throttle.gate(address, claimedKeyId);
    if (!gate.allowed) {
      const headers = throttle.headers(gate.taken);
      const who = gate.reason === "address" ? "from this address" : "for this API key from new addresses";
      throw new ApiError("rate_limited", `Too many failed authentication attempts ${who}; retry after ${gate.taken.retryAfterSeconds} s.`, {
        headers,
      });
    }
    const found = tenants.authenticate(m[1]!);
    if (!found) {
      const existing = claimedKeyId !== null && tenants.keyById(claimedKeyId) ? claimedKeyId : null;
      const taken = throttle.failed(address, existing);
      throw new ApiError("unauthorized", "The API key is not valid.", { headers: throttle.headers(taken) });
    }
    throttle.succeeded(address, found.keyId);
    const limits = planLimits(found.tenant.plan, config);
    // The key's bucket applies to every authenticated request, refused ones included (a 403 still
    // costs a token and carries the headers), so a free-plan key cannot hammer us for free.
    const policy = { perMinute: limits.requestsPerMinute, burst: limits.burst };
    const taken = keyBuckets.take(found.keyId, policy);
    const headers = rateLimitHeaders(policy, taken);
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    if (!taken.allowed) throw new ApiError("rate_limited", `Too many requests; retry after ${taken.retryAfterSeconds} s.`, { headers });
    if (!limits.apiAccess) throw new ApiError("plan_required", "API access needs the business plan.");
    if (found.tenant.suspended)
      throw new ApiError("tenant_suspended", "This tenant is suspended; its operator can lift the suspension (folio tenants unsuspend).");
    res.locals.auth = { tenant: found.tenant, keyId: found.keyId, limits } satisfies AuthLocals;
    next();
  };
}

export function auth(res: Response): AuthLocals {
  return res.locals.auth as AuthLocals;
}
