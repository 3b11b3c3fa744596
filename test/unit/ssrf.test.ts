/**
 * The SSRF matrix for webhook URLs (API.md "Webhooks"). Nothing here connects anywhere: names are
 * resolved by an injected lookup, except `localhost`, which goes through the real resolver (it is
 * answered from /etc/hosts). Redirects are covered with a real receiver in test/api/webhooks.test.ts.
 */
import { describe, expect, it } from "vitest";
import {
  classifyAddress,
  SsrfGuard,
  type AddressKind,
  type LookupFn,
  type ResolvedAddress,
  type UrlRejection,
} from "../../core/net/ssrf.ts";

const fam = (a: string): 4 | 6 => (a.includes(":") ? 6 : 4);

/** A lookup answering from a table, recording what it was asked; unknown names fail like NXDOMAIN. */
function fakeDns(table: Record<string, string[]>): LookupFn & { asked: string[] } {
  const asked: string[] = [];
  const fn = (host: string): Promise<ResolvedAddress[]> => {
    asked.push(host);
    const list = table[host];
    if (!list) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" }));
    return Promise.resolve(list.map((address) => ({ address, family: fam(address) })));
  };
  return Object.assign(fn, { asked });
}

// [sentence, address, expected kind (null = public), embedding]
const ADDRESSES: [string, string, AddressKind | null, string?][] = [
  ["IPv4 loopback is refused", "127.0.0.1", "loopback"],
  ["all of 127/8 is loopback, not just 127.0.0.1", "127.255.255.254", "loopback"],
  ["IPv6 loopback is refused", "::1", "loopback"],
  ["10/8 is private (RFC 1918)", "10.1.2.3", "private"],
  ["the top of 172.16/12 is private", "172.31.255.255", "private"],
  ["172.32.0.1 is just outside 172.16/12 and public", "172.32.0.1", null],
  ["192.168/16 is private", "192.168.1.1", "private"],
  ["IPv6 unique local addresses are private (RFC 4193)", "fd12:3456:789a::1", "private"],
  ["AWS's IPv6 metadata endpoint is a unique local address", "fd00:ec2::254", "private"],
  ["the cloud metadata address 169.254.169.254 is refused by name", "169.254.169.254", "metadata"],
  ["Azure's platform endpoint is public space but refused", "168.63.129.16", "metadata"],
  ["IPv4 link-local is refused (RFC 3927)", "169.254.10.20", "link_local"],
  ["IPv6 link-local is refused", "fe80::1", "link_local"],
  ["IPv6 link-local with a zone index is refused", "fe80::1%eth0", "link_local"],
  ["carrier-grade NAT space is refused (RFC 6598)", "100.64.0.1", "shared"],
  ["Alibaba's metadata 100.100.100.200 is inside the CGNAT range", "100.100.100.200", "shared"],
  ["100.128.0.0 is just past the CGNAT range and public", "100.128.0.0", null],
  ["IPv4 multicast is refused", "224.0.0.251", "multicast"],
  ["IPv6 multicast is refused", "ff02::1", "multicast"],
  ["0.0.0.0 (which Linux connects to as loopback) is refused", "0.0.0.0", "unspecified"],
  ["all of 0/8 ('this network') is refused", "0.1.2.3", "unspecified"],
  ["the IPv6 unspecified address is refused", "::", "unspecified"],
  ["the limited broadcast address is refused", "255.255.255.255", "broadcast"],
  ["240/4 'future use' is refused", "240.0.0.1", "reserved"],
  ["TEST-NET-1 documentation space is refused", "192.0.2.10", "documentation"],
  ["TEST-NET-2 documentation space is refused", "198.51.100.7", "documentation"],
  ["TEST-NET-3 documentation space is refused", "203.0.113.9", "documentation"],
  ["IPv6 documentation space 2001:db8::/32 is refused", "2001:db8::1", "documentation"],
  ["IPv6 documentation space 3fff::/20 is refused", "3fff:123::1", "documentation"],
  ["benchmarking space 198.18/15 is refused", "198.19.255.255", "benchmarking"],
  ["IETF protocol assignments 192.0.0.0/24 are refused", "192.0.0.8", "protocol_assignment"],
  ["the deprecated 6to4 relay anycast is refused", "192.88.99.1", "reserved"],
  ["IPv4-mapped IPv6 evades an IPv4 deny-list but is refused as loopback", "::ffff:127.0.0.1", "loopback", "IPv4-mapped IPv6"],
  ["the hex spelling of IPv4-mapped loopback is refused too", "::ffff:7f00:1", "loopback", "IPv4-mapped IPv6"],
  ["IPv4-mapped metadata address is refused", "::ffff:169.254.169.254", "metadata", "IPv4-mapped IPv6"],
  ["IPv4-mapped form of a public address is refused anyway (never in public DNS)", "::ffff:8.8.8.8", "ipv4_mapped"],
  ["IPv4-compatible loopback is refused", "::127.0.0.1", "loopback", "IPv4-compatible IPv6"],
  ["IPv4-compatible form of a public address is refused (deprecated, RFC 4291)", "::8.8.8.8", "ipv4_compatible"],
  ["6to4 embedding 127.0.0.1 is refused (RFC 3056)", "2002:7f00:1::", "loopback", "6to4"],
  ["6to4 embedding 10.0.0.1 is refused", "2002:a00:1::1", "private", "6to4"],
  ["6to4 embedding the metadata address is refused", "2002:a9fe:a9fe::", "metadata", "6to4"],
  ["6to4 embedding a public address is public", "2002:808:808::1", null],
  ["NAT64 of 127.0.0.1 is refused (RFC 6052)", "64:ff9b::7f00:1", "loopback", "NAT64"],
  ["NAT64 of 10.0.0.1 in dotted form is refused", "64:ff9b::10.0.0.1", "private", "NAT64"],
  ["NAT64 of the metadata address is refused", "64:ff9b::169.254.169.254", "metadata", "NAT64"],
  ["NAT64 of a public address is public", "64:ff9b::8.8.8.8", null],
  ["local-use NAT64 (/96 layout) of 10.0.0.1 is refused (RFC 8215)", "64:ff9b:1::a00:1", "private", "NAT64"],
  ["local-use NAT64 in the RFC 6052 /48 layout of 127.0.0.1 is refused", "64:ff9b:1:7f00:0:100::", "loopback", "NAT64"],
  ["local-use NAT64 in the /64 layout of 192.168.0.1 is refused", "64:ff9b:1:0:c0:a800:100::", "private", "NAT64"],
  ["local-use NAT64 of a public address is public", "64:ff9b:1::808:808", null],
  ["Teredo tunnels are refused (RFC 4380)", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "teredo"],
  ["IPv6 benchmarking (inside 2001::/23) is refused", "2001:2::1", "protocol_assignment"],
  ["deprecated site-local fec0::/10 is refused", "fec0::1", "site_local"],
  ["the IPv6 discard prefix is refused (RFC 6666)", "100::1", "discard"],
  ["space outside global unicast 2000::/3 is refused", "5f00::1", "reserved"],
  ["a public IPv4 address passes", "8.8.8.8", null],
  ["another public IPv4 address passes", "1.1.1.1", null],
  ["a public IPv6 address passes", "2606:4700:4700::1111", null],
  ["a real allocation right after 2001::/23 passes", "2001:200::1", null],
  ["bracketed IPv6 is understood", "[2a00:1450:4001:80b::200e]", null],
  ["text that is not an address is refused", "example.com", "invalid"],
];

