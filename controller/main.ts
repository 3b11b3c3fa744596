/**
 * `folio controller`: the PdfJob operator. Wiring only — informers for PdfJobs, Jobs and pods
 * (Jobs and pods filtered by the managed-by label), a keyed work queue, N workers running the
 * reconciler (controller/reconciler.ts).
 *
 * Configuration (environment, besides core/config.ts's FOLIO_S3_*):
 * - KUBECONFIG, else the in-cluster service account;
 * - FOLIO_CONTROLLER_NAMESPACE: watch one namespace (default: all);
 * - FOLIO_RUNNER_IMAGE (required), FOLIO_RUNNER_IMAGE_PULL_POLICY;
 * - FOLIO_CONTROLLER_WORKERS (default 2);
 * - runner pods get no storage credentials: presigned URLs per Job (controller/runner-access.ts);
 *
 * - FOLIO_CONTROLLER_LEADER_ELECTION (default true), FOLIO_CONTROLLER_LEASE_NAMESPACE (default:
 *   the watched namespace, else POD_NAMESPACE, else "default"), POD_NAME for the identity;
 * - FOLIO_METRICS_PORT: plain-HTTP /metrics, /healthz, /readyz (controller/metrics.ts);
 * - FOLIO_WEBHOOK_ALLOWED_HOSTS (the SSRF guard's allow-list) and FOLIO_WEBHOOK_CA_FILE (extra CA
 *   certificates for webhook receivers, for tests) for the webhook sender (controller/webhooks.ts).
 *
 * Leader election (controller/leader-election.ts): every replica keeps its caches warm, only the
 * leader runs workers; a leader that cannot renew stops its workers and `folio controller` exits
 * (the Deployment restarts it as a follower), as controller-runtime does.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { rootCertificates } from "node:tls";
import { CoreV1Api, KubeConfig, type V1Job } from "@kubernetes/client-node";
import { loadConfig, type Config } from "../core/config.ts";
import { shareConnections } from "../core/net/kube-connections.ts";
import { createLogger, type Logger } from "../core/logger.ts";
import { SsrfGuard } from "../core/net/ssrf.ts";
import { ReceiverBreakers } from "../core/webhooks/breaker.ts";
import type { TlsTrust } from "../core/webhooks/http.ts";
import { S3ObjectStore } from "../core/storage/s3-store.ts";
import type { ObjectStore } from "../core/storage/store.ts";
import { kubeClient, type WebhookSender } from "./apply.ts";
import { objectKey } from "./informer.ts";
import { controllerInformers } from "./informers.ts";
import { LeaderElector, type LeaderElectionOptions } from "./leader-election.ts";
import { jobTemplateFromConfig, type JobTemplateOptions } from "./job-template.ts";
import { accessPreparer } from "./runner-access.ts";
import { WorkQueue } from "./queue.ts";
import { FairQueue } from "./fair-queue.ts";
import { startUploadSweep, unfinishedInputs } from "./upload-sweep.ts";
import { ControllerMetrics, serveMetrics, type MetricsServer } from "./metrics.ts";
import { Reconciler, type Caches } from "./reconciler.ts";
import { SentAttempts } from "./sent-attempts.ts";
import { kubeSecrets, webhookSender, type SecretData } from "./webhooks.ts";

export interface ControllerOptions {
  kubeConfig: KubeConfig;
  store: ObjectStore;
  template: JobTemplateOptions;
  /** Watch one namespace; all when absent. */
  namespace?: string;
  workers?: number;
  /** The webhook sender; by default controller/webhooks.ts's, configured by `webhooks`. */
  sendWebhook?: WebhookSender;
  webhooks?: WebhookOptions;
  /** Where the metrics go (default: a registry of its own, without the process metrics). */
  metrics?: ControllerMetrics;
  resyncMs?: number;
  /** Structured logs (pino): failed reconciles at warn with pdfjob, tenant and err; informers' re-lists; leadership. */
  logger?: Logger;
  /** Run workers only while holding this Lease; without it, workers start at once. */
  leaderElection?: LeaderElectionOptions;
  /** FOLIO_MAX_RUNNING_JOBS: runner Jobs at once, shared fairly between tenants (fair-queue.ts); 0 or absent: no limit. */
  maxRunningJobs?: number;
  /** The leader sweeps expired uploads every `intervalMs` (upload-sweep.ts; needs a store that lists). */
  uploadSweep?: { intervalMs: number; ttlMs: number };
  /** Before each Job is created (the runner's access Secret: controller/runner-access.ts). */
  prepareJob?: (namespace: string, job: V1Job) => Promise<void>;
}

