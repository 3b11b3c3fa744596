/** Early-access requests (API.md "Access requests"), decided by operators with the admin CLI. */
import { newId } from "../../core/ids.ts";
import type { AccessRequestBody } from "../../core/schemas/api.ts";
import { sql, type Db } from "./db.ts";

export interface AccessRequestRow extends Omit<AccessRequestBody, "file_types" | "needs_dpa"> {
  id: string;
  file_types: string[];
  needs_dpa: boolean;
  status: "pending" | "approved" | "rejected";
  created_at: number;
  decided_at: number | null;
  tenant_id: string | null;
}

type Raw = Omit<AccessRequestRow, "file_types" | "needs_dpa"> & { file_types: string; needs_dpa: number };
const parse = (r: Raw): AccessRequestRow => ({ ...r, file_types: JSON.parse(r.file_types) as string[], needs_dpa: r.needs_dpa === 1 });

export class AccessRequestStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  create(body: AccessRequestBody, now = Date.now()): AccessRequestRow {
    const id = newId("areq");
    sql(
      this.db,
      `INSERT INTO access_requests (id, email, company, use_case, description, expected_monthly_volume, file_types, needs_dpa, status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)`,
    ).run(
      id,
      body.email,
      body.company,
      body.use_case,
      body.description,
      body.expected_monthly_volume,
      JSON.stringify(body.file_types),
      body.needs_dpa ? 1 : 0,
      now,
    );
    return this.get(id)!;
  }

  get(id: string): AccessRequestRow | undefined {
    const r = sql(this.db, "SELECT * FROM access_requests WHERE id = ?").get(id) as Raw | undefined;
    return r && parse(r);
  }

  list(status?: string): AccessRequestRow[] {
    const rows = (status
      ? sql(this.db, "SELECT * FROM access_requests WHERE status = ? ORDER BY created_at").all(status)
      : sql(this.db, "SELECT * FROM access_requests ORDER BY created_at").all()) as unknown as Raw[];
    return rows.map(parse);
  }

  decide(id: string, status: "approved" | "rejected", tenantId: string | null, now = Date.now()): boolean {
    return (
      sql(this.db, "UPDATE access_requests SET status = ?, decided_at = ?, tenant_id = ? WHERE id = ? AND status = 'pending'").run(
        status,
        now,
        tenantId,
        id,
      ).changes > 0
    );
  }
}
