/**
 * `folio serve` and the admin commands: wiring only. Parses the configuration, opens the data
 * directory, builds the job backend — embedded (runner pool, webhook queue, files on disk) or
 * Kubernetes (PdfJobs, S3; the controller runs jobs and sends webhooks) — and starts the HTTPS
 * server.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import http from "node:http";
import type net from "node:net";
import path from "node:path";
import express from "express";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { loadConfig, type Config } from "../core/config.ts";
import { EXIT } from "../core/errors.ts";
import { createLogger, type Logger } from "../core/logger.ts";
import { parseTrustedProxies } from "../core/net/proxies.ts";
import { guardSandbox } from "../core/sandbox.ts";
import { FsObjectStore } from "../core/storage/fs-store.ts";
import { S3ObjectStore } from "../core/storage/s3-store.ts";
import type { ObjectStore } from "../core/storage/store.ts";
import { adminCommand, parseFlags, usersCommand } from "./admin.ts";
import { dashboardRouter } from "./dashboard/index.ts";
import { attemptRecorder, embeddedDashboard, kubernetesDashboardStores, sqliteDashboardStores } from "./dashboard/embedded.ts";
import type { DashboardStores } from "./dashboard/context.ts";
import { invite, publicUrl } from "./dashboard/invites.ts";
import { sqliteTenantPort } from "./dashboard/tenants-port.ts";
import { createApp, metricsHandler } from "./app.ts";
import type { JobBackend } from "./jobs/backend.ts";
import { KubernetesBackend } from "./jobs/kubernetes.ts";
import { LocalBackend } from "./jobs/local.ts";
import { loadKubeConfig, PdfJobClient } from "./jobs/pdfjob-client.ts";
import { WorkerPool } from "./jobs/worker-pool.ts";
import { Metrics } from "./metrics.ts";
import { createDualServer } from "./server.ts";
import { AccessRequestStore } from "./store/access-requests.ts";
import { openDb, type Db } from "./store/db.ts";
import { TenantStore } from "./store/tenants.ts";
import { loadOrCreateTls } from "./tls.ts";
import { createWebhooks, webhookGuard, webhookUrlCheck, type Webhooks } from "./webhooks/wiring.ts";

const VERSION = "0.1.0";

/** The sealing key for secrets at rest, created once (0600) in the data directory. */
function sealKey(dataDir: string): Buffer {
  const file = path.join(dataDir, "seal.key");
  if (!existsSync(file)) writeFileSync(file, randomBytes(32), { mode: 0o600, flag: "wx" });
  return readFileSync(file);
}

async function samplePdfs(dir: string): Promise<[string, string]> {
  await mkdir(dir, { recursive: true });
  const files: [string, string] = [path.join(dir, "hello.pdf"), path.join(dir, "world.pdf")];
  for (const [i, file] of files.entries()) {
    if (existsSync(file)) continue;
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    doc
      .addPage([595, 842])
      .drawText(i === 0 ? "Hello from Folio (page 1 of the merge)" : "World (page 2 of the merge)", { x: 72, y: 760, size: 20, font });
    await writeFile(file, await doc.save());
  }
  return files;
}

