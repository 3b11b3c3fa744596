/**
 * The dashboard's stores in Kubernetes mode, in the API's namespace (JsonObjects: read from the
 * apiserver, written with optimistic concurrency, so every API replica sees one truth):
 * - each person is a Secret `folio-user-…` (password hash, TOTP secret, session epoch, sessions
 *   signed out, sign-in failures), found by e-mail and by tenant through hashed labels;
 * - each invite is a Secret named after the hash of its token (the token is never stored);
 * - the audit log is one ConfigMap per tenant (or the installation) per UTC day;
 * - usage is one ConfigMap per tenant per month: daily aggregates plus the ids of jobs counted in
 *   the last two days (a job is counted once, whichever replica sees it first);
 * - key labels are one ConfigMap per tenant.
 */
import { randomBytes, createHash } from "node:crypto";
import { randomBase62 } from "../../core/ids.ts";
import type { AuditEntry, AuditLog, NewAuditEntry } from "./audit.ts";
import type { KeyLabel, KeyLabels } from "./key-labels.ts";
import { labelHash, type JsonObjects } from "./kubernetes-objects.ts";
import { bucketOf, DURATION_BUCKETS_MS, utcDay, type EndedJob, type UsageRow, type UsageStore } from "./usage.ts";
import type { NewUser, Role, User, UserStore } from "./users.ts";

type UserDoc = User & { revoked_sessions: { sid: string; until: number }[] };
interface InviteDoc {
  user_id: string;
  expires_at: number;
  used_at: number | null;
}

const hashToken = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex");
const userName = (id: string): string => `folio-user-${labelHash(id)}`;
const normalise = (email: string): string => email.trim().toLowerCase();
const owner = (tenantId: string | null): string => (tenantId === null ? "installation" : labelHash(tenantId, 40));
const publicUser = (d: UserDoc): User => {
  const { revoked_sessions: _r, ...u } = d;
  return u;
};

export class KubernetesUserStore implements UserStore {
  readonly #o: JsonObjects;

  constructor(objects: JsonObjects) {
    this.#o = objects;
  }

