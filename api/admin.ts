/**
 * Admin commands over the data directory (never over the public API):
 *   folio tenants create NAME --plan business|free | list | set-plan NAME PLAN | show-secret NAME | rotate-secret NAME
 *   folio keys create --tenant NAME | list --tenant NAME | revoke KEY_ID | rotate KEY_ID
 *   folio access-requests list [--status S] | approve ID | reject ID
 *   folio users invite --tenant NAME --email E [--role owner|developer|viewer] | invite --operator --email E | list [--tenant NAME]
 * Every command takes --data-dir DIR (or FOLIO_DATA_DIR) and --json for machine-readable output.
 */
import path from "node:path";
import type { Config } from "../core/config.ts";
import { EXIT } from "../core/errors.ts";
import { rfc3339 } from "../core/time.ts";
import { kubernetesDashboardStores } from "./dashboard/embedded.ts";
import { invite, publicUrl } from "./dashboard/invites.ts";
import { loadKubeConfig } from "./jobs/pdfjob-client.ts";
import { smtpMailer } from "./dashboard/mail.ts";
import { AccessRequestStore } from "./store/access-requests.ts";
import { SqliteAuditLog, type AuditLog } from "./store/audit.ts";
import { SqliteUserStore, TENANT_ROLES, type TenantRole, type UserStore } from "./store/users.ts";
import { openDb, transaction, type Db } from "./store/db.ts";
import { PLANS, TenantStore, type Plan } from "./store/tenants.ts";

export interface AdminIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

interface Parsed {
  positional: string[];
  flags: Map<string, string | true>;
}

export function parseFlags(argv: readonly string[]): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith("--")) {
      positional.push(a);
      continue;
    }
    const [name, inline] = a.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (inline !== undefined) flags.set(name, inline);
    else if (name === "json") flags.set(name, true);
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith("--")) flags.set(name, argv[++i]!);
    else flags.set(name, true);
  }
  return { positional, flags };
}

class UsageFailure extends Error {}

function str(p: Parsed, name: string): string {
  const v = p.flags.get(name);
  if (typeof v !== "string" || !v) throw new UsageFailure(`--${name} is required`);
  return v;
}

function plan(value: string | undefined): Plan {
  if (!PLANS.includes(value as Plan)) throw new UsageFailure(`plan must be one of ${PLANS.join(", ")}`);
  return value as Plan;
}

export function openAdminDb(p: Parsed, config: Config): Db {
  const dir = typeof p.flags.get("data-dir") === "string" ? (p.flags.get("data-dir") as string) : config.FOLIO_DATA_DIR;
  return openDb(path.resolve(dir));
}

/**
 * What the CLI prints never drives the operator's terminal: texts such as an access request's
 * company come from anyone on the internet, and ESC/CSI sequences (C0 and the 8-bit C1 controls,
 * e.g. U+009B) could retitle the window, rewrite earlier lines or hide text; bidi controls could
 * reorder what is shown (issue #10 item 17). Human output shows each such character as `\u{…}`;
 * JSON output escapes them as `\uXXXX` (JSON.stringify escapes only C0 itself), still valid JSON.
 */
const UNSAFE_FOR_TERMINAL = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;
const hex = (c: string): string => c.codePointAt(0)!.toString(16).padStart(4, "0");

export function terminalSafe(text: string): string {
  // Keep the newlines and tabs the CLI's own layout uses; everything else is shown, not obeyed.
  return text.replace(UNSAFE_FOR_TERMINAL, (c) => (c === "\n" || c === "\t" ? c : `\\u{${hex(c)}}`));
}

/** One field of a tab-separated line: not even a newline or a tab may forge lines or columns. */
const field = (v: unknown): string => String(v).replace(UNSAFE_FOR_TERMINAL, (c) => `\\u{${hex(c)}}`);

export function terminalSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(UNSAFE_FOR_TERMINAL, (c) => `\\u${hex(c)}`);
}

function emit(io: AdminIo, json: boolean, value: unknown, human: string): void {
  io.out(json ? terminalSafeJson(value) : terminalSafe(human));
}

