/**
 * Kubernetes mode's stores, assembled (docs/adr/0008): everything the API needs lives in the
 * cluster and the object store, read through this replica's informer caches.
 *
 *   PdfJobs                → jobs, outputs, idempotency keys, the unfinished-jobs cap (pdfjob-cache.ts)
 *   Tenants + Secrets      → tenants, plans, suspension, API keys, webhook secrets (tenant-cache.ts)
 *   AccessRequests         → early-access requests (access-requests.ts)
 *   S3 object metadata     → upload records (uploads.ts)
 *   EndpointSlices         → this replica's share of the rate limits (replicas.ts)
 */
import type { KubeConfig } from "@kubernetes/client-node";
import type { Config } from "../../../core/config.ts";
import type { Logger } from "../../../core/logger.ts";
import { shareConnections } from "../../../core/net/kube-connections.ts";
import { S3ObjectStore } from "../../../core/storage/s3-store.ts";
import { KubernetesBackend } from "../../jobs/kubernetes.ts";
import { PdfJobClient } from "../../jobs/pdfjob-client.ts";
import { RateLimits } from "../../http/rate-limit.ts";
import type { AccessRequests } from "../tenant-admin.ts";
import type { KeyAuthenticator } from "../tenants.ts";
import { KubernetesAccessRequests } from "./access-requests.ts";
import { KubernetesIdempotencyStore } from "./idempotency.ts";
import { PdfJobCache } from "./pdfjob-cache.ts";
import { ReadyEndpoints, sharedRateLimits } from "./replicas.ts";
import { TenantCache } from "./tenant-cache.ts";

export interface KubernetesStores {
  backend: KubernetesBackend;
  store: S3ObjectStore;
  tenants: KeyAuthenticator & TenantCache;
  accessRequests: AccessRequests;
  pdfJobs: PdfJobCache;
  /** The PdfJob client the backend writes with (the dashboard's redelivery annotation). */
  pdfJobClient: PdfJobClient;
  idempotency: KubernetesIdempotencyStore;
  /** This replica's share of every rate limit (replicas.ts); its own tables without FOLIO_API_SERVICE. */
  rateLimits: RateLimits;
  /** Starts the informers and resolves once every cache is full. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The namespace the API keeps its resources in. */
export const storeNamespace = (config: Config): string => config.FOLIO_JOBS_NAMESPACE ?? config.POD_NAMESPACE ?? "default";

export function kubernetesStores(config: Config, kc: KubeConfig, log: Logger, opts: { store?: S3ObjectStore } = {}): KubernetesStores {
  if (!config.FOLIO_S3_BUCKET && !opts.store) throw new Error("FOLIO_S3_BUCKET is required in Kubernetes mode");
  shareConnections(kc);
  const namespace = storeNamespace(config);
  const store = opts.store ?? S3ObjectStore.fromConfig(config);
  const kube = new PdfJobClient(kc, namespace);
  const pdfJobs = new PdfJobCache(kc, kube, log);
  const tenants = new TenantCache(kc, namespace, log);
  const idempotency = new KubernetesIdempotencyStore(pdfJobs, kube);
  const backend = new KubernetesBackend({
    store,
    kube,
    cache: pdfJobs,
    idempotency,
    signingSecrets: (tenantId, now) => tenants.signingSecrets(tenantId, now),
    log,
    uploadTtlMs: config.FOLIO_UPLOAD_TTL_SECONDS * 1000,
    // The runner stops itself at FOLIO_JOB_TIMEOUT_MS; the Job's deadline leaves room for the pod to start.
    deadlineSeconds: Math.min(86_400, Math.ceil(config.FOLIO_JOB_TIMEOUT_MS / 1000) + 60),
  });
  const endpoints = config.FOLIO_API_SERVICE ? new ReadyEndpoints(kc, namespace, config.FOLIO_API_SERVICE, log) : null;
  return {
    backend,
    store,
    tenants,
    rateLimits: endpoints ? sharedRateLimits(() => endpoints.count()) : new RateLimits(),
    accessRequests: new KubernetesAccessRequests(kc, namespace),
    pdfJobs,
    pdfJobClient: kube,
    idempotency,
    async start() {
      pdfJobs.start();
      tenants.start();
      endpoints?.start();
      await Promise.all([pdfJobs.synced(), tenants.synced()]);
    },
    async stop() {
      await Promise.all([pdfJobs.stop(), tenants.stop(), endpoints?.stop()]);
      store.close();
    },
  };
}