export interface WebhookOptions {
  /** The SSRF guard's allow-list (FOLIO_WEBHOOK_ALLOWED_HOSTS); tests allow-list 127.0.0.1. */
  allowedHosts?: readonly string[];
  /** Trust for receivers with a private CA (tests: FOLIO_WEBHOOK_CA_FILE); system roots otherwise. */
  tls?: TlsTrust;
  timeoutMs?: number;
}

export interface Controller {
  readonly queue: WorkQueue;
  readonly elector: LeaderElector | undefined;
  readonly reconciler: Reconciler;
  readonly caches: Caches;
  readonly metrics: ControllerMetrics;
  /** Resolves once every informer has listed. */
  synced(): Promise<void>;
  /** True once every informer has listed (/readyz). */
  ready(): boolean;
  stop(): Promise<void>;
}

/** The webhook sender for `o.webhooks`, reading tenants' signing secrets from the cluster. */
function clusterWebhookSender(o: ControllerOptions, breakers: ReceiverBreakers, secrets: SecretData): WebhookSender {
  const w = o.webhooks ?? {};
  return webhookSender({
    secrets,
    guard: new SsrfGuard(w.allowedHosts ?? []),
    ...(w.tls ? { tls: w.tls } : {}),
    ...(w.timeoutMs === undefined ? {} : { timeoutMs: w.timeoutMs }),
    breakers,
  });
}

/** Starts the informers and workers; the caller stops them. */
export function startController(o: ControllerOptions): Controller {
  shareConnections(o.kubeConfig);
  const logger = o.logger;
  /** The informers' messages (a watch that failed and re-lists). */
  const log = (msg: string): void => logger?.warn(msg);
  const ns = o.namespace;
  const metrics = o.metrics ?? new ControllerMetrics({ defaultMetrics: false });
  const queue = new WorkQueue({ metrics: metrics.queueMetrics() });
  const enqueue = (key: string | undefined): void => {
    if (key) queue.add(key);
  };
  const fairQueue = new FairQueue(o.maxRunningJobs ?? 0, enqueue);
  const { pdfJobs, jobs, pods, caches } = controllerInformers({
    kubeConfig: o.kubeConfig,
    ...(ns ? { namespace: ns } : {}),
    ...(o.resyncMs === undefined ? {} : { resyncMs: o.resyncMs }),
    onPdfJob: (pj, kind) => {
      fairQueue.observe(pj, kind);
      enqueue(objectKey(pj));
    },
    enqueue,
    log,
  });
  // The receivers' circuit breakers (core/webhooks/breaker.ts): the same policy as embedded mode.
  const breakers = new ReceiverBreakers({
    onChange: (state, tenant, host) =>
      state === "open"
        ? logger?.warn({ tenant, host }, "Opened webhook circuit")
        : logger?.info({ tenant, host }, "Closed webhook circuit"),
  });
  const secrets = kubeSecrets(o.kubeConfig);
  const sendWebhook = o.sendWebhook ?? clusterWebhookSender(o, breakers, secrets);
  const reconciler = new Reconciler({
    caches,
    template: o.template,
    ...(o.prepareJob ? { prepareJob: o.prepareJob } : {}),
    store: metrics.instrumentStore(o.store),
    kube: kubeClient(o.kubeConfig),
    sendWebhook,
    sent: new SentAttempts(),
    onWebhookAttempt: (result) => metrics.webhook(result),
    onPhaseChange: (change) => metrics.phaseChanged(change),
    onReconcile: (result, seconds) => metrics.reconciled(result, seconds),
    fairQueue,
    secretExists: async (namespace, name) => (await secrets(namespace, name)) !== null,
    ...(logger ? { logger } : {}),
  });

  const informers = [pdfJobs, jobs, pods];
  for (const i of informers) i.start();
  const synced = Promise.all(informers.map((i) => i.waitForSync())).then(() => undefined);
  const ready = (): boolean => informers.every((i) => i.hasSynced);
  // Workers start once the caches are full (a reconcile on a partial cache would re-create Jobs)
  // and, with leader election, once this process leads.
  const elector = o.leaderElection ? new LeaderElector(o.kubeConfig, o.leaderElection, logger) : undefined;
  const leading = new Promise<void>((resolve) => {
    if (!elector) return resolve();
    elector.run(
      () => {
        metrics.setLeader(true);
        resolve();
      },
      () => {
        metrics.setLeader(false);
        queue.shutDown();
        (o.leaderElection?.onLost ?? (() => undefined))();
      },
    );
  });
  if (!elector) metrics.setLeader(true);
  // Only the active replica reports the PdfJobs, so that sums over replicas count each once.
  metrics.observePdfJobs(() => (ready() && (!elector || elector.isLeader) ? pdfJobs.list().map((pj) => pj.status?.phase) : null));
  let stopping = false;
  const workers = Promise.all([synced, leading]).then(() =>
    stopping ? [] : Promise.all(Array.from({ length: Math.max(1, o.workers ?? 2) }, () => reconciler.work(queue))),
  );
  const sweeper = o.uploadSweep
    ? startUploadSweep(o.store, o.uploadSweep, () => unfinishedInputs(pdfJobs.list()), Promise.all([synced, leading]), logger)
    : undefined;

  return {
    queue,
    elector,
    reconciler,
    caches,
    metrics,
    synced: () => synced,
    ready,
    async stop() {
      stopping = true;
      fairQueue.stop();
      sweeper?.stop();
      await queue.shutDownWithDrain();
      await elector?.stop();
      metrics.setLeader(false);
      await Promise.all(informers.map((i) => i.stop()));
      // A follower's workers never started: nothing to wait for.
      if (!elector || elector.isLeader) await workers;
      breakers.shutdown();
    },
  };
}

