/**
 * Sessions as signed cookies over the real user store (SQLite in a temporary directory): idle and
 * absolute timeouts, "sign out everywhere" through the per-user epoch, signing out one session,
 * a removed member, and a cookie from another installation's key.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Request, Response } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CookieSigner } from "../../api/dashboard/cookies.ts";
import { Sessions, SESSION_COOKIE } from "../../api/dashboard/sessions.ts";
import { openDb, type Db } from "../../api/store/db.ts";
import { SqliteUserStore, type User } from "../../api/store/users.ts";

const MIN = 60_000;
let dir: string;
let db: Db;
let users: SqliteUserStore;
let sessions: Sessions;
let alice: User;

/** Issues a session at `at` and returns the cookie value the browser would keep. */
function issue(s: Sessions, user: User, at: number): string {
  const set: string[] = [];
  const res = { append: (_n: string, v: string) => set.push(v) } as unknown as Response;
  const realNow = Date.now;
  Date.now = () => at;
  try {
    s.issue(res, user, "pwd", at);
  } finally {
    Date.now = realNow;
  }
  return /^__Host-folio_session=([^;]+)/.exec(set[0]!)![1]!;
}

async function read(s: Sessions, cookie: string, at: number): Promise<{ user: string | null; refreshed: boolean }> {
  const set: string[] = [];
  const req = { headers: { cookie: `${SESSION_COOKIE}=${cookie}` } } as unknown as Request;
  const res = { append: (_n: string, v: string) => set.push(v) } as unknown as Response;
  const got = await s.read(req, res, at);
  return { user: got?.user.email ?? null, refreshed: set.length > 0 };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "folio-sessions-"));
  db = openDb(dir);
  users = new SqliteUserStore(db);
  sessions = new Sessions(new CookieSigner(Buffer.alloc(32, 1)), users, { idleMs: 30 * MIN, absoluteMs: 12 * 60 * MIN });
  alice = await users.create({ email: "alice@example.com", tenantId: "ten_x", role: "owner" });
});

afterAll(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

describe("dashboard sessions", () => {
  const t0 = 1_800_000_000_000;

  it("lives while used: each use within the idle timeout renews it, up to the absolute timeout", async () => {
    const c = issue(sessions, alice, t0);
    expect(await read(sessions, c, t0 + 29 * MIN)).toEqual({ user: "alice@example.com", refreshed: true });
    expect((await read(sessions, c, t0 + 31 * MIN)).user).toBeNull();
    expect((await read(sessions, c, t0 + 30 * MIN)).user).toBe("alice@example.com");
  });

  it("ends after the absolute timeout however active", async () => {
    const c = issue(sessions, alice, t0);
    expect((await read(sessions, c, t0 + 12 * 60 * MIN + 1)).user).toBeNull();
  });

  it("ends every session of the person on 'sign out everywhere', and only theirs", async () => {
    const bob = await users.create({ email: "bob@example.com", tenantId: "ten_x", role: "viewer" });
    const a1 = issue(sessions, (await users.byId(alice.id))!, t0);
    const a2 = issue(sessions, (await users.byId(alice.id))!, t0);
    const b1 = issue(sessions, bob, t0);
    await users.bumpEpoch(alice.id);
    expect((await read(sessions, a1, t0 + MIN)).user).toBeNull();
    expect((await read(sessions, a2, t0 + MIN)).user).toBeNull();
    expect((await read(sessions, b1, t0 + MIN)).user).toBe("bob@example.com");
    expect((await read(sessions, issue(sessions, (await users.byId(alice.id))!, t0), t0 + MIN)).user).toBe("alice@example.com");
  });

  it("ends one session on sign out, leaving the person's others", async () => {
    const me = (await users.byId(alice.id))!;
    const a = issue(sessions, me, t0);
    const b = issue(sessions, me, t0);
    const sid = JSON.parse(Buffer.from(a.split(".")[0]!, "base64url").toString()).sid as string;
    await users.revokeSession(me.id, sid, t0 + 12 * 60 * MIN, t0);
    expect((await read(sessions, a, t0 + MIN)).user).toBeNull();
    expect((await read(sessions, b, t0 + MIN)).user).toBe("alice@example.com");
  });

  it("refuses a removed member's session and a cookie signed with another key", async () => {
    const carol = await users.create({ email: "carol@example.com", tenantId: "ten_x", role: "developer" });
    const c = issue(sessions, carol, t0);
    const other = new Sessions(new CookieSigner(Buffer.alloc(32, 2)), users, { idleMs: 30 * MIN, absoluteMs: 12 * 60 * MIN });
    expect((await read(other, c, t0 + MIN)).user).toBeNull();
    await users.disable(carol.id);
    expect((await read(sessions, c, t0 + MIN)).user).toBeNull();
  });
});
