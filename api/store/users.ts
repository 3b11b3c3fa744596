/* eslint-disable @typescript-eslint/require-await -- a synchronous SQLite implementation of an asynchronous contract (Kubernetes mode keeps these in the cluster) */
/**
 * People who sign in to the dashboard: tenant members (owner, developer, viewer) and operators,
 * and their one-time invites. The interface is what the dashboard needs; SqliteUserStore is the
 * embedded implementation. Everything that must hold across API replicas lives here, in the
 * shared store: the session epoch ("sign out everywhere"), sessions signed out one by one, and the
 * per-account sign-in throttle.
 */
import { createHash, randomBytes } from "node:crypto";
import { randomBase62 } from "../../core/ids.ts";
import { migrateDashboard } from "./dashboard-schema.ts";
import { sql, transaction, type Db } from "./db.ts";

export const TENANT_ROLES = ["owner", "developer", "viewer"] as const;
export type TenantRole = (typeof TENANT_ROLES)[number];
export type Role = TenantRole | "operator";

export interface User {
  id: string;
  email: string;
  tenant_id: string | null;
  role: Role;
  password_hash: string | null;
  totp_secret: string | null;
  totp_last_step: number | null;
  session_epoch: number;
  failed_logins: number;
  locked_until: number | null;
  oidc_subject: string | null;
  created_at: number;
  last_login_at: number | null;
  disabled_at: number | null;
}

export interface NewUser {
  email: string;
  tenantId: string | null;
  role: Role;
}

export interface UserStore {
  create(u: NewUser, now?: number): Promise<User>;
  byId(id: string): Promise<User | undefined>;
  /** Everyone with this e-mail (a person may belong to several tenants). */
  byEmail(email: string): Promise<User[]>;
  byTenant(tenantId: string): Promise<User[]>;
  operators(): Promise<User[]>;
  setPassword(id: string, hash: string): Promise<void>;
  setTotp(id: string, secret: string | null): Promise<void>;
  /** Records an accepted TOTP step; false if it (or a later one) was used already (replay). */
  useTotpStep(id: string, step: number): Promise<boolean>;
  setRole(id: string, role: Role): Promise<void>;
  disable(id: string, now?: number): Promise<void>;
  linkOidc(id: string, subject: string): Promise<void>;
  /** A failed sign-in: counts it and locks the account for `lockMs` once `after` failures in a row are reached. */
  signInFailed(id: string, after: number, lockMs: (failures: number) => number, now?: number): Promise<void>;
  signInSucceeded(id: string, now?: number): Promise<void>;
  /** "Sign out everywhere": every session issued before is refused from now on. */
  bumpEpoch(id: string): Promise<number>;
  revokeSession(id: string, sid: string, until: number, now?: number): Promise<void>;
  isSessionRevoked(id: string, sid: string): Promise<boolean>;
  /** A one-time invite link token (returned once; only its hash is stored). */
  createInvite(userId: string, ttlMs: number, now?: number): Promise<string>;
  /** Consumes an invite: the user, or why not. */
  peekInvite(token: string, now?: number): Promise<{ user: User } | { error: "unknown" | "expired" | "used" }>;
  useInvite(token: string, now?: number): Promise<boolean>;
}

const hashToken = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");
const normalise = (email: string): string => email.trim().toLowerCase();

