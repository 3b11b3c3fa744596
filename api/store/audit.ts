/* eslint-disable @typescript-eslint/require-await -- a synchronous SQLite implementation of an asynchronous contract (Kubernetes mode keeps these in the cluster) */
/** The audit log: who did what to keys, secrets, members and tenants, and from where. */
import { migrateDashboard } from "./dashboard-schema.ts";
import { sql, type Db } from "./db.ts";

export interface AuditEntry {
  id: number;
  tenant_id: string | null;
  actor: string;
  action: string;
  target: string | null;
  detail: Record<string, unknown>;
  address: string | null;
  at: number;
}

export type NewAuditEntry = Omit<AuditEntry, "id" | "at"> & { at?: number };

export interface AuditLog {
  record(e: NewAuditEntry): Promise<void>;
  /** Newest first; `tenantId` null lists the installation's (operator) entries. */
  list(tenantId: string | null, limit: number): Promise<AuditEntry[]>;
}

export class SqliteAuditLog implements AuditLog {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
    migrateDashboard(db);
  }

  async record(e: NewAuditEntry): Promise<void> {
    sql(this.db, "INSERT INTO audit_log (tenant_id, actor, action, target, detail, address, at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
      e.tenant_id,
      e.actor,
      e.action,
      e.target,
      JSON.stringify(e.detail),
      e.address,
      e.at ?? Date.now(),
    );
  }

  async list(tenantId: string | null, limit: number): Promise<AuditEntry[]> {
    const rows = (tenantId === null
      ? sql(this.db, "SELECT * FROM audit_log ORDER BY at DESC, id DESC LIMIT ?").all(limit)
      : sql(this.db, "SELECT * FROM audit_log WHERE tenant_id = ? ORDER BY at DESC, id DESC LIMIT ?").all(
          tenantId,
          limit,
        )) as unknown as (Omit<AuditEntry, "detail"> & { detail: string })[];
    return rows.map((r) => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> }));
  }
}