function tenants(p: Parsed, db: Db, config: Config, io: AdminIo): number {
  const store = new TenantStore(db);
  const [sub, name, arg] = p.positional;
  const json = p.flags.has("json");
  const need = (n: string | undefined): NonNullable<ReturnType<TenantStore["byName"]>> => {
    const t = n ? store.byName(n) : undefined;
    if (!t) throw new UsageFailure(`no tenant named ${JSON.stringify(n ?? "")}`);
    return t;
  };
  switch (sub) {
    case "create": {
      if (!name) throw new UsageFailure("usage: folio tenants create NAME --plan business|free");
      if (store.byName(name)) throw new UsageFailure(`tenant ${name} exists`);
      const t = store.create(name, plan(typeof p.flags.get("plan") === "string" ? (p.flags.get("plan") as string) : "business"));
      emit(
        io,
        json,
        { tenant: t.name, plan: t.plan, webhook_secret: t.webhook_secret },
        `Created tenant ${t.name} (${t.plan}).\nWebhook signing secret: ${t.webhook_secret}`,
      );
      return EXIT.OK;
    }
    case "list": {
      const rows = store.list().map((t) => ({ tenant: t.name, id: t.id, plan: t.plan, created_at: rfc3339(t.created_at) }));
      emit(io, json, rows, rows.map((r) => `${r.tenant}\t${r.plan}\t${r.created_at}`).join("\n") || "(no tenants)");
      return EXIT.OK;
    }
    case "set-plan": {
      const t = need(name);
      store.setPlan(t.id, plan(arg));
      emit(io, json, { tenant: t.name, plan: arg }, `${t.name} is now on ${arg}.`);
      return EXIT.OK;
    }
    case "show-secret": {
      const t = need(name);
      emit(io, json, { tenant: t.name, webhook_secret: t.webhook_secret }, t.webhook_secret);
      return EXIT.OK;
    }
    case "rotate-secret": {
      const t = store.rotateWebhookSecret(need(name).id, config.FOLIO_KEY_ROTATION_GRACE_SECONDS * 1000);
      emit(
        io,
        json,
        { tenant: t.name, webhook_secret: t.webhook_secret, previous_valid_until: rfc3339(t.webhook_secret_prev_until) },
        `New webhook secret: ${t.webhook_secret}\nThe previous one also signs until ${rfc3339(t.webhook_secret_prev_until)}.`,
      );
      return EXIT.OK;
    }
    default:
      throw new UsageFailure("usage: folio tenants create|list|set-plan|show-secret|rotate-secret …");
  }
}

function keys(p: Parsed, db: Db, config: Config, io: AdminIo): number {
  const store = new TenantStore(db);
  const [sub, keyId] = p.positional;
  const json = p.flags.has("json");
  const tenantByFlag = (): NonNullable<ReturnType<TenantStore["byName"]>> => {
    const name = str(p, "tenant");
    const t = store.byName(name);
    if (!t) throw new UsageFailure(`no tenant named ${JSON.stringify(name)}`);
    return t;
  };
  switch (sub) {
    case "create": {
      const k = store.createKey(tenantByFlag().id);
      emit(io, json, k, `${k.key}\n(shown once; Folio keeps only a hash)`);
      return EXIT.OK;
    }
    case "list": {
      const rows = store.listKeys(tenantByFlag().id).map((k) => ({
        key_id: k.key_id,
        created_at: rfc3339(k.created_at),
        expires_at: rfc3339(k.expires_at),
        revoked_at: rfc3339(k.revoked_at),
        last_used_at: rfc3339(k.last_used_at),
      }));
      emit(
        io,
        json,
        rows,
        rows
          .map(
            (r) =>
              `${r.key_id}\tcreated ${r.created_at}${r.revoked_at ? `\trevoked ${r.revoked_at}` : ""}${r.expires_at ? `\texpires ${r.expires_at}` : ""}`,
          )
          .join("\n") || "(no keys)",
      );
      return EXIT.OK;
    }
    case "revoke": {
      if (!keyId || !store.revokeKey(keyId)) throw new UsageFailure(`no active key ${JSON.stringify(keyId ?? "")}`);
      emit(io, json, { key_id: keyId, revoked: true }, `Revoked ${keyId}; it stops working now.`);
      return EXIT.OK;
    }
    case "rotate": {
      if (!keyId || !store.keyById(keyId) || store.keyById(keyId)!.revoked_at !== null)
        throw new UsageFailure(`no active key ${JSON.stringify(keyId ?? "")}`);
      const graceMs = (Number(p.flags.get("grace-seconds")) || config.FOLIO_KEY_ROTATION_GRACE_SECONDS) * 1000;
      const k = store.rotateKey(keyId, graceMs);
      emit(
        io,
        json,
        { ...k, previous_key_id: keyId, previous_expires_at: rfc3339(store.keyById(keyId)!.expires_at) },
        `${k.key}\n(shown once) ${keyId} keeps working until ${rfc3339(store.keyById(keyId)!.expires_at)}.`,
      );
      return EXIT.OK;
    }
    default:
      throw new UsageFailure("usage: folio keys create|list --tenant NAME | revoke|rotate KEY_ID");
  }
}

