/**
 * Kubernetes mode's TenantAdmin (api/store/tenant-admin.ts): direct apiserver calls with whatever
 * identity the KubeConfig carries — the operator's own kubeconfig for `folio tenants …` and
 * `folio keys …`, so the apiserver's RBAC decides who may create a tenant or revoke a key
 * (a 403 is reported as such). Every replica's TenantCache sees each change with its watch.
 *
 * - a tenant: a Tenant resource named after it, and its webhook Secret (folio-webhook-NAME,
 *   owned by the Tenant: deleting the Tenant deletes its secrets and keys);
 * - an API key: a Secret folio-key-ID holding the SHA-256 of its secret, owned by its Tenant;
 *   revoking and rotating set annotations (resourceVersion-guarded), so `keys list` shows them.
 */
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Secret,
} from "@kubernetes/client-node";
import { LABELS, PDFJOB_GROUP, PDFJOB_VERSION } from "../../../core/schemas/pdfjob.ts";
import {
  FOLIO_API_VERSION,
  TENANT_KIND,
  TENANT_NAME,
  TENANT_PLURAL,
  WEBHOOK_SECRET_KEYS,
  type Plan,
  type TenantResource,
} from "../../../core/schemas/tenant.ts";
import { rfc3339 } from "../../../core/time.ts";
import { AdminError, type KeySummary, type NewKey, type TenantAdmin, type TenantSummary } from "../tenant-admin.ts";
import { newApiKey, newWebhookSecret } from "../tenants.ts";
import { API_KEY_SECRET_TYPE, KEY_ANNOTATIONS, KEY_HASH, keySecretName, SECRET_KINDS, storeLabels, webhookSecretName } from "./names.ts";

const isStatus = (err: unknown, code: number): boolean => err instanceof ApiException && err.code === code;
const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);
const ms = (t: string | Date | undefined): number | null => {
  const v = t === undefined ? NaN : t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(v) ? null : v;
};
const text = (s: V1Secret, key: string): string => (s.data?.[key] ? Buffer.from(s.data[key], "base64").toString("utf8") : "");

/** Turns the apiserver's refusals into messages an operator can act on. */
async function kube<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isStatus(err, 403)) {
      const body = (err as ApiException<string>).body;
      const message = typeof body === "string" ? ((JSON.parse(body) as { message?: string }).message ?? body) : String(body);
      throw new AdminError(`forbidden: ${what}: ${message}`);
    }
    throw err;
  }
}

export class KubernetesTenantAdmin implements TenantAdmin {
  readonly #ns: string;
  readonly #custom: CustomObjectsApi;
  readonly #core: CoreV1Api;
  readonly #crd: { group: string; version: string; plural: string; namespace: string };

  constructor(kc: KubeConfig, namespace: string) {
    this.#ns = namespace;
    this.#custom = kc.makeApiClient(CustomObjectsApi);
    this.#core = kc.makeApiClient(CoreV1Api);
    this.#crd = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: TENANT_PLURAL, namespace };
  }

  async #get(name: string): Promise<TenantResource | null> {
    try {
      return (await kube(`get tenant ${name}`, () => this.#custom.getNamespacedCustomObject({ ...this.#crd, name }))) as TenantResource;
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  async #need(name: string): Promise<TenantResource> {
    const t = await this.#get(name);
    if (!t) throw new AdminError(`no tenant named ${JSON.stringify(name)}`);
    return t;
  }

  #summary(t: TenantResource): TenantSummary {
    return {
      id: t.metadata.name,
      name: t.metadata.name,
      plan: t.spec.plan,
      suspended: t.spec.suspended === true,
      created_at: ms(t.metadata.creationTimestamp) ?? 0,
    };
  }

  #owner(t: TenantResource): { apiVersion: string; kind: string; name: string; uid: string }[] {
    return [{ apiVersion: FOLIO_API_VERSION, kind: TENANT_KIND, name: t.metadata.name, uid: t.metadata.uid ?? "" }];
  }

