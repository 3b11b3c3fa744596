/**
 * Admin commands (never over the public API), in either mode:
 *   folio tenants create NAME --plan business|free | list | set-plan NAME PLAN | suspend NAME | unsuspend NAME
 *                 | show-secret NAME | rotate-secret NAME
 *   folio keys create --tenant NAME | list --tenant NAME | revoke KEY_ID | rotate KEY_ID [--grace-seconds N]
 *   folio access-requests list [--status S] | approve ID [--tenant NAME] | reject ID
 *
 * Embedded mode works on the data directory (--data-dir DIR or FOLIO_DATA_DIR). Kubernetes mode
 * (--kubernetes, or FOLIO_BACKEND=kubernetes) works on the cluster with the user's own kubeconfig
 * (--kubeconfig FILE, KUBECONFIG, ~/.kube/config) in --namespace NS (FOLIO_JOBS_NAMESPACE, else the
 * kubeconfig's namespace): the apiserver's RBAC decides what the user may do, and nobody needs
 * `kubectl exec`. Both go through the same TenantAdmin contract (api/store/tenant-admin.ts).
 *   folio users invite --tenant NAME --email E [--role owner|developer|viewer] | invite --operator --email E | list [--tenant NAME]
 * (people: the dashboard's stores of the mode). --json gives machine-readable output.
 */
import path from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import type { Config } from "../core/config.ts";
import { EXIT } from "../core/errors.ts";
import { PLANS, TENANT_NAME, type Plan } from "../core/schemas/tenant.ts";
import { rfc3339 } from "../core/time.ts";
import { kubernetesDashboardStores } from "./dashboard/embedded.ts";
import { invite, publicUrl } from "./dashboard/invites.ts";
import { smtpMailer } from "./dashboard/mail.ts";
import { loadKubeConfig } from "./jobs/pdfjob-client.ts";
import { SqliteAuditLog, type AuditLog } from "./store/audit.ts";
import { openDb, type Db } from "./store/db.ts";
import { SqliteUserStore, TENANT_ROLES, type TenantRole, type UserStore } from "./store/users.ts";
import { KubernetesAccessRequests } from "./store/kubernetes/access-requests.ts";
import { KubernetesTenantAdmin } from "./store/kubernetes/tenant-admin.ts";
import { retryingThrottled } from "./store/kubernetes/throttled.ts";
import {
  AdminError,
  SqliteAccessRequests,
  SqliteTenantAdmin,
  type AccessRequests,
  type TenantAdmin,
  type TenantSummary,
} from "./store/tenant-admin.ts";

export interface AdminIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

interface Parsed {
  positional: string[];
  flags: Map<string, string | true>;
}

const BOOLEAN_FLAGS = new Set(["json", "kubernetes"]);

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
    else if (BOOLEAN_FLAGS.has(name)) flags.set(name, true);
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith("--")) flags.set(name, argv[++i]!);
    else flags.set(name, true);
  }
  return { positional, flags };
}

class UsageFailure extends Error {}

const flag = (p: Parsed, name: string): string | undefined => {
  const v = p.flags.get(name);
  return typeof v === "string" && v ? v : undefined;
};

function str(p: Parsed, name: string): string {
  const v = flag(p, name);
  if (!v) throw new UsageFailure(`--${name} is required`);
  return v;
}

