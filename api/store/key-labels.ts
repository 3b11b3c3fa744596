/* eslint-disable @typescript-eslint/require-await -- a synchronous SQLite implementation of an asynchronous contract (Kubernetes mode keeps these in the cluster) */
/**
 * What the dashboard shows beside an API key that the key store does not keep: its name, who
 * created it, and which key it replaced when it came from a rotation.
 */
import { migrateDashboard } from "./dashboard-schema.ts";
import { sql, type Db } from "./db.ts";

export interface KeyLabel {
  key_id: string;
  tenant_id: string;
  name: string;
  created_by: string;
  replaces: string | null;
}

export interface KeyLabels {
  set(label: KeyLabel): Promise<void>;
  forTenant(tenantId: string): Promise<Map<string, KeyLabel>>;
}

export class SqliteKeyLabels implements KeyLabels {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
    migrateDashboard(db);
  }

  async set(l: KeyLabel): Promise<void> {
    sql(this.db, "INSERT OR REPLACE INTO key_labels (key_id, tenant_id, name, created_by, replaces) VALUES (?, ?, ?, ?, ?)").run(
      l.key_id,
      l.tenant_id,
      l.name,
      l.created_by,
      l.replaces,
    );
  }

  async forTenant(tenantId: string): Promise<Map<string, KeyLabel>> {
    const rows = sql(this.db, "SELECT * FROM key_labels WHERE tenant_id = ?").all(tenantId) as unknown as KeyLabel[];
    return new Map(rows.map((r) => [r.key_id, r]));
  }
}
