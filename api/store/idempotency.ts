/**
 * Idempotency keys (API.md "Operations"): for 24 hours a tenant's key stands for the one job its
 * first request made. A retry with the same key and the same request gets that job as it is now —
 * after it ended and consumed its inputs, while the tenant is at its cap —, a different request
 * gets 409 idempotency_conflict, and a key whose job has since been deleted (by the client, or at
 * the end of its retention) answers 404: never a second job.
 *
 * The rule is one interface with one implementation per mode and one contract test
 * (test/api/idempotency-contract.ts):
 * - embedded: a row per key in SQLite, taken in the same transaction that inserts the job
 *   (SqliteIdempotencyStore, below);
 * - Kubernetes: the key is the PdfJob's name, derived from (tenant, key), so that the apiserver's
 *   409 AlreadyExists on create is the lock and API replicas never race
 *   (api/store/kubernetes/idempotency.ts).
 *
 * A request looks its key up first (`replay`), before its body is validated or its inputs looked
 * for; the key is only taken when the job is created (`take`), so a request that fails validation
 * leaves it free. Of concurrent identical requests, the first to create wins and the others get
 * its job.
 */
import { newId } from "../../core/ids.ts";
import { IDEMPOTENCY_KEY_MS } from "../../core/schemas/pdfjob.ts";
import { sql, transaction, type Db } from "./db.ts";

/** Keys are kept 24 hours (API.md); the controller holds a deleted keyed PdfJob as long. */
export const IDEMPOTENCY_TTL_MS = IDEMPOTENCY_KEY_MS;

/** A request that carries an Idempotency-Key: its tenant, the key, and a hash of the request. */
export interface IdempotentRequest {
  tenantId: string;
  key: string;
  /** What makes two requests "the same": operation, body and inline file contents (routes/operations.ts). */
  hash: string;
}

/**
 * What a key says about a request: nobody used it (`free`), an identical request made a job
 * (`replay`; the job may have been deleted since), or a different request used it (`conflict`).
 */
export type IdempotencyAnswer = { kind: "free" } | { kind: "replay"; jobId: string } | { kind: "conflict" };

/** The outcome of a take: this request's `create` ran, or the key already answered. */
export type TakeResult<T> = { kind: "created"; value: T } | Exclude<IdempotencyAnswer, { kind: "free" }>;

/** Thrown by a take's `create` that made no job on purpose (the request is refused): carries the answer. */
export class Declined<T> extends Error {
  override readonly name = "Declined";
  readonly answer: T;

  constructor(answer: T) {
    super("declined");
    this.answer = answer;
  }
}

/**
 * The idempotency rule of one mode. `Claim` is what the mode hands the job's creation: nothing in
 * SQLite (the key row and the job row share a transaction), the PdfJob's name in Kubernetes.
 */
export interface IdempotencyStore<Claim> {
  /** Looks the key up; takes nothing. The first thing a request with a key does. */
  replay(req: IdempotentRequest): Promise<IdempotencyAnswer>;
  /**
   * Makes the key's job: `create` runs only when the key is free, and of any number of concurrent
   * takes of one key exactly one runs it and the others get `replay` (or `conflict`). When
   * `create` throws — an error, or a `Declined` answer such as "no such file" — the key stays free.
   */
  take<T>(req: IdempotentRequest, create: (claim: Claim) => Promise<T>): Promise<TakeResult<T>>;
  /** Frees the key if it stands for `jobId` (a job taken back before anyone saw it). */
  release(req: Omit<IdempotentRequest, "hash">, jobId: string): Promise<void>;
  /** Forgets keys older than 24 hours; how many went. */
  purge(now: number): Promise<number>;
}

interface Row {
  request_hash: string;
  job_id: string;
}

/**
 * Embedded mode: the `idempotency` table. `take` runs the whole creation in one transaction
 * (BEGIN IMMEDIATE): look the key up, run `create`, record the key; node:sqlite is synchronous
 * and this is the only process using the file, so nothing can come in between. `create` must
 * therefore do its work — and throw, to refuse — synchronously (its promise is only the way it
 * returns): a throw rolls the whole transaction back.
 */
export class SqliteIdempotencyStore implements IdempotencyStore<{ jobId: string }> {
  readonly #db: Db;
  readonly #now: () => number;

  constructor(db: Db, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  #answer(req: IdempotentRequest): IdempotencyAnswer {
    const row = sql(this.#db, "SELECT request_hash, job_id FROM idempotency WHERE tenant_id = ? AND key = ? AND created_at > ?").get(
      req.tenantId,
      req.key,
      this.#now() - IDEMPOTENCY_TTL_MS,
    ) as Row | undefined;
    if (!row) return { kind: "free" };
    return row.request_hash === req.hash ? { kind: "replay", jobId: row.job_id } : { kind: "conflict" };
  }

  replay(req: IdempotentRequest): Promise<IdempotencyAnswer> {
    return Promise.resolve(this.#answer(req));
  }

  /** Runs `create` inside the transaction that records the key; see the class comment. */
  async take<T>(req: IdempotentRequest, create: (claim: { jobId: string }) => Promise<T>): Promise<TakeResult<T>> {
    let settled: Promise<T> | undefined;
    const outcome = transaction(this.#db, (): TakeResult<T> | { kind: "pending"; jobId: string } => {
      const answer = this.#answer(req);
      if (answer.kind !== "free") return answer;
      const jobId = newId("job");
      settled = create({ jobId });
      // An older row of this key (past its 24 h) is replaced.
      sql(this.#db, "INSERT OR REPLACE INTO idempotency (tenant_id, key, request_hash, job_id, created_at) VALUES (?, ?, ?, ?, ?)").run(
        req.tenantId,
        req.key,
        req.hash,
        jobId,
        this.#now(),
      );
      return { kind: "pending", jobId };
    });
    if (outcome.kind !== "pending") return outcome;
    try {
      return { kind: "created", value: await settled! };
    } catch (err) {
      await this.release(req, outcome.jobId);
      throw err;
    }
  }

  release(req: Omit<IdempotentRequest, "hash">, jobId: string): Promise<void> {
    sql(this.#db, "DELETE FROM idempotency WHERE tenant_id = ? AND key = ? AND job_id = ?").run(req.tenantId, req.key, jobId);
    return Promise.resolve();
  }

  purge(now: number): Promise<number> {
    return Promise.resolve(Number(sql(this.#db, "DELETE FROM idempotency WHERE created_at <= ?").run(now - IDEMPOTENCY_TTL_MS).changes));
  }
}
