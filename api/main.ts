/**
 * `folio serve` and the admin commands: wiring only. Parses the configuration, opens the data
 * directory, builds the job backend — embedded (runner pool, webhook queue, files on disk) or
 * Kubernetes (PdfJobs, S3; the controller runs jobs and sends webhooks) — and starts the HTTPS
 * server.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type net from "node:net";
import path from "node:path";
import express from "express";
import { loadConfig, type Config } from "../core/config.ts";
import { EXIT } from "../core/errors.ts";
import { createLogger, type Logger } from "../core/logger.ts";
import { parseTrustedProxies } from "../core/net/proxies.ts";
import { guardSandbox } from "../core/sandbox.ts";
import { FsObjectStore } from "../core/storage/fs-store.ts";
import type { ObjectStore } from "../core/storage/store.ts";
import { adminCommand, parseFlags, usersCommand } from "./admin.ts";
import { dashboardRouter } from "./dashboard/index.ts";
import { attemptRecorder, embeddedDashboard, kubernetesDashboardStores, sqliteDashboardStores } from "./dashboard/embedded.ts";
import { invite, publicUrl } from "./dashboard/invites.ts";
import { createApp, metricsHandler } from "./app.ts";
import { banner, samplePdfs } from "./first-start.ts";
import type { BucketTable, RateLimits } from "./http/rate-limit.ts";
import type { JobBackend } from "./jobs/backend.ts";
import { LocalBackend } from "./jobs/local.ts";
import { loadKubeConfig } from "./jobs/pdfjob-client.ts";
import { WorkerPool } from "./jobs/worker-pool.ts";
import { Metrics } from "./metrics.ts";
import { createDualServer } from "./server.ts";
import { openDb } from "./store/db.ts";
import { kubernetesStores, storeNamespace } from "./store/kubernetes/index.ts";
import { KubernetesTenantAdmin } from "./store/kubernetes/tenant-admin.ts";
import { SqliteAccessRequests, SqliteTenantAdmin, type AccessRequests } from "./store/tenant-admin.ts";
import { TenantStore, type KeyAuthenticator } from "./store/tenants.ts";
import { loadOrCreateTls } from "./tls.ts";
import { createWebhooks, webhookGuard, webhookUrlCheck, type Webhooks } from "./webhooks/wiring.ts";

export const VERSION = "0.1.0";

/** The sealing key for secrets at rest, created once (0600) in the data directory. */
function sealKey(dataDir: string): Buffer {
  const file = path.join(dataDir, "seal.key");
  if (!existsSync(file)) writeFileSync(file, randomBytes(32), { mode: 0o600, flag: "wx" });
  return readFileSync(file);
}

