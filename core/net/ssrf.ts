/**
 * The SSRF guard for webhook URLs (API.md "Webhooks"): https only, no credentials in the URL, and
 * every address the host resolves to must be public. It runs at submission and again before every
 * delivery attempt, and the caller connects to an address it returned (pinning), so a DNS answer
 * that changes between check and connect (DNS rebinding) cannot redirect a request inwards.
 *
 * "Public" follows the IANA special-purpose address registries (RFC 6890 and its updates): an
 * address in a range that is not globally reachable is refused, and so is an IPv6 address that
 * embeds such an IPv4 address (IPv4-mapped/compatible, RFC 4291; 6to4, RFC 3056; NAT64, RFC 6052).
 * Odd IPv4 spellings in URLs (2130706433, 0177.0.0.1, 0x7f.1) are normalised to dotted quads by
 * the WHATWG URL parser before this module sees them; the resolved addresses are checked either way.
 *
 * Ports: any port is allowed. The address check, not the port, is what keeps requests off the
 * internal network; receivers on 8443 and the like are common (GitHub and Svix allow any port).
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { domainToASCII } from "node:url";

/** Why an address is not public; a small fixed set, usable as a metric or log label. */
export type AddressKind =
  | "invalid"
  | "unspecified"
  | "loopback"
  | "private"
  | "link_local"
  | "metadata"
  | "shared"
  | "multicast"
  | "broadcast"
  | "reserved"
  | "documentation"
  | "benchmarking"
  | "protocol_assignment"
  | "ipv4_mapped"
  | "ipv4_compatible"
  | "teredo"
  | "site_local"
  | "discard";

/** A refused address: its kind and, for an IPv6 address embedding an IPv4 one, the embedding. */
export interface AddressBlock {
  kind: AddressKind;
  via?: "IPv4-mapped IPv6" | "IPv4-compatible IPv6" | "6to4" | "NAT64";
}

const KIND_TEXT: Record<AddressKind, string> = {
  invalid: "an invalid address",
  unspecified: "an unspecified address",
  loopback: "a loopback address",
  private: "a private address",
  link_local: "a link-local address",
  metadata: "a cloud metadata address",
  shared: "a carrier-grade NAT address",
  multicast: "a multicast address",
  broadcast: "a broadcast address",
  reserved: "a reserved address",
  documentation: "a documentation address",
  benchmarking: "a benchmarking address",
  protocol_assignment: "an IETF protocol address",
  ipv4_mapped: "an IPv4-mapped IPv6 address",
  ipv4_compatible: "an IPv4-compatible IPv6 address",
  teredo: "a Teredo address",
  site_local: "a site-local address",
  discard: "a discard-only address",
};

/** "a loopback address (6to4 form)": the phrase used in rejection reasons. */
export function describeBlock(b: AddressBlock): string {
  return b.via ? `${KIND_TEXT[b.kind]} (${b.via} form)` : KIND_TEXT[b.kind];
}

// IANA IPv4 Special-Purpose Address Registry (RFC 6890 §2.2.2 and later updates); first match wins.
const V4: [string, number, AddressKind][] = [
  ["0.0.0.0", 8, "unspecified"], // RFC 1122 "this network"
  ["10.0.0.0", 8, "private"], // RFC 1918
  ["100.64.0.0", 10, "shared"], // RFC 6598 shared address space (CGNAT); also Alibaba's metadata 100.100.100.200
  ["127.0.0.0", 8, "loopback"], // RFC 1122
  ["169.254.169.254", 32, "metadata"], // instance metadata of AWS, GCP, Azure, OCI, …
  ["169.254.0.0", 16, "link_local"], // RFC 3927
  ["168.63.129.16", 32, "metadata"], // Azure's platform endpoint: public space, reachable only from inside Azure
  ["172.16.0.0", 12, "private"], // RFC 1918
  ["192.0.0.0", 24, "protocol_assignment"], // RFC 6890 (DS-Lite, NAT64 discovery, …)
  ["192.0.2.0", 24, "documentation"], // RFC 5737 TEST-NET-1
  ["192.88.99.0", 24, "reserved"], // RFC 7526: the deprecated 6to4 relay anycast
  ["192.168.0.0", 16, "private"], // RFC 1918
  ["198.18.0.0", 15, "benchmarking"], // RFC 2544
  ["198.51.100.0", 24, "documentation"], // RFC 5737 TEST-NET-2
  ["203.0.113.0", 24, "documentation"], // RFC 5737 TEST-NET-3
  ["224.0.0.0", 4, "multicast"], // RFC 5771
  ["255.255.255.255", 32, "broadcast"], // RFC 919 limited broadcast
  ["240.0.0.0", 4, "reserved"], // RFC 1112 "future use"
];