describe("classifyAddress: the special-purpose registries (RFC 6890)", () => {
  it.each(ADDRESSES)("%s (%s)", (_sentence, address, kind, via) => {
    const got = classifyAddress(address);
    if (kind === null) expect(got).toBeNull();
    else expect(got).toEqual(via ? { kind, via } : { kind });
  });
});

const DNS = fakeDns({
  "hooks.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  "intranet.example.com": ["10.0.0.5"],
  "metadata.google.internal": ["169.254.169.254"],
  "mixed.example.com": ["93.184.215.14", "192.168.1.10"],
  "ula.example.com": ["fd00::1"],
  "nat64.example.com": ["64:ff9b::7f00:1"],
  "mapped.example.com": ["::ffff:10.0.0.1"],
  "rebind.example.com": ["127.0.0.1"],
  "empty.example.com": [],
});

// [sentence, url, expected: "ok" or a rejection code, reason pattern]
const URLS: [string, string, "ok" | UrlRejection, RegExp?][] = [
  ["a public host over https passes", "https://hooks.example.com/folio?x=1", "ok"],
  ["a public host on any port passes (the address, not the port, is what matters)", "https://hooks.example.com:8443/", "ok"],
  ["plain http is refused", "http://hooks.example.com/", "scheme", /https/],
  ["other schemes are refused", "ftp://hooks.example.com/", "scheme"],
  ["credentials in the URL are refused", "https://user:pass@hooks.example.com/", "credentials", /credentials/],
  ["a user name alone is refused", "https://token@hooks.example.com/", "credentials"],
  ["'evil.com@127.0.0.1' is userinfo, not a host: refused", "https://evil.com@127.0.0.1/", "credentials"],
  ["a backslash makes WHATWG see 127.0.0.1 as the host: refused as loopback", "https://127.0.0.1\\@evil.com/", "blocked", /loopback/],
  ["a decimal IPv4 spelling of loopback is refused", "https://2130706433/", "blocked", /loopback/],
  ["an octal IPv4 spelling of loopback is refused", "https://0177.0.0.1/", "blocked", /loopback/],
  ["a hex IPv4 spelling of loopback is refused", "https://0x7f.1/", "blocked", /loopback/],
  ["a single hex number spelling of loopback is refused", "https://0x7f000001/", "blocked", /loopback/],
  ["a shortened IPv4 spelling of loopback is refused", "https://127.1/", "blocked", /loopback/],
  ["a percent-encoded loopback host is refused", "https://%31%32%37.0.0.1/", "blocked", /loopback/],
  ["fullwidth digits for loopback are refused", "https://\uff11\uff12\uff17.0.0.1/", "blocked", /loopback/],
  ["the metadata address as a literal is refused", "https://169.254.169.254/latest/meta-data/", "blocked", /metadata/],
  ["'https://0/' (0.0.0.0) is refused", "https://0/", "blocked", /unspecified/],
  ["IPv6 loopback literal is refused", "https://[::1]/", "blocked", /loopback/],
  ["IPv6 loopback spelled out is refused", "https://[0:0:0:0:0:0:0:1]:8443/", "blocked", /loopback/],
  ["IPv4-mapped loopback literal is refused", "https://[::ffff:127.0.0.1]/", "blocked", /loopback address \(IPv4-mapped IPv6 form\)/],
  ["NAT64 of loopback as a literal is refused", "https://[64:ff9b::127.0.0.1]/", "blocked", /NAT64/],
  ["6to4 of a private address as a literal is refused", "https://[2002:c0a8:101::]/", "blocked", /private address \(6to4 form\)/],
  ["a CGNAT literal is refused", "https://100.64.1.1/", "blocked", /carrier-grade NAT/],
  ["a DNS name resolving to a private address is refused", "https://intranet.example.com/", "blocked", /resolves to a private address/],
  ["metadata.google.internal resolves to the metadata address: refused", "https://metadata.google.internal/", "blocked", /metadata/],
  ["a name with one public and one private address is refused", "https://mixed.example.com/", "blocked", /private/],
  ["a name resolving to an IPv6 unique local address is refused", "https://ula.example.com/", "blocked", /private/],
  ["a name resolving to NAT64 of loopback is refused", "https://nat64.example.com/", "blocked", /loopback/],
  ["a name resolving to IPv4-mapped private is refused", "https://mapped.example.com/", "blocked", /private/],
  ["a rebinding name currently pointing at 127.0.0.1 is refused", "https://rebind.example.com/", "blocked", /loopback/],
  ["a name that does not resolve is refused", "https://nxdomain.example.com/", "unresolvable", /could not be resolved/],
  ["a name resolving to nothing is refused", "https://empty.example.com/", "unresolvable"],
  ["port 0 is refused", "https://hooks.example.com:0/", "port"],
  ["text that is not a URL is refused", "not a url", "invalid_url"],
];

