/**
 * Kubernetes mode's IdempotencyStore (api/store/idempotency.ts): the key is the PdfJob's name.
 * A request with an Idempotency-Key creates its PdfJob under idempotentPdfJobName(tenant, key), so
 * the apiserver's 409 AlreadyExists is the lock — of any number of identical requests through
 * any number of replicas exactly one creates the job — and the PdfJob carries the request's hash
 * (annotation) to tell a retry from a different request. Nothing else is written.
 *
 * The key lives as long as the name is taken: the job's retention, and at least 24 h, because
 * the controller keeps a deleted keyed PdfJob (its finalizer) until the key is 24 h old. The API
 * shows such a PdfJob to nobody (it is being deleted); a retry then gets 404, never a second job.
 * A PdfJob taken back before anyone was told of it (rejected: over the cap, or its Secret failed)
 * frees the key as soon as it is gone.
 */
import { ApiException } from "@kubernetes/client-node";
import { newId } from "../../../core/ids.ts";
import { jobIdOf } from "../../../core/pdfjob-view.ts";
import { idempotentPdfJobName, PDFJOB_ANNOTATIONS, type PdfJob } from "../../../core/schemas/pdfjob.ts";
import type { IdempotencyAnswer, IdempotencyStore, IdempotentRequest, TakeResult } from "../idempotency.ts";
import { rejected, type PdfJobCache } from "./pdfjob-cache.ts";

/** What a take hands the job's creation: the name to create the PdfJob under, and its annotations. */
export interface PdfJobClaim {
  jobId: string;
  name: string;
  annotations: Record<string, string>;
}

/** The cluster calls the store needs (PdfJobClient). */
export interface ClaimClient {
  namespace: string;
  get(name: string): Promise<PdfJob | null>;
  reject(name: string, reason: string): Promise<void>;
}

/** How long a take waits for a taken-back PdfJob of its key to be gone. */
const GONE_WAIT_MS = 10_000;

const isConflict = (err: unknown): boolean => err instanceof ApiException && err.code === 409;

export class KubernetesIdempotencyStore implements IdempotencyStore<PdfJobClaim> {
  readonly #cache: PdfJobCache;
  readonly #client: ClaimClient;

  constructor(cache: PdfJobCache, client: ClaimClient) {
    this.#cache = cache;
    this.#client = client;
  }

  #answer(pj: PdfJob | undefined | null, req: IdempotentRequest): IdempotencyAnswer {
    if (!pj || rejected(pj) || pj.spec.tenant !== req.tenantId) return { kind: "free" };
    const hash = pj.metadata.annotations?.[PDFJOB_ANNOTATIONS.idempotencyHash];
    return hash === req.hash ? { kind: "replay", jobId: jobIdOf(pj) } : { kind: "conflict" };
  }

  /** From the cache: no request to the apiserver (a miss is settled by take's 409). */
  replay(req: IdempotentRequest): Promise<IdempotencyAnswer> {
    const name = idempotentPdfJobName(req.tenantId, req.key);
    return Promise.resolve(this.#answer(this.#cache.byName(name, this.#client.namespace), req));
  }

  /** The same answer read through to the apiserver (one GET by name), for a cache that may lag. */
  async replayReadThrough(req: IdempotentRequest): Promise<IdempotencyAnswer> {
    return this.#answer(await this.#client.get(idempotentPdfJobName(req.tenantId, req.key)), req);
  }

  async take<T>(req: IdempotentRequest, create: (claim: PdfJobClaim) => Promise<T>): Promise<TakeResult<T>> {
    const name = idempotentPdfJobName(req.tenantId, req.key);
    for (;;) {
      const claim = { jobId: newId("job"), name, annotations: { [PDFJOB_ANNOTATIONS.idempotencyHash]: req.hash } };
      try {
        return { kind: "created", value: await create(claim) };
      } catch (err) {
        if (!isConflict(err)) throw err;
      }
      // Another request holds the name: its job (replay or conflict), or one taken back and on its
      // way out (then wait for it to go, and try again).
      const pj = this.#cache.byName(name, this.#client.namespace) ?? (await this.#client.get(name));
      const answer = this.#answer(pj, req);
      if (answer.kind !== "free") return answer;
      await this.#gone(name);
    }
  }

  /** Resolves when the PdfJob `name` is gone (watch-woken); throws after GONE_WAIT_MS. */
  async #gone(name: string): Promise<void> {
    const end = Date.now() + GONE_WAIT_MS;
    while (this.#cache.byName(name, this.#client.namespace)) {
      if (Date.now() >= end) throw new Error(`PdfJob ${name} was taken back but is not gone after ${GONE_WAIT_MS} ms`);
      await this.#cache.waitForGone(name, this.#client.namespace, end - Date.now());
    }
  }

  async release(req: Omit<IdempotentRequest, "hash">, jobId: string): Promise<void> {
    const name = idempotentPdfJobName(req.tenantId, req.key);
    const pj = this.#cache.byName(name, this.#client.namespace) ?? (await this.#client.get(name));
    if (!pj || jobIdOf(pj) !== jobId) return;
    await this.#client.reject(name, "released");
    // Free once this replica's cache shows it taken back (a take then waits for the name to go).
    const end = Date.now() + GONE_WAIT_MS;
    while (Date.now() < end) {
      const now = this.#cache.byName(name, this.#client.namespace);
      if (!now || rejected(now)) return;
      await this.#cache.waitForChange(name, this.#client.namespace, end - Date.now());
    }
  }

  /** Nothing to do here: the controller lets a deleted keyed PdfJob go once its key is 24 h old. */
  purge(_now: number): Promise<number> {
    return Promise.resolve(0);
  }
}