// IANA IPv6 Special-Purpose Address Registry (RFC 6890 §2.2.3 and later updates); first match wins.
// The embedding forms (::ffff:0:0/96, ::/96, 64:ff9b::/96, 64:ff9b:1::/48, 2002::/16) are handled
// before this table, and anything outside global unicast 2000::/3 (RFC 4291) after it.
const V6: [string, number, AddressKind][] = [
  ["100::", 64, "discard"], // RFC 6666
  ["2001::", 32, "teredo"], // RFC 4380: the tunnel endpoint is not the host it claims to be
  ["2001:db8::", 32, "documentation"], // RFC 3849
  ["2001::", 23, "protocol_assignment"], // RFC 2928 (benchmarking 2001:2::/48, ORCHID, …)
  ["3fff::", 20, "documentation"], // RFC 9637
  ["fc00::", 7, "private"], // RFC 4193 unique local (AWS's IPv6 metadata fd00:ec2::254 is one)
  ["fe80::", 10, "link_local"], // RFC 4291
  ["fec0::", 10, "site_local"], // RFC 3879 (deprecated site-local)
  ["ff00::", 8, "multicast"], // RFC 4291
];

/** A dotted-quad IPv4 address as an unsigned 32-bit number, or null. */
function parseV4(s: string): number | null {
  if (isIP(s) !== 4) return null;
  return s.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

/** An IPv6 address (optionally with a trailing dotted quad or an RFC 4007 zone) as 16 bytes, or null. */
function parseV6(text: string): Uint8Array | null {
  let s = text.replace(/%.*$/, "");
  if (isIP(s) !== 6) return null;
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (quad) {
    const n = parseV4(quad[1]!)!;
    s = `${s.slice(0, quad.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [left, right] = s.split("::") as [string, string | undefined];
  const l = left ? left.split(":") : [];
  const r = right ? right.split(":") : [];
  const groups = right === undefined ? l : [...l, ...Array<string>(8 - l.length - r.length).fill("0"), ...r];
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const v = parseInt(g, 16);
    bytes[i * 2] = v >> 8;
    bytes[i * 2 + 1] = v & 0xff;
  });
  return bytes;
}

const V4_TABLE = V4.map(([base, len, kind]) => ({ base: parseV4(base)!, len, kind }));
const V6_TABLE = V6.map(([base, len, kind]) => ({ base: parseV6(base)!, len, kind }));

function inV4(n: number, base: number, len: number): boolean {
  return len === 0 || n >>> (32 - len) === base >>> (32 - len);
}

function inV6(b: Uint8Array, base: Uint8Array, len: number): boolean {
  for (let bit = 0; bit < len; bit += 8) {
    const mask = len - bit >= 8 ? 0xff : (0xff << (8 - (len - bit))) & 0xff;
    if (((b[bit / 8]! ^ base[bit / 8]!) & mask) !== 0) return false;
  }
  return true;
}

const v4Of = (b: Uint8Array, idx: number[]): number => idx.reduce((n, i) => n * 256 + b[i]!, 0);
const zero = (b: Uint8Array, from: number, to: number): boolean => b.subarray(from, to).every((x) => x === 0);

function classifyV4(n: number): AddressBlock | null {
  const hit = V4_TABLE.find((r) => inV4(n, r.base, r.len));
  return hit ? { kind: hit.kind } : null;
}

/**
 * The IPv4 addresses a local-use NAT64 address (64:ff9b:1::/48, RFC 8215) may stand for: RFC 6052
 * §2.2 places them differently for prefix lengths /48, /56, /64 and /96, and the operator's length
 * is unknown. A layout applies when its "u" octet (bits 64–71) and its suffix are zero.
 */
function nat64LocalCandidates(b: Uint8Array): number[] {
  const out: number[] = [];
  if (b[8] === 0 && zero(b, 11, 16)) out.push(v4Of(b, [6, 7, 9, 10]));
  if (b[8] === 0 && zero(b, 12, 16)) out.push(v4Of(b, [7, 9, 10, 11]));
  if (b[8] === 0 && zero(b, 13, 16)) out.push(v4Of(b, [9, 10, 11, 12]));
  out.push(v4Of(b, [12, 13, 14, 15]));
  return out;
}

const P = (s: string): Uint8Array => parseV6(s)!;
const MAPPED = P("::ffff:0:0");
const NAT64_WKP = P("64:ff9b::");
const NAT64_LOCAL = P("64:ff9b:1::");
const SIX_TO_FOUR = P("2002::");

function classifyV6(b: Uint8Array): AddressBlock | null {
  if (zero(b, 0, 16)) return { kind: "unspecified" };
  if (zero(b, 0, 15) && b[15] === 1) return { kind: "loopback" };
  const embedded = (n: number, via: NonNullable<AddressBlock["via"]>): AddressBlock | null => {
    const inner = classifyV4(n);
    return inner ? { kind: inner.kind, via } : null;
  };
  // IPv4-mapped and IPv4-compatible addresses never belong in a public AAAA record: refuse them all,
  // naming the embedded address's kind when it has one (::ffff:7f00:1 is "loopback, IPv4-mapped").
  if (inV6(b, MAPPED, 96)) return embedded(v4Of(b, [12, 13, 14, 15]), "IPv4-mapped IPv6") ?? { kind: "ipv4_mapped" };
  if (zero(b, 0, 12)) return embedded(v4Of(b, [12, 13, 14, 15]), "IPv4-compatible IPv6") ?? { kind: "ipv4_compatible" };
  if (inV6(b, NAT64_WKP, 96)) return embedded(v4Of(b, [12, 13, 14, 15]), "NAT64");
  if (inV6(b, NAT64_LOCAL, 48)) {
    for (const n of nat64LocalCandidates(b)) {
      const hit = embedded(n, "NAT64");
      if (hit) return hit;
    }
    return null;
  }
  if (inV6(b, SIX_TO_FOUR, 16)) return embedded(v4Of(b, [2, 3, 4, 5]), "6to4");
  const hit = V6_TABLE.find((r) => inV6(b, r.base, r.len));
  if (hit) return { kind: hit.kind };
  // Only 2000::/3 is allocated as global unicast; the rest of the space is reserved by IANA.
  return (b[0]! & 0xe0) === 0x20 ? null : { kind: "reserved" };
}

/**
 * Classifies one IP address (IPv4 dotted quad or IPv6, brackets and zone allowed): null when it
 * is public, otherwise why it is refused. Anything that is not an IP address is "invalid".
 */
export function classifyAddress(address: string): AddressBlock | null {
  const s = address.replace(/^\[(.*)\]$/, "$1");
  const v4 = parseV4(s);
  if (v4 !== null) return classifyV4(v4);
  const v6 = parseV6(s);
  return v6 ? classifyV6(v6) : { kind: "invalid" };
}

/** A canonical key for an IP address, so that equivalent spellings compare equal; null if not one. */
function addressKey(address: string): string | null {
  const s = address.replace(/^\[(.*)\]$/, "$1");
  const v4 = parseV4(s);
  if (v4 !== null) return `4:${v4}`;
  const v6 = parseV6(s);
  return v6 ? `6:${Buffer.from(v6).toString("hex")}` : null;
}

/** One resolved address, as `dns.lookup` returns it. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses (injectable so tests never touch the network). */
export type LookupFn = (hostname: string) => Promise<ResolvedAddress[]>;

/** getaddrinfo via `dns.promises.lookup`, every address, in the resolver's order. */
export const systemLookup: LookupFn = async (hostname) =>
  (await dnsLookup(hostname, { all: true, order: "verbatim" })).map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));

/** Why a URL was refused; `reason` is a sentence for a 422 `errors[].message` or a job's last_error. */
export type UrlRejection = "invalid_url" | "scheme" | "credentials" | "port" | "blocked" | "unresolvable";

export type UrlCheck =
  | { ok: true; url: URL; hostname: string; addresses: ResolvedAddress[]; allowListed: boolean }
  | { ok: false; code: UrlRejection; reason: string; block?: AddressBlock };

const normalHost = (h: string): string =>
  h
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");

/** Checks webhook URLs; see the module comment. One instance per process, built from config. */
export class SsrfGuard {
  private readonly names = new Set<string>();
  private readonly addresses = new Set<string>();
  private readonly lookup: LookupFn;

  /**
   * `allowedHosts` is the operator allow-list (FOLIO_WEBHOOK_ALLOWED_HOSTS): a URL whose host is a
   * listed name or address skips the address check, and a resolved address that is listed passes it.
   */
  constructor(allowedHosts: readonly string[], options: { lookup?: LookupFn } = {}) {
    for (const raw of allowedHosts) {
      const h = normalHost(raw);
      if (!h) continue;
      const key = addressKey(h);
      if (key) this.addresses.add(key);
      else this.names.add(domainToASCII(h) || h);
    }
    this.lookup = options.lookup ?? systemLookup;
  }

  /** The checks that need no DNS: a valid https URL without credentials. */
  checkSyntax(raw: string): { ok: true; url: URL; hostname: string } | { ok: false; code: UrlRejection; reason: string } {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return { ok: false, code: "invalid_url", reason: "must be a valid URL" };
    }
    if (url.protocol !== "https:") return { ok: false, code: "scheme", reason: "must use https" };
    // RFC 3986 §3.2.1 userinfo: credentials would be sent to the receiver and written in job records,
    // and "https://trusted.example@10.0.0.1" misleads a human reader about the host.
    if (url.username || url.password) return { ok: false, code: "credentials", reason: "must not contain credentials (user:password@)" };
    if (url.port === "0") return { ok: false, code: "port", reason: "must not use port 0" };
    return { ok: true, url, hostname: normalHost(url.hostname) };
  }

  /** Every check, resolving the host; `addresses` are the ones a connection may be pinned to. */
  async check(raw: string): Promise<UrlCheck> {
    const syntax = this.checkSyntax(raw);
    if (!syntax.ok) return syntax;
    const host = await this.checkHost(syntax.hostname);
    return host.ok ? { ...host, url: syntax.url } : host;
  }

  /**
   * The address checks alone, for a host name or IP literal (brackets allowed): what the fetch
   * proxy of HTML → PDF (runner/engines/fetch-proxy.ts) applies to every request a page makes,
   * over http and https alike, before connecting to one of the returned addresses.
   */
  async checkHost(
    rawHost: string,
  ): Promise<
    | { ok: true; hostname: string; addresses: ResolvedAddress[]; allowListed: boolean }
    | { ok: false; code: UrlRejection; reason: string; block?: AddressBlock }
  > {
    const hostname = normalHost(rawHost);
    const literal = isIP(hostname);
    const allowListed = literal ? this.addresses.has(addressKey(hostname)!) : this.names.has(hostname);
    let addresses: ResolvedAddress[];
    if (literal) {
      addresses = [{ address: hostname, family: literal === 6 ? 6 : 4 }];
    } else {
      try {
        addresses = await this.lookup(hostname);
      } catch {
        addresses = [];
      }
      if (addresses.length === 0) return { ok: false, code: "unresolvable", reason: "host could not be resolved" };
    }
    if (!allowListed) {
      // Every address, not just the first: the connection may be pinned to any of them, and a name
      // with one public and one private address must not be a way in.
      for (const a of addresses) {
        if (this.addresses.has(addressKey(a.address) ?? "")) continue;
        const block = classifyAddress(a.address);
        if (!block) continue;
        const reason = literal ? `must not point to ${describeBlock(block)}` : `host resolves to ${describeBlock(block)}`;
        return { ok: false, code: "blocked", reason, block };
      }
    }
    return { ok: true, hostname, addresses, allowListed };
  }
}
