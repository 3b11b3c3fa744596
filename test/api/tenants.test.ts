/**
 * Suspending a tenant (embedded mode, real server, the admin CLI on its data directory): every
 * key of a suspended tenant answers 403 tenant_suspended, other tenants are untouched, and the
 * keys work again once it is unsuspended. Kubernetes mode's Tenant resources are tested in
 * test/api/kubernetes-backend.test.ts and test/e2e/stateless-api.e2e.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type Server } from "./harness.ts";

let s: Server;
beforeAll(async () => {
  s = await startServer();
}, 60_000);
afterAll(() => s?.cleanup());

describe("a suspended tenant", () => {
  it("gets 403 tenant_suspended on every key until it is unsuspended; others are untouched", async () => {
    expect((await s.folio(["tenants", "create", "paused", "--json"])).code).toBe(0);
    const keys = [
      (await s.folio(["keys", "create", "--tenant", "paused", "--json"])).json.key,
      (await s.folio(["keys", "create", "--tenant", "paused", "--json"])).json.key,
    ];
    for (const key of keys) expect((await s.request("GET", "/v1/jobs", { key })).status).toBe(200);

    const suspended = await s.folio(["tenants", "suspend", "paused", "--json"]);
    expect(suspended.json).toEqual({ tenant: "paused", suspended: true });
    for (const key of keys) {
      const res = await s.request("GET", "/v1/jobs", { key });
      expect(res.status).toBe(403);
      expect(res.json).toMatchObject({ code: "tenant_suspended", status: 403 });
    }
    expect((await s.request("GET", "/v1/jobs")).status).toBe(200);
    const listed = await s.folio(["tenants", "list", "--json"]);
    expect(listed.json.find((t: { tenant: string }) => t.tenant === "paused").suspended).toBe(true);

    expect((await s.folio(["tenants", "unsuspend", "paused", "--json"])).code).toBe(0);
    for (const key of keys) expect((await s.request("GET", "/v1/jobs", { key })).status).toBe(200);
  });

  it("refuses to suspend a tenant that does not exist", async () => {
    const res = await s.folio(["tenants", "suspend", "nobody"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("no tenant named");
  });
});
