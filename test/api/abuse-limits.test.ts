/**
 * Limits a hostile client must not get around (issue #10 items 9, 10 and 17): per-address limits
 * behind proxies (the rightmost untrusted X-Forwarded-For hop, proxies given as CIDR ranges),
 * throttled failed authentication, RateLimit headers on refusals a bucket applies to, and 405
 * with Allow. Clients speak from distinct loopback addresses (127.0.0.x) to be distinct clients;
 * 127.0.0.8/30 plays the trusted reverse proxy.
 */
import https from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type HttpResponse, type Server } from "./harness.ts";

let s: Server;
const PROXY = "127.0.0.9";

beforeAll(async () => {
  // One failed-auth token a minute: the refill cannot blur the counts below on a slow machine.
  s = await startServer({ FOLIO_TRUST_PROXY: "127.0.0.8/30", FOLIO_ACCESS_REQUESTS_PER_HOUR: "2", FOLIO_AUTH_FAILURES_PER_MINUTE: "1" });
}, 60_000);
afterAll(async () => {
  await s?.cleanup();
});

/** One HTTPS request from `localAddress`. */
function from(
  localAddress: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = https.request(new URL(path, s.base), { method, headers, ca: s.ca, agent: false, localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const buf = Buffer.concat(chunks);
        let json: unknown;
        try {
          json = JSON.parse(buf.toString());
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: buf, text: buf.toString(), json });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

const accessRequest = JSON.stringify({
  email: "ops@example.com",
  company: "Example",
  use_case: "other",
  description: "testing limits",
  expected_monthly_volume: 10,
  file_types: ["pdf"],
  needs_dpa: false,
});

describe("per-address limits behind a trusted proxy", () => {
  const post = (xff: string): Promise<HttpResponse> =>
    from(PROXY, "POST", "/v1/access_requests", { "Content-Type": "application/json", "X-Forwarded-For": xff }, accessRequest);

  it("a client rewriting the leftmost X-Forwarded-For entry is still counted by the hop the proxy appended", async () => {
    const codes: number[] = [];
    for (let i = 0; i < 5; i++) codes.push((await post(`10.9.9.${i}, 203.0.113.50`)).status);
    expect(codes).toEqual([202, 202, 429, 429, 429]);
  });

  it("distinct clients behind the proxy (a CIDR range) have distinct buckets", async () => {
    for (let i = 1; i <= 4; i++) expect((await post(`203.0.113.${100 + i}`)).status).toBe(202);
  });

  it("the same header from an untrusted peer counts against the peer itself", async () => {
    const direct = (xff: string): Promise<HttpResponse> =>
      from("127.0.0.20", "POST", "/v1/access_requests", { "Content-Type": "application/json", "X-Forwarded-For": xff }, accessRequest);
    expect((await direct("203.0.113.201")).status).toBe(202);
    expect((await direct("203.0.113.202")).status).toBe(202);
    expect((await direct("203.0.113.203")).status).toBe(429);
  });
});

describe("failed authentication is throttled", () => {
  it("150 wrong secrets for a real key id: at most the burst gets 401, the rest 429 with Retry-After", async () => {
    const keyId = /^folio_sk_([0-9A-Za-z]{16})_/.exec(s.key)![1]!;
    // The tenant's own client has used its key from 127.0.0.1 before the attack starts.
    expect((await from("127.0.0.1", "GET", "/v1/jobs", { Authorization: `Bearer ${s.key}` })).status).toBe(200);
    const statuses: number[] = [];
    let last: HttpResponse | undefined;
    for (let i = 0; i < 150; i++) {
      const wrong = `folio_sk_${keyId}_${String(i).padStart(32, "x")}`;
      last = await from("127.0.0.30", "GET", "/v1/jobs", { Authorization: `Bearer ${wrong}` });
      statuses.push(last.status);
    }
    const unauthorized = statuses.filter((c) => c === 401).length;
    const limited = statuses.filter((c) => c === 429).length;
    // The burst of 20, plus at most one token refilled if the loop took over a minute.
    expect(unauthorized).toBeGreaterThanOrEqual(20);
    expect(unauthorized).toBeLessThanOrEqual(21);
    expect(unauthorized + limited).toBe(150);
    expect(last!.json.code).toBe("rate_limited");
    expect(last!.json.detail).toMatch(/failed authentication/);
    expect(Number(last!.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(last!.headers["ratelimit-policy"]).toBe('"auth";q=1;w=60');
    // The attacker's address is refused even with the right key …
    expect((await from("127.0.0.30", "GET", "/v1/jobs", { Authorization: `Bearer ${s.key}` })).status).toBe(429);
    // … the tenant's known client is not locked out …
    expect((await from("127.0.0.1", "GET", "/v1/jobs", { Authorization: `Bearer ${s.key}` })).status).toBe(200);
    // … guesses at the same key from fresh addresses are refused before the secret is compared …
    const fresh = await from("127.0.0.31", "GET", "/v1/jobs", { Authorization: `Bearer folio_sk_${keyId}_${"y".repeat(32)}` });
    expect(fresh.status).toBe(429);
    expect(fresh.json.detail).toMatch(/for this API key/);
    // … and an unrelated wrong key from a fresh address is an ordinary 401 with the auth bucket's headers.
    const other = await from("127.0.0.32", "GET", "/v1/jobs", { Authorization: `Bearer folio_sk_${"Z".repeat(16)}_${"y".repeat(32)}` });
    expect(other.status).toBe(401);
    expect(other.headers["ratelimit"]).toBe('"auth";r=19;t=60');
  });

  it("a request with no credentials at all is a plain 401 and costs nothing", async () => {
    for (let i = 0; i < 30; i++) {
      const res = await from("127.0.0.1", "GET", "/v1/jobs");
      expect(res.status).toBe(401);
      expect(res.headers["ratelimit"]).toBeUndefined();
    }
    const wrong = await from("127.0.0.1", "GET", "/v1/jobs", { Authorization: `Bearer folio_sk_${"Q".repeat(16)}_${"y".repeat(32)}` });
    expect(wrong.headers["ratelimit"]).toBe('"auth";r=19;t=60');
  });
});

describe("a wrong method on a known path", () => {
  it.each([
    ["PUT", "/v1/jobs/job_whatever", "GET, HEAD, DELETE"],
    ["GET", "/v1/pdf/merge", "POST"],
    ["PATCH", "/v1/files", "POST"],
  ])("%s %s → 405 method_not_allowed with Allow: %s", async (method, path, allow) => {
    const res = await from("127.0.0.1", method, path, { Authorization: `Bearer ${s.key}` });
    expect(res.status, res.text).toBe(405);
    expect(res.json.code).toBe("method_not_allowed");
    expect(String(res.headers.allow).split(", ").sort()).toEqual(allow.split(", ").sort());
  });

  it("an unknown path is still 404", async () => {
    expect((await from("127.0.0.1", "GET", "/v1/nothing-here", { Authorization: `Bearer ${s.key}` })).status).toBe(404);
  });
});

describe("RateLimit headers where a bucket applies", () => {
  it("a 422 of an authenticated request carries the key's bucket", async () => {
    const res = await from(
      "127.0.0.1",
      "POST",
      "/v1/pdf/merge",
      { Authorization: `Bearer ${s.key}`, "Content-Type": "application/json" },
      "{}",
    );
    expect(res.status).toBe(422);
    expect(res.headers["ratelimit-policy"]).toBe('"default";q=600;w=60');
    expect(res.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
  });
});

describe("the admin CLI and hostile texts", () => {
  it("never prints an access request's terminal escape sequences raw", async () => {
    const company = "Evil\u001b]0;pwned\u0007 \u009b31mRed\u001b[2J\nforged\tline \u202eexe.pdf";
    const body = JSON.stringify({ ...JSON.parse(accessRequest), company });
    const res = await from("127.0.0.50", "POST", "/v1/access_requests", { "Content-Type": "application/json" }, body);
    expect(res.status, res.text).toBe(202);
    const human = await s.folio(["access-requests", "list"]);
    const line = human.stdout.split("\n").find((l) => l.includes("Evil"))!;
    expect(line).toBeDefined();
    expect(human.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(human.stdout).not.toContain("\nforged");
    expect(line).toContain("Evil\\u{001b}]0;pwned\\u{0007} \\u{009b}31mRed");
    const json = await s.folio(["access-requests", "list", "--json"]);
    expect(json.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(json.json.find((r: { company: string }) => r.company.startsWith("Evil")).company).toBe(company);
  });
});
