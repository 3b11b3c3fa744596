/**
 * The IdempotencyStore contract (api/store/idempotency.ts), one suite for every mode: each mode's
 * test file calls `idempotencyContract` with a fixture that makes real jobs (rows in SQLite,
 * PdfJobs on a real apiserver). What clients rely on: a key used once stands for one job, of
 * concurrent identical requests exactly one creates it, a failed creation leaves the key free,
 * keys are per tenant, and a key is forgotten after 24 hours.
 */
import { describe, expect, it } from "vitest";
import { Declined, IDEMPOTENCY_TTL_MS, type IdempotencyStore } from "../../api/store/idempotency.ts";

export interface ContractFixture<Claim> {
  store: IdempotencyStore<Claim>;
  /** Makes the job a take asks for (a real one); returns its id. */
  create(claim: Claim, tenantId: string): Promise<string>;
  /** How many jobs `create` has made. */
  made(): number;
  /** Two tenants the fixture knows. */
  tenants: [string, string];
  /** Moves the store's clock (modes whose keys expire by the store's own clock). */
  advance?(ms: number): void;
}

let seq = 0;
const freshKey = (): string => `contract-${Date.now()}-${++seq}`;

export function idempotencyContract<Claim>(mode: string, fixture: () => ContractFixture<Claim>): void {
  describe(`IdempotencyStore contract: ${mode}`, () => {
    it("answers free for an unused key, then replays the job its take made", async () => {
      const f = fixture();
      const req = { tenantId: f.tenants[0], key: freshKey(), hash: "h1" };
      expect(await f.store.replay(req)).toEqual({ kind: "free" });
      const taken = await f.store.take(req, (claim) => f.create(claim, req.tenantId));
      expect(taken.kind).toBe("created");
      const jobId = (taken as { value: string }).value;
      expect(await f.store.replay(req)).toEqual({ kind: "replay", jobId });
      expect(await f.store.replay({ ...req, hash: "h2" })).toEqual({ kind: "conflict" });
    });

    it("runs create exactly once for 20 concurrent identical takes, and hands its job to all", async () => {
      const f = fixture();
      const before = f.made();
      const req = { tenantId: f.tenants[0], key: freshKey(), hash: "same" };
      const results = await Promise.all(Array.from({ length: 20 }, () => f.store.take(req, (claim) => f.create(claim, req.tenantId))));
      expect(f.made() - before).toBe(1);
      const created = results.filter((r) => r.kind === "created") as { value: string }[];
      expect(created).toHaveLength(1);
      const replays = results.filter((r) => r.kind === "replay") as { jobId: string }[];
      expect(replays).toHaveLength(19);
      expect(new Set(replays.map((r) => r.jobId))).toEqual(new Set([created[0]!.value]));
    });

    it("gives concurrent takes with other requests a conflict, never a second job", async () => {
      const f = fixture();
      const before = f.made();
      const key = freshKey();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          f.store.take({ tenantId: f.tenants[0], key, hash: `h${i % 2}` }, (claim) => f.create(claim, f.tenants[0])),
        ),
      );
      expect(f.made() - before).toBe(1);
      expect(results.filter((r) => r.kind === "created")).toHaveLength(1);
      expect(results.filter((r) => r.kind === "conflict")).toHaveLength(5);
      expect(results.filter((r) => r.kind === "replay")).toHaveLength(4);
    });

    it("leaves the key free when create refuses or fails, and a later take makes the job", async () => {
      const f = fixture();
      const req = { tenantId: f.tenants[0], key: freshKey(), hash: "h" };
      await expect(f.store.take(req, () => Promise.reject(new Declined({ kind: "too_many_jobs" })))).rejects.toBeInstanceOf(Declined);
      await expect(f.store.take(req, () => Promise.reject(new Error("apiserver down")))).rejects.toThrow("apiserver down");
      expect(await f.store.replay(req)).toEqual({ kind: "free" });
      expect((await f.store.take(req, (claim) => f.create(claim, req.tenantId))).kind).toBe("created");
    });

    it("frees a key on release, for the job it stands for only", async () => {
      const f = fixture();
      const req = { tenantId: f.tenants[0], key: freshKey(), hash: "h" };
      const taken = (await f.store.take(req, (claim) => f.create(claim, req.tenantId))) as { value: string };
      await f.store.release(req, "job_000000000000000000000000");
      expect(await f.store.replay(req)).toEqual({ kind: "replay", jobId: taken.value });
      await f.store.release(req, taken.value);
      expect(await f.store.replay(req)).toEqual({ kind: "free" });
      const again = await f.store.take(req, (claim) => f.create(claim, req.tenantId));
      expect(again.kind).toBe("created");
      expect((again as { value: string }).value).not.toBe(taken.value);
    });

    it("keeps keys per tenant: the same key in two tenants makes two jobs", async () => {
      const f = fixture();
      const key = freshKey();
      const [a, b] = await Promise.all(
        f.tenants.map((tenantId) => f.store.take({ tenantId, key, hash: "h" }, (claim) => f.create(claim, tenantId))),
      );
      expect(a!.kind).toBe("created");
      expect(b!.kind).toBe("created");
      expect((a as { value: string }).value).not.toBe((b as { value: string }).value);
    });

    it("forgets a key 24 hours after its first request (modes whose store keeps the clock)", async (ctx) => {
      const f = fixture();
      if (!f.advance) return ctx.skip();
      const req = { tenantId: f.tenants[0], key: freshKey(), hash: "h" };
      await f.store.take(req, (claim) => f.create(claim, req.tenantId));
      f.advance(IDEMPOTENCY_TTL_MS - 1000);
      expect((await f.store.replay({ ...req, hash: "other" })).kind).toBe("conflict");
      f.advance(2000);
      expect(await f.store.replay({ ...req, hash: "other" })).toEqual({ kind: "free" });
      expect(await f.store.purge(Date.now() + 10 * IDEMPOTENCY_TTL_MS)).toBeGreaterThan(0);
    });
  });
}
