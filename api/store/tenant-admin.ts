/**
 * What operators do to tenants, keys and access requests — the admin CLI (api/admin.ts) and the
 * dashboard — as one asynchronous contract with one implementation per mode (docs/adr/0008):
 * SqliteTenantAdmin below (the data directory), KubernetesTenants in
 * api/store/kubernetes/tenants.ts (Tenant resources and Secrets, with the user's kubeconfig, so
 * that the apiserver's RBAC decides who may do what).
 *
 * Tenants are named by their name; key ids are global. Times are epoch milliseconds.
 */
import type { AccessRequestBody } from "../../core/schemas/api.ts";
import type { Plan } from "../../core/schemas/tenant.ts";
import { AccessRequestStore, type AccessRequestRow } from "./access-requests.ts";
import type { Db } from "./db.ts";
import { TenantStore, type Tenant } from "./tenants.ts";

export interface TenantSummary {
  id: string;
  name: string;
  plan: Plan;
  suspended: boolean;
  created_at: number;
}

export interface KeySummary {
  key_id: string;
  tenant: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface NewKey {
  key_id: string;
  /** The full key: shown once, never stored. */
  key: string;
}

export interface TenantAdmin {
  createTenant(name: string, plan: Plan): Promise<{ tenant: TenantSummary; webhook_secret: string }>;
  tenant(name: string): Promise<TenantSummary | null>;
  listTenants(): Promise<TenantSummary[]>;
  setPlan(name: string, plan: Plan): Promise<void>;
  setSuspended(name: string, suspended: boolean): Promise<void>;
  webhookSecret(name: string): Promise<string>;
  /** A new signing secret; the previous one keeps signing for `graceMs`. */
  rotateWebhookSecret(name: string, graceMs: number): Promise<{ webhook_secret: string; previous_valid_until: number }>;
  createKey(tenant: string): Promise<NewKey>;
  listKeys(tenant: string): Promise<KeySummary[]>;
  key(keyId: string): Promise<KeySummary | null>;
  /** Stops the key at once; false when there was no active key of that id. */
  revokeKey(keyId: string): Promise<boolean>;
  /** A new key for the same tenant; the old one keeps working for `graceMs`. */
  rotateKey(keyId: string, graceMs: number): Promise<NewKey & { previous_expires_at: number }>;
}

/** Early-access requests (API.md "Access requests"): made by the public endpoint, decided by operators. */
export interface AccessRequests {
  create(body: AccessRequestBody): Promise<AccessRequestRow>;
  get(id: string): Promise<AccessRequestRow | null>;
  list(status?: string): Promise<AccessRequestRow[]>;
  /** Pending → approved/rejected (with the tenant id made for it); false when it was not pending. */
  decide(id: string, status: "approved" | "rejected", tenantId: string | null): Promise<boolean>;
}

export type { AccessRequestRow };

/** Thrown for an admin request that names something that does not exist or cannot be done. */
export class AdminError extends Error {
  override readonly name = "AdminError";
}

const summary = (t: Tenant): TenantSummary => ({ id: t.id, name: t.name, plan: t.plan, suspended: t.suspended, created_at: t.created_at });

/** Embedded mode: the data directory's SQLite tables. */
export class SqliteTenantAdmin implements TenantAdmin {
  readonly #store: TenantStore;

  constructor(db: Db) {
    this.#store = new TenantStore(db);
  }

  #need(name: string): Tenant {
    const t = this.#store.byName(name);
    if (!t) throw new AdminError(`no tenant named ${JSON.stringify(name)}`);
    return t;
  }

  createTenant(name: string, plan: Plan): Promise<{ tenant: TenantSummary; webhook_secret: string }> {
    if (this.#store.byName(name)) return Promise.reject(new AdminError(`tenant ${name} exists`));
    const t = this.#store.create(name, plan);
    return Promise.resolve({ tenant: summary(t), webhook_secret: t.webhook_secret });
  }

  tenant(name: string): Promise<TenantSummary | null> {
    const t = this.#store.byName(name);
    return Promise.resolve(t ? summary(t) : null);
  }

  listTenants(): Promise<TenantSummary[]> {
    return Promise.resolve(this.#store.list().map(summary));
  }

  setPlan(name: string, plan: Plan): Promise<void> {
    return Promise.resolve(this.#store.setPlan(this.#need(name).id, plan));
  }

  setSuspended(name: string, suspended: boolean): Promise<void> {
    return Promise.resolve(this.#store.setSuspended(this.#need(name).id, suspended));
  }

  webhookSecret(name: string): Promise<string> {
    return Promise.resolve(this.#need(name).webhook_secret);
  }

  rotateWebhookSecret(name: string, graceMs: number): Promise<{ webhook_secret: string; previous_valid_until: number }> {
    const t = this.#store.rotateWebhookSecret(this.#need(name).id, graceMs);
    return Promise.resolve({ webhook_secret: t.webhook_secret, previous_valid_until: t.webhook_secret_prev_until ?? 0 });
  }

  createKey(tenant: string): Promise<NewKey> {
    return Promise.resolve(this.#store.createKey(this.#need(tenant).id));
  }

  listKeys(tenant: string): Promise<KeySummary[]> {
    const t = this.#need(tenant);
    return Promise.resolve(this.#store.listKeys(t.id).map((k) => ({ ...k, tenant: t.name })));
  }

  key(keyId: string): Promise<KeySummary | null> {
    const k = this.#store.keyById(keyId);
    return Promise.resolve(k ? { ...k, tenant: this.#store.byId(k.tenant_id)?.name ?? k.tenant_id } : null);
  }

  revokeKey(keyId: string): Promise<boolean> {
    return Promise.resolve(this.#store.revokeKey(keyId));
  }

  rotateKey(keyId: string, graceMs: number): Promise<NewKey & { previous_expires_at: number }> {
    const old = this.#store.keyById(keyId);
    if (!old || old.revoked_at !== null) return Promise.reject(new AdminError(`no active key ${JSON.stringify(keyId)}`));
    const k = this.#store.rotateKey(keyId, graceMs);
    return Promise.resolve({ ...k, previous_expires_at: this.#store.keyById(keyId)!.expires_at ?? 0 });
  }
}

/** Embedded mode's access requests: the SQLite table. */
export class SqliteAccessRequests implements AccessRequests {
  readonly #store: AccessRequestStore;

  constructor(db: Db) {
    this.#store = new AccessRequestStore(db);
  }

  create(body: AccessRequestBody): Promise<AccessRequestRow> {
    return Promise.resolve(this.#store.create(body));
  }

  get(id: string): Promise<AccessRequestRow | null> {
    return Promise.resolve(this.#store.get(id) ?? null);
  }

  list(status?: string): Promise<AccessRequestRow[]> {
    return Promise.resolve(this.#store.list(status));
  }

  decide(id: string, status: "approved" | "rejected", tenantId: string | null): Promise<boolean> {
    return Promise.resolve(this.#store.decide(id, status, tenantId));
  }
}
