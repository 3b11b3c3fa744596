/* eslint-disable @typescript-eslint/require-await -- a synchronous SQLite implementation of an asynchronous contract (Kubernetes mode keeps these in the cluster) */
/**
 * Daily usage aggregates per tenant: jobs by operation and outcome, pages and bytes processed,
 * and a histogram of durations (p50/p95 are read from it). Job records expire an hour after a job
 * ends, so the dashboard's 30-day charts come from these rows, never from the jobs themselves.
 */
import { migrateDashboard } from "./dashboard-schema.ts";
import { sql, transaction, type Db } from "./db.ts";

/** Upper bounds of the duration histogram (ms); the last bucket is everything slower. */
export const DURATION_BUCKETS_MS = [100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 120_000, 300_000] as const;

export interface EndedJob {
  id: string;
  tenant_id: string;
  operation: string;
  outcome: "succeeded" | "failed" | "canceled";
  completed_at: number;
  pages: number;
  bytes_in: number;
  bytes_out: number;
  duration_ms: number | null;
}

export interface UsageRow {
  tenant_id: string;
  day: string;
  operation: string;
  outcome: string;
  jobs: number;
  pages: number;
  bytes_in: number;
  bytes_out: number;
  durations: number[];
}

export interface UsageStore {
  /** Adds an ended job to its day's aggregate, once: a job already counted is ignored. */
  count(job: EndedJob, now?: number): Promise<boolean>;
  /** Rows of the last `days` days (UTC), of one tenant or of all. */
  since(tenantId: string | null, fromDay: string): Promise<UsageRow[]>;
  /** Forgets the counted-job markers older than `before` (jobs that old have expired). */
  prune(before: number): Promise<void>;
}

export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export function bucketOf(ms: number): number {
  const i = DURATION_BUCKETS_MS.findIndex((b) => ms <= b);
  return i === -1 ? DURATION_BUCKETS_MS.length : i;
}

/** The q-quantile of a histogram, linearly interpolated within its bucket (Prometheus' way). */
export function quantile(hist: readonly number[], q: number): number | null {
  const total = hist.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    const n = hist[i] ?? 0;
    if (seen + n >= rank && n > 0) {
      const lo = i === 0 ? 0 : DURATION_BUCKETS_MS[i - 1]!;
      const hi = DURATION_BUCKETS_MS[i] ?? lo;
      return Math.round(lo + (hi - lo) * ((rank - seen) / n));
    }
    seen += n;
  }
  return DURATION_BUCKETS_MS[DURATION_BUCKETS_MS.length - 1]!;
}

export class SqliteUsageStore implements UsageStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
    migrateDashboard(db);
  }

  async count(job: EndedJob, now = Date.now()): Promise<boolean> {
    return transaction(this.db, () => {
      if (sql(this.db, "INSERT OR IGNORE INTO usage_counted (job_id, at) VALUES (?, ?)").run(job.id, now).changes === 0) return false;
      const day = utcDay(job.completed_at);
      const key = [job.tenant_id, day, job.operation, job.outcome] as const;
      const row = sql(this.db, "SELECT durations FROM usage_daily WHERE tenant_id = ? AND day = ? AND operation = ? AND outcome = ?").get(
        ...key,
      ) as { durations: string } | undefined;
      const hist = row ? (JSON.parse(row.durations) as number[]) : new Array<number>(DURATION_BUCKETS_MS.length + 1).fill(0);
      if (job.duration_ms !== null) hist[bucketOf(job.duration_ms)] = (hist[bucketOf(job.duration_ms)] ?? 0) + 1;
      sql(
        this.db,
        `INSERT INTO usage_daily (tenant_id, day, operation, outcome, jobs, pages, bytes_in, bytes_out, durations)
           VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?)
           ON CONFLICT (tenant_id, day, operation, outcome) DO UPDATE SET jobs = jobs + 1, pages = pages + excluded.pages,
             bytes_in = bytes_in + excluded.bytes_in, bytes_out = bytes_out + excluded.bytes_out, durations = excluded.durations`,
      ).run(...key, job.pages, job.bytes_in, job.bytes_out, JSON.stringify(hist));
      return true;
    });
  }

  async since(tenantId: string | null, fromDay: string): Promise<UsageRow[]> {
    const rows = (tenantId === null
      ? sql(this.db, "SELECT * FROM usage_daily WHERE day >= ? ORDER BY day").all(fromDay)
      : sql(this.db, "SELECT * FROM usage_daily WHERE tenant_id = ? AND day >= ? ORDER BY day").all(tenantId, fromDay)) as unknown as (Omit<
      UsageRow,
      "durations"
    > & { durations: string })[];
    return rows.map((r) => ({ ...r, durations: JSON.parse(r.durations) as number[] }));
  }

  async prune(before: number): Promise<void> {
    sql(this.db, "DELETE FROM usage_counted WHERE at < ?").run(before);
  }
}