  #labels(u: Pick<User, "email" | "tenant_id" | "role">): Record<string, string> {
    return {
      "folio.dev/dashboard": "user",
      "folio.dev/email": labelHash(u.email),
      "folio.dev/tenant": owner(u.tenant_id),
      "folio.dev/operator": String(u.role === "operator"),
    };
  }

  async #change(id: string, f: (u: UserDoc) => UserDoc | null): Promise<UserDoc | null> {
    const cur = await this.#o.get<UserDoc>("Secret", userName(id));
    if (!cur) return null;
    return this.#o.update<UserDoc>("Secret", userName(id), this.#labels(cur.doc), null, f);
  }

  async create(u: NewUser, now = Date.now()): Promise<User> {
    const doc: UserDoc = {
      id: `usr_${randomBase62(24)}`,
      email: normalise(u.email),
      tenant_id: u.tenantId,
      role: u.role,
      password_hash: null,
      totp_secret: null,
      totp_last_step: null,
      session_epoch: 0,
      failed_logins: 0,
      locked_until: null,
      oidc_subject: null,
      created_at: now,
      last_login_at: null,
      disabled_at: null,
      revoked_sessions: [],
    };
    await this.#o.create("Secret", userName(doc.id), this.#labels(doc), doc);
    return publicUser(doc);
  }

  async byId(id: string): Promise<User | undefined> {
    const cur = await this.#o.get<UserDoc>("Secret", userName(id));
    return cur ? publicUser(cur.doc) : undefined;
  }

  async #select(selector: string): Promise<User[]> {
    const all = await this.#o.list<UserDoc>("Secret", `folio.dev/dashboard=user,${selector}`);
    return all
      .map((x) => publicUser(x.doc))
      .filter((u) => u.disabled_at === null)
      .sort((a, b) => a.created_at - b.created_at);
  }

  async byEmail(email: string): Promise<User[]> {
    const e = normalise(email);
    return (await this.#select(`folio.dev/email=${labelHash(e)}`)).filter((u) => u.email === e);
  }

  byTenant(tenantId: string): Promise<User[]> {
    return this.#select(`folio.dev/tenant=${owner(tenantId)}`);
  }

  operators(): Promise<User[]> {
    return this.#select("folio.dev/operator=true");
  }

  async setPassword(id: string, hash: string): Promise<void> {
    await this.#change(id, (u) => ({ ...u, password_hash: hash }));
  }

  async setTotp(id: string, secret: string | null): Promise<void> {
    await this.#change(id, (u) => ({ ...u, totp_secret: secret, totp_last_step: null }));
  }

  async useTotpStep(id: string, step: number): Promise<boolean> {
    let used = false;
    await this.#change(id, (u) => {
      used = u.totp_last_step === null || u.totp_last_step < step;
      return used ? { ...u, totp_last_step: step } : null;
    });
    return used;
  }

  async setRole(id: string, role: Role): Promise<void> {
    await this.#change(id, (u) => ({ ...u, role }));
  }

  async disable(id: string, now = Date.now()): Promise<void> {
    await this.#change(id, (u) => ({ ...u, disabled_at: now, session_epoch: u.session_epoch + 1 }));
  }

  async linkOidc(id: string, subject: string): Promise<void> {
    await this.#change(id, (u) => ({ ...u, oidc_subject: subject }));
  }

  async signInFailed(id: string, after: number, lockMs: (failures: number) => number, now = Date.now()): Promise<void> {
    await this.#change(id, (u) => {
      const failures = u.failed_logins + 1;
      return { ...u, failed_logins: failures, locked_until: failures >= after ? now + lockMs(failures - after + 1) : u.locked_until };
    });
  }

  async signInSucceeded(id: string, now = Date.now()): Promise<void> {
    await this.#change(id, (u) => ({ ...u, failed_logins: 0, locked_until: null, last_login_at: now }));
  }

  async bumpEpoch(id: string): Promise<number> {
    const u = await this.#change(id, (x) => ({ ...x, session_epoch: x.session_epoch + 1, revoked_sessions: [] }));
    return u?.session_epoch ?? 0;
  }

  async revokeSession(id: string, sid: string, until: number, now = Date.now()): Promise<void> {
    await this.#change(id, (u) => ({ ...u, revoked_sessions: [...u.revoked_sessions.filter((e) => e.until > now), { sid, until }] }));
  }

  async isSessionRevoked(id: string, sid: string): Promise<boolean> {
    const cur = await this.#o.get<UserDoc>("Secret", userName(id));
    return !cur || cur.doc.revoked_sessions.some((e) => e.sid === sid);
  }

  async createInvite(userId: string, ttlMs: number, now = Date.now()): Promise<string> {
    const token = randomBytes(32).toString("base64url");
    const doc: InviteDoc = { user_id: userId, expires_at: now + ttlMs, used_at: null };
    await this.#o.create("Secret", `folio-invite-${hashToken(token).slice(0, 48)}`, { "folio.dev/dashboard": "invite" }, doc);
    return token;
  }

  async peekInvite(token: string, now = Date.now()): Promise<{ user: User } | { error: "unknown" | "expired" | "used" }> {
    const inv = await this.#o.get<InviteDoc>("Secret", `folio-invite-${hashToken(token).slice(0, 48)}`);
    const user = inv ? await this.byId(inv.doc.user_id) : undefined;
    if (!inv || !user || user.disabled_at !== null) return { error: "unknown" };
    if (inv.doc.used_at !== null) return { error: "used" };
    if (inv.doc.expires_at <= now) return { error: "expired" };
    return { user };
  }

  async useInvite(token: string, now = Date.now()): Promise<boolean> {
    let took = false;
    await this.#o.update<InviteDoc>("Secret", `folio-invite-${hashToken(token).slice(0, 48)}`, {}, null, (d) => {
      took = d.used_at === null && d.expires_at > now;
      return took ? { ...d, used_at: now } : null;
    });
    return took;
  }
}

export class KubernetesAuditLog implements AuditLog {
  readonly #o: JsonObjects;

  constructor(objects: JsonObjects) {
    this.#o = objects;
  }

