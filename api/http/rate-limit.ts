/**
 * Token buckets (API.md "Limits"): each key (or client address) has a bucket of `burst` tokens
 * refilled at `perMinute / 60` tokens a second; a request takes one. Headers follow the IETF
 * draft (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy: "default";q=600;w=60` and
 * `RateLimit: "default";r=<remaining>;t=<seconds until full>`; an empty bucket answers
 * 429 rate_limited with Retry-After (seconds until the next token).
 *
 * The arithmetic is pure (`takeToken`: state in, state out), so a shared store can run it for
 * several API replicas. The in-process table keeps state per id with one rule that makes memory
 * bounded without letting anyone reset a limit: only a *full* bucket may be forgotten, because a
 * forgotten bucket and a full one behave the same. Tables fed by unauthenticated input (client
 * addresses) also have a capacity; when it is reached with no full bucket to forget, newcomers
 * share one overflow bucket — an address-cycling client throttles itself, never anyone else.
 * Tenants' buckets live in a table of their own (ids come only from real API keys), so nothing
 * an anonymous client does can evict them (issue #10 item 9).
 */
export interface BucketPolicy {
  perMinute: number;
  burst: number;
}

export interface BucketState {
  tokens: number;
  /** When `tokens` was computed (ms since the epoch). */
  at: number;
}

export interface TakeResult {
  allowed: boolean;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until a request would be allowed (0 when allowed). */
  retryAfterSeconds: number;
}

/** The bucket refilled up to `now`; a missing bucket is a full one. */
export function refill(state: BucketState | undefined, policy: BucketPolicy, now: number): BucketState {
  if (!state) return { tokens: policy.burst, at: now };
  const elapsed = Math.max(0, now - state.at);
  return { tokens: Math.min(policy.burst, state.tokens + (elapsed * policy.perMinute) / 60_000), at: Math.max(now, state.at) };
}

/** Takes `cost` tokens if there are that many (cost 0 only reads the bucket). Pure. */
export function takeToken(
  state: BucketState | undefined,
  policy: BucketPolicy,
  now: number,
  cost = 1,
): { state: BucketState; result: TakeResult } {
  const b = refill(state, policy, now);
  const rate = policy.perMinute / 60_000; // tokens per ms
  const allowed = b.tokens >= cost;
  const tokens = allowed ? b.tokens - cost : b.tokens;
  const need = Math.max(cost, 1);
  return {
    state: { tokens, at: b.at },
    result: {
      allowed,
      remaining: Math.floor(tokens),
      resetSeconds: Math.ceil((policy.burst - tokens) / rate / 1000),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((need - tokens) / rate / 1000)),
    },
  };
}

interface Entry {
  state: BucketState;
  policy: BucketPolicy;
}

export interface BucketTableOptions {
  /** Most ids kept; unset: no cap (only for ids that come from authenticated state). */
  capacity?: number;
}

/** Buckets by id, in memory. See the module comment for what may be forgotten. */
export class BucketTable {
  private readonly entries = new Map<string, Entry>();
  private readonly capacity: number;
  private takesSinceSweep = 0;
  private lastSweepAt = Number.NEGATIVE_INFINITY;
  static readonly OVERFLOW = "\u0000overflow";

  constructor(opts: BucketTableOptions = {}) {
    this.capacity = opts.capacity ?? Number.POSITIVE_INFINITY;
  }

  get size(): number {
    return this.entries.size;
  }

  take(id: string, policy: BucketPolicy, now = Date.now(), cost = 1): TakeResult {
    // Now and then, forget full buckets (lossless) so an uncapped table does not only grow.
    if (++this.takesSinceSweep >= 10_000) this.sweep(now);
    let key = id;
    if (!this.entries.has(key) && this.entries.size >= this.capacity) {
      // A sweep is O(capacity): at most one a second, or address cycling would burn the CPU.
      if (now - this.lastSweepAt >= 1000) this.sweep(now);
      if (this.entries.size >= this.capacity) key = BucketTable.OVERFLOW;
    }
    const { state, result } = takeToken(this.entries.get(key)?.state, policy, now, cost);
    this.entries.set(key, { state, policy });
    return result;
  }

  /** What `take` would answer, without taking anything. */
  peek(id: string, policy: BucketPolicy, now = Date.now()): TakeResult {
    const e = this.entries.get(id) ?? (this.entries.size >= this.capacity ? this.entries.get(BucketTable.OVERFLOW) : undefined);
    return takeToken(e?.state, policy, now).result;
  }

  /** Forgets every bucket that has refilled completely; returns how many. */
  sweep(now = Date.now()): number {
    this.takesSinceSweep = 0;
    this.lastSweepAt = now;
    let n = 0;
    for (const [id, e] of this.entries) {
      if (refill(e.state, e.policy, now).tokens >= e.policy.burst) {
        this.entries.delete(id);
        n++;
      }
    }
    return n;
  }
}

/** The buckets one API process keeps: tenants' keys apart from anything keyed by address. */
export class RateLimits {
  /** Per API key id: ids exist only once a key authenticated, so no cap is needed. */
  readonly keys = new BucketTable();
  /** Per client address (access requests). */
  readonly addresses: BucketTable;
  /** Failed authentications per client address, and per existing key id. */
  readonly authFailuresByAddress: BucketTable;
  readonly authFailuresByKey = new BucketTable();

  constructor(addressCapacity = 100_000) {
    this.addresses = new BucketTable({ capacity: addressCapacity });
    this.authFailuresByAddress = new BucketTable({ capacity: addressCapacity });
  }
}

/** The IETF draft headers for a bucket named `name` whose window is `windowSeconds`. */
export function rateLimitHeaders(policy: BucketPolicy, r: TakeResult, name = "default", windowSeconds = 60): Record<string, string> {
  const quota = Math.round((policy.perMinute * windowSeconds) / 60);
  return {
    "RateLimit-Policy": `"${name}";q=${quota};w=${windowSeconds}`,
    RateLimit: `"${name}";r=${r.remaining};t=${r.resetSeconds}`,
    ...(r.allowed ? {} : { "Retry-After": String(r.retryAfterSeconds) }),
  };
}
