/**
 * What the dashboard needs of tenants, keys and access requests: an asynchronous contract, named
 * by tenant name, shaped like the admin contract each mode implements (TenantAdmin and
 * AccessRequests: SQLite in embedded mode, Tenant resources and Secrets in Kubernetes mode).
 * `sqliteTenantPort` adapts the embedded TenantStore and AccessRequestStore to it.
 */
import type { AccessRequestBody } from "../../core/schemas/api.ts";
import type { AccessRequestRow, AccessRequestStore } from "../store/access-requests.ts";
import type { Plan, Tenant, TenantStore } from "../store/tenants.ts";

export interface TenantSummary {
  id: string;
  name: string;
  plan: Plan;
  suspended: boolean;
  created_at: number;
}

export interface KeySummary {
  key_id: string;
  /** The tenant's name. */
  tenant: string;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface NewKey {
  key_id: string;
  key: string;
}

export interface DashboardTenants {
  createTenant(name: string, plan: Plan): Promise<{ tenant: TenantSummary; webhook_secret: string }>;
  tenant(name: string): Promise<TenantSummary | null>;
  listTenants(): Promise<TenantSummary[]>;
  setPlan(name: string, plan: Plan): Promise<void>;
  /** Absent where the tenant store has no suspended state. */
  setSuspended?(name: string, suspended: boolean): Promise<void>;
  webhookSecret(name: string): Promise<string>;
  rotateWebhookSecret(name: string, graceMs: number): Promise<{ webhook_secret: string; previous_valid_until: number }>;
  createKey(tenant: string): Promise<NewKey>;
  listKeys(tenant: string): Promise<KeySummary[]>;
  key(keyId: string): Promise<KeySummary | null>;
  revokeKey(keyId: string): Promise<boolean>;
  rotateKey(keyId: string, graceMs: number): Promise<NewKey & { previous_expires_at: number }>;
}

export interface DashboardAccessRequests {
  create(body: AccessRequestBody): Promise<AccessRequestRow>;
  get(id: string): Promise<AccessRequestRow | null>;
  list(status?: string): Promise<AccessRequestRow[]>;
  decide(id: string, status: "approved" | "rejected", tenantId: string | null): Promise<boolean>;
}

/** The tenant of a member (members keep their tenant's id). */
export async function tenantById(tenants: DashboardTenants, id: string): Promise<TenantSummary | null> {
  return (await tenants.listTenants()).find((t) => t.id === id) ?? null;
}

const summary = (t: Tenant & { suspended?: boolean }): TenantSummary => ({
  id: t.id,
  name: t.name,
  plan: t.plan,
  suspended: t.suspended === true,
  created_at: t.created_at,
});

/** fn's value (or its throw) as a promise: the SQLite stores are synchronous. */
function p<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}

/** Embedded mode: the data directory's TenantStore and AccessRequestStore. */
export function sqliteTenantPort(
  store: TenantStore,
  requests: AccessRequestStore,
): { tenants: DashboardTenants; accessRequests: DashboardAccessRequests } {
  const need = (name: string): Tenant => {
    const t = store.byName(name);
    if (!t) throw new Error(`no tenant named ${JSON.stringify(name)}`);
    return t;
  };
  const keySummary = (k: ReturnType<TenantStore["listKeys"]>[number]): KeySummary => ({
    key_id: k.key_id,
    tenant: store.byId(k.tenant_id)?.name ?? "",
    created_at: k.created_at,
    expires_at: k.expires_at,
    revoked_at: k.revoked_at,
    last_used_at: k.last_used_at,
  });
  const suspendable = store as unknown as { setSuspended?: (id: string, suspended: boolean) => void };
  const tenants: DashboardTenants = {
    createTenant: (name, plan) =>
      p(() => {
        if (store.byName(name)) throw new Error(`tenant ${name} exists`);
        const t = store.create(name, plan);
        return { tenant: summary(t), webhook_secret: t.webhook_secret };
      }),
    tenant: (name) =>
      p(() => {
        const t = store.byName(name);
        return t ? summary(t) : null;
      }),
    listTenants: () => p(() => store.list().map(summary)),
    setPlan: (name, plan) => p(() => store.setPlan(need(name).id, plan)),
    ...(typeof suspendable.setSuspended === "function"
      ? { setSuspended: (name: string, suspended: boolean) => p(() => suspendable.setSuspended!.call(store, need(name).id, suspended)) }
      : {}),
    webhookSecret: (name) => p(() => need(name).webhook_secret),
    rotateWebhookSecret: (name, graceMs) =>
      p(() => {
        const t = store.rotateWebhookSecret(need(name).id, graceMs);
        return { webhook_secret: t.webhook_secret, previous_valid_until: t.webhook_secret_prev_until ?? 0 };
      }),
    createKey: (tenant) => p(() => store.createKey(need(tenant).id)),
    listKeys: (tenant) => p(() => store.listKeys(need(tenant).id).map(keySummary)),
    key: (keyId) =>
      p(() => {
        const k = store.keyById(keyId);
        return k ? keySummary(k) : null;
      }),
    revokeKey: (keyId) => p(() => store.revokeKey(keyId)),
    rotateKey: (keyId, graceMs) =>
      p(() => {
        const k = store.rotateKey(keyId, graceMs);
        return { ...k, previous_expires_at: store.keyById(keyId)?.expires_at ?? 0 };
      }),
  };
  const accessRequests: DashboardAccessRequests = {
    create: (body) => p(() => requests.create(body)),
    get: (id) => p(() => requests.get(id) ?? null),
    list: (status) => p(() => requests.list(status)),
    decide: (id, status, tenantId) => p(() => requests.decide(id, status, tenantId)),
  };
  return { tenants, accessRequests };
}
