/**
 * A PdfJob's spec is not trusted (issue #10 item 16): anyone allowed to create PdfJobs — a
 * compromised API replica, a careless operator, a namespace admin — must not get another tenant's
 * files read or another job's Secret mounted. Before creating the Job the controller checks that
 * every input key lies under the job's tenant prefix (`{tenant}/`, how the API stores uploads)
 * without `..` or empty segments, and that `secretRef` names the PdfJob's own Secret (the API gives
 * it the PdfJob's name and makes it owned by it). The CRD carries the same rules in CEL
 * (core/schemas/pdfjob.ts, controller/crd.ts), so the apiserver refuses such a PdfJob at once;
 * this check still stands for clusters whose CRD is older or whose apiserver has no CEL.
 *
 * The runner's stored result (`result_key`, for results too large for the termination message)
 * is trusted no more: it must lie under the job's own storage prefix and is read up to a cap.
 */
import { jobIdOf } from "../core/pdfjob-view.ts";
import { type PdfJob, type PdfJobSpec } from "../core/schemas/pdfjob.ts";
import { jobStoragePrefix } from "../core/schemas/storage-keys.ts";

/** The most of a stored runner result the controller reads (a 2,000-page split's result is ~600 kB). */
export const RESULT_MAX_BYTES = 4 * 1024 * 1024;

/** A key is the tenant's when it is `{tenant}/…` with no empty, `.` or `..` segment. */
export function isTenantKey(tenant: string, key: string): boolean {
  if (!key.startsWith(`${tenant}/`)) return false;
  return key
    .slice(tenant.length + 1)
    .split("/")
    .every((seg) => seg !== "" && seg !== "." && seg !== "..");
}

/** Why this PdfJob's spec reaches beyond its tenant or its own Secret, or null when it does not. */
export function specOwnershipProblem(pj: PdfJob, spec: PdfJobSpec): string | null {
  for (const [i, input] of spec.inputs.entries()) {
    if (!isTenantKey(spec.tenant, input.key)) {
      return `spec.inputs[${i}].key is not under the tenant's prefix "${spec.tenant}/"; a PdfJob may only read its own tenant's files`;
    }
  }
  if (spec.secretRef && spec.secretRef.name !== pj.metadata.name) {
    return `spec.secretRef.name must be this PdfJob's own Secret "${pj.metadata.name}"`;
  }
  return null;
}

/** May the controller read the runner's result from `key`? Only from the job's own prefix. */
export function isOwnResultKey(pj: PdfJob, key: string): boolean {
  const prefix = jobStoragePrefix(pj.spec.tenant, jobIdOf(pj));
  return key.startsWith(prefix) && isTenantKey(pj.spec.tenant, key);
}