function accessRequests(p: Parsed, db: Db, io: AdminIo): number {
  const store = new AccessRequestStore(db);
  const tenantsStore = new TenantStore(db);
  const [sub, id] = p.positional;
  const json = p.flags.has("json");
  switch (sub) {
    case "list": {
      const status = typeof p.flags.get("status") === "string" ? (p.flags.get("status") as string) : undefined;
      const rows = store.list(status).map((r) => ({ ...r, created_at: rfc3339(r.created_at), decided_at: rfc3339(r.decided_at) }));
      emit(
        io,
        json,
        rows,
        rows
          .map((r) => [r.id, r.status, r.email, r.company, r.use_case, `${r.expected_monthly_volume}/month`].map(field).join("\t"))
          .join("\n") || "(no access requests)",
      );
      return EXIT.OK;
    }
    case "approve": {
      const req = id ? store.get(id) : undefined;
      if (!req || req.status !== "pending") throw new UsageFailure(`no pending access request ${JSON.stringify(id ?? "")}`);
      const name =
        typeof p.flags.get("tenant") === "string"
          ? (p.flags.get("tenant") as string)
          : req.company
              .toLowerCase()
              .replace(/[^a-z0-9]+/g, "-")
              .replace(/^-|-$/g, "") || req.id;
      if (tenantsStore.byName(name)) throw new UsageFailure(`tenant ${name} exists; pass --tenant NAME`);
      const out = transaction(db, () => {
        const t = tenantsStore.create(name, "business");
        const k = tenantsStore.createKey(t.id);
        store.decide(req.id, "approved", t.id);
        return { access_request: req.id, tenant: t.name, plan: t.plan, key_id: k.key_id, key: k.key, webhook_secret: t.webhook_secret };
      });
      emit(
        io,
        json,
        out,
        `Approved ${req.id}: tenant ${out.tenant} (business).\nAPI key (shown once): ${out.key}\nWebhook secret: ${out.webhook_secret}`,
      );
      return EXIT.OK;
    }
    case "reject": {
      if (!id || !store.decide(id, "rejected", null)) throw new UsageFailure(`no pending access request ${JSON.stringify(id ?? "")}`);
      emit(io, json, { access_request: id, status: "rejected" }, `Rejected ${id}.`);
      return EXIT.OK;
    }
    default:
      throw new UsageFailure("usage: folio access-requests list [--status pending] | approve ID [--tenant NAME] | reject ID");
  }
}

/**
 * `folio users invite …` prints {"url"}: a one-time sign-in link (24 h) where the person sets a
 * password; e-mailed too when FOLIO_SMTP_URL is set. `folio users list` shows who is there.
 */
/** Kubernetes mode keeps people in the cluster (the same stores every API replica reads); embedded mode in the data directory. */
function peopleStores(db: Db, config: Config): { users: UserStore; audit: AuditLog } {
  if (config.FOLIO_BACKEND !== "kubernetes") return { users: new SqliteUserStore(db), audit: new SqliteAuditLog(db) };
  return kubernetesDashboardStores(loadKubeConfig(config.KUBECONFIG), config.FOLIO_JOBS_NAMESPACE ?? config.POD_NAMESPACE ?? "default");
}

