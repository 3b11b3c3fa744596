/**
 * The dashboard of embedded mode: its stores in the data directory's SQLite file, its signing key
 * in the data directory (made once, 0600), the service health read from the same database and the
 * runner pool, and the usage collector. api/main.ts calls this; app.ts mounts the router.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Config } from "../../core/config.ts";
import type { Logger } from "../../core/logger.ts";
import { SsrfGuard } from "../../core/net/ssrf.ts";
import type { JobBackend } from "../jobs/backend.ts";
import { SqliteAuditLog } from "../store/audit.ts";
import { sql, type Db } from "../store/db.ts";
import { SqliteKeyLabels } from "../store/key-labels.ts";
import { SqliteUsageStore } from "../store/usage.ts";
import { SqliteUserStore } from "../store/users.ts";
import { SqliteWebhookAttempts } from "../store/webhook-attempts.ts";
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

export function sqliteDashboardStores(db: Db): DashboardStores {
  return {
    users: new SqliteUserStore(db),
    audit: new SqliteAuditLog(db),
    usage: new SqliteUsageStore(db),
    keyLabels: new SqliteKeyLabels(db),
    attempts: new SqliteWebhookAttempts(db),
  };
}

/** Records a webhook attempt for the job page. */
export function attemptRecorder(stores: DashboardStores): (a: AttemptRecord) => void {
  return (a) =>
    stores.attempts?.record({
      delivery_id: a.delivery.id,
      job_id: a.delivery.job_id,
      tenant_id: a.delivery.tenant_id,
      at: a.at,
      status_code: a.status,
      latency_ms: a.latencyMs,
      error: a.error,
      next_attempt_at: a.nextAttemptAt,
    });
}

export interface EmbeddedDashboard {
  deps: DashboardDeps;
  collector: UsageCollector;
}

export function embeddedDashboard(o: {
  config: Config;
  log: Logger;
  db: Db;
  dataDir: string;
  backend: JobBackend;
  tenants: DashboardTenants;
  accessRequests: DashboardAccessRequests;
  stores: DashboardStores;
  pool: { busyCount: number; size: number } | null;
}): EmbeddedDashboard {
  const { config, db, stores } = o;
  const health = async (): Promise<ServiceHealth> => {
    const counts = sql(
      db,
      "SELECT status, COUNT(*) AS n FROM jobs WHERE status IN ('queued', 'running') GROUP BY status",
    ).all() as unknown as {
      status: string;
      n: number;
    }[];
    const n = (s: string): number => counts.find((c) => c.status === s)?.n ?? 0;
    return {
      queued: n("queued"),
      running: n("running"),
      engines: o.pool ? { busy: o.pool.busyCount, size: o.pool.size } : null,
      webhookBacklog: stores.attempts?.backlog() ?? null,
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