  async createTenant(name: string, plan: Plan): Promise<{ tenant: TenantSummary; webhook_secret: string }> {
    if (!TENANT_NAME.test(name))
      throw new AdminError("a tenant name is 1–63 lowercase letters, digits and '-', starting and ending alphanumeric");
    const body: TenantResource = {
      apiVersion: FOLIO_API_VERSION,
      kind: TENANT_KIND,
      metadata: { name, namespace: this.#ns },
      spec: { plan, webhookSecretRef: { name: webhookSecretName(name) } },
    };
    let t: TenantResource;
    try {
      t = (await kube(`create tenant ${name}`, () => this.#custom.createNamespacedCustomObject({ ...this.#crd, body }))) as TenantResource;
    } catch (err) {
      if (isStatus(err, 409)) throw new AdminError(`tenant ${name} exists`);
      throw err;
    }
    const secret = newWebhookSecret();
    await kube(`create secret ${webhookSecretName(name)}`, () =>
      this.#core.createNamespacedSecret({
        namespace: this.#ns,
        body: {
          metadata: {
            name: webhookSecretName(name),
            labels: storeLabels(SECRET_KINDS.webhookSecret, name),
            ownerReferences: this.#owner(t),
          },
          type: "Opaque",
          stringData: { [WEBHOOK_SECRET_KEYS.current]: secret },
        },
      }),
    );
    return { tenant: this.#summary(t), webhook_secret: secret };
  }

  async tenant(name: string): Promise<TenantSummary | null> {
    const t = await this.#get(name);
    return t ? this.#summary(t) : null;
  }

  async listTenants(): Promise<TenantSummary[]> {
    const res = (await kube("list tenants", () => this.#custom.listNamespacedCustomObject(this.#crd))) as { items: TenantResource[] };
    return res.items.map((t) => this.#summary(t)).sort((a, b) => a.created_at - b.created_at || a.name.localeCompare(b.name));
  }

  async #patchSpec(name: string, spec: Partial<TenantResource["spec"]>): Promise<void> {
    await this.#need(name);
    await kube(`patch tenant ${name}`, () => this.#custom.patchNamespacedCustomObject({ ...this.#crd, name, body: { spec } }, mergePatch));
  }

  setPlan(name: string, plan: Plan): Promise<void> {
    return this.#patchSpec(name, { plan });
  }

  setSuspended(name: string, suspended: boolean): Promise<void> {
    return this.#patchSpec(name, { suspended });
  }

  async #webhookSecret(name: string): Promise<V1Secret> {
    const t = await this.#need(name);
    return kube(`get secret ${t.spec.webhookSecretRef.name}`, () =>
      this.#core.readNamespacedSecret({ namespace: this.#ns, name: t.spec.webhookSecretRef.name }),
    );
  }

  async webhookSecret(name: string): Promise<string> {
    return text(await this.#webhookSecret(name), WEBHOOK_SECRET_KEYS.current).trim();
  }

  async rotateWebhookSecret(name: string, graceMs: number): Promise<{ webhook_secret: string; previous_valid_until: number }> {
    const s = await this.#webhookSecret(name);
    const next = newWebhookSecret();
    const until = Date.now() + graceMs;
    const data = {
      [WEBHOOK_SECRET_KEYS.current]: next,
      [WEBHOOK_SECRET_KEYS.previous]: text(s, WEBHOOK_SECRET_KEYS.current).trim(),
      [WEBHOOK_SECRET_KEYS.previousValidUntil]: rfc3339(until),
    };
    // A replace guarded by the resourceVersion read: a concurrent rotation fails instead of being lost.
    await kube(`replace secret ${s.metadata!.name!}`, () =>
      this.#core.replaceNamespacedSecret({
        namespace: this.#ns,
        name: s.metadata!.name!,
        body: { ...s, data: undefined, stringData: data },
      }),
    );
    return { webhook_secret: next, previous_valid_until: until };
  }

  async createKey(tenant: string): Promise<NewKey> {
    const t = await this.#need(tenant);
    const { key_id, key, hash } = newApiKey();
    await kube(`create secret ${keySecretName(key_id)}`, () =>
      this.#core.createNamespacedSecret({
        namespace: this.#ns,
        body: {
          metadata: {
            name: keySecretName(key_id),
            labels: storeLabels(SECRET_KINDS.apiKey, tenant),
            annotations: { [KEY_ANNOTATIONS.keyId]: key_id },
            ownerReferences: this.#owner(t),
          },
          type: API_KEY_SECRET_TYPE,
          data: { [KEY_HASH]: hash.toString("base64") },
        },
      }),
    );
    return { key_id, key };
  }

  #keySummary(s: V1Secret): KeySummary {
    const a = s.metadata?.annotations ?? {};
    return {
      key_id: a[KEY_ANNOTATIONS.keyId] ?? "",
      tenant: s.metadata?.labels?.[LABELS.tenant] ?? "",
      created_at: ms(s.metadata?.creationTimestamp) ?? 0,
      expires_at: ms(a[KEY_ANNOTATIONS.expiresAt]),
      revoked_at: ms(a[KEY_ANNOTATIONS.revokedAt]),
      // Recording each use would be a write per request: not kept in Kubernetes mode.
      last_used_at: null,
    };
  }