  async record(e: NewAuditEntry): Promise<void> {
    const at = e.at ?? Date.now();
    const day = utcDay(at).replaceAll("-", "");
    const who = owner(e.tenant_id);
    const labels = { "folio.dev/dashboard": "audit", "folio.dev/audit-of": who, "folio.dev/day": day };
    await this.#o.update<AuditEntry[]>(
      "ConfigMap",
      `folio-audit-${who.slice(0, 24)}-${day}`,
      labels,
      () => [],
      (list) => [...list, { ...e, id: list.length + 1, at }],
    );
  }

  async list(tenantId: string | null, limit: number): Promise<AuditEntry[]> {
    const days = await this.#o.list<AuditEntry[]>("ConfigMap", `folio.dev/dashboard=audit,folio.dev/audit-of=${owner(tenantId)}`);
    return days
      .flatMap((d) => d.doc)
      .sort((a, b) => b.at - a.at || b.id - a.id)
      .slice(0, limit);
  }
}

interface UsageDoc {
  rows: UsageRow[];
  /** Jobs counted, with when: kept two days, then a job that old has expired anyway. */
  counted: Record<string, number>;
}

export class KubernetesUsageStore implements UsageStore {
  readonly #o: JsonObjects;

  constructor(objects: JsonObjects) {
    this.#o = objects;
  }

  async count(job: EndedJob, now = Date.now()): Promise<boolean> {
    const month = utcDay(job.completed_at).slice(0, 7).replace("-", "");
    const who = owner(job.tenant_id);
    const labels = { "folio.dev/dashboard": "usage", "folio.dev/usage-of": who, "folio.dev/month": month };
    let counted = false;
    await this.#o.update<UsageDoc>(
      "ConfigMap",
      `folio-usage-${who.slice(0, 24)}-${month}`,
      labels,
      () => ({ rows: [], counted: {} }),
      (doc) => {
        if (doc.counted[job.id] !== undefined) return ((counted = false), null);
        counted = true;
        const day = utcDay(job.completed_at);
        const rows = doc.rows.map((r) => ({ ...r, durations: [...r.durations] }));
        let row = rows.find((r) => r.day === day && r.operation === job.operation && r.outcome === job.outcome);
        if (!row) {
          row = {
            tenant_id: job.tenant_id,
            day,
            operation: job.operation,
            outcome: job.outcome,
            jobs: 0,
            pages: 0,
            bytes_in: 0,
            bytes_out: 0,
            durations: new Array<number>(DURATION_BUCKETS_MS.length + 1).fill(0),
          };
          rows.push(row);
        }
        row.jobs++;
        row.pages += job.pages;
        row.bytes_in += job.bytes_in;
        row.bytes_out += job.bytes_out;
        if (job.duration_ms !== null) row.durations[bucketOf(job.duration_ms)] = (row.durations[bucketOf(job.duration_ms)] ?? 0) + 1;
        const keep = Object.entries(doc.counted).filter(([, at]) => at > now - 48 * 3_600_000);
        return { rows, counted: { ...Object.fromEntries(keep), [job.id]: now } };
      },
    );
    return counted;
  }

  async since(tenantId: string | null, fromDay: string): Promise<UsageRow[]> {
    const selector = tenantId === null ? "folio.dev/dashboard=usage" : `folio.dev/dashboard=usage,folio.dev/usage-of=${owner(tenantId)}`;
    const months = await this.#o.list<UsageDoc>("ConfigMap", selector);
    return months
      .flatMap((m) => m.doc.rows)
      .filter((r) => r.day >= fromDay)
      .sort((a, b) => a.day.localeCompare(b.day));
  }

  /** Markers are pruned as documents are written (see count). */
  prune(_before: number): Promise<void> {
    return Promise.resolve();
  }
}

export class KubernetesKeyLabels implements KeyLabels {
  readonly #o: JsonObjects;

  constructor(objects: JsonObjects) {
    this.#o = objects;
  }

  async set(l: KeyLabel): Promise<void> {
    const who = owner(l.tenant_id);
    await this.#o.update<Record<string, KeyLabel>>(
      "ConfigMap",
      `folio-keylabels-${who.slice(0, 24)}`,
      { "folio.dev/dashboard": "key-labels" },
      () => ({}),
      (m) => ({ ...m, [l.key_id]: l }),
    );
  }

  async forTenant(tenantId: string): Promise<Map<string, KeyLabel>> {
    const cur = await this.#o.get<Record<string, KeyLabel>>("ConfigMap", `folio-keylabels-${owner(tenantId).slice(0, 24)}`);
    return new Map(Object.entries(cur?.doc ?? {}));
  }
}
