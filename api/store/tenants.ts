/**
 * Tenants, their plans and webhook secrets, and their API keys. Keys look like
 * `folio_sk_<key_id>_<secret>` (API.md); only a SHA-256 hash of the secret is stored, the key is
 * found by key_id and the hash compared in constant time.
 *
 * Two contracts, one implementation per mode (docs/adr/0008):
 * - `KeyAuthenticator`: the request path — synchronous, from memory or a prepared statement;
 * - `TenantAdmin` (tenant-admin.ts): the admin CLI and the dashboard — asynchronous.
 * Embedded mode: the SQLite TenantStore below (and SqliteTenantAdmin over it); Kubernetes mode:
 * Tenant resources and Secrets read through informers (api/store/kubernetes/tenants.ts).
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { newId, randomBase62 } from "../../core/ids.ts";
import { PLANS, type Plan } from "../../core/schemas/tenant.ts";
import { sql, transaction, type Db } from "./db.ts";

export { PLANS, type Plan };

/** What the request path knows of a tenant, in every mode. */
export interface TenantInfo {
  id: string;
  name: string;
  plan: Plan;
  /** A suspended tenant's keys answer 403 tenant_suspended. */
  suspended: boolean;
}

/** The request path's view of API keys: the tenant of a presented key. */
export interface KeyAuthenticator {
  /**
   * The tenant of a presented key, or null when the key is malformed, unknown, revoked or
   * expired (a suspended tenant's valid key is returned: the caller answers 403).
   */
  authenticate(presented: string, now?: number): { tenant: TenantInfo; keyId: string } | null;
  /** Whether a key of this id exists, whatever its state (the failed-auth throttle counts per real key). */
  keyById(keyId: string): { key_id: string } | undefined;
}

export interface Tenant extends TenantInfo {
  webhook_secret: string;
  webhook_secret_prev: string | null;
  webhook_secret_prev_until: number | null;
  created_at: number;
}

type TenantRow = Omit<Tenant, "suspended"> & { suspended: number };
const tenantOf = (r: TenantRow | undefined): Tenant | undefined => r && { ...r, suspended: r.suspended === 1 };

export interface ApiKeyRow {
  key_id: string;
  tenant_id: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

export const KEY_PREFIX = "folio_sk_";
export const KEY_PATTERN = /^folio_sk_([0-9A-Za-z]{16})_([0-9A-Za-z]{32})$/;

export const hashSecret = (secret: string): Buffer => createHash("sha256").update(secret, "utf8").digest();
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString("base64")}`;
/** A new API key: its id, the full key (shown once) and the hash that is kept. */
export function newApiKey(): { key_id: string; key: string; hash: Buffer } {
  const key_id = randomBase62(16);
  const secret = randomBase62(32);
  return { key_id, key: `${KEY_PREFIX}${key_id}_${secret}`, hash: hashSecret(secret) };
}

/**
 * Checks a presented key against the stored hash of its key id (null when there is none) in
 * constant time; every path does the same hash comparison so timing tells nothing. Returns the
 * key id when the secret matches.
 */
export function matchKey(presented: string, storedHash: (keyId: string) => Buffer | null): string | null {
  const m = KEY_PATTERN.exec(presented);
  const keyId = m?.[1] ?? "";
  const stored = m ? storedHash(keyId) : null;
  const match = timingSafeEqual(stored ?? Buffer.alloc(32), hashSecret(m?.[2] ?? ""));
  return m && stored && match ? keyId : null;
}

export class TenantStore implements KeyAuthenticator {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  create(name: string, plan: Plan, now = Date.now()): Tenant {
    const tenant: Tenant = {
      id: newId("ten"),
      name,
      plan,
      suspended: false,
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
    return tenantOf(sql(this.db, "SELECT * FROM tenants WHERE name = ?").get(name) as TenantRow | undefined);
  }

  byId(id: string): Tenant | undefined {
    return tenantOf(sql(this.db, "SELECT * FROM tenants WHERE id = ?").get(id) as TenantRow | undefined);
  }

  list(): Tenant[] {
    return (sql(this.db, "SELECT * FROM tenants ORDER BY created_at").all() as unknown as TenantRow[]).map((r) => tenantOf(r)!);
  }

  setPlan(id: string, plan: Plan): void {
    sql(this.db, "UPDATE tenants SET plan = ? WHERE id = ?").run(plan, id);
  }

  setSuspended(id: string, suspended: boolean): void {
    sql(this.db, "UPDATE tenants SET suspended = ? WHERE id = ?").run(suspended ? 1 : 0, id);
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
    const { key_id, key, hash } = newApiKey();
    sql(this.db, "INSERT INTO api_keys (key_id, tenant_id, secret_hash, created_at) VALUES (?, ?, ?, ?)").run(key_id, tenantId, hash, now);
    return { key_id, key };
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
    let row: (ApiKeyRow & { secret_hash: Uint8Array }) | undefined;
    const keyId = matchKey(presented, (id) => {
      row = sql(this.db, "SELECT * FROM api_keys WHERE key_id = ?").get(id) as (ApiKeyRow & { secret_hash: Uint8Array }) | undefined;
      return row ? Buffer.from(row.secret_hash) : null;
    });
    if (!keyId || !row || row.revoked_at !== null || (row.expires_at !== null && row.expires_at <= now)) return null;
    const tenant = this.byId(row.tenant_id);
    if (!tenant) return null;
    // last_used_at is informational; update it at most once a minute to spare the writer.
    if (!row.last_used_at || now - row.last_used_at > 60_000) {
      sql(this.db, "UPDATE api_keys SET last_used_at = ? WHERE key_id = ?").run(now, keyId);
    }
    return { tenant, keyId };
  }
}
