/**
 * The controller's webhook sender: one Standard Webhooks attempt per `deliverWebhook` action
 * (controller/decide.ts). It keeps no state and no timers: controller/ledger.ts records the
 * outcome in the PdfJob's status, and the work queue's requeue-after makes the retries, so a
 * restart or a fail-over resumes them (ARCHITECTURE.md "Controller rules").
 *
 * - The URL goes through the SSRF guard (core/net/ssrf.ts, with the operator allow-list
 *   FOLIO_WEBHOOK_ALLOWED_HOSTS) at every attempt, and the POST is pinned to an address the guard
 *   returned (core/webhooks/http.ts): 15 s for the whole exchange, redirects never followed.
 * - The signing secrets come from the PdfJob's own Secret (`spec.secretRef`, key
 *   WEBHOOK_SECRETS_KEY: the tenant's `whsec_…` secrets, one per line, two during a rotation),
 *   which the API writes when it creates the job. Every line signs. Without the Secret or the key
 *   the attempt fails with "no signing secret", and the ledger retries it.
 * - Outcomes: 2xx delivered; 410 gone (the ledger stops at once); a URL the guard refuses fails
 *   with a stable "blocked: webhook_url …" message; anything else fails.
 *
 * Secrets leave this module only as signatures. Error texts (which reach the status, Events and
 * logs) are fixed phrases, HTTP statuses or network error codes: never a secret, never the URL.
 */
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import type { SsrfGuard } from "../core/net/ssrf.ts";
import { WEBHOOK_SECRETS_KEY } from "../core/schemas/pdfjob.ts";
import { postWebhook, type TlsTrust } from "../core/webhooks/http.ts";
import { signHeaders, unixSeconds, WebhookSecretError } from "../core/webhooks/sign.ts";
import { statusCodeOf, type WebhookSender } from "./apply.ts";
import type { WebhookDelivery } from "./decide.ts";
import type { WebhookOutcome } from "./ledger.ts";

/** API.md "Webhooks": success is a 2xx within 15 s. */
export const WEBHOOK_TIMEOUT_MS = 15_000;

/** A Secret's `data` (base64 values, as the API returns them); null when the Secret does not exist. */
export type SecretData = (namespace: string, name: string) => Promise<Record<string, string> | null>;

/** Reads Secrets with client-node (the controller's RBAC grants `get` on Secrets). */
export function kubeSecrets(kc: KubeConfig): SecretData {
  const core = kc.makeApiClient(CoreV1Api);
  return async (namespace, name) => {
    try {
      return (await core.readNamespacedSecret({ namespace, name })).data ?? {};
    } catch (err) {
      if (statusCodeOf(err) === 404) return null;
      throw err;
    }
  };
}

/** The signing secrets in a Secret's data: the non-empty lines of WEBHOOK_SECRETS_KEY; [] without it. */
export function signingSecrets(data: Readonly<Record<string, string>> | null): string[] {
  const b64 = data?.[WEBHOOK_SECRETS_KEY];
  if (!b64) return [];
  return Buffer.from(b64, "base64")
    .toString("utf8")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

export interface WebhookSenderOptions {
  secrets: SecretData;
  guard: SsrfGuard;
  timeoutMs?: number;
  /** Trust for a receiver with a private CA (tests: a self-signed receiver); system roots otherwise. */
  tls?: TlsTrust;
  now?: () => number;
}

const failed = (error: string): WebhookOutcome => ({ delivered: false, error });

/** The secrets to sign `d` with, or why there are none (a failed attempt). */
async function secretsFor(d: WebhookDelivery, read: SecretData): Promise<string[] | WebhookOutcome> {
  if (!d.secretName) return failed("no signing secret");
  let data: Record<string, string> | null;
  try {
    data = await read(d.namespace, d.secretName);
  } catch (err) {
    const code = statusCodeOf(err);
    return failed(`could not read the signing secret${code === undefined ? "" : ` (HTTP ${code})`}`);
  }
  const secrets = signingSecrets(data);
  return secrets.length ? secrets : failed("no signing secret");
}

/** A WebhookSender (controller/apply.ts) with real HTTPS; see the module comment. */
export function webhookSender(o: WebhookSenderOptions): WebhookSender {
  const now = o.now ?? Date.now;
  return async (d) => {
    const check = await o.guard.check(d.url);
    if (!check.ok) {
      // An unresolvable host may recover (DNS); anything else the guard refused is "blocked".
      if (check.code === "unresolvable") return failed(check.reason);
      return { delivered: false, error: `blocked: webhook_url ${check.reason}`, blocked: true };
    }
    const secrets = await secretsFor(d, o.secrets);
    if (!Array.isArray(secrets)) return secrets;
    const body = JSON.stringify(d.payload);
    let signed: Record<string, string>;
    try {
      signed = { ...signHeaders(secrets, d.messageId, unixSeconds(now()), body) };
    } catch (err) {
      if (err instanceof WebhookSecretError) return failed("invalid signing secret");
      throw err;
    }
    const started = performance.now();
    const outcome = await postWebhook({
      url: check.url,
      address: check.addresses[0]!,
      headers: { "content-type": "application/json", "user-agent": "Folio-Webhooks/1", ...signed },
      body,
      timeoutMs: o.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
      ...(o.tls ? { tls: o.tls } : {}),
    });
    // What the dashboard's attempt log shows (the ledger keeps the last few): status and latency.
    const latencyMs = Math.round(performance.now() - started);
    if (outcome.kind === "error") return { ...failed(outcome.error), latencyMs };
    const { status } = outcome;
    const answered = { statusCode: status, latencyMs };
    if (status >= 200 && status < 300) return { delivered: true, ...answered };
    // RFC 9110 §15.5.11: the endpoint is gone for good; Standard Webhooks says stop.
    if (status === 410) return { delivered: false, error: "HTTP 410 Gone: the receiver asked to stop", gone: true, ...answered };
    if (status >= 300 && status < 400) return { ...failed(`redirect (HTTP ${status}) not followed`), ...answered };
    return { ...failed(`HTTP ${status}`), ...answered };
  };
}
