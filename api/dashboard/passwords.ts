/**
 * Password hashing with scrypt (RFC 7914) from node:crypto: no native dependency. Parameters are
 * stored with each hash (`scrypt$N$r$p$salt$hash`) so they can be raised later without breaking
 * existing passwords. N = 2^15, r = 8, p = 1 is OWASP's recommended minimum for scrypt.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

const N = 2 ** 15;
const R = 8;
const P = 1;
const KEYLEN = 32;

function derive(password: string, salt: Buffer, o: { N: number; r: number; p: number }): Promise<Buffer> {
  // scrypt needs 128·N·r bytes; allow twice that.
  const opts: ScryptOptions = { N: o.N, r: o.r, p: o.p, maxmem: 256 * o.N * o.r };
  return new Promise((resolve, reject) => scrypt(password.normalize("NFKC"), salt, KEYLEN, opts, (e, k) => (e ? reject(e) : resolve(k))));
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N, r: R, p: P });
  return `scrypt$${N}$${R}$${P}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** Constant-time check of a password against a stored hash; false for any malformed hash. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? "").split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") {
    // Spend the same time as a real check, so an unknown account is not told apart by timing.
    await derive(password, Buffer.alloc(16), { N, r: R, p: P });
    return false;
  }
  const [, n, r, p, salt, want] = parts as [string, string, string, string, string, string];
  const key = await derive(password, Buffer.from(salt, "base64url"), { N: Number(n), r: Number(r), p: Number(p) });
  const expected = Buffer.from(want, "base64url");
  return expected.length === key.length && timingSafeEqual(expected, key);
}

/** The rule shown on the page: at least 12 characters, at most 256 (NIST SP 800-63B §5.1.1). */
export function passwordProblem(password: string): string | null {
  if (password.length < 12) return "Use at least 12 characters.";
  if (password.length > 256) return "Use at most 256 characters.";
  return null;
}
