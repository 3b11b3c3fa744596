/**
 * Feeds the daily usage aggregates from the job backend: every minute (and just before a Usage
 * page is shown) it lists each tenant's jobs and counts the ones that ended and were not counted
 * yet. It reads jobs only through the JobBackend interface, so it works in both modes; the store's
 * "counted" markers make it safe to run on every replica at once. Jobs deleted by their client
 * before a pass are not counted (their record is gone at once).
 */
import type { Logger } from "../../core/logger.ts";
import type { JobObject } from "../../core/schemas/api.ts";
import type { JobBackend } from "../jobs/backend.ts";
import type { DashboardTenants } from "./tenants-port.ts";
import type { EndedJob, UsageStore } from "../store/usage.ts";

const ENDED = new Set(["succeeded", "failed", "canceled"]);
const MAX_PAGES = 50;

export function endedJob(tenantId: string, j: JobObject): EndedJob | null {
  if (!ENDED.has(j.status) || !j.completed_at) return null;
  const started = j.started_at ? Date.parse(j.started_at) : null;
  const completed = Date.parse(j.completed_at);
  return {
    id: j.id,
    tenant_id: tenantId,
    operation: j.operation,
    outcome: j.status as EndedJob["outcome"],
    completed_at: completed,
    pages: j.inputs.reduce((a, i) => a + (i.pages ?? 0), 0),
    bytes_in: j.inputs.reduce((a, i) => a + i.size, 0),
    bytes_out: (j.result?.files ?? []).reduce((a, f) => a + f.size, 0),
    duration_ms: started !== null ? Math.max(0, completed - started) : null,
  };
}

export class UsageCollector {
  private readonly o: { backend: JobBackend; tenants: DashboardTenants; usage: UsageStore; log: Logger; intervalMs?: number };
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(o: UsageCollector["o"]) {
    this.o = o;
  }

  /** Counts the ended jobs of one tenant (newest first, until a page holds nothing new). */
  async collect(tenantId: string): Promise<number> {
    let counted = 0;
    let after: string | undefined;
    for (let i = 0; i < MAX_PAGES; i++) {
      const page = await this.o.backend.listJobs(tenantId, { limit: 100, ...(after ? { startingAfter: after } : {}) });
      for (const j of page.data) {
        const e = endedJob(tenantId, j);
        if (e && (await this.o.usage.count(e))) counted++;
      }
      const last = page.data.at(-1);
      if (!page.has_more || !last) break;
      after = last.id;
    }
    return counted;
  }

  async collectAll(): Promise<void> {
    for (const t of await this.o.tenants.listTenants()) await this.collect(t.id);
    // Jobs live at most 24 h after they end; their markers can go after 48 h.
    await this.o.usage.prune(Date.now() - 48 * 3_600_000);
  }

  start(): void {
    const tick = (): void => {
      this.running ??= this.collectAll()
        .catch((err: unknown) => this.o.log.error({ err }, "Usage collection failed"))
        .finally(() => (this.running = null));
    };
    this.timer = setInterval(tick, this.o.intervalMs ?? 60_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
