/**
 * What the dashboard needs of tenants, keys and access requests: the operators' contract each mode
 * implements (api/store/tenant-admin.ts) — SqliteTenantAdmin and SqliteAccessRequests in embedded
 * mode, KubernetesTenantAdmin and KubernetesAccessRequests (Tenant resources, Secrets,
 * AccessRequests) in Kubernetes mode. One contract, so the dashboard and the admin CLI cannot
 * drift apart (issue #16: one home for each rule).
 */
import type { AccessRequests, TenantAdmin, TenantSummary } from "../store/tenant-admin.ts";

export type { KeySummary, NewKey, TenantSummary } from "../store/tenant-admin.ts";
export type DashboardTenants = TenantAdmin;
export type DashboardAccessRequests = AccessRequests;

/** The tenant of a member (members keep their tenant's id). */
export async function tenantById(tenants: DashboardTenants, id: string): Promise<TenantSummary | null> {
  return (await tenants.listTenants()).find((t) => t.id === id) ?? null;
}