function listen(server: net.Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

interface Parts {
  backend: JobBackend;
  store: ObjectStore;
  tenants: KeyAuthenticator;
  accessRequests: AccessRequests;
  webhooks: Pick<Webhooks, "check" | "start" | "stop">;
  /** The first start's dev tenant (embedded mode only). */
  first: { key: string; secret: string; signIn: string } | null;
  /** The dashboard and its usage collector, on the mode's stores. */
  dashboard: { router: (buckets: BucketTable) => express.Router; collector: { start(): void; stop(): Promise<void> } };
  /** Kubernetes mode: this replica's share of the rate limits. */
  rateLimits?: RateLimits;
  close(): Promise<void>;
}

/** The dashboard over a mode's stores (api/dashboard). */
function dashboardOf(o: Parameters<typeof embeddedDashboard>[0]): Parts["dashboard"] {
  const d = embeddedDashboard(o);
  return {
    router: (buckets) => dashboardRouter({ ...d.deps, rateLimitState: (keyId, policy) => buckets.peek(keyId, policy) }),
    collector: d.collector,
  };
}

/** Embedded mode: SQLite in the data directory, files on disk, the runner pool, the webhook queue. */
async function embeddedMode(config: Config, log: Logger, metrics: Metrics, dataDir: string): Promise<Parts> {
  // Embedded mode runs the engines here: in their sandbox, or not at all (core/sandbox.ts).
  guardSandbox(config, log);
  const db = openDb(dataDir);
  const tenants = new TenantStore(db);
  const dashboardStores = sqliteDashboardStores(db);
  let first: Parts["first"] = null;
  if (tenants.list().length === 0) {
    const t = tenants.create("dev", "business");
    const signIn = (await invite(dashboardStores.users, publicUrl(config), { email: "owner@dev.localhost", tenantId: t.id, role: "owner" }))
      .url;
    first = { key: tenants.createKey(t.id).key, secret: t.webhook_secret, signIn };
  }
  const store = new FsObjectStore(path.join(dataDir, "files"));
  const pool = new WorkerPool({
    size: config.FOLIO_WORKERS,
    // The resolved data directory, so that the workers' sandboxes hide it (core/sandbox.ts).
    env: { ...process.env, FOLIO_SOFFICE_POOL_SIZE: String(Math.max(1, config.FOLIO_SOFFICE_POOL_SIZE)), FOLIO_DATA_DIR: dataDir },
    log,
  });
  const webhooks = createWebhooks({ db, config, log, metrics, tenants, onAttempt: attemptRecorder(dashboardStores, log) });
  const backend = new LocalBackend({
    db,
    store,
    pool,
    config,
    log,
    metrics,
    webhooks: webhooks.sink,
    sealKey: sealKey(dataDir),
    workDir: path.join(dataDir, "work"),
  });
  const accessRequests = new SqliteAccessRequests(db);
  const dashboard = dashboardOf({
    config,
    log,
    db,
    dataDir,
    backend,
    tenants: new SqliteTenantAdmin(db),
    accessRequests,
    stores: dashboardStores,
    pool: {
      get busyCount() {
        return pool.busyCount;
      },
      size: config.FOLIO_WORKERS,
    },
  });
  return { backend, store, tenants, accessRequests, webhooks, first, dashboard, close: () => Promise.resolve(db.close()) };
}

/**
 * Kubernetes mode: no database and no volume — PdfJobs, Tenants, Secrets and AccessRequests in
 * FOLIO_JOBS_NAMESPACE, read through informers, bytes and upload records in S3 (docs/adr/0008);
 * the dashboard's people, audit log and usage in the cluster too (api/store/kubernetes-dashboard.ts).
 * Webhooks are the controller's, only checked here. Resolves once the caches are full.
 */
async function kubernetesMode(config: Config, log: Logger, dataDir: string): Promise<Parts> {
  // Only the generated certificate (and, without FOLIO_DASHBOARD_SECRET, the dashboard's key) lives here.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const kc = loadKubeConfig(config.KUBECONFIG);
  const stores = kubernetesStores(config, kc, log);
  await stores.start();
  const namespace = storeNamespace(config);
  const webhooks = { check: webhookUrlCheck(webhookGuard(config)), start: () => undefined, stop: () => Promise.resolve() };
  const dashboard = dashboardOf({
    config,
    log,
    db: null,
    dataDir,
    backend: stores.backend,
    tenants: new KubernetesTenantAdmin(kc, namespace),
    accessRequests: stores.accessRequests,
    stores: kubernetesDashboardStores(kc, namespace, { cache: stores.pdfJobs, client: stores.pdfJobClient }),
    pool: null,
  });
  return { ...stores, webhooks, first: null, dashboard, close: () => stores.stop() };
}

async function serve(argv: readonly string[]): Promise<number> {
  const p = parseFlags(argv);
  const overrides: Record<string, string> = {};
  if (typeof p.flags.get("port") === "string") overrides.FOLIO_PORT = p.flags.get("port") as string;
  if (typeof p.flags.get("data-dir") === "string") overrides.FOLIO_DATA_DIR = p.flags.get("data-dir") as string;
  if (typeof p.flags.get("host") === "string") overrides.FOLIO_HOST = p.flags.get("host") as string;
  const config = loadConfig({ ...process.env, ...overrides });
  const log = createLogger({ level: config.FOLIO_LOG_LEVEL, pretty: config.FOLIO_PRETTY_LOGS }, { component: "api" });
  // Embedded mode's data; in Kubernetes mode only a generated certificate (an emptyDir in the chart).
  const dataDir = path.resolve(config.FOLIO_DATA_DIR);
  const kubernetes = config.FOLIO_BACKEND === "kubernetes";
  const metrics = new Metrics();
  let parts: Parts;
  try {
    parts = kubernetes ? await kubernetesMode(config, log, dataDir) : await embeddedMode(config, log, metrics, dataDir);
  } catch (err) {
    log.fatal({ err }, "Could not set up the job backend");
    return EXIT.USAGE;
  }
  const { backend, store, webhooks, dashboard } = parts;
  const app = createApp({
    config,
    log,
    metrics,
    backend,
    store,
    tenants: parts.tenants,
    accessRequests: parts.accessRequests,
    checkWebhookUrl: webhooks.check,
    dashboard: dashboard.router,
    ...(parts.rateLimits ? { rateLimits: parts.rateLimits } : {}),
    version: VERSION,
    metricsOnApiPort: !kubernetes,
  });
  const tls = await loadOrCreateTls(dataDir, { cert: config.FOLIO_TLS_CERT, key: config.FOLIO_TLS_KEY });
  const trustedProxies = parseTrustedProxies(config.FOLIO_TRUST_PROXY);
  const server = createDualServer(app, tls, app, {
    maxConnections: config.FOLIO_MAX_CONNECTIONS,
    maxConnectionsPerAddress: config.FOLIO_MAX_CONNECTIONS_PER_ADDRESS,
    firstByteTimeoutMs: config.FOLIO_FIRST_BYTE_TIMEOUT_MS,
    headersTimeoutMs: config.FOLIO_HEADERS_TIMEOUT_MS,
    keepAliveTimeoutMs: config.FOLIO_KEEP_ALIVE_TIMEOUT_MS,
    isTrustedProxy: (a) => trustedProxies.has(a),
  });
  // Kubernetes mode's metrics port (API.md: "on a separate port in Kubernetes"): GET /metrics only.
  const metricsServer = kubernetes ? http.createServer(express().get("/metrics", metricsHandler(metrics))) : null;
  try {
    await listen(server.server, config.FOLIO_PORT, config.FOLIO_HOST);
    if (metricsServer) await listen(metricsServer, config.FOLIO_METRICS_PORT, config.FOLIO_HOST);
  } catch (err) {
    // Nothing may keep running when a port cannot be had (e.g. EADDRINUSE).
    log.fatal({ err }, "Could not listen");
    await server.close();
    metricsServer?.close();
    await backend.stop();
    await parts.close();
    return EXIT.INTERNAL;
  }
  backend.start();
  webhooks.start();
  dashboard.collector.start();
  const samples = await samplePdfs(path.join(dataDir, "samples"));
  process.stdout.write(banner(VERSION, config, dataDir, tls.certPath, parts.first, samples) + "\n");
  log.info({ port: config.FOLIO_PORT, workers: config.FOLIO_WORKERS }, "Started server");
  return new Promise<number>((resolve) => {
    const stop = (signal: string): void => {
      log.info({ signal }, "Stopping");
      void (async () => {
        metricsServer?.close();
        await server.close();
        await dashboard.collector.stop();
        await webhooks.stop();
        await backend.stop();
        await parts.close();
        resolve(EXIT.OK);
      })();
    };
    process.once("SIGINT", () => stop("SIGINT"));
    process.once("SIGTERM", () => stop("SIGTERM"));
  });
}

/** `folio serve …`, `folio tenants …`, `folio keys …`, `folio access-requests …` */
export async function apiCommand(command: string, argv: readonly string[]): Promise<number> {
  if (command === "serve") return serve(argv);
  const config = loadConfig();
  const io = { out: (l: string) => process.stdout.write(l + "\n"), err: (l: string) => process.stderr.write(l + "\n") };
  if (command === "users") return usersCommand(argv, config, io);
  return adminCommand(command as "tenants" | "keys" | "access-requests", argv, config, {
    out: (l) => process.stdout.write(l + "\n"),
    err: (l) => process.stderr.write(l + "\n"),
  });
}
