/** POST /v1/access_requests: unauthenticated, validated, rate-limited per client address. */
import type { RequestHandler } from "express";
import { AccessRequestAccepted, AccessRequestBody } from "../../core/schemas/api.ts";
import { rfc3339 } from "../../core/time.ts";
import { ApiError } from "../http/problem.ts";
import { addressKey } from "../../core/net/proxies.ts";
import { rateLimitHeaders } from "../http/rate-limit.ts";
import { route, type Route, type RouteDeps } from "./route.ts";

/** Counts every request, valid or not, against its client address: a burst of the hourly allowance, refilled over the hour. */
function perAddressLimit({ addressBuckets, clientAddress, config }: RouteDeps): RequestHandler {
  const perHour = config.FOLIO_ACCESS_REQUESTS_PER_HOUR;
  const policy = { perMinute: perHour / 60, burst: perHour };
  return (req, res, next) => {
    const taken = addressBuckets.take(addressKey(clientAddress(req)), policy);
    const headers = rateLimitHeaders(policy, taken, "access", 3600);
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    if (!taken.allowed)
      throw new ApiError("rate_limited", `Too many access requests from this address; retry after ${taken.retryAfterSeconds} s.`, {
        headers,
      });
    next();
  };
}

export const accessRequestRoutes: Route[] = [
  route({
    method: "post",
    path: "/v1/access_requests",
    operationId: "requestAccess",
    tag: "Access",
    summary: "Ask for access (no key needed; rate-limited per client address).",
    auth: false,
    guard: perAddressLimit,
    body: { json: { schema: AccessRequestBody, validate: { unsupportedDetail: "Send the request as application/json." } } },
    responses: { "202": { description: "Received.", schema: AccessRequestAccepted } },
    errors: ["https_required", "validation_failed", "unsupported_media_type", "rate_limited", "internal_error"],
    handler:
      ({ accessRequests }) =>
      async (_req, res, { body }) => {
        const row = await accessRequests.create(body);
        res.status(202).json({ id: row.id, object: "access_request", status: "pending", created_at: rfc3339(row.created_at) });
      },
  }),
];
