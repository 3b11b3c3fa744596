/**
 * Plans and their limits (API.md "Limits"). Only `business` has API access; its limits come from
 * the configuration so operators can tune them.
 */
import type { Config } from "./config.ts";

export interface PlanLimits {
  apiAccess: boolean;
  requestsPerMinute: number;
  burst: number;
  maxUnfinishedJobs: number;
  maxFileBytes: number;
  maxRequestBytes: number;
  maxPages: number;
  maxMergeFiles: number;
  /** Bytes a tenant may keep stored: uploads plus outputs not yet expired (413 storage_quota_exceeded). */
  maxStoredBytes: number;
  /** How long outputs and job records live after the job ends. */
  retentionMs: number;
}

export function planLimits(plan: string, config: Config): PlanLimits {
  const business: PlanLimits = {
    apiAccess: true,
    requestsPerMinute: config.FOLIO_RATE_LIMIT_PER_MINUTE,
    burst: config.FOLIO_RATE_LIMIT_BURST,
    maxUnfinishedJobs: config.FOLIO_MAX_UNFINISHED_JOBS,
    maxFileBytes: config.FOLIO_MAX_FILE_BYTES,
    maxRequestBytes: config.FOLIO_MAX_REQUEST_BYTES,
    maxPages: config.FOLIO_MAX_PAGES,
    maxMergeFiles: config.FOLIO_MAX_MERGE_FILES,
    maxStoredBytes: config.FOLIO_MAX_STORED_BYTES,
    retentionMs: config.FOLIO_RETENTION_SECONDS * 1000,
  };
  return plan === "business" ? business : { ...business, apiAccess: false };
}
