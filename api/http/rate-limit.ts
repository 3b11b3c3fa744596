/**
 * Token buckets (API.md "Limits"): each key (or client address) has a bucket of `burst` tokens
 * refilled at `perMinute / 60` tokens a second; a request takes one. Headers follow the IETF
 * draft (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy: "default";q=600;w=60` and
 * `RateLimit: "default";r=<remaining>;t=<seconds until full>`; an empty bucket answers
 * 429 rate_limited with Retry-After (seconds until the next token).
 */
export interface BucketPolicy {
  perMinute: number;
  burst: number;
}

interface Bucket {
  tokens: number;
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

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly maxEntries: number;

  constructor(maxEntries = 100_000) {
    this.maxEntries = maxEntries;
  }

  /** The bucket as it is now, without taking a token; null when the id has no bucket. */
  peek(id: string, policy: BucketPolicy, now = Date.now()): TakeResult | null {
    const b = this.buckets.get(id);
    if (!b) return null;
    const rate = policy.perMinute / 60_000;
    const tokens = Math.min(policy.burst, b.tokens + (now - b.at) * rate);
    return {
      allowed: tokens >= 1,
      remaining: Math.floor(tokens),
      resetSeconds: Math.ceil((policy.burst - tokens) / rate / 1000),
      retryAfterSeconds: tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / rate / 1000)),
    };
  }

  take(id: string, policy: BucketPolicy, now = Date.now()): TakeResult {
    const rate = policy.perMinute / 60_000; // tokens per ms
    const b = this.buckets.get(id) ?? { tokens: policy.burst, at: now };
    b.tokens = Math.min(policy.burst, b.tokens + (now - b.at) * rate);
    b.at = now;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    // Re-insert to keep the Map in least-recently-used order for eviction.
    this.buckets.delete(id);
    this.buckets.set(id, b);
    if (this.buckets.size > this.maxEntries) this.buckets.delete(this.buckets.keys().next().value!);
    return {
      allowed,
      remaining: Math.floor(b.tokens),
      resetSeconds: Math.ceil((policy.burst - b.tokens) / rate / 1000),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / rate / 1000)),
    };
  }
}

export function rateLimitHeaders(policy: BucketPolicy, r: TakeResult): Record<string, string> {
  return {
    "RateLimit-Policy": `"default";q=${policy.perMinute};w=60`,
    RateLimit: `"default";r=${r.remaining};t=${r.resetSeconds}`,
    ...(r.allowed ? {} : { "Retry-After": String(r.retryAfterSeconds) }),
  };
}
