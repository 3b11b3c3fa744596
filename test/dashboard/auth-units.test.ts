/** The dashboard's security primitives, table-driven: TOTP (RFC 6238 vectors), scrypt, cookies, escaping, redirects. */
import { describe, expect, it } from "vitest";
import { CookieSigner } from "../../api/dashboard/cookies.ts";
import { escapeHtml, html } from "../../api/dashboard/html.ts";
import { safeNext } from "../../api/dashboard/pages/auth.ts";
import { hashPassword, passwordProblem, verifyPassword } from "../../api/dashboard/passwords.ts";
import { base32Decode, base32Encode, hotp, totpStep, verifyTotp } from "../../api/dashboard/totp.ts";
import { lockMs, Throttle } from "../../api/dashboard/throttle.ts";
import type { UserStore } from "../../api/store/users.ts";
import { quantile, bucketOf, DURATION_BUCKETS_MS } from "../../api/store/usage.ts";

describe("TOTP", () => {
  // RFC 6238 Appendix B, SHA-1 rows: the seed is the ASCII "12345678901234567890", 8 digits.
  const seed = Buffer.from("12345678901234567890");
  it.each([
    [59, "94287082"],
    [1111111109, "07081804"],
    [1111111111, "14050471"],
    [1234567890, "89005924"],
    [2000000000, "69279037"],
    [20000000000, "65353130"],
  ])("at T = %i s the code is %s (RFC 6238 test vector)", (t, code) => {
    expect(hotp(seed, totpStep(t * 1000), 8)).toBe(code);
  });

  it("base32 round-trips and decodes the RFC 4648 example", () => {
    expect(base32Encode(Buffer.from("foobar"))).toBe("MZXW6YTBOI");
    expect(base32Decode("MZXW6YTBOI======").toString()).toBe("foobar");
  });

  it("accepts the current step and one either side, nothing further, and no malformed code", () => {
    const secret = base32Encode(seed);
    const now = 1_700_000_000_000;
    const at = (dSteps: number): string => hotp(seed, totpStep(now) + dSteps);
    expect(verifyTotp(secret, at(0), now)).toBe(totpStep(now));
    expect(verifyTotp(secret, at(-1), now)).toBe(totpStep(now) - 1);
    expect(verifyTotp(secret, at(1), now)).toBe(totpStep(now) + 1);
    expect(verifyTotp(secret, at(2), now)).toBeNull();
    expect(verifyTotp(secret, at(-2), now)).toBeNull();
    expect(verifyTotp(secret, "12345", now)).toBeNull();
    expect(verifyTotp(secret, "abcdef", now)).toBeNull();
  });
});

describe("passwords (scrypt)", () => {
  it("verifies the right password only, with a fresh salt each time", async () => {
    const a = await hashPassword("correct horse battery staple");
    const b = await hashPassword("correct horse battery staple");
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword("correct horse battery staple", a)).toBe(true);
    expect(await verifyPassword("correct horse battery stapl", a)).toBe(false);
    expect(await verifyPassword("anything", null)).toBe(false);
    expect(await verifyPassword("anything", "scrypt$garbage")).toBe(false);
  });

  it.each([
    ["short", "Use at least 12 characters."],
    ["x".repeat(257), "Use at most 256 characters."],
    ["twelve chars", null],
  ])("the rule for %j", (pw, problem) => expect(passwordProblem(pw)).toBe(problem));
});

describe("signed cookies", () => {
  const signer = new CookieSigner(Buffer.alloc(32, 7));
  it("a value signed for one purpose is refused for another, and any change is refused", () => {
    const v = signer.sign("session", { uid: "usr_1" });
    expect(signer.verify("session", v)).toEqual({ uid: "usr_1" });
    expect(signer.verify("mfa", v)).toBeNull();
    const [body, mac] = v.split(".");
    const forged = Buffer.from(JSON.stringify({ uid: "usr_2" })).toString("base64url");
    expect(signer.verify("session", `${forged}.${mac}`)).toBeNull();
    expect(signer.verify("session", `${body}.${mac!.slice(0, -1)}A`)).toBeNull();
    expect(signer.verify("session", undefined)).toBeNull();
    expect(signer.verify("session", "no-dot")).toBeNull();
  });
  it("refuses a key shorter than 32 bytes", () => expect(() => new CookieSigner(Buffer.alloc(16))).toThrow());
});

describe("HTML", () => {
  it("escapes every interpolated value, nested arrays included", () => {
    const name = `<img src=x onerror="alert(1)">'&\``;
    expect(html`<p title="${name}">${[name, [name]]}</p>`.value).toBe(
      `<p title="${escapeHtml(name)}">${escapeHtml(name)}${escapeHtml(name)}</p>`,
    );
    expect(escapeHtml(name)).not.toMatch(/[<>"'`]/);
  });
});

describe("sign-in redirects", () => {
  it.each([
    ["/dashboard/keys", "/dashboard/keys"],
    ["/dashboard/jobs?status=failed", "/dashboard/jobs?status=failed"],
    ["https://evil.example/", "/dashboard"],
    ["//evil.example/dashboard", "/dashboard"],
    ["/dashboard/../v1", "/dashboard"],
    ["/dashboardx", "/dashboard"],
    [undefined, "/dashboard"],
  ])("next=%j goes to %j (never off the site)", (next, want) => expect(safeNext(next)).toBe(want));
});

describe("throttle and usage arithmetic", () => {
  it("locks for 1, 2, 4 … minutes, at most 15", () => {
    expect([1, 2, 3, 4, 5, 9].map(lockMs)).toEqual([60_000, 120_000, 240_000, 480_000, 900_000, 900_000]);
  });
  it("lets one address try 10 sign-ins a minute, then makes it wait, whichever accounts it tries", () => {
    const t = new Throttle({} as UserStore, 10);
    const now = 1_800_000_000_000;
    for (let i = 0; i < 10; i++) expect(t.address("203.0.113.9", now)).toBe(0);
    expect(t.address("203.0.113.9", now)).toBeGreaterThan(0);
    expect(t.address("198.51.100.1", now)).toBe(0);
    expect(t.address("203.0.113.9", now + 6_000)).toBe(0);
  });
  it("reads p50/p95 from a duration histogram", () => {
    const hist = new Array<number>(DURATION_BUCKETS_MS.length + 1).fill(0);
    for (const ms of [50, 80, 90, 120, 200, 300, 400, 450, 2000, 9000]) hist[bucketOf(ms)]!++;
    expect(quantile(hist, 0.5)).toBe(250);
    expect(quantile(hist, 0.95)).toBeGreaterThan(5000);
    expect(quantile(hist, 0.95)).toBeLessThanOrEqual(10_000);
    expect(quantile(new Array(12).fill(0), 0.5)).toBeNull();
  });
});
