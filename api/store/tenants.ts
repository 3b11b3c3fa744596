/**
 * Tenants, their plans and webhook secrets, and their API keys. Keys look like
 * `folio_sk_<key_id>_<secret>` (API.md); only a SHA-256 hash of the secret is stored, the key is
 * found by key_id and the hash compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { newId, randomBase62 } from "../../core/ids.ts";
import { sql, transaction, type Db } from "./db.ts";

export const PLANS = ["business", "free"] as const;
export type Plan = (typeof PLANS)[number];

export interface Tenant {
  id: string;
  name: string;
  plan: Plan;
  webhook_secret: string;
  webhook_secret_prev: string | null;
  webhook_secret_prev_until: number | null;
  created_at: number;
}

export interface ApiKeyRow {
  key_id: string;
  tenant_id: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

export const KEY_PREFIX = "folio_sk_";
const KEY_PATTERN = /^folio_sk_([0-9A-Za-z]{16})_([0-9A-Za-z]{32})$/;

const hashSecret = (secret: string): Buffer => createHash("sha256").update(secret, "utf8").digest();
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString("base64")}`;

export class TenantStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  create(name: string, plan: Plan, now = Date.now()): Tenant {
    const tenant: Tenant = {
      id: newId("ten"),
      name,
      plan,
      webhook_secret: newWebhookSecret(),
      webhook_secret_prev: null,
      webhook_secret_prev_until: null,
      created_at: now,
    };
    sql(this.db, "INSERT INTO tenants (id, name, plan, webhook_secret, created_at) VALUES (?, ?, ?, ?, ?)").run(
      tenant.id,
      name,
      plan,
      tenant.webhook_secret,
      now,
    );
    return tenant;
  }

  byName(name: string): Tenant | undefined {
    return sql(this.db, "SELECT * FROM tenants WHERE name = ?").get(name) as Tenant | undefined;
  }

  byId(id: string): Tenant | undefined {
    return sql(this.db, "SELECT * FROM tenants WHERE id = ?").get(id) as Tenant | undefined;
  }

  list(): Tenant[] {
    return sql(this.db, "SELECT * FROM tenants ORDER BY created_at").all() as unknown as Tenant[];
  }

  setPlan(id: string, plan: Plan): void {
    sql(this.db, "UPDATE tenants SET plan = ? WHERE id = ?").run(plan, id);
  }

  /** A new signing secret; the old one keeps signing too until `graceMs` from now. */
  rotateWebhookSecret(id: string, graceMs: number, now = Date.now()): Tenant {
    const t = this.byId(id);
    if (!t) throw new Error(`no tenant ${id}`);
    const next = newWebhookSecret();
    sql(this.db, "UPDATE tenants SET webhook_secret = ?, webhook_secret_prev = ?, webhook_secret_prev_until = ? WHERE id = ?").run(
      next,
      t.webhook_secret,
      now + graceMs,
      id,
    );
    return this.byId(id)!;
  }

  /** The secrets that sign now: the current one, and the previous one during its grace period. */
  signingSecrets(t: Tenant, now = Date.now()): string[] {
    const prevValid = t.webhook_secret_prev && (t.webhook_secret_prev_until ?? 0) > now;
    return prevValid ? [t.webhook_secret, t.webhook_secret_prev!] : [t.webhook_secret];
  }

  /** Creates an API key; the full key is returned once and never stored. */
  createKey(tenantId: string, now = Date.now()): { key_id: string; key: string } {
    const key_id = randomBase62(16);
    const secret = randomBase62(32);
    sql(this.db, "INSERT INTO api_keys (key_id, tenant_id, secret_hash, created_at) VALUES (?, ?, ?, ?)").run(
      key_id,
      tenantId,
      hashSecret(secret),
      now,
    );
    return { key_id, key: `${KEY_PREFIX}${key_id}_${secret}` };
  }

  listKeys(tenantId: string): ApiKeyRow[] {
    return sql(
      this.db,
      "SELECT key_id, tenant_id, created_at, expires_at, revoked_at, last_used_at FROM api_keys WHERE tenant_id = ? ORDER BY created_at",
    ).all(tenantId) as unknown as ApiKeyRow[];
  }

  keyById(keyId: string): ApiKeyRow | undefined {
    return sql(this.db, "SELECT key_id, tenant_id, created_at, expires_at, revoked_at, last_used_at FROM api_keys WHERE key_id = ?").get(
      keyId,
    ) as ApiKeyRow | undefined;
  }

  /** Revocation is immediate. */
  revokeKey(keyId: string, now = Date.now()): boolean {
    return sql(this.db, "UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL").run(now, keyId).changes > 0;
  }

  /** A new key for the same tenant; the old one stays valid for `graceMs`. */
  rotateKey(keyId: string, graceMs: number, now = Date.now()): { key_id: string; key: string } {
    return transaction(this.db, () => {
      const old = this.keyById(keyId);
      if (!old || old.revoked_at !== null) throw new Error(`no active key ${keyId}`);
      const expires = Math.min(old.expires_at ?? Infinity, now + graceMs);
      sql(this.db, "UPDATE api_keys SET expires_at = ? WHERE key_id = ?").run(expires, keyId);
      return this.createKey(old.tenant_id, now);
    });
  }

  /**
   * The tenant of a presented key, or null when the key is malformed, unknown, revoked or expired.
   * Every path does the same hash comparison so timing tells nothing about which one it was.
   */
  authenticate(presented: string, now = Date.now()): { tenant: Tenant; keyId: string } | null {
    const m = KEY_PATTERN.exec(presented);
    const keyId = m?.[1] ?? "";
    const row = sql(this.db, "SELECT * FROM api_keys WHERE key_id = ?").get(keyId) as (ApiKeyRow & { secret_hash: Uint8Array }) | undefined;
    const want = row ? Buffer.from(row.secret_hash) : Buffer.alloc(32);
    const match = timingSafeEqual(want, hashSecret(m?.[2] ?? ""));
    if (!m || !row || !match || row.revoked_at !== null || (row.expires_at !== null && row.expires_at <= now)) return null;
    const tenant = this.byId(row.tenant_id);
    if (!tenant) return null;
    // last_used_at is informational; update it at most once a minute to spare the writer.
    if (!row.last_used_at || now - row.last_used_at > 60_000) {
      sql(this.db, "UPDATE api_keys SET last_used_at = ? WHERE key_id = ?").run(now, keyId);
    }
    return { tenant, keyId };
  }
}