describe("SsrfGuard.check: the URL matrix", () => {
  const guard = new SsrfGuard([], { lookup: DNS });

  it.each(URLS)("%s (%s)", async (_sentence, url, expected, reason) => {
    const got = await guard.check(url);
    if (expected === "ok") {
      expect(got.ok).toBe(true);
      return;
    }
    expect(got).toMatchObject({ ok: false, code: expected });
    if (reason && !got.ok) expect(got.reason).toMatch(reason);
  });

  it("should return every resolved address, in the resolver's order, for the connection to pin", async () => {
    const got = await guard.check("https://hooks.example.com/");
    expect(got.ok && got.addresses.map((a) => a.address)).toEqual(["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"]);
  });

  it("should not consult DNS for an address literal", async () => {
    const dns = fakeDns({});
    const got = await new SsrfGuard([], { lookup: dns }).check("https://93.184.215.14/");
    expect(got.ok).toBe(true);
    expect(dns.asked).toEqual([]);
  });

  it("should never put the resolved address of a name in the reason (no internal DNS disclosure)", async () => {
    const got = await guard.check("https://intranet.example.com/");
    expect(!got.ok && got.reason).not.toContain("10.0.0.5");
  });

  it("should refuse localhost through the real resolver", async () => {
    const got = await new SsrfGuard([]).check("https://localhost:8443/");
    expect(got).toMatchObject({ ok: false, code: "blocked", reason: expect.stringMatching(/loopback/) });
  });
});