function banner(
  cfg: Config,
  dataDir: string,
  certPath: string,
  first: { key: string; secret: string; signIn: string } | null,
  samples: [string, string],
): string {
  const host =
    cfg.FOLIO_HOST === "0.0.0.0" || cfg.FOLIO_HOST === "::" ? "localhost" : cfg.FOLIO_HOST === "127.0.0.1" ? "localhost" : cfg.FOLIO_HOST;
  const base = `https://${host}:${cfg.FOLIO_PORT}`;
  const lines = [`Folio ${VERSION} (${cfg.FOLIO_BACKEND}) listening on ${base}  —  reference: ${base}/docs`, `data directory: ${dataDir}`];
  if (first) {
    lines.push(
      "",
      'First start: created tenant "dev" on the business plan. These are shown ONCE:',
      `  API key:        ${first.key}`,
      `  webhook secret: ${first.secret}`,
      `  dashboard:      ${first.signIn}`,
      "                  (the dev tenant owner's one-time sign-in link, valid 24 h: set a password there)",
      "",
      "Merge two sample PDFs and download the result (copy and paste):",
      `  KEY=${first.key}`,
      `  curl -s --cacert ${certPath} -H "Authorization: Bearer $KEY" -H "Prefer: wait=60" \\`,
      `    -F file=@${samples[0]} -F file=@${samples[1]} ${base}/v1/pdf/merge \\`,
      `  | grep -o '/v1/files/file_[A-Za-z0-9]*/content' | head -n1 \\`,
      `  | xargs -I{} curl -s --cacert ${certPath} -H "Authorization: Bearer $KEY" -o merged.pdf ${base}{} && echo "wrote merged.pdf"`,
    );
  }
  return lines.join("\n");
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

interface BackendParts {
  backend: JobBackend;
  store: ObjectStore;
  webhooks: Pick<Webhooks, "check" | "start" | "stop">;
  pool: { busyCount: number; size: number } | null;
}

function embeddedBackend(
  config: Config,
  db: Db,
  tenants: TenantStore,
  log: Logger,
  metrics: Metrics,
  dataDir: string,
  dashboard: DashboardStores,
): BackendParts {
  const store = new FsObjectStore(path.join(dataDir, "files"));
  const pool = new WorkerPool({
    size: config.FOLIO_WORKERS,
    // The resolved data directory, so that the workers' sandboxes hide it (core/sandbox.ts).
    env: { ...process.env, FOLIO_SOFFICE_POOL_SIZE: String(Math.max(1, config.FOLIO_SOFFICE_POOL_SIZE)), FOLIO_DATA_DIR: dataDir },
    log,
  });
  const webhooks = createWebhooks({ db, config, log, metrics, tenants, onAttempt: attemptRecorder(dashboard, log) });
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
  return {
    backend,
    store,
    webhooks,
    pool: {
      get busyCount() {
        return pool.busyCount;
      },
      size: config.FOLIO_WORKERS,
    },
  };
}

/** PdfJobs in FOLIO_JOBS_NAMESPACE, bytes in S3; webhooks are the controller's, only checked here. */
function kubernetesBackend(config: Config, db: Db, tenants: TenantStore, log: Logger): BackendParts {
  if (!config.FOLIO_S3_BUCKET) throw new Error("FOLIO_S3_BUCKET is required in Kubernetes mode");
  const store = S3ObjectStore.fromConfig(config);
  const kube = new PdfJobClient(loadKubeConfig(config.KUBECONFIG), config.FOLIO_JOBS_NAMESPACE ?? config.POD_NAMESPACE ?? "default");
  const backend = new KubernetesBackend({
    db,
    store,
    kube,
    tenants,
    log,
    uploadTtlMs: config.FOLIO_UPLOAD_TTL_SECONDS * 1000,
    // The runner stops itself at FOLIO_JOB_TIMEOUT_MS; the Job's deadline leaves room for the pod to start.
    deadlineSeconds: Math.min(86_400, Math.ceil(config.FOLIO_JOB_TIMEOUT_MS / 1000) + 60),
    sweepIntervalMs: config.FOLIO_SWEEP_INTERVAL_MS,
  });
  const webhooks = {
    check: webhookUrlCheck(webhookGuard(config)),
    start: () => undefined,
    stop: () => Promise.resolve(),
  };
  return { backend, store, webhooks, pool: null };
}

async function serve(argv: readonly string[]): Promise<number> {
  const p = parseFlags(argv);
  const overrides: Record<string, string> = {};
  if (typeof p.flags.get("port") === "string") overrides.FOLIO_PORT = p.flags.get("port") as string;
  if (typeof p.flags.get("data-dir") === "string") overrides.FOLIO_DATA_DIR = p.flags.get("data-dir") as string;
  if (typeof p.flags.get("host") === "string") overrides.FOLIO_HOST = p.flags.get("host") as string;
  const config = loadConfig({ ...process.env, ...overrides });
  const log = createLogger({ level: config.FOLIO_LOG_LEVEL, pretty: config.FOLIO_PRETTY_LOGS }, { component: "api" });
  const dataDir = path.resolve(config.FOLIO_DATA_DIR);
  const db = openDb(dataDir);
  const tenants = new TenantStore(db);
  const kubernetes = config.FOLIO_BACKEND === "kubernetes";
  // Kubernetes mode keeps the dashboard's people, audit log and usage in the cluster, shared by every replica.
  const dashboardStores = kubernetes
    ? kubernetesDashboardStores(loadKubeConfig(config.KUBECONFIG), config.FOLIO_JOBS_NAMESPACE ?? config.POD_NAMESPACE ?? "default")
    : sqliteDashboardStores(db);
  let first: { key: string; secret: string; signIn: string } | null = null;
  // In Kubernetes mode the admin creates tenants with `folio tenants create` (the chart's NOTES say how).
  if (!kubernetes && tenants.list().length === 0) {
    const t = tenants.create("dev", "business");
    const signIn = (await invite(dashboardStores.users, publicUrl(config), { email: "owner@dev.localhost", tenantId: t.id, role: "owner" }))
      .url;
    first = { key: tenants.createKey(t.id).key, secret: t.webhook_secret, signIn };
  }
  const metrics = new Metrics();
  let parts: BackendParts;
  try {
    // Embedded mode runs the engines here: in their sandbox, or not at all (core/sandbox.ts).
    if (!kubernetes) guardSandbox(config, log);
    parts = kubernetes
      ? kubernetesBackend(config, db, tenants, log)
      : embeddedBackend(config, db, tenants, log, metrics, dataDir, dashboardStores);
  } catch (err) {
    log.fatal({ err }, "Could not set up the job backend");
    db.close();
    return EXIT.USAGE;
  }
  const { backend, store, webhooks } = parts;
  const accessRequests = new AccessRequestStore(db);
  const port = sqliteTenantPort(tenants, accessRequests);
  // Kubernetes mode delivers webhooks from the controller: no attempt log here.
  const dashboard = embeddedDashboard({
    config,
    log,
    db,
    dataDir,
    backend,
    tenants: port.tenants,
    accessRequests: port.accessRequests,
    stores: dashboardStores,
    pool: parts.pool,
  });
  const app = createApp({
    config,
    log,
    metrics,
    backend,
    store,
    tenants,
    accessRequests,
    checkWebhookUrl: webhooks.check,
    dashboard: (buckets) => dashboardRouter({ ...dashboard.deps, rateLimitState: (keyId, policy) => buckets.peek(keyId, policy) }),
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
    db.close();
    return EXIT.INTERNAL;
  }
  backend.start();
  webhooks.start();
  dashboard.collector.start();
  const samples = await samplePdfs(path.join(dataDir, "samples"));
  process.stdout.write(banner(config, dataDir, tls.certPath, first, samples) + "\n");
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
        db.close();
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
