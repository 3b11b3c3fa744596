/**
 * The storage quota (issue #10 item 15): a tenant's stored bytes — uploads plus outputs not yet
 * expired — stay within its plan's `maxStoredBytes`, so one tenant cannot fill the data disk or
 * the bucket that everyone shares (OWASP API4, unrestricted resource consumption).
 *
 * Uploads are checked before the body is read, counted against what is left while they stream,
 * and checked once more when they are registered (two uploads racing each other). A job is
 * refused only while the tenant is already over its quota (outputs can take it over: a job's
 * outputs are not known before it runs), so files within the quota can always be processed.
 * POST /v1/files checks and registers in one turn of the event loop in embedded mode, so the quota
 * is exact there; inline uploads of operations, and Kubernetes mode's replicas, may pass it by at
 * most the requests in flight — and then nothing more is accepted until the tenant is under it.
 */
import type { PlanLimits } from "../../core/plans.ts";
import type { JobBackend } from "../jobs/backend.ts";
import { ApiError } from "./problem.ts";

const GiB = (n: number): string => `${(n / 1024 ** 3).toFixed(2)} GiB`;

export function quotaExceeded(limits: PlanLimits, used: number): ApiError {
  return new ApiError(
    "storage_quota_exceeded",
    `Your files would take more than your plan's ${GiB(limits.maxStoredBytes)} of storage (${GiB(used)} in use); delete files or jobs, or wait for outputs to expire.`,
  );
}

/** Bytes the tenant may still store; throws storage_quota_exceeded when nothing is left. */
export async function quotaLeft(backend: JobBackend, tenantId: string, limits: PlanLimits): Promise<number> {
  const used = await backend.storedBytes(tenantId);
  if (used >= limits.maxStoredBytes) throw quotaExceeded(limits, used);
  return limits.maxStoredBytes - used;
}

/** Before a job: refused only while the tenant is over its quota. */
export async function refuseWhenOverQuota(backend: JobBackend, tenantId: string, limits: PlanLimits): Promise<void> {
  const used = await backend.storedBytes(tenantId);
  if (used > limits.maxStoredBytes) throw quotaExceeded(limits, used);
}

/** After an upload has streamed, before it is registered: does it still fit? */
export async function checkUploadFits(backend: JobBackend, tenantId: string, limits: PlanLimits, bytes: number): Promise<void> {
  const used = await backend.storedBytes(tenantId);
  if (used + bytes > limits.maxStoredBytes) throw quotaExceeded(limits, used);
}
