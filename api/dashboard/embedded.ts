/**
 * The dashboard of embedded mode: its stores in the data directory's SQLite file, its signing key
 * in the data directory (made once, 0600), the service health read from the same database and the
 * runner pool, and the usage collector. api/main.ts calls this; app.ts mounts the router.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Config } from "../../core/config.ts";
import type { Logger } from "../../core/logger.ts";
import { SsrfGuard } from "../../core/net/ssrf.ts";
import type { JobBackend } from "../jobs/backend.ts";
import type { PdfJobClient } from "../jobs/pdfjob-client.ts";
import { SqliteAuditLog } from "../store/audit.ts";
import { sql, type Db } from "../store/db.ts";
import { SqliteKeyLabels } from "../store/key-labels.ts";
import { KubernetesAuditLog, KubernetesKeyLabels, KubernetesUsageStore, KubernetesUserStore } from "../store/kubernetes-dashboard.ts";
import { JsonObjects } from "../store/kubernetes-objects.ts";
import type { PdfJobCache } from "../store/kubernetes/pdfjob-cache.ts";
import { KubernetesWebhookAttempts } from "../store/kubernetes/webhook-attempts.ts";
import { SqliteUsageStore } from "../store/usage.ts";
import { SqliteUserStore } from "../store/users.ts";
import { SqliteWebhookAttempts, type WebhookAttemptLog } from "../store/webhook-attempts.ts";
import type { AttemptRecord } from "../webhooks/delivery.ts";
import type { DashboardDeps, DashboardStores, ServiceHealth } from "./context.ts";
import { publicUrl } from "./invites.ts";
import { smtpMailer } from "./mail.ts";
import { oidcSignIn } from "./oidc.ts";
import type { DashboardAccessRequests, DashboardTenants } from "./tenants-port.ts";
import { testWebhookSender } from "./test-webhook.ts";
import { UsageCollector } from "./usage-collector.ts";

/** FOLIO_DASHBOARD_SECRET, else a key made once in the data directory. */
export function dashboardKey(config: Config, dataDir: string): Buffer {
  if (config.FOLIO_DASHBOARD_SECRET) return Buffer.from(config.FOLIO_DASHBOARD_SECRET, "utf8");
  const file = path.join(dataDir, "dashboard.key");
  if (!existsSync(file)) writeFileSync(file, randomBytes(32), { mode: 0o600, flag: "wx" });
  return readFileSync(file);
}

/**
 * Kubernetes mode: the dashboard's stores in the cluster (api/store/kubernetes-dashboard.ts), in
 * the namespace the API works in, so that every API replica shares them. The controller keeps
 * webhook attempts in each PdfJob's status: they are read through the API's PdfJob cache
 * (`jobs`; absent for the admin CLI, which has no use for them).
 */
export function kubernetesDashboardStores(
  kc: KubeConfig,
  namespace: string,
  jobs?: { cache: PdfJobCache; client: PdfJobClient },
): DashboardStores {
  const objects = new JsonObjects(kc, namespace);
  return {
    users: new KubernetesUserStore(objects),
    audit: new KubernetesAuditLog(objects),
    usage: new KubernetesUsageStore(objects),
    keyLabels: new KubernetesKeyLabels(objects),
    attempts: jobs ? new KubernetesWebhookAttempts(jobs.cache, jobs.client) : null,
  };
}

export function sqliteDashboardStores(db: Db): DashboardStores & { attempts: WebhookAttemptLog } {
  return {
    users: new SqliteUserStore(db),
    audit: new SqliteAuditLog(db),
    usage: new SqliteUsageStore(db),
    keyLabels: new SqliteKeyLabels(db),
    attempts: new SqliteWebhookAttempts(db),
  };
}

/** Records a webhook attempt for the job page (the delivery worker does not wait for it). */
export function attemptRecorder(stores: { attempts: WebhookAttemptLog }, log: Logger): (a: AttemptRecord) => void {
  return (a) =>
    void stores.attempts
      .record({
        delivery_id: a.delivery.id,
        job_id: a.delivery.job_id,
        tenant_id: a.delivery.tenant_id,
        at: a.at,
        status_code: a.status,
        latency_ms: a.latencyMs,
        error: a.error,
        next_attempt_at: a.nextAttemptAt,
      })
      .catch((err: unknown) => log.error({ err }, "Could not record a webhook attempt"));
}

type Counts = (status: "queued" | "running") => number;

function embeddedCounts(db: Db): Counts {
  const rows = sql(db, "SELECT status, COUNT(*) AS n FROM jobs WHERE status IN ('queued', 'running') GROUP BY status").all() as unknown as {
    status: string;
    n: number;
  }[];
  return (status) => rows.find((c) => c.status === status)?.n ?? 0;
}

/** Unfinished jobs of every tenant, counted through the job backend (at most 1,000 per tenant and status). */
async function backendCounts(backend: JobBackend, tenants: DashboardTenants): Promise<Counts> {
  const counts = { queued: 0, running: 0 };
  for (const t of await tenants.listTenants()) {
    for (const status of ["queued", "running"] as const) {
      let after: string | undefined;
      for (let page = 0; page < 10; page++) {
        const r = await backend.listJobs(t.id, { status, limit: 100, ...(after ? { startingAfter: after } : {}) });
        counts[status] += r.data.length;
        after = r.data.at(-1)?.id;
        if (!r.has_more || !after) break;
      }
    }
  }
  return (status) => counts[status];
}

export interface EmbeddedDashboard {
  deps: DashboardDeps;
  collector: UsageCollector;
}

export function embeddedDashboard(o: {
  config: Config;
  log: Logger;
  /** Embedded mode's database (job counts); null in Kubernetes mode. */
  db: Db | null;
  dataDir: string;
  backend: JobBackend;
  tenants: DashboardTenants;
  accessRequests: DashboardAccessRequests;
  stores: DashboardStores;
  pool: { busyCount: number; size: number } | null;
}): EmbeddedDashboard {
  const { config, stores } = o;
  const health = async (): Promise<ServiceHealth> => {
    // Embedded: one query on the jobs table. Kubernetes: the PdfJobs of every tenant, through the backend.
    const n = o.pool && o.db ? embeddedCounts(o.db) : await backendCounts(o.backend, o.tenants);
    return {
      queued: n("queued"),
      running: n("running"),
      engines: o.pool ? { busy: o.pool.busyCount, size: o.pool.size } : null,
      webhookBacklog: (await stores.attempts?.backlog()) ?? null,
      ready: await o.backend.ready(),
    };
  };
  const collector = new UsageCollector({ backend: o.backend, tenants: o.tenants, usage: stores.usage, log: o.log });
  const deps: DashboardDeps = {
    config,
    log: o.log.child({ component: "dashboard" }),
    backend: o.backend,
    tenants: o.tenants,
    accessRequests: o.accessRequests,
    stores,
    signingKey: dashboardKey(config, o.dataDir),
    publicUrl: publicUrl(config),
    health,
    mailer: smtpMailer(config),
    oidc: oidcSignIn(config),
    sendTestWebhook: testWebhookSender(new SsrfGuard(config.FOLIO_WEBHOOK_ALLOWED_HOSTS), async (t) => [
      await o.tenants.webhookSecret(t.name),
    ]),
    collectUsage: (tenantId) => collector.collect(tenantId),
  };
  return { deps, collector };
}
