/**
 * Sign-in throttling, per account and per address (OWASP Authentication Cheat Sheet):
 * - per account, in the shared user store so every replica sees it: after 5 failures in a row the
 *   account is locked for 1 minute, doubling with each further failure up to 15 minutes; a
 *   success resets it. The lock answers like a wrong password, so it tells nothing about the account;
 * - per client address, a token bucket (FOLIO_DASHBOARD_SIGNIN_PER_MINUTE attempts, refilled at as
 *   many a minute; 10 by default) on this replica,
 *   which bounds one address's guessing across all accounts.
 */
import { BucketTable } from "../http/rate-limit.ts";
import type { User, UserStore } from "../store/users.ts";

export const LOCK_AFTER = 5;

export const lockMs = (n: number): number => Math.min(15 * 60_000, 60_000 * 2 ** (n - 1));

export class Throttle {
  private readonly buckets = new BucketTable({ capacity: 50_000 });
  private readonly users: UserStore;
  private readonly policy: { perMinute: number; burst: number };

  constructor(users: UserStore, perMinute: number) {
    this.users = users;
    this.policy = { perMinute, burst: perMinute };
  }

  /** Seconds to wait before this address may try again, or 0. */
  address(address: string, now = Date.now()): number {
    const t = this.buckets.take(`signin:${address}`, this.policy, now);
    return t.allowed ? 0 : t.retryAfterSeconds;
  }

  locked(user: User, now = Date.now()): boolean {
    return user.locked_until !== null && user.locked_until > now;
  }

  failed(user: User, now = Date.now()): Promise<void> {
    return this.users.signInFailed(user.id, LOCK_AFTER, lockMs, now);
  }
}