function kubeConfigFrom(config: Config): KubeConfig {
  const kc = new KubeConfig();
  if (config.KUBECONFIG) kc.loadFromFile(config.KUBECONFIG);
  else kc.loadFromCluster();
  return kc;
}

/**
 * The runner Jobs' template from the FOLIO_RUNNER_* settings (the chart sets them). Runner pods get
 * no storage settings or credentials: presigned URLs for their own objects (runner-access.ts).
 */

/** A configuration problem found at start: `folio controller` reports it and exits with 2. */
class StartupError extends Error {}

const reason = (err: unknown): string => (err instanceof Error ? err.message : String(err));

function clusterConfig(config: Config): KubeConfig {
  try {
    return kubeConfigFrom(config);
  } catch (err) {
    throw new StartupError(`cannot load the cluster configuration (${config.KUBECONFIG ? "KUBECONFIG" : "in-cluster"}): ${reason(err)}`);
  }
}

/** Trust for webhook receivers: FOLIO_WEBHOOK_CA_FILE in addition to the system roots, not instead of them. */
function webhookTls(config: Config): TlsTrust | undefined {
  if (!config.FOLIO_WEBHOOK_CA_FILE) return undefined;
  try {
    return { ca: [...rootCertificates, readFileSync(config.FOLIO_WEBHOOK_CA_FILE, "utf8")].join("\n") };
  } catch (err) {
    throw new StartupError(`cannot read FOLIO_WEBHOOK_CA_FILE: ${reason(err)}`);
  }
}

function leaderElectionFrom(config: Config, onLost: () => void): LeaderElectionOptions | undefined {
  if (!config.FOLIO_CONTROLLER_LEADER_ELECTION) return undefined;
  return {
    namespace: config.FOLIO_CONTROLLER_LEASE_NAMESPACE ?? config.FOLIO_CONTROLLER_NAMESPACE ?? config.POD_NAMESPACE ?? "default",
    name: "folio-controller",
    identity: `${config.POD_NAME ?? hostname()}_${randomBytes(4).toString("hex")}`,
    onLost,
  };
}