async function users(p: Parsed, db: Db, config: Config, io: AdminIo): Promise<number> {
  const { users: store, audit: auditLog } = peopleStores(db, config);
  const [sub] = p.positional;
  const json = p.flags.has("json");
  const tenantsStore = new TenantStore(db);
  const tenantByFlag = (): NonNullable<ReturnType<TenantStore["byName"]>> => {
    const name = str(p, "tenant");
    const t = tenantsStore.byName(name);
    if (!t) throw new UsageFailure(`no tenant named ${JSON.stringify(name)}`);
    return t;
  };
  switch (sub) {
    case "invite": {
      const email = str(p, "email");
      const operator = p.flags.has("operator");
      const role = operator ? "operator" : typeof p.flags.get("role") === "string" ? (p.flags.get("role") as string) : "owner";
      if (!operator && !TENANT_ROLES.includes(role as TenantRole))
        throw new UsageFailure(`--role must be one of ${TENANT_ROLES.join(", ")}`);
      const tenant = operator ? null : tenantByFlag();
      let inv;
      try {
        inv = await invite(store, publicUrl(config), { email, tenantId: tenant?.id ?? null, role: role as TenantRole | "operator" });
      } catch {
        throw new UsageFailure(`${JSON.stringify(email)} is not an e-mail address`);
      }
      await auditLog.record({
        tenant_id: tenant?.id ?? null,
        actor: "cli",
        action: "member.invited",
        target: inv.user.email,
        detail: { role },
        address: null,
      });
      const mailer = smtpMailer(config);
      if (mailer)
        await mailer.sendInvite(inv.user.email, inv.url, tenant ? `the tenant ${tenant.name}` : "operate this Folio installation");
      emit(
        io,
        json,
        { url: inv.url, email: inv.user.email, role, tenant: tenant?.name ?? null, expires_at: rfc3339(inv.expiresAt), emailed: !!mailer },
        `One-time sign-in link for ${inv.user.email} (${role}${tenant ? ` in ${tenant.name}` : ""}), valid until ${rfc3339(inv.expiresAt)}:\n${inv.url}`,
      );
      return EXIT.OK;
    }
    case "list": {
      const tenant = p.flags.has("tenant") ? tenantByFlag() : null;
      const rows = (tenant ? await store.byTenant(tenant.id) : await store.operators()).map((u) => ({
        email: u.email,
        role: u.role,
        totp: u.totp_secret !== null,
        password_set: u.password_hash !== null,
        last_login_at: rfc3339(u.last_login_at),
      }));
      emit(io, json, rows, rows.map((r) => `${r.email}\t${r.role}${r.password_set ? "" : "\t(invited)"}`).join("\n") || "(nobody)");
      return EXIT.OK;
    }
    default:
      throw new UsageFailure(
        "usage: folio users invite --tenant NAME --email E [--role owner|developer|viewer] | invite --operator --email E | list [--tenant NAME]",
      );
  }
}

/** Runs `folio users …` (async: it may send an e-mail). */
export async function usersCommand(argv: readonly string[], config: Config, io: AdminIo): Promise<number> {
  const p = parseFlags(argv);
  let db: Db | undefined;
  try {
    db = openAdminDb(p, config);
    return await users(p, db, config, io);
  } catch (err) {
    if (err instanceof UsageFailure) {
      io.err(`folio users: ${err.message}`);
      return EXIT.USAGE;
    }
    throw err;
  } finally {
    db?.close();
  }
}

/** Runs `folio tenants|keys|access-requests …`. */
export function adminCommand(group: "tenants" | "keys" | "access-requests", argv: readonly string[], config: Config, io: AdminIo): number {
  const p = parseFlags(argv);
  let db: Db | undefined;
  try {
    db = openAdminDb(p, config);
    if (group === "tenants") return tenants(p, db, config, io);
    if (group === "keys") return keys(p, db, config, io);
    return accessRequests(p, db, io);
  } catch (err) {
    if (err instanceof UsageFailure) {
      io.err(`folio ${group}: ${err.message}`);
      return EXIT.USAGE;
    }
    throw err;
  } finally {
    db?.close();
  }
}
