/**
 * Names, labels and annotations of the objects Kubernetes mode's store keeps (docs/adr/0008).
 * Kubernetes names are lowercase DNS-1123 subdomains and Folio's ids are base62, so an id's
 * capital letters are escaped (`A` → `-a`, one-to-one, as pdfJobName does for job ids).
 */
import { LABELS, MANAGED_BY } from "../../../core/schemas/pdfjob.ts";

/** Label telling what a Folio Secret holds; the API's Secret informer selects on it. */
export const KIND_LABEL = "folio.dev/kind";
export const SECRET_KINDS = { apiKey: "api-key", webhookSecret: "webhook-secret" } as const;
/** The API's Secret informer: only these Secrets (never a job's, which holds passwords). */
export const STORE_SECRETS_SELECTOR = `${KIND_LABEL} in (${SECRET_KINDS.apiKey},${SECRET_KINDS.webhookSecret})`;

export const KEY_ANNOTATIONS = {
  keyId: "folio.dev/key-id",
  /** RFC 3339: the key stops working then (a rotation's grace period). */
  expiresAt: "folio.dev/expires-at",
  /** RFC 3339: the key was revoked then (it stops at once). */
  revokedAt: "folio.dev/revoked-at",
} as const;
/** The Secret data key holding the SHA-256 of the key's secret (32 bytes). */
export const KEY_HASH = "sha256";
export const API_KEY_SECRET_TYPE = "folio.dev/api-key";

const escape = (id: string): string => id.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());
const unescape = (s: string): string => s.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

export const keySecretName = (keyId: string): string => `folio-key-${escape(keyId)}`;
export const webhookSecretName = (tenant: string): string => `folio-webhook-${tenant}`;
export const accessRequestName = (id: string): string => `areq-${escape(id.replace(/^areq_/, ""))}`;
export const accessRequestId = (name: string): string => `areq_${unescape(name.replace(/^areq-/, ""))}`;

/** Labels of a Secret of the store. */
export function storeLabels(kind: string, tenant: string): Record<string, string> {
  return { [LABELS.managedBy]: MANAGED_BY, [KIND_LABEL]: kind, [LABELS.tenant]: tenant };
}
