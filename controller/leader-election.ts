/**
 * Leader election, as client-go's leaderelection does it with a coordination.k8s.io Lease and
 * controller-runtime's defaults (15 s lease, 10 s renew deadline, 2 s retry). Used by
 * `folio controller` (controller/main.ts): only the leader runs workers.
 */
import { ApiException, CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease, type V1LeaseSpec } from "@kubernetes/client-node";
import type { Logger } from "../core/logger.ts";
import { sleep } from "./informer.ts";

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Called once when leadership is lost (default: the workers stop). */
  onLost?: () => void;
}

/**
 * A coordination.k8s.io Lease held while the process leads. Expiry is judged by the local clock
 * since the record was last seen to change (client-go's observedTime), never by comparing clocks.
 */
export class LeaderElector {
  readonly #o: Required<Omit<LeaderElectionOptions, "onLost">>;
  readonly #api: CoordinationV1Api;
  readonly #stop = new AbortController();
  readonly #log: Logger | undefined;
  #leading = false;
  #observed: { record: string; at: number } | undefined;
  #loop: Promise<void> | undefined;

  constructor(kc: KubeConfig, o: LeaderElectionOptions, log?: Logger) {
    this.#o = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, ...o };
    this.#api = kc.makeApiClient(CoordinationV1Api);
    this.#log = log;
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  /** Campaigns: `onStarted` when this process becomes the leader, `onLost` if it stops being one. */
  run(onStarted: () => void, onLost: () => void): void {
    this.#loop = this.#run(onStarted, onLost);
  }

  async #run(onStarted: () => void, onLost: () => void): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted && !(await this.#tryAcquireOrRenew())) await sleep(this.#o.retryPeriodMs, signal);
    if (signal.aborted) return;
    this.#leading = true;
    this.#log?.info({ identity: this.#o.identity, lease: `${this.#o.namespace}/${this.#o.name}` }, "leader election: leading");
    onStarted();
    let lastRenew = Date.now();
    while (!signal.aborted) {
      await sleep(this.#o.retryPeriodMs, signal);
      if (signal.aborted) break;
      if (await this.#tryAcquireOrRenew()) lastRenew = Date.now();
      else if (Date.now() - lastRenew > this.#o.renewDeadlineMs) {
        this.#leading = false;
        this.#log?.warn({ identity: this.#o.identity, lease: `${this.#o.namespace}/${this.#o.name}` }, "leader election: lost the lease");
        onLost();
        return;
      }
    }
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const now = new V1MicroTime(Date.now());
    const { namespace, name } = this.#o;
    const durationSeconds = Math.ceil(this.#o.leaseDurationMs / 1000);
    let lease: V1Lease;
    try {
      lease = await this.#api.readNamespacedLease({ namespace, name });
    } catch (err) {
      if (!(err instanceof ApiException) || err.code !== 404) return false;
      return this.#create(now, durationSeconds);
    }
    if (this.#heldByAnother(lease.spec ?? {}, durationSeconds)) return false;
    return this.#take(lease, now, durationSeconds);
  }

  /** No Lease yet: makes it, held by this identity (false when another candidate made it first). */
  async #create(now: V1MicroTime, durationSeconds: number): Promise<boolean> {
    const { namespace, name, identity } = this.#o;
    try {
      await this.#api.createNamespacedLease({
        namespace,
        body: {
          metadata: { name, namespace },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: durationSeconds,
            acquireTime: now,
            renewTime: now,
            leaseTransitions: 0,
          },
        },
      });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Whether another identity holds the Lease and has renewed it within its duration. Expiry is
   * timed from when this candidate last saw the record change, on its own clock, not from the
   * holder's renewTime (clocks differ between nodes).
   */
  #heldByAnother(spec: V1LeaseSpec, durationSeconds: number): boolean {
    const record = JSON.stringify([spec.holderIdentity, spec.renewTime, spec.leaseTransitions]);
    if (this.#observed?.record !== record) this.#observed = { record, at: Date.now() };
    const holder = spec.holderIdentity ?? "";
    const expired = Date.now() - this.#observed.at > (spec.leaseDurationSeconds ?? durationSeconds) * 1000;
    return holder !== "" && holder !== this.#o.identity && !expired;
  }

  /** Renews the Lease (ours) or takes it over (free or expired), counting a transition on a takeover. */
  async #take(lease: V1Lease, now: V1MicroTime, durationSeconds: number): Promise<boolean> {
    const { namespace, name, identity } = this.#o;
    const spec = lease.spec ?? {};
    const mine = (spec.holderIdentity ?? "") === identity;
    const body: V1Lease = {
      ...lease,
      spec: {
        holderIdentity: identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: mine && spec.acquireTime ? spec.acquireTime : now,
        renewTime: now,
        leaseTransitions: (spec.leaseTransitions ?? 0) + (mine ? 0 : 1),
      },
    };
    try {
      // The resourceVersion in the body makes a concurrent writer's update fail with 409.
      await this.#api.replaceNamespacedLease({ namespace, name, body });
      return true;
    } catch {
      return false;
    }
  }

  /** Stops; a leader releases the Lease so that a successor need not wait for it to expire. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
    if (!this.#leading) return;
    this.#leading = false;
    try {
      const lease = await this.#api.readNamespacedLease({ namespace: this.#o.namespace, name: this.#o.name });
      if (lease.spec?.holderIdentity !== this.#o.identity) return;
      const now = new V1MicroTime(Date.now());
      await this.#api.replaceNamespacedLease({
        namespace: this.#o.namespace,
        name: this.#o.name,
        body: { ...lease, spec: { ...lease.spec, holderIdentity: "", leaseDurationSeconds: 1, renewTime: now } },
      });
    } catch {
      // It expires on its own.
    }
  }
}