describe("SsrfGuard allow-list (FOLIO_WEBHOOK_ALLOWED_HOSTS)", () => {
  it("should let a listed address through", async () => {
    const got = await new SsrfGuard(["127.0.0.1"], { lookup: DNS }).check("https://127.0.0.1:9443/hook");
    expect(got).toMatchObject({ ok: true, allowListed: true, addresses: [{ address: "127.0.0.1", family: 4 }] });
  });

  it("should let a listed name through the real resolver, case-insensitively", async () => {
    const got = await new SsrfGuard([" LOCALHOST "]).check("https://localhost:9443/");
    expect(got.ok).toBe(true);
    expect(got.ok && got.addresses.length).toBeGreaterThan(0);
  });

  it("should match an IPv6 entry however it is spelled", async () => {
    const guard = new SsrfGuard(["[0:0:0:0:0:0:0:1]"], { lookup: DNS });
    expect((await guard.check("https://[::1]/")).ok).toBe(true);
  });

  it("should not let a listed name vouch for a different host", async () => {
    const guard = new SsrfGuard(["localhost"], { lookup: DNS });
    expect(await guard.check("https://127.0.0.1/")).toMatchObject({ ok: false, code: "blocked" });
  });

  it("should accept a name whose every non-public address is listed, and no other", async () => {
    const guard = new SsrfGuard(["10.0.0.5"], { lookup: DNS });
    expect((await guard.check("https://intranet.example.com/")).ok).toBe(true);
    expect(await guard.check("https://mixed.example.com/")).toMatchObject({ ok: false, code: "blocked" });
  });

  it("should still require https and refuse credentials for listed hosts", async () => {
    const guard = new SsrfGuard(["127.0.0.1"], { lookup: DNS });
    expect(await guard.check("http://127.0.0.1/")).toMatchObject({ ok: false, code: "scheme" });
    expect(await guard.check("https://a:b@127.0.0.1/")).toMatchObject({ ok: false, code: "credentials" });
  });

  it("should ignore empty entries (an unset variable is an empty list)", async () => {
    const guard = new SsrfGuard("".split(","), { lookup: DNS });
    expect(await guard.check("https://127.0.0.1/")).toMatchObject({ ok: false, code: "blocked" });
  });
});
