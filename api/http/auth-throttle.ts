/**
 * Failed authentication is throttled (issue #10 item 10; OWASP API2 "Broken Authentication":
 * no unlimited guessing). Two buckets count presented-but-wrong credentials:
 *
 * - per client address: once it is empty, that address gets `429 rate_limited` (with
 *   Retry-After) for every Authorization it sends, before the key is even looked up;
 * - per existing key id: once it is empty, the key is "under attack" and only addresses that
 *   authenticated with it recently (kept per key) may still try it; everyone else gets 429. This
 *   stops guessing spread over many addresses without letting an attacker lock the tenant out:
 *   its own clients, already known, keep working (OWASP's "device cookie" idea, with addresses).
 *
 * A missing Authorization header is not a guess and costs nothing. Key ids that do not exist are
 * counted per address only, so made-up ids cannot grow the per-key table.
 */
import { addressKey } from "../../core/net/proxies.ts";
import { type BucketPolicy, type BucketTable, rateLimitHeaders, type TakeResult } from "./rate-limit.ts";

export interface AuthThrottleOptions {
  byAddress: BucketTable;
  byKey: BucketTable;
  policy: BucketPolicy;
  /** Addresses remembered per key as known-good. */
  knownPerKey?: number;
}

export type AuthGate = { allowed: true } | { allowed: false; taken: TakeResult; reason: "address" | "key" };

export class AuthThrottle {
  private readonly known = new Map<string, Set<string>>();
  private readonly knownPerKey: number;
  private readonly opts: AuthThrottleOptions;

  constructor(opts: AuthThrottleOptions) {
    this.opts = opts;
    this.knownPerKey = opts.knownPerKey ?? 64;
  }

  /** Before checking a presented key: may this address try (this key id) at all? */
  gate(address: string, keyId: string | null, now = Date.now()): AuthGate {
    const addr = addressKey(address);
    const a = this.opts.byAddress.peek(addr, this.opts.policy, now);
    if (!a.allowed) return { allowed: false, taken: a, reason: "address" };
    if (keyId !== null && !this.known.get(keyId)?.has(addr)) {
      const k = this.opts.byKey.peek(keyId, this.opts.policy, now);
      if (!k.allowed) return { allowed: false, taken: k, reason: "key" };
    }
    return { allowed: true };
  }

  /** A wrong credential: one token from the address's bucket and, for a real key id, the key's. */
  failed(address: string, existingKeyId: string | null, now = Date.now()): TakeResult {
    const byAddress = this.opts.byAddress.take(addressKey(address), this.opts.policy, now);
    if (existingKeyId !== null) this.opts.byKey.take(existingKeyId, this.opts.policy, now);
    return byAddress;
  }

  /** A good credential: the address becomes known for this key. */
  succeeded(address: string, keyId: string): void {
    const addr = addressKey(address);
    let set = this.known.get(keyId);
    if (!set) this.known.set(keyId, (set = new Set()));
    if (set.has(addr)) return;
    if (set.size >= this.knownPerKey) set.delete(set.values().next().value!);
    set.add(addr);
  }

  headers(taken: TakeResult): Record<string, string> {
    return rateLimitHeaders(this.opts.policy, taken, "auth");
  }
}
