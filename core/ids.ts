/**
 * Public identifiers: a type prefix and 24 random base62 characters (≈143 bits), like Stripe's.
 * Random rather than sequential, so that ids reveal nothing and cannot be guessed across tenants.
 */
import { createHash, randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 × 62: rejecting larger bytes keeps every character equally likely.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export type IdPrefix = "job" | "file" | "ten" | "key" | "msg" | "areq";

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(24)}`;
}

export const ID_PATTERN = (prefix: IdPrefix): RegExp => new RegExp(`^${prefix}_[0-9A-Za-z]{24}$`);

/** `n` base62 characters (6 bits short of log2(62) each) of SHA-256 over the parts. */
export function derivedChars(parts: readonly string[], n: number): string {
  let v = BigInt("0x" + createHash("sha256").update(parts.join("\u0000")).digest("hex"));
  let out = "";
  for (let i = 0; i < n; i++) {
    out = ALPHABET[Number(v % 62n)]! + out;
    v /= 62n;
  }
  return out;
}

/** `prefix_` + 24 base62 characters (≈143 bits) of SHA-256 over the parts: an id shaped like newId's. */
export function derivedId(prefix: "file" | "msg", parts: readonly string[]): string {
  return `${prefix}_${derivedChars(parts, 24)}`;
}
