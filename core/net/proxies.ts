/**
 * Who is the client? Trusted reverse proxies (FOLIO_TRUST_PROXY: addresses and CIDR ranges) and
 * the X-Forwarded-For chain they append to.
 *
 * A proxy appends the address it saw to X-Forwarded-For, so everything left of the last entry a
 * trusted proxy wrote is whatever the client chose to send. The client is therefore the
 * *rightmost untrusted* hop: walk the chain from the socket's peer leftwards, skipping trusted
 * proxies, and stop at the first address that is not one (MDN "X-Forwarded-For", "Selecting an IP
 * address"; OWASP API4 — a limit keyed on a spoofable value is no limit). An entry that is not an
 * address ends the walk at the last proxy we trust, so garbage never becomes a rate-limit key.
 */
import { BlockList, isIP } from "node:net";

export interface TrustedProxies {
  /** True when `address` (IPv4, IPv6 or IPv4-mapped IPv6) is one of the trusted proxies. */
  has(address: string | undefined): boolean;
  /** The entries as configured, for logs. */
  readonly entries: readonly string[];
}

/** Why an entry of FOLIO_TRUST_PROXY is not valid, or null when it is. */
export function proxyEntryProblem(entry: string): string | null {
  const [addr, bits, ...rest] = entry.split("/");
  const family = isIP(addr ?? "");
  if (!family || rest.length) return `"${entry}" is neither an address nor a CIDR range`;
  if (bits === undefined) return null;
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return `"${entry}": the prefix length must be 0–${max}`;
  return null;
}

/** Splits a comma-separated list of addresses and CIDR ranges; throws on an invalid entry. */
export function parseTrustedProxies(spec: string): TrustedProxies {
  const entries = spec
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const list = new BlockList();
  for (const entry of entries) {
    const problem = proxyEntryProblem(entry);
    if (problem) throw new Error(problem);
    const [addr, bits] = entry.split("/") as [string, string | undefined];
    const type = isIP(addr) === 4 ? "ipv4" : "ipv6";
    if (bits === undefined) list.addAddress(addr, type);
    else list.addSubnet(addr, Number(bits), type);
  }
  return {
    entries,
    has(address) {
      if (!address || entries.length === 0) return false;
      const family = isIP(address);
      // BlockList matches IPv4-mapped IPv6 (::ffff:10.0.0.1) against IPv4 rules itself.
      return family !== 0 && list.check(address, family === 4 ? "ipv4" : "ipv6");
    },
  };
}

/** `::ffff:1.2.3.4` → `1.2.3.4`; other addresses unchanged. */
export function unmapAddress(address: string): string {
  const m = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return m ? m[1]! : address;
}

/** Strips what proxies add around an X-Forwarded-For entry: `"[2001:db8::1]:443"`, `1.2.3.4:80`. */
function forwardedEntry(raw: string): string | null {
  let s = raw.trim().replace(/^"(.*)"$/, "$1");
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracketed) s = bracketed[1]!;
  else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d+$/.test(s)) s = s.slice(0, s.lastIndexOf(":"));
  return isIP(s) ? unmapAddress(s) : null;
}

/**
 * The client's address: the socket peer, or — when the peer is a trusted proxy — the rightmost
 * X-Forwarded-For entry that is not a trusted proxy. `forwardedFor` is every X-Forwarded-For
 * header value in order (several headers are one list, RFC 9110 §5.3).
 */
export function clientAddress(
  peer: string | undefined,
  forwardedFor: string | readonly string[] | undefined,
  trusted: TrustedProxies,
): string {
  let client = unmapAddress(peer ?? "unknown");
  if (!trusted.has(client) || forwardedFor === undefined) return client;
  const chain = (typeof forwardedFor === "string" ? [forwardedFor] : forwardedFor).join(",").split(",");
  for (let i = chain.length - 1; i >= 0; i--) {
    const hop = forwardedEntry(chain[i]!);
    if (hop === null) break;
    client = hop;
    if (!trusted.has(hop)) break;
  }
  return client;
}

/**
 * The key a per-address limit counts under: an IPv4 address as it is, an IPv6 address by its /64
 * (one subscriber usually holds a whole /64, RFC 6177, so counting single IPv6 addresses would
 * let one client cycle through 2^64 of them).
 */
export function addressKey(address: string): string {
  const a = unmapAddress(address);
  if (isIP(a) !== 6) return a;
  const full = expandIPv6(a);
  return `${full.slice(0, 4).join(":")}::/64`;
}

function expandIPv6(a: string): string[] {
  let s = a.split("%")[0]!;
  // A trailing dotted quad (::1.2.3.4) as two hextets.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4) {
    const [b0, b1, b2, b3] = v4.slice(1).map(Number) as [number, number, number, number];
    s = s.slice(0, v4.index) + `${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = s.split("::") as [string, string | undefined];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const fill = tail === undefined ? [] : Array<string>(8 - h.length - t.length).fill("0");
  return [...h, ...fill, ...t].map((x) => parseInt(x, 16).toString(16));
}