function plan(value: string | undefined): Plan {
  if (!PLANS.includes(value as Plan)) throw new UsageFailure(`plan must be one of ${PLANS.join(", ")}`);
  return value as Plan;
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

interface Ctx {
  p: Parsed;
  admin: TenantAdmin;
  requests: AccessRequests;
  config: Config;
  io: AdminIo;
  json: boolean;
}

async function tenants({ p, admin, config, io, json }: Ctx): Promise<number> {
  const [sub, name, arg] = p.positional;
  const need = async (n: string | undefined): Promise<string> => {
    if (!n || !(await admin.tenant(n))) throw new UsageFailure(`no tenant named ${JSON.stringify(n ?? "")}`);
    return n;
  };
  switch (sub) {
    case "create": {
      if (!name) throw new UsageFailure("usage: folio tenants create NAME --plan business|free");
      const { tenant: t, webhook_secret } = await admin.createTenant(name, plan(flag(p, "plan") ?? "business"));
      emit(
        io,
        json,
        { tenant: t.name, plan: t.plan, webhook_secret },
        `Created tenant ${t.name} (${t.plan}).\nWebhook signing secret: ${webhook_secret}`,
      );
      return EXIT.OK;
    }
    case "list": {
      const rows = (await admin.listTenants()).map((t) => ({
        tenant: t.name,
        id: t.id,
        plan: t.plan,
        suspended: t.suspended,
        created_at: rfc3339(t.created_at),
      }));
      const human = rows.map((r) => `${r.tenant}\t${r.plan}${r.suspended ? "\tsuspended" : ""}\t${r.created_at}`).join("\n");
      emit(io, json, rows, human || "(no tenants)");
      return EXIT.OK;
    }
    case "set-plan": {
      await admin.setPlan(await need(name), plan(arg));
      emit(io, json, { tenant: name, plan: arg }, `${name} is now on ${arg}.`);
      return EXIT.OK;
    }
    case "suspend":
    case "unsuspend": {
      const suspended = sub === "suspend";
      await admin.setSuspended(await need(name), suspended);
      emit(
        io,
        json,
        { tenant: name, suspended },
        suspended ? `${name} is suspended: its keys answer 403 tenant_suspended.` : `${name} is active again.`,
      );
      return EXIT.OK;
    }
    case "show-secret": {
      const secret = await admin.webhookSecret(await need(name));
      emit(io, json, { tenant: name, webhook_secret: secret }, secret);
      return EXIT.OK;
    }
    case "rotate-secret": {
      const r = await admin.rotateWebhookSecret(await need(name), config.FOLIO_KEY_ROTATION_GRACE_SECONDS * 1000);
      const until = rfc3339(r.previous_valid_until);
      emit(
        io,
        json,
        { tenant: name, webhook_secret: r.webhook_secret, previous_valid_until: until },
        `New webhook secret: ${r.webhook_secret}\nThe previous one also signs until ${until}.`,
      );
      return EXIT.OK;
    }
    default:
      throw new UsageFailure("usage: folio tenants create|list|set-plan|suspend|unsuspend|show-secret|rotate-secret …");
  }
}

async function keys({ p, admin, config, io, json }: Ctx): Promise<number> {
  const [sub, keyId] = p.positional;
  switch (sub) {
    case "create": {
      const k = await admin.createKey(str(p, "tenant"));
      emit(io, json, k, `${k.key}\n(shown once; Folio keeps only a hash)`);
      return EXIT.OK;
    }
    case "list": {
      const rows = (await admin.listKeys(str(p, "tenant"))).map((k) => ({
        key_id: k.key_id,
        created_at: rfc3339(k.created_at),
        expires_at: rfc3339(k.expires_at),
        revoked_at: rfc3339(k.revoked_at),
        last_used_at: rfc3339(k.last_used_at),
      }));
      const human = rows.map(
        (r) =>
          `${r.key_id}\tcreated ${r.created_at}${r.revoked_at ? `\trevoked ${r.revoked_at}` : ""}${r.expires_at ? `\texpires ${r.expires_at}` : ""}`,
      );
      emit(io, json, rows, human.join("\n") || "(no keys)");
      return EXIT.OK;
    }
    case "revoke": {
      if (!keyId || !(await admin.revokeKey(keyId))) throw new UsageFailure(`no active key ${JSON.stringify(keyId ?? "")}`);
      emit(io, json, { key_id: keyId, revoked: true }, `Revoked ${keyId}; it stops working now.`);
      return EXIT.OK;
    }
    case "rotate": {
      if (!keyId) throw new UsageFailure("usage: folio keys rotate KEY_ID");
      const graceMs = (Number(flag(p, "grace-seconds")) || config.FOLIO_KEY_ROTATION_GRACE_SECONDS) * 1000;
      const k = await admin.rotateKey(keyId, graceMs);
      const until = rfc3339(k.previous_expires_at);
      emit(
        io,
        json,
        { key_id: k.key_id, key: k.key, previous_key_id: keyId, previous_expires_at: until },
        `${k.key}\n(shown once) ${keyId} keeps working until ${until}.`,
      );
      return EXIT.OK;
    }
    default:
      throw new UsageFailure("usage: folio keys create|list --tenant NAME | revoke|rotate KEY_ID");
  }
}

/** The tenant name an approval makes: --tenant, else the company as a DNS label. */
function tenantNameFor(p: Parsed, company: string, id: string): string {
  const given = flag(p, "tenant");
  if (given) return given;
  const derived = company
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/, "");
  return TENANT_NAME.test(derived) ? derived : id.toLowerCase().replace(/[^a-z0-9]+/g, "-");
}

