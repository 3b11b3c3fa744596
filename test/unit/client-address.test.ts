/**
 * Who the client is behind trusted proxies (issue #10 item 9): the rightmost X-Forwarded-For hop
 * that is not a trusted proxy, never the leftmost entry a client may have written itself.
 */
import { describe, expect, it } from "vitest";
import { addressKey, clientAddress, parseTrustedProxies, proxyEntryProblem } from "../../core/net/proxies.ts";

const trusted = parseTrustedProxies("10.0.0.0/8, 192.0.2.7, fd00::/8");

// [sentence, socket peer, X-Forwarded-For, expected client]
const CHAIN: [string, string, string | string[] | undefined, string][] = [
  ["a direct client is its socket peer, whatever it forwards", "198.51.100.1", "1.1.1.1", "198.51.100.1"],
  ["behind one proxy the client is the entry that proxy appended", "10.0.0.5", "203.0.113.9", "203.0.113.9"],
  ["a spoofed leftmost entry is ignored: the proxy's appended hop wins", "10.0.0.5", "1.1.1.1, 203.0.113.9", "203.0.113.9"],
  [
    "a chain of trusted proxies is walked to the first untrusted hop",
    "10.0.0.5",
    "1.1.1.1, 203.0.113.9, 10.1.1.1, 192.0.2.7",
    "203.0.113.9",
  ],
  ["several X-Forwarded-For headers are one list", "10.0.0.5", ["1.1.1.1", "203.0.113.9, 10.2.2.2"], "203.0.113.9"],
  ["garbage left of a trusted hop ends the walk at that hop", "10.0.0.5", "not-an-ip, 10.3.3.3", "10.3.3.3"],
  ["garbage as the only entry leaves the proxy itself as the client", "10.0.0.5", "<script>", "10.0.0.5"],
  ["an IPv4-mapped IPv6 peer matches an IPv4 range", "::ffff:10.0.0.5", "203.0.113.9", "203.0.113.9"],
  ["IPv6 proxies by CIDR, with a bracketed entry and port", "fd00::1", "[2001:db8::42]:4711", "2001:db8::42"],
  ["an IPv4 entry with a port", "10.0.0.5", "203.0.113.9:5555", "203.0.113.9"],
  ["a trusted peer without the header is the client", "10.0.0.5", undefined, "10.0.0.5"],
  ["a mapped direct peer is reported unmapped", "::ffff:198.51.100.1", undefined, "198.51.100.1"],
];

describe("clientAddress", () => {
  it.each(CHAIN)("%s", (_s, peer, xff, want) => {
    expect(clientAddress(peer, xff, trusted)).toBe(want);
  });

  it("nothing is trusted when FOLIO_TRUST_PROXY is empty", () => {
    expect(clientAddress("10.0.0.5", "203.0.113.9", parseTrustedProxies(""))).toBe("10.0.0.5");
  });
});

describe("FOLIO_TRUST_PROXY entries", () => {
  it.each([
    ["10.0.0.0/8", null],
    ["192.0.2.7", null],
    ["2001:db8::/32", null],
    ["10.0.0.0/33", /prefix length/],
    ["10.0.0.0/x", /prefix length/],
    ["proxy.internal", /neither an address/],
    ["10.0.0.0/8/1", /neither an address/],
  ])("%s", (entry, problem) => {
    const got = proxyEntryProblem(entry);
    if (problem === null) expect(got).toBeNull();
    else expect(got).toMatch(problem);
  });

  it("an invalid list is refused when parsed", () => {
    expect(() => parseTrustedProxies("10.0.0.0/8, nope")).toThrow(/nope/);
  });
});

describe("addressKey", () => {
  it.each([
    ["an IPv4 address is its own key", "203.0.113.9", "203.0.113.9"],
    ["an IPv4-mapped address is keyed as IPv4", "::ffff:203.0.113.9", "203.0.113.9"],
    ["IPv6 addresses in one /64 share a key", "2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"],
    ["… whatever their interface id", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"],
    ["a compressed IPv6 address is expanded first", "2001:db8::1", "2001:db8:0:0::/64"],
  ])("%s", (_s, addr, key) => {
    expect(addressKey(addr)).toBe(key);
  });
});
