/**
 * Rate limits that hold across API replicas (issue #12): each replica keeps its own token buckets
 * (edge's api/http/rate-limit.ts) and takes its share of every limit — 1/n of the rate and of the
 * burst — where n is the number of ready endpoints of the API's Service, watched through its
 * EndpointSlices. A Service spreads a client's requests over its endpoints, so the shares add up
 * to the plan's figure without any state shared between replicas or any request to the apiserver
 * per request. The error against the plan's figure is measured by test/e2e/stateless-api.e2e.ts;
 * it grows when a client's requests are unevenly spread (a long-lived connection pinned to one
 * replica gets only that replica's share: the limit errs on the strict side).
 */
import type { KubeConfig, V1EndpointSlice } from "@kubernetes/client-node";
import { DiscoveryV1Api } from "@kubernetes/client-node";
import { Informer } from "../../../core/kube/informer.ts";
import type { Logger } from "../../../core/logger.ts";
import { BucketTable, RateLimits, type BucketPolicy, type BucketTableOptions, type TakeResult } from "../../http/rate-limit.ts";
import { kubeWatch, listAll } from "../../jobs/pdfjob-client.ts";

/** This replica's share of a policy when `n` replicas serve. */
export function share(policy: BucketPolicy, n: number): BucketPolicy {
  if (n <= 1) return policy;
  return { perMinute: policy.perMinute / n, burst: Math.max(1, Math.round(policy.burst / n)) };
}

/** A BucketTable whose every policy is this replica's share; what it reports is scaled back to the whole. */
export class SharedBucketTable extends BucketTable {
  readonly #replicas: () => number;

  constructor(replicas: () => number, opts: BucketTableOptions = {}) {
    super(opts);
    this.#replicas = replicas;
  }

  #scaled(r: TakeResult, policy: BucketPolicy, n: number): TakeResult {
    return n <= 1 ? r : { ...r, remaining: Math.min(policy.burst, r.remaining * n) };
  }

  override take(id: string, policy: BucketPolicy, now = Date.now(), cost = 1): TakeResult {
    const n = this.#replicas();
    return this.#scaled(super.take(id, share(policy, n), now, cost), policy, n);
  }

  override peek(id: string, policy: BucketPolicy, now = Date.now()): TakeResult {
    const n = this.#replicas();
    return this.#scaled(super.peek(id, share(policy, n), now), policy, n);
  }
}

/** RateLimits (same tables, same capacities) whose buckets are this replica's shares. */
export function sharedRateLimits(replicas: () => number, addressCapacity = 100_000): RateLimits {
  return {
    keys: new SharedBucketTable(replicas),
    addresses: new SharedBucketTable(replicas, { capacity: addressCapacity }),
    authFailuresByAddress: new SharedBucketTable(replicas, { capacity: addressCapacity }),
    authFailuresByKey: new SharedBucketTable(replicas),
  };
}

/** Ready endpoints of one Service, from its EndpointSlices (one informer). */
export class ReadyEndpoints {
  readonly #informer: Informer<V1EndpointSlice>;

  constructor(kc: KubeConfig, namespace: string, service: string, log: Logger) {
    const api = kc.makeApiClient(DiscoveryV1Api);
    const labelSelector = `kubernetes.io/service-name=${service}`;
    this.#informer = new Informer<V1EndpointSlice>({
      name: "api-endpoints",
      watch: kubeWatch(kc),
      list: () =>
        listAll(async (cont) => {
          const res = await api.listNamespacedEndpointSlice({ namespace, labelSelector, limit: 100, ...(cont ? { _continue: cont } : {}) });
          return { items: res.items, metadata: { continue: res.metadata?._continue, resourceVersion: res.metadata?.resourceVersion } };
        }),
      watchPath: `/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`,
      labelSelector,
      resyncMs: 0,
      log: (msg) => log.warn(msg),
    });
  }

  start(): void {
    this.#informer.start();
  }

  stop(): Promise<void> {
    return this.#informer.stop();
  }

  /** Ready endpoints (at least 1: this replica serves). A slice's endpoint without conditions counts as ready, as kube-proxy does. */
  count(): number {
    const ready = new Set<string>();
    for (const slice of this.#informer.list()) {
      for (const e of slice.endpoints ?? []) {
        if (e.conditions?.ready === false || e.conditions?.terminating === true) continue;
        ready.add(e.targetRef?.uid ?? e.addresses.join(","));
      }
    }
    return Math.max(1, ready.size);
  }
}