export class SqliteUserStore implements UserStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
    migrateDashboard(db);
  }

  async create(u: NewUser, now = Date.now()): Promise<User> {
    const id = `usr_${randomBase62(24)}`;
    sql(this.db, "INSERT INTO users (id, email, tenant_id, role, created_at) VALUES (?, ?, ?, ?, ?)").run(
      id,
      normalise(u.email),
      u.tenantId,
      u.role,
      now,
    );
    return this.row(id)!;
  }

  private row(id: string): User | undefined {
    return sql(this.db, "SELECT * FROM users WHERE id = ?").get(id) as User | undefined;
  }

  async byId(id: string): Promise<User | undefined> {
    return this.row(id);
  }

  async byEmail(email: string): Promise<User[]> {
    return sql(this.db, "SELECT * FROM users WHERE email = ? AND disabled_at IS NULL ORDER BY created_at").all(
      normalise(email),
    ) as unknown as User[];
  }

  async byTenant(tenantId: string): Promise<User[]> {
    return sql(this.db, "SELECT * FROM users WHERE tenant_id = ? AND disabled_at IS NULL ORDER BY created_at").all(
      tenantId,
    ) as unknown as User[];
  }

  async operators(): Promise<User[]> {
    return sql(
      this.db,
      "SELECT * FROM users WHERE role = 'operator' AND disabled_at IS NULL ORDER BY created_at",
    ).all() as unknown as User[];
  }

  async setPassword(id: string, hash: string): Promise<void> {
    sql(this.db, "UPDATE users SET password_hash = ? WHERE id = ?").run(hash, id);
  }

  async setTotp(id: string, secret: string | null): Promise<void> {
    sql(this.db, "UPDATE users SET totp_secret = ?, totp_last_step = NULL WHERE id = ?").run(secret, id);
  }

  async useTotpStep(id: string, step: number): Promise<boolean> {
    return (
      sql(this.db, "UPDATE users SET totp_last_step = ? WHERE id = ? AND (totp_last_step IS NULL OR totp_last_step < ?)").run(
        step,
        id,
        step,
      ).changes > 0
    );
  }

  async setRole(id: string, role: Role): Promise<void> {
    sql(this.db, "UPDATE users SET role = ? WHERE id = ?").run(role, id);
  }

  async disable(id: string, now = Date.now()): Promise<void> {
    sql(this.db, "UPDATE users SET disabled_at = ?, session_epoch = session_epoch + 1 WHERE id = ?").run(now, id);
  }

  async linkOidc(id: string, subject: string): Promise<void> {
    sql(this.db, "UPDATE users SET oidc_subject = ? WHERE id = ?").run(subject, id);
  }

  async signInFailed(id: string, after: number, lockMs: (failures: number) => number, now = Date.now()): Promise<void> {
    transaction(this.db, () => {
      const u = this.row(id);
      if (!u) return;
      const failures = u.failed_logins + 1;
      const locked = failures >= after ? now + lockMs(failures - after + 1) : u.locked_until;
      sql(this.db, "UPDATE users SET failed_logins = ?, locked_until = ? WHERE id = ?").run(failures, locked, id);
    });
  }

  async signInSucceeded(id: string, now = Date.now()): Promise<void> {
    sql(this.db, "UPDATE users SET failed_logins = 0, locked_until = NULL, last_login_at = ? WHERE id = ?").run(now, id);
  }

  async bumpEpoch(id: string): Promise<number> {
    sql(this.db, "UPDATE users SET session_epoch = session_epoch + 1, revoked_sessions = '[]' WHERE id = ?").run(id);
    return this.row(id)?.session_epoch ?? 0;
  }

  async revokeSession(id: string, sid: string, until: number, now = Date.now()): Promise<void> {
    transaction(this.db, () => {
      const row = sql(this.db, "SELECT revoked_sessions FROM users WHERE id = ?").get(id) as { revoked_sessions: string } | undefined;
      if (!row) return;
      // Entries are dropped once the session would have expired anyway, so the list stays short.
      const list = (JSON.parse(row.revoked_sessions) as { sid: string; until: number }[]).filter((e) => e.until > now);
      list.push({ sid, until });
      sql(this.db, "UPDATE users SET revoked_sessions = ? WHERE id = ?").run(JSON.stringify(list), id);
    });
  }

  async isSessionRevoked(id: string, sid: string): Promise<boolean> {
    const row = sql(this.db, "SELECT revoked_sessions FROM users WHERE id = ?").get(id) as { revoked_sessions: string } | undefined;
    return !row || (JSON.parse(row.revoked_sessions) as { sid: string }[]).some((e) => e.sid === sid);
  }

  async createInvite(userId: string, ttlMs: number, now = Date.now()): Promise<string> {
    const token = randomBytes(32).toString("base64url");
    sql(this.db, "INSERT INTO invites (token_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)").run(
      hashToken(token),
      userId,
      now,
      now + ttlMs,
    );
    return token;
  }

  async peekInvite(token: string, now = Date.now()): Promise<{ user: User } | { error: "unknown" | "expired" | "used" }> {
    const row = sql(this.db, "SELECT * FROM invites WHERE token_hash = ?").get(hashToken(token)) as
      { user_id: string; expires_at: number; used_at: number | null } | undefined;
    const user = row && this.row(row.user_id);
    if (!row || !user || user.disabled_at !== null) return { error: "unknown" };
    if (row.used_at !== null) return { error: "used" };
    if (row.expires_at <= now) return { error: "expired" };
    return { user };
  }

  async useInvite(token: string, now = Date.now()): Promise<boolean> {
    return (
      sql(this.db, "UPDATE invites SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?").run(
        now,
        hashToken(token),
        now,
      ).changes > 0
    );
  }
}
