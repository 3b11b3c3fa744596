/**
 * Kubernetes mode's access requests (AccessRequests, api/store/tenant-admin.ts): one
 * AccessRequest resource each, created by the public endpoint (one write per accepted request,
 * rate-limited per client address), listed and decided by operators with the admin CLI — or
 * `kubectl get far`. The decision is the status subresource.
 */
import { ApiException, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { newId } from "../../../core/ids.ts";
import type { AccessRequestBody } from "../../../core/schemas/api.ts";
import { PDFJOB_GROUP, PDFJOB_VERSION } from "../../../core/schemas/pdfjob.ts";
import { ACCESS_REQUEST_KIND, ACCESS_REQUEST_PLURAL, FOLIO_API_VERSION, type AccessRequestResource } from "../../../core/schemas/tenant.ts";
import { rfc3339 } from "../../../core/time.ts";
import type { AccessRequestRow } from "../access-requests.ts";
import type { AccessRequests } from "../tenant-admin.ts";
import { accessRequestId, accessRequestName } from "./names.ts";

const STATUS = { Pending: "pending", Approved: "approved", Rejected: "rejected" } as const;
const isStatus = (err: unknown, code: number): boolean => err instanceof ApiException && err.code === code;

function rowOf(r: AccessRequestResource): AccessRequestRow {
  const s = r.spec;
  return {
    id: accessRequestId(r.metadata.name),
    email: s.email,
    company: s.company,
    use_case: s.useCase,
    description: s.description,
    expected_monthly_volume: s.expectedMonthlyVolume,
    file_types: s.fileTypes,
    needs_dpa: s.needsDpa,
    status: STATUS[r.status?.phase ?? "Pending"],
    created_at: Date.parse(r.metadata.creationTimestamp ?? "") || 0,
    decided_at: r.status?.decidedTime ? Date.parse(r.status.decidedTime) : null,
    tenant_id: r.status?.tenant ?? null,
  };
}

export class KubernetesAccessRequests implements AccessRequests {
  readonly #custom: CustomObjectsApi;
  readonly #crd: { group: string; version: string; plural: string; namespace: string };

  constructor(kc: KubeConfig, namespace: string) {
    this.#custom = kc.makeApiClient(CustomObjectsApi);
    this.#crd = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: ACCESS_REQUEST_PLURAL, namespace };
  }

  async create(body: AccessRequestBody): Promise<AccessRequestRow> {
    const resource: AccessRequestResource = {
      apiVersion: FOLIO_API_VERSION,
      kind: ACCESS_REQUEST_KIND,
      metadata: { name: accessRequestName(newId("areq")) },
      spec: {
        email: body.email,
        company: body.company,
        useCase: body.use_case,
        description: body.description,
        expectedMonthlyVolume: body.expected_monthly_volume,
        fileTypes: body.file_types,
        needsDpa: body.needs_dpa,
      },
    };
    return rowOf((await this.#custom.createNamespacedCustomObject({ ...this.#crd, body: resource })) as AccessRequestResource);
  }

  async #get(id: string): Promise<AccessRequestResource | null> {
    if (!/^areq_[0-9A-Za-z]{24}$/.test(id)) return null;
    try {
      return (await this.#custom.getNamespacedCustomObject({ ...this.#crd, name: accessRequestName(id) })) as AccessRequestResource;
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  async get(id: string): Promise<AccessRequestRow | null> {
    const r = await this.#get(id);
    return r ? rowOf(r) : null;
  }

  async list(status?: string): Promise<AccessRequestRow[]> {
    const res = (await this.#custom.listNamespacedCustomObject(this.#crd)) as { items: AccessRequestResource[] };
    return res.items
      .map(rowOf)
      .filter((r) => !status || r.status === status)
      .sort((a, b) => a.created_at - b.created_at);
  }

  async decide(id: string, status: "approved" | "rejected", tenantId: string | null): Promise<boolean> {
    const r = await this.#get(id);
    if (!r || (r.status?.phase ?? "Pending") !== "Pending") return false;
    const phase = status === "approved" ? "Approved" : "Rejected";
    try {
      // A replace of the status guarded by the resourceVersion read: two operators cannot both decide.
      await this.#custom.replaceNamespacedCustomObjectStatus({
        ...this.#crd,
        name: r.metadata.name,
        body: { ...r, status: { phase, decidedTime: rfc3339(Date.now()), ...(tenantId ? { tenant: tenantId } : {}) } },
      });
      return true;
    } catch (err) {
      if (isStatus(err, 409)) return false;
      throw err;
    }
  }
}
