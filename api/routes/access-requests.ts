/** POST /v1/access_requests: unauthenticated, validated, rate-limited per client address. */
import { Router } from "express";
import { AccessRequestBody } from "../../core/schemas/api.ts";
import { rfc3339 } from "../../core/time.ts";
import { ApiError, fieldErrors, validationFailed } from "../http/problem.ts";
import { addressKey } from "../../core/net/proxies.ts";
import { type BucketTable, rateLimitHeaders } from "../http/rate-limit.ts";
import type { AccessRequests } from "../store/tenant-admin.ts";

export function accessRequestsRouter(
  store: AccessRequests,
  buckets: BucketTable,
  perHour: number,
  clientAddress: (req: Parameters<Parameters<Router["post"]>[1]>[0]) => string,
): Router {
  const r = Router();
  r.post("/access_requests", async (req, res) => {
    // Burst of the hourly allowance, refilled over the hour.
    const policy = { perMinute: perHour / 60, burst: perHour };
    const taken = buckets.take(addressKey(clientAddress(req)), policy);
    const headers = rateLimitHeaders(policy, taken, "access", 3600);
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    if (!taken.allowed)
      throw new ApiError("rate_limited", `Too many access requests from this address; retry after ${taken.retryAfterSeconds} s.`, {
        headers,
      });
    if (!req.is("application/json")) throw new ApiError("unsupported_media_type", "Send the request as application/json.");
    const body = AccessRequestBody.safeParse(req.body);
    if (!body.success) throw validationFailed(fieldErrors(body.error));
    const row = await store.create(body.data);
    res.status(202).json({ id: row.id, object: "access_request", status: "pending", created_at: rfc3339(row.created_at) });
  });
  return r;
}