/** Runner pods get no bucket credentials: each Job gets presigned URLs for its own keys, in a Secret (runner-access.ts). */
function presignedAccess(config: Config, store: S3ObjectStore, kubeConfig: KubeConfig): NonNullable<ControllerOptions["prepareJob"]> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  // The runners' own address of the store, when their network reaches it by another one.
  const runnerEndpoint = config.FOLIO_RUNNER_S3_ENDPOINT ?? config.FOLIO_S3_ENDPOINT;
  return accessPreparer({
    target: {
      bucket: config.FOLIO_S3_BUCKET ?? "",
      region: config.FOLIO_S3_REGION,
      ...(runnerEndpoint ? { endpoint: runnerEndpoint } : {}),
      forcePathStyle: config.FOLIO_S3_FORCE_PATH_STYLE,
    },
    credentials: () => store.client.config.credentials(),
    maxBytes: config.FOLIO_MAX_OUTPUT_BYTES,
    createSecret: async (namespace, body) => {
      await core.createNamespacedSecret({ namespace, body });
    },
  });
}

async function metricsServer(config: Config, metrics: ControllerMetrics, controller: Controller): Promise<MetricsServer> {
  try {
    return await serveMetrics({ registry: metrics.registry, port: config.FOLIO_METRICS_PORT, ready: () => controller.ready() });
  } catch (err) {
    await controller.stop();
    throw new StartupError(`cannot listen on FOLIO_METRICS_PORT ${config.FOLIO_METRICS_PORT}: ${reason(err)}`);
  }
}

/** `folio controller`: runs until SIGTERM/SIGINT; configured by the environment (core/config.ts). */
export async function controllerCommand(argv: readonly string[]): Promise<number> {
  if (argv.length > 0) {
    process.stderr.write("usage: folio controller   (configured by the environment: see the README's configuration table)\n");
    return 2;
  }
  try {
    return await runController(loadConfig());
  } catch (err) {
    if (!(err instanceof StartupError)) throw err;
    process.stderr.write(`folio controller: ${err.message}\n`);
    return 2;
  }
}

async function runController(config: Config): Promise<number> {
  const logger = createLogger({ level: config.FOLIO_LOG_LEVEL, pretty: config.FOLIO_PRETTY_LOGS }, { component: "controller" });
  const image = config.FOLIO_RUNNER_IMAGE;
  if (!image) throw new StartupError("FOLIO_RUNNER_IMAGE is not set");
  const template = jobTemplateFromConfig(config, image);
  const store = S3ObjectStore.fromConfig(config);
  const namespace = config.FOLIO_CONTROLLER_NAMESPACE;
  let lost = false;
  let wake: () => void = () => undefined;
  const leaderElection = leaderElectionFrom(config, () => {
    lost = true;
    wake();
  });
  const kubeConfig = clusterConfig(config);
  const tls = webhookTls(config);
  const metrics = new ControllerMetrics();
  const controller = startController({
    ...(leaderElection ? { leaderElection } : {}),
    kubeConfig,
    store,
    template,
    prepareJob: presignedAccess(config, store, kubeConfig),
    ...(namespace ? { namespace } : {}),
    workers: config.FOLIO_CONTROLLER_WORKERS,
    maxRunningJobs: config.FOLIO_MAX_RUNNING_JOBS,
    uploadSweep: { intervalMs: config.FOLIO_SWEEP_INTERVAL_MS, ttlMs: config.FOLIO_UPLOAD_TTL_SECONDS * 1000 },
    webhooks: { allowedHosts: config.FOLIO_WEBHOOK_ALLOWED_HOSTS, ...(tls ? { tls } : {}) },
    metrics,
    logger,
  });
  const server = await metricsServer(config, metrics, controller);
  logger.info({ port: server.port }, "metrics, /healthz and /readyz listening");
  await controller.synced();
  logger.info("caches synced; reconciling");
  await new Promise<void>((resolve) => {
    wake = resolve;
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  logger.info(lost ? "lost the leader lease; exiting" : "stopping");
  await controller.stop();
  await server.close();
  return lost ? 1 : 0;
}
