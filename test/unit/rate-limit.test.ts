/**
 * Token buckets (issue #10 item 9): pure arithmetic, and a table that may forget only what it
 * can forget losslessly, so no client can reset another's limit by filling the table.
 */
import { describe, expect, it } from "vitest";
import { BucketTable, RateLimits, refill, takeToken } from "../../api/http/rate-limit.ts";

const policy = { perMinute: 60, burst: 3 }; // one token a second

describe("takeToken (pure)", () => {
  it("a new bucket is full and a take costs one token", () => {
    const { state, result } = takeToken(undefined, policy, 1000);
    expect(state).toEqual({ tokens: 2, at: 1000 });
    expect(result).toMatchObject({ allowed: true, remaining: 2, retryAfterSeconds: 0 });
  });

  it("an empty bucket refuses and says when the next token comes", () => {
    const { result } = takeToken({ tokens: 0.25, at: 1000 }, policy, 1000);
    expect(result).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1, resetSeconds: 3 });
  });

  it("refill is linear in time and capped at the burst", () => {
    expect(refill({ tokens: 0, at: 0 }, policy, 1500).tokens).toBeCloseTo(1.5);
    expect(refill({ tokens: 0, at: 0 }, policy, 60_000).tokens).toBe(3);
  });

  it("a clock that goes backwards never adds tokens", () => {
    expect(refill({ tokens: 1, at: 5000 }, policy, 1000)).toEqual({ tokens: 1, at: 5000 });
  });
});

describe("BucketTable", () => {
  it("forgets only full buckets", () => {
    const t = new BucketTable();
    t.take("a", policy, 0);
    t.take("b", policy, 0);
    t.take("b", policy, 0);
    expect(t.sweep(1000)).toBe(1); // a refilled after 1 s, b needs 2 s
    expect(t.size).toBe(1);
    expect(t.peek("b", policy, 1000).remaining).toBe(1);
  });

  it("at capacity, newcomers share one overflow bucket instead of evicting anyone", () => {
    const t = new BucketTable({ capacity: 10 });
    for (let i = 0; i < 10; i++) for (let j = 0; j < 3; j++) t.take(`addr-${i}`, policy, 0);
    // Ten drained buckets fill the table; a cycling client gets three tokens in all, not three each.
    const allowed = Array.from({ length: 1000 }, (_, i) => t.take(`new-${i}`, policy, 0).allowed).filter(Boolean);
    expect(allowed).toHaveLength(3);
    for (let i = 0; i < 10; i++) expect(t.take(`addr-${i}`, policy, 0).allowed).toBe(false);
    expect(t.peek("new-5000", policy, 0).allowed).toBe(false);
  });

  it("an anonymous client cycling 200,000 addresses never resets a tenant's bucket", () => {
    const limits = new RateLimits(1000);
    const tenant = { perMinute: 600, burst: 100 };
    for (let i = 0; i < 100; i++) limits.keys.take("key-1", tenant, 0);
    expect(limits.keys.take("key-1", tenant, 0).allowed).toBe(false);
    const anon = { perMinute: 10 / 60, burst: 10 };
    for (let i = 0; i < 200_000; i++) limits.addresses.take(`198.51.${i >> 8}.${i & 255}`, anon, 0);
    expect(limits.addresses.size).toBeLessThanOrEqual(1001);
    expect(limits.keys.take("key-1", tenant, 0).allowed).toBe(false);
  });
});
