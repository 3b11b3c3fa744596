/**
 * The resources behind tenants in Kubernetes mode (docs/adr/0008): a `Tenant` per tenant and an
 * `AccessRequest` per early-access request, both namespaced in the release's namespace, so that a
 * cluster admin manages them with `kubectl apply` or GitOps and backs them up with the cluster.
 * Credentials are not in them: a tenant's webhook signing secrets are in the Secret its spec names,
 * its API keys are Secrets of their own (hashes only; api/store/kubernetes/tenants.ts).
 *
 * The CRDs are generated from these schemas (controller/crd.ts, `make crds`), like PdfJob's.
 */
import { z } from "zod";
import { AccessRequestBody } from "./api.ts";
import { PDFJOB_GROUP, PDFJOB_VERSION } from "./pdfjob.ts";

export const TENANT_KIND = "Tenant";
export const TENANT_PLURAL = "tenants";
export const ACCESS_REQUEST_KIND = "AccessRequest";
export const ACCESS_REQUEST_PLURAL = "accessrequests";
export const FOLIO_API_VERSION = `${PDFJOB_GROUP}/${PDFJOB_VERSION}`;

export const PLANS = ["business", "free"] as const;
export type Plan = (typeof PLANS)[number];

/** Kubernetes names a tenant can have: a DNS-1123 label (it is also a label value and a storage prefix). */
export const TENANT_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The keys of a tenant's webhook Secret. */
export const WEBHOOK_SECRET_KEYS = {
  current: "current",
  previous: "previous",
  /** RFC 3339: the previous secret signs until then (a rotation's grace period). */
  previousValidUntil: "previousValidUntil",
} as const;

export const TenantSpec = z
  .strictObject({
    plan: z.enum(PLANS).meta({ description: "The plan: only business has API access (API.md)." }),
    suspended: z
      .boolean()
      .optional()
      .meta({ description: "A suspended tenant's API keys answer 403 tenant_suspended; its jobs keep running." }),
    displayName: z.string().max(200).optional(),
    webhookSecretRef: z.strictObject({ name: z.string().min(1).max(253) }).meta({
      description:
        "A Secret in this namespace labelled folio.dev/kind=webhook-secret: `current` (whsec_…), and during a rotation `previous` and `previousValidUntil` (RFC 3339).",
    }),
  })
  .meta({ description: "A Folio tenant. Its name is the tenant's id." });
export type TenantSpec = z.infer<typeof TenantSpec>;

export interface TenantResource {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: TenantSpec;
}

export const ACCESS_REQUEST_PHASES = ["Pending", "Approved", "Rejected"] as const;

const b = AccessRequestBody.shape;
export const AccessRequestSpec = z
  .strictObject({
    email: b.email,
    company: b.company,
    useCase: b.use_case,
    description: b.description,
    expectedMonthlyVolume: b.expected_monthly_volume,
    fileTypes: b.file_types,
    needsDpa: b.needs_dpa,
  })
  .meta({ description: "What the requester sent to POST /v1/access_requests." });
export type AccessRequestSpec = z.infer<typeof AccessRequestSpec>;

export const AccessRequestStatus = z
  .object({
    phase: z.enum(ACCESS_REQUEST_PHASES).optional(),
    decidedTime: z.iso.datetime().optional(),
    tenant: z.string().max(63).optional().meta({ description: "The tenant made on approval." }),
  })
  .meta({ description: "The operator's decision (folio access-requests approve|reject)." });
export type AccessRequestStatus = z.infer<typeof AccessRequestStatus>;

export interface AccessRequestResource {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; creationTimestamp?: string; labels?: Record<string, string> };
  spec: AccessRequestSpec;
  status?: AccessRequestStatus;
}
