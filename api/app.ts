/**
 * The Express application: edge middlewares (request id, HTTPS only, metrics), the service
 * endpoints, and the authenticated /v1 routes. Everything it needs is passed in.
 */
import express, { type NextFunction, type Request, type Response } from "express";
import type { Config } from "../core/config.ts";
import type { Logger } from "../core/logger.ts";
import { clientAddress as clientAddressOf, parseTrustedProxies } from "../core/net/proxies.ts";
import type { ObjectStore } from "../core/storage/store.ts";
import { renderDocs } from "./docs.ts";
import { authenticate } from "./http/auth.ts";
import { AuthThrottle } from "./http/auth-throttle.ts";
import { httpsOnly, requestId } from "./http/edge.ts";
import { methodTable } from "./http/methods.ts";
import { ApiError, problemHandler, sendProblem } from "./http/problem.ts";
import { BucketTable, RateLimits } from "./http/rate-limit.ts";
import type { JobBackend } from "./jobs/backend.ts";
import type { Metrics } from "./metrics.ts";
import { buildOpenApi } from "./openapi.ts";
import { unknownOperation } from "./routes/operations.ts";
import { mountRoutes } from "./routes/route.ts";
import { ROUTES } from "./routes/table.ts";
import type { AccessRequests } from "./store/tenant-admin.ts";
import type { KeyAuthenticator } from "./store/tenants.ts";

export interface AppDeps {
  config: Config;
  log: Logger;
  metrics: Metrics;
  backend: JobBackend;
  store: ObjectStore;
  /** Who a presented API key belongs to (api/store/tenants.ts; one implementation per mode). */
  tenants: KeyAuthenticator;
  accessRequests: AccessRequests;
  checkWebhookUrl: (url: string) => Promise<string | null>;
  /**
   * The rate-limit tables (default: this process's own). Kubernetes mode passes tables that take
   * this replica's share of every limit (api/store/kubernetes/replicas.ts).
   */
  rateLimits?: RateLimits;
  /** The dashboard (api/dashboard), mounted at /dashboard; it is given the API keys' rate-limit buckets to show their state. */
  dashboard?: (buckets: BucketTable) => express.Router;
  /** Embedded mode: /metrics on the API's port; Kubernetes mode: false (see api/main.ts). */
  metricsOnApiPort: boolean;
  version: string;
}

/** GET /metrics: the registry in Prometheus text. */
export function metricsHandler(metrics: Metrics): express.RequestHandler {
  return (_req, res, next) => {
    metrics.registry.metrics().then((text) => res.type(metrics.registry.contentType).send(text), next);
  };
}

export function createApp(deps: AppDeps): express.Express {
  const { config, metrics, backend } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  const trusted = parseTrustedProxies(config.FOLIO_TRUST_PROXY);
  const isTrusted = (addr: string | undefined): boolean => trusted.has(addr);
  const clientAddress = (req: Request): string => clientAddressOf(req.socket.remoteAddress, req.headers["x-forwarded-for"], trusted);
  const limits = deps.rateLimits ?? new RateLimits();
  const throttle = new AuthThrottle({
    byAddress: limits.authFailuresByAddress,
    byKey: limits.authFailuresByKey,
    policy: { perMinute: config.FOLIO_AUTH_FAILURES_PER_MINUTE, burst: config.FOLIO_AUTH_FAILURE_BURST },
  });
  const openapi = buildOpenApi(deps.version);
  const docsHtml = renderDocs(openapi);

  app.use(requestId);
  app.use((req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      // The route template, never the concrete path: ids must not become label values.
      // The table's routes name theirs (api/routes/route.ts): after an error, req.baseUrl is gone.
      const matched = req.route as { path: string } | undefined;
      const named = res.locals.metricsRoute as string | undefined;
      const route = named ?? (matched ? `${req.baseUrl}${matched.path}` : "unmatched");
      const labels = { route, method: req.method, status: String(res.statusCode) };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  });
  app.use(httpsOnly(isTrusted));
  app.use((_req, res, next) => {
    res.setHeader("Strict-Transport-Security", "max-age=31536000");
    res.setHeader("X-Content-Type-Options", "nosniff");
    next();
  });

  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    const ok = await backend.ready();
    res.status(ok ? 200 : 503).json({ status: ok ? "ready" : "not ready" });
  });
  // Kubernetes mode serves /metrics on a port of its own (API.md), never to the public.
  if (deps.metricsOnApiPort) app.get("/metrics", metricsHandler(metrics));
  app.get("/v1/openapi.json", (_req, res) => {
    res.json(openapi);
  });
  app.get("/docs", (_req, res) => {
    res.type("html").setHeader("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'").send(docsHtml);
  });

  const json = express.json({ limit: "1mb", type: ["application/json", "application/*+json"] });
  // The public API: the route table (api/routes/table.ts), the routes open to anyone first.
  const routes = mountRoutes(ROUTES, {
    backend,
    store: deps.store,
    config,
    checkWebhookUrl: deps.checkWebhookUrl,
    accessRequests: deps.accessRequests,
    addressBuckets: limits.addresses,
    clientAddress,
  });
  app.use("/v1", json, routes.open);
  const v1 = express.Router();
  v1.use(authenticate({ tenants: deps.tenants, config, keyBuckets: limits.keys, throttle, clientAddress }));
  v1.use(json);
  v1.use(routes.authenticated);
  // An operation that does not exist: a 404 that lists those that do.
  v1.post("/pdf/:operation", unknownOperation);
  app.use("/v1", v1);
  if (deps.dashboard) app.use("/dashboard", deps.dashboard(limits.keys));

  const methods = methodTable(openapi);
  app.use((req, res) => {
    const allow = methods.allowed(req.path);
    if (allow && !allow.includes(req.method)) {
      res.setHeader("Allow", allow.join(", "));
      return sendProblem(res, new ApiError("method_not_allowed", `${req.method} is not allowed here; use ${allow.join(", ")}.`));
    }
    sendProblem(res, new ApiError("not_found", "No such endpoint."));
  });
  app.use(problemHandler(deps.log));
  return app;
}
