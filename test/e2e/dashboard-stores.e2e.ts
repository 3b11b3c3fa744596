/**
 * The dashboard's stores, one contract for both modes: the embedded SQLite stores and the
 * Kubernetes ones (Secrets and ConfigMaps on a real kube-apiserver on loopback) pass the same
 * table; then two Kubernetes "replicas" (two clients) share one truth: a sign-out everywhere,
 * a lock and a used invite seen by the other at once, and concurrent writes never lost.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditLog } from "../../api/store/audit.ts";
import { openDb, type Db } from "../../api/store/db.ts";
import { SqliteAuditLog } from "../../api/store/audit.ts";
import { SqliteKeyLabels, type KeyLabels } from "../../api/store/key-labels.ts";
import {
  KubernetesAuditLog,
  KubernetesKeyLabels,
  KubernetesUsageStore,
  KubernetesUserStore,
} from "../../api/store/kubernetes-dashboard.ts";
import { JsonObjects } from "../../api/store/kubernetes-objects.ts";
import { quantile, SqliteUsageStore, type EndedJob, type UsageStore } from "../../api/store/usage.ts";
import { SqliteUserStore, type UserStore } from "../../api/store/users.ts";
import { startControlPlane, type ControlPlane } from "../k8s/control-plane.ts";
import { loadKubeConfig } from "../k8s/kubeconfig.ts";

interface Stores {
  users: UserStore;
  audit: AuditLog;
  usage: UsageStore;
  labels: KeyLabels;
}

let cp: ControlPlane;
let dir: string;
let db: Db;
const impls: Record<string, () => Stores> = {};
const kube = (): Stores => {
  const o = new JsonObjects(loadKubeConfig(cp.kubeconfigs.admin), "default");
  return {
    users: new KubernetesUserStore(o),
    audit: new KubernetesAuditLog(o),
    usage: new KubernetesUsageStore(o),
    labels: new KubernetesKeyLabels(o),
  };
};

beforeAll(async () => {
  cp = await startControlPlane();
  dir = await mkdtemp(path.join(os.tmpdir(), "folio-dash-stores-"));
  db = openDb(dir);
  impls.sqlite = () => ({
    users: new SqliteUserStore(db),
    audit: new SqliteAuditLog(db),
    usage: new SqliteUsageStore(db),
    labels: new SqliteKeyLabels(db),
  });
  impls.kubernetes = kube;
}, 300_000);

afterAll(async () => {
  db?.close();
  await rm(dir, { recursive: true, force: true });
  await cp?.stop();
});

const job = (id: string, tenant: string, over: Partial<EndedJob> = {}): EndedJob => ({
  id,
  tenant_id: tenant,
  operation: "merge",
  outcome: "succeeded",
  completed_at: Date.parse("2026-11-20T10:00:00Z"),
  pages: 3,
  bytes_in: 1000,
  bytes_out: 800,
  duration_ms: 400,
  ...over,
});

describe.each(["sqlite", "kubernetes"])("dashboard stores (%s)", (mode) => {
  const t = `ten_${mode}`;

  it("keeps people by tenant and e-mail, with invites that work once and expire", async () => {
    const { users } = impls[mode]!();
    const a = await users.create({ email: "Ann@Example.com", tenantId: t, role: "owner" });
    const op = await users.create({ email: "ops@example.com", tenantId: null, role: "operator" });
    expect((await users.byEmail("ann@example.com")).map((u) => u.id)).toEqual([a.id]);
    expect((await users.byTenant(t)).map((u) => u.email)).toEqual(["ann@example.com"]);
    expect((await users.operators()).map((u) => u.id)).toContain(op.id);
    const token = await users.createInvite(a.id, 60_000);
    expect(await users.peekInvite(token)).toMatchObject({ user: { id: a.id } });
    expect(await users.peekInvite(token, Date.now() + 61_000)).toEqual({ error: "expired" });
    expect(await users.peekInvite("nope")).toEqual({ error: "unknown" });
    expect(await users.useInvite(token)).toBe(true);
    expect(await users.useInvite(token)).toBe(false);
    expect(await users.peekInvite(token)).toEqual({ error: "used" });
  });

  it("keeps the security state: epoch, revoked sessions, TOTP steps once, the lock", async () => {
    const { users } = impls[mode]!();
    const u = await users.create({ email: "sec@example.com", tenantId: t, role: "developer" });
    expect(await users.bumpEpoch(u.id)).toBe(1);
    await users.revokeSession(u.id, "sid-1", Date.now() + 60_000);
    expect(await users.isSessionRevoked(u.id, "sid-1")).toBe(true);
    expect(await users.isSessionRevoked(u.id, "sid-2")).toBe(false);
    expect(await users.useTotpStep(u.id, 100)).toBe(true);
    expect(await users.useTotpStep(u.id, 100)).toBe(false);
    expect(await users.useTotpStep(u.id, 99)).toBe(false);
    for (let i = 0; i < 5; i++) await users.signInFailed(u.id, 5, () => 60_000, 1_000);
    expect(await users.byId(u.id)).toMatchObject({ failed_logins: 5, locked_until: 61_000 });
    await users.signInSucceeded(u.id);
    expect(await users.byId(u.id)).toMatchObject({ failed_logins: 0, locked_until: null });
    await users.disable(u.id);
    expect((await users.byTenant(t)).map((x) => x.id)).not.toContain(u.id);
  });

  it("keeps the audit log newest first, per tenant", async () => {
    const { audit } = impls[mode]!();
    await audit.record({
      tenant_id: t,
      actor: "a@example.com",
      action: "key.created",
      target: "k1",
      detail: { name: "x" },
      address: null,
      at: 1000,
    });
    await audit.record({
      tenant_id: t,
      actor: "a@example.com",
      action: "key.revoked",
      target: "k1",
      detail: {},
      address: "127.0.0.1",
      at: 2000,
    });
    await audit.record({
      tenant_id: "ten_other",
      actor: "b@example.com",
      action: "key.created",
      target: "k2",
      detail: {},
      address: null,
      at: 3000,
    });
    const list = await audit.list(t, 10);
    expect(list.map((e) => e.action)).toEqual(["key.revoked", "key.created"]);
    expect(list[1]!.detail).toEqual({ name: "x" });
  });

  it("aggregates usage per day, counting each job once", async () => {
    const { usage } = impls[mode]!();
    expect(await usage.count(job("job_1", t))).toBe(true);
    expect(await usage.count(job("job_1", t))).toBe(false);
    expect(await usage.count(job("job_2", t, { outcome: "failed", duration_ms: 9000, pages: 1 }))).toBe(true);
    const rows = await usage.since(t, "2026-11-01");
    expect(rows.reduce((a, r) => a + r.jobs, 0)).toBe(2);
    expect(rows.reduce((a, r) => a + r.pages, 0)).toBe(4);
    const hist = rows.flatMap((r) => r.durations).length
      ? rows.map((r) => r.durations).reduce((a, b) => a.map((n, i) => n + (b[i] ?? 0)))
      : [];
    expect(quantile(hist, 0.5)).toBeLessThanOrEqual(500);
    expect(await usage.since(t, "2026-11-21")).toEqual([]);
  });

  it("keeps key labels per tenant", async () => {
    const { labels } = impls[mode]!();
    await labels.set({ key_id: "k1", tenant_id: t, name: "prod", created_by: "a@example.com", replaces: null });
    expect((await labels.forTenant(t)).get("k1")?.name).toBe("prod");
    expect((await labels.forTenant("ten_none")).size).toBe(0);
  });
});

describe("two API replicas on one cluster", () => {
  it("see each other's sign-out everywhere, lock and used invite at once, and lose no concurrent write", async () => {
    const r1 = kube();
    const r2 = kube();
    const u = await r1.users.create({ email: "shared@example.com", tenantId: "ten_shared", role: "owner" });
    await r1.users.bumpEpoch(u.id);
    expect((await r2.users.byId(u.id))?.session_epoch).toBe(1);
    const token = await r2.users.createInvite(u.id, 60_000);
    const both = await Promise.all([r1.users.useInvite(token), r2.users.useInvite(token)]);
    expect(both.filter(Boolean)).toHaveLength(1);
    await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? r1 : r2).users.signInFailed(u.id, 100, () => 1000)));
    expect((await r1.users.byId(u.id))?.failed_logins).toBe(8);
    const counted = await Promise.all([r1.usage.count(job("job_race", "ten_shared")), r2.usage.count(job("job_race", "ten_shared"))]);
    expect(counted.filter(Boolean)).toHaveLength(1);
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? r1 : r2).audit.record({ tenant_id: "ten_shared", actor: "x", action: `a${i}`, target: null, detail: {}, address: null }),
      ),
    );
    expect(await r1.audit.list("ten_shared", 100)).toHaveLength(6);
  });
});
