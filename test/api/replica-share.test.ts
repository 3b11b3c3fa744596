/**
 * Rate limits across replicas (api/store/kubernetes/replicas.ts), the arithmetic: each of n
 * replicas takes 1/n of a key's rate and burst, and reports the whole bucket's figures. That the
 * shares add up across real replicas is measured in test/e2e/stateless-api.e2e.ts.
 */
import { describe, expect, it } from "vitest";
import { share, SharedBucketTable } from "../../api/store/kubernetes/replicas.ts";

describe("a replica's share of a rate limit", () => {
  it("divides rate and burst by the ready replicas, never below one token of burst", () => {
    expect(share({ perMinute: 600, burst: 100 }, 1)).toEqual({ perMinute: 600, burst: 100 });
    expect(share({ perMinute: 600, burst: 100 }, 3)).toEqual({ perMinute: 200, burst: 33 });
    expect(share({ perMinute: 60, burst: 5 }, 10)).toEqual({ perMinute: 6, burst: 1 });
  });

  it("lets n replicas together pass the plan's burst, and follows the replica count as it changes", () => {
    let n = 3;
    const replicas = [0, 1, 2].map(() => new SharedBucketTable(() => n));
    const policy = { perMinute: 60, burst: 30 };
    const now = 1_000_000;
    let passed = 0;
    for (let i = 0; i < 90; i++) if (replicas[i % 3]!.take("k", policy, now).allowed) passed++;
    expect(passed).toBe(30);
    // What a client sees is the whole bucket's figure: the local remaining times n, at most the burst.
    expect(new SharedBucketTable(() => 3).take("fresh", policy, now).remaining).toBe(27);
    // One replica gone: the two left take half each (a fresh key shows it).
    n = 2;
    let two = 0;
    for (let i = 0; i < 60; i++) if (replicas[i % 2]!.take("other", policy, now).allowed) two++;
    expect(two).toBe(30);
  });
});
