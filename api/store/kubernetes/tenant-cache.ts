/**
 * Kubernetes mode's request path for tenants and keys (KeyAuthenticator): two informers in every
 * API replica — the namespace's Tenants, and its Secrets labelled folio.dev/kind=api-key or
 * webhook-secret — so that authenticating a request reads memory only, and a key created,
 * revoked or rotated through any replica or with kubectl reaches every replica with the watch
 * event (milliseconds; the suite's goal is 2 s).
 *
 * A key Secret (api/store/kubernetes/tenant-admin.ts writes them) holds the SHA-256 of the key's
 * secret under `sha256`, and its id, expiry and revocation in annotations; it belongs to its
 * tenant by the folio.dev/tenant label. Its Tenant must exist: a key of a deleted tenant fails.
 */
import type { KubeConfig, V1Secret } from "@kubernetes/client-node";
import { CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { Informer } from "../../../core/kube/informer.ts";
import type { Logger } from "../../../core/logger.ts";
import { LABELS, PDFJOB_GROUP, PDFJOB_VERSION } from "../../../core/schemas/pdfjob.ts";
import { TENANT_PLURAL, WEBHOOK_SECRET_KEYS, type TenantResource } from "../../../core/schemas/tenant.ts";
import { kubeWatch, listAll } from "../../jobs/pdfjob-client.ts";
import { matchKey, type KeyAuthenticator, type TenantInfo } from "../tenants.ts";
import { KEY_ANNOTATIONS, KEY_HASH, KIND_LABEL, SECRET_KINDS, STORE_SECRETS_SELECTOR } from "./names.ts";

const PAGE = 500;
const decode = (v: string | undefined): string => (v === undefined ? "" : Buffer.from(v, "base64").toString("utf8"));
const time = (t: string | undefined): number | null => {
  const ms = t ? Date.parse(t) : NaN;
  return Number.isNaN(ms) ? null : ms;
};

/** Drops what the caches never read (managedFields). */
function trimmed<T extends { metadata?: object }>(obj: T): T {
  const meta = obj.metadata as { managedFields?: unknown } | undefined;
  if (!meta?.managedFields) return obj;
  const { managedFields: _m, ...metadata } = meta;
  return { ...obj, metadata };
}

export class TenantCache implements KeyAuthenticator {
  readonly #namespace: string;
  readonly #tenants: Informer<TenantResource>;
  readonly #secrets: Informer<V1Secret>;

  constructor(kc: KubeConfig, namespace: string, log: Logger) {
    this.#namespace = namespace;
    const custom = kc.makeApiClient(CustomObjectsApi);
    const core = kc.makeApiClient(CoreV1Api);
    const watch = kubeWatch(kc);
    const crd = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: TENANT_PLURAL, namespace };
    this.#tenants = new Informer<TenantResource>({
      name: "api-tenants",
      watch,
      list: () =>
        listAll(
          async (cont) =>
            (await custom.listNamespacedCustomObject({ ...crd, limit: PAGE, ...(cont ? { _continue: cont } : {}) })) as {
              items: TenantResource[];
              metadata?: { continue?: string; resourceVersion?: string };
            },
        ),
      watchPath: `/apis/${PDFJOB_GROUP}/${PDFJOB_VERSION}/namespaces/${namespace}/${TENANT_PLURAL}`,
      transform: trimmed,
      resyncMs: 0,
      log: (msg) => log.warn(msg),
    });
    this.#secrets = new Informer<V1Secret>({
      name: "api-store-secrets",
      watch,
      list: () =>
        listAll(async (cont) => {
          const res = await core.listNamespacedSecret({
            namespace,
            labelSelector: STORE_SECRETS_SELECTOR,
            limit: PAGE,
            ...(cont ? { _continue: cont } : {}),
          });
          return { items: res.items, metadata: { continue: res.metadata?._continue, resourceVersion: res.metadata?.resourceVersion } };
        }),
      watchPath: `/api/v1/namespaces/${namespace}/secrets`,
      labelSelector: STORE_SECRETS_SELECTOR,
      transform: trimmed,
      indexers: {
        keyId: (s) =>
          s.metadata?.labels?.[KIND_LABEL] === SECRET_KINDS.apiKey ? [s.metadata.annotations?.[KEY_ANNOTATIONS.keyId] ?? ""] : [],
      },
      resyncMs: 0,
      log: (msg) => log.warn(msg),
    });
  }

  start(): void {
    this.#tenants.start();
    this.#secrets.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.#tenants.stop(), this.#secrets.stop()]);
  }

  synced(): Promise<void> {
    return Promise.all([this.#tenants.waitForSync(), this.#secrets.waitForSync()]).then(() => undefined);
  }

  get hasSynced(): boolean {
    return this.#tenants.hasSynced && this.#secrets.hasSynced;
  }

  /** The tenant named `name` (its name is its id), if it exists and is not being deleted. */
  tenant(name: string): TenantInfo | null {
    const t = this.#tenants.get(`${this.#namespace}/${name}`);
    if (!t || t.metadata.deletionTimestamp) return null;
    return { id: t.metadata.name, name: t.metadata.name, plan: t.spec.plan, suspended: t.spec.suspended === true };
  }

  keyById(keyId: string): { key_id: string } | undefined {
    return this.#secrets.byIndex("keyId", keyId).length ? { key_id: keyId } : undefined;
  }

  authenticate(presented: string, now = Date.now()): { tenant: TenantInfo; keyId: string } | null {
    let secret: V1Secret | undefined;
    const keyId = matchKey(presented, (id) => {
      secret = this.#secrets.byIndex("keyId", id)[0];
      const hash = secret?.data?.[KEY_HASH];
      return hash ? Buffer.from(hash, "base64") : null;
    });
    if (!keyId || !secret) return null;
    const a = secret.metadata?.annotations ?? {};
    const expires = time(a[KEY_ANNOTATIONS.expiresAt]);
    if (a[KEY_ANNOTATIONS.revokedAt] || (expires !== null && expires <= now) || secret.metadata?.deletionTimestamp) return null;
    const tenant = this.tenant(secret.metadata?.labels?.[LABELS.tenant] ?? "");
    return tenant ? { tenant, keyId } : null;
  }

  /** The tenant's webhook signing secrets now: the current one, and the previous during its grace period. */
  signingSecrets(tenantId: string, now = Date.now()): string[] {
    const t = this.#tenants.get(`${this.#namespace}/${tenantId}`);
    const s = t ? this.#secrets.get(`${this.#namespace}/${t.spec.webhookSecretRef.name}`) : undefined;
    if (!s) return [];
    const current = decode(s.data?.[WEBHOOK_SECRET_KEYS.current]).trim();
    const previous = decode(s.data?.[WEBHOOK_SECRET_KEYS.previous]).trim();
    const until = time(decode(s.data?.[WEBHOOK_SECRET_KEYS.previousValidUntil]));
    return [current, ...(previous && until !== null && until > now ? [previous] : [])].filter(Boolean);
  }
}