async function accessRequests({ p, admin, requests, io, json }: Ctx): Promise<number> {
  const [sub, id] = p.positional;
  switch (sub) {
    case "list": {
      const rows = (await requests.list(flag(p, "status"))).map((r) => ({
        ...r,
        created_at: rfc3339(r.created_at),
        decided_at: rfc3339(r.decided_at),
      }));
      const human = rows.map((r) =>
        [r.id, r.status, r.email, r.company, r.use_case, `${r.expected_monthly_volume}/month`].map(field).join("\t"),
      );
      emit(io, json, rows, human.join("\n") || "(no access requests)");
      return EXIT.OK;
    }
    case "approve": {
      const req = id ? await requests.get(id) : null;
      if (!req || req.status !== "pending") throw new UsageFailure(`no pending access request ${JSON.stringify(id ?? "")}`);
      const name = tenantNameFor(p, req.company, req.id);
      if (await admin.tenant(name)) throw new UsageFailure(`tenant ${name} exists; pass --tenant NAME`);
      const { tenant: t, webhook_secret } = await admin.createTenant(name, "business");
      const k = await admin.createKey(t.name);
      await requests.decide(req.id, "approved", t.id);
      const out = { access_request: req.id, tenant: t.name, plan: t.plan, key_id: k.key_id, key: k.key, webhook_secret };
      emit(
        io,
        json,
        out,
        `Approved ${req.id}: tenant ${out.tenant} (business).\nAPI key (shown once): ${out.key}\nWebhook secret: ${webhook_secret}`,
      );
      return EXIT.OK;
    }
    case "reject": {
      if (!id || !(await requests.decide(id, "rejected", null)))
        throw new UsageFailure(`no pending access request ${JSON.stringify(id ?? "")}`);
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

/** What `folio users` subcommands share: the people stores, the tenant admin, and the output mode. */
interface UsersCtx {
  p: Parsed;
  config: Config;
  io: AdminIo;
  json: boolean;
  store: UserStore;
  auditLog: AuditLog;
  admin: TenantAdmin;
}

async function users(p: Parsed, db: Db, config: Config, io: AdminIo): Promise<number> {
  const { users: store, audit: auditLog } = peopleStores(db, config);
  const [sub] = p.positional;
  // Tenants through the mode's admin contract: the data directory's, or the cluster's Tenants.
  const admin: TenantAdmin =
    config.FOLIO_BACKEND === "kubernetes" || p.flags.has("kubernetes") ? clusterStores(p, config).admin : new SqliteTenantAdmin(db);
  const ctx: UsersCtx = { p, config, io, json: p.flags.has("json"), store, auditLog, admin };
  switch (sub) {
    case "invite":
      return inviteUser(ctx);
    case "list":
      return listUsers(ctx);
    default:
      throw new UsageFailure(
        "usage: folio users invite --tenant NAME --email E [--role owner|developer|viewer] | invite --operator --email E | list [--tenant NAME]",
      );
  }
}

/** The tenant named by --tenant, or a usage failure naming it. */
async function tenantByFlag({ p, admin }: UsersCtx): Promise<TenantSummary> {
  const name = str(p, "tenant");
  const t = await admin.tenant(name);
  if (!t) throw new UsageFailure(`no tenant named ${JSON.stringify(name)}`);
  return t;
}

/** --operator, else --role (a tenant role; owner by default). */
function inviteRole(p: Parsed): TenantRole | "operator" {
  if (p.flags.has("operator")) return "operator";
  const role = p.flags.get("role");
  const wanted = typeof role === "string" ? role : "owner";
  if (!TENANT_ROLES.includes(wanted as TenantRole)) throw new UsageFailure(`--role must be one of ${TENANT_ROLES.join(", ")}`);
  return wanted as TenantRole;
}

async function inviteUser(ctx: UsersCtx): Promise<number> {
  const { p, config, io, json, store, auditLog } = ctx;
  const email = str(p, "email");
  const role = inviteRole(p);
  const tenant = role === "operator" ? null : await tenantByFlag(ctx);
  let inv;
  try {
    inv = await invite(store, publicUrl(config), { email, tenantId: tenant?.id ?? null, role });
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
  if (mailer) await mailer.sendInvite(inv.user.email, inv.url, tenant ? `the tenant ${tenant.name}` : "operate this Folio installation");
  emit(
    io,
    json,
    { url: inv.url, email: inv.user.email, role, tenant: tenant?.name ?? null, expires_at: rfc3339(inv.expiresAt), emailed: !!mailer },
    `One-time sign-in link for ${inv.user.email} (${role}${tenant ? ` in ${tenant.name}` : ""}), valid until ${rfc3339(inv.expiresAt)}:\n${inv.url}`,
  );
  return EXIT.OK;
}

async function listUsers(ctx: UsersCtx): Promise<number> {
  const { p, io, json, store } = ctx;
  const tenant = p.flags.has("tenant") ? await tenantByFlag(ctx) : null;
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

/** The cluster's stores with the user's kubeconfig, in the namespace the flags or the kubeconfig give. */
function clusterStores(p: Parsed, config: Config): { admin: TenantAdmin; requests: AccessRequests; close: () => void } {
  // An operator may run this right after `helm install`, while the CRDs' storage still answers 429.
  const kc = retryingThrottled(new KubeConfig());
  const file = flag(p, "kubeconfig") ?? config.KUBECONFIG;
  if (file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  const namespace =
    flag(p, "namespace") ?? config.FOLIO_JOBS_NAMESPACE ?? kc.getContextObject(kc.getCurrentContext())?.namespace ?? "default";
  return { admin: new KubernetesTenantAdmin(kc, namespace), requests: new KubernetesAccessRequests(kc, namespace), close: () => undefined };
}

function dataDirStores(p: Parsed, config: Config): { admin: TenantAdmin; requests: AccessRequests; close: () => void } {
  const db = openDb(path.resolve(flag(p, "data-dir") ?? config.FOLIO_DATA_DIR));
  return { admin: new SqliteTenantAdmin(db), requests: new SqliteAccessRequests(db), close: () => db.close() };
}

/** Runs `folio users …` (async: it may send an e-mail). */
export async function usersCommand(argv: readonly string[], config: Config, io: AdminIo): Promise<number> {
  const p = parseFlags(argv);
  let db: Db | undefined;
  try {
    db = openDb(path.resolve(flag(p, "data-dir") ?? config.FOLIO_DATA_DIR));
    return await users(p, db, config, io);
  } catch (err) {
    if (err instanceof UsageFailure || err instanceof AdminError) {
      io.err(`folio users: ${err.message}`);
      return EXIT.USAGE;
    }
    throw err;
  } finally {
    db?.close();
  }
}

/** Runs `folio tenants|keys|access-requests …`. */
export async function adminCommand(
  group: "tenants" | "keys" | "access-requests",
  argv: readonly string[],
  config: Config,
  io: AdminIo,
): Promise<number> {
  const p = parseFlags(argv);
  const cluster = p.flags.has("kubernetes") || config.FOLIO_BACKEND === "kubernetes";
  let stores: ReturnType<typeof clusterStores> | undefined;
  try {
    stores = cluster ? clusterStores(p, config) : dataDirStores(p, config);
    const ctx: Ctx = { p, admin: stores.admin, requests: stores.requests, config, io, json: p.flags.has("json") };
    if (group === "tenants") return await tenants(ctx);
    if (group === "keys") return await keys(ctx);
    return await accessRequests(ctx);
  } catch (err) {
    if (err instanceof UsageFailure || err instanceof AdminError) {
      io.err(`folio ${group}: ${err.message}`);
      return EXIT.USAGE;
    }
    throw err;
  } finally {
    stores?.close();
  }
}