  async listKeys(tenant: string): Promise<KeySummary[]> {
    await this.#need(tenant);
    const res = await kube("list secrets", () =>
      this.#core.listNamespacedSecret({
        namespace: this.#ns,
        labelSelector: `${Object.entries(storeLabels(SECRET_KINDS.apiKey, tenant))
          .map(([k, v]) => `${k}=${v}`)
          .join(",")}`,
      }),
    );
    return res.items.map((s) => this.#keySummary(s)).sort((a, b) => a.created_at - b.created_at);
  }

  async #keySecret(keyId: string): Promise<V1Secret | null> {
    if (!/^[0-9A-Za-z]{16}$/.test(keyId)) return null;
    try {
      const s = await kube(`get secret ${keySecretName(keyId)}`, () =>
        this.#core.readNamespacedSecret({ namespace: this.#ns, name: keySecretName(keyId) }),
      );
      return s.metadata?.annotations?.[KEY_ANNOTATIONS.keyId] === keyId ? s : null;
    } catch (err) {
      if (isStatus(err, 404)) return null;
      throw err;
    }
  }

  async key(keyId: string): Promise<KeySummary | null> {
    const s = await this.#keySecret(keyId);
    return s ? this.#keySummary(s) : null;
  }

  /** Sets annotations on a key Secret, guarded by the resourceVersion read. */
  async #annotateKey(s: V1Secret, annotations: Record<string, string>): Promise<void> {
    const body = { metadata: { annotations, resourceVersion: s.metadata?.resourceVersion } };
    await kube(`patch secret ${s.metadata!.name!}`, () =>
      this.#core.patchNamespacedSecret({ namespace: this.#ns, name: s.metadata!.name!, body }, mergePatch),
    );
  }

  async revokeKey(keyId: string): Promise<boolean> {
    const s = await this.#keySecret(keyId);
    if (!s || s.metadata?.annotations?.[KEY_ANNOTATIONS.revokedAt]) return false;
    await this.#annotateKey(s, { [KEY_ANNOTATIONS.revokedAt]: rfc3339(Date.now()) });
    return true;
  }

  async rotateKey(keyId: string, graceMs: number): Promise<NewKey & { previous_expires_at: number }> {
    const s = await this.#keySecret(keyId);
    if (!s || s.metadata?.annotations?.[KEY_ANNOTATIONS.revokedAt]) throw new AdminError(`no active key ${JSON.stringify(keyId)}`);
    const old = this.#keySummary(s);
    const expires = Math.min(old.expires_at ?? Infinity, Date.now() + graceMs);
    await this.#annotateKey(s, { [KEY_ANNOTATIONS.expiresAt]: rfc3339(expires) });
    return { ...(await this.createKey(old.tenant)), previous_expires_at: expires };
  }
}
