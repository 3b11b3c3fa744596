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
 * - The rules are core's, shared with embedded mode: the body and its signature
 *   (core/webhooks/events.ts), the outcome of an attempt (core/webhooks/retry.ts: 2xx delivered;
 *   410 gone, the ledger stops at once; a URL the guard refuses "blocked: webhook_url …"; anything
 *   else failed), and the circuit breaker per tenant and host (core/webhooks/breaker.ts). This
 *   module only adapts them to the ledger's WebhookOutcome (controller/ledger.ts).
 * - Circuit open: nothing is sent and the outcome says so (`circuitOpen`); the apply layer then
 *   defers the delivery without counting an attempt (controller/ledger.ts `deferWebhook`). The
 *   breakers are this process's memory (only the leader sends); the breaker module's comment
 *   says why that soft state is enough.
 *
 * Secrets leave this module only as signatures. Error texts (which reach the status, Events and
 * logs) are fixed phrases, HTTP statuses or network error codes: never a secret, never the URL.
 */
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import type { SsrfGuard } from "../core/net/ssrf.ts";
import { WEBHOOK_SECRETS_KEY } from "../core/schemas/pdfjob.ts";
import { ReceiverBreakers } from "../core/webhooks/breaker.ts";
import { webhookRequest, type WebhookRequest } from "../core/webhooks/events.ts";
import { postWebhook, type PostOutcome, type TlsTrust } from "../core/webhooks/http.ts";
import { classifyPost, classifyRefusal, type AttemptOutcome } from "../core/webhooks/retry.ts";
import { WebhookSecretError } from "../core/webhooks/sign.ts";
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
  /** The circuit breakers of this sender's receivers; a fresh set (the default policy) when absent. */
  breakers?: ReceiverBreakers;
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

/** The signed request of `d`'s attempt, or why there is none (a failed attempt). */
function requestFor(d: WebhookDelivery, secrets: string[], nowMs: number): WebhookRequest | WebhookOutcome {
  try {
    return webhookRequest(secrets, d.messageId, nowMs, d.payload);
  } catch (err) {
    if (err instanceof WebhookSecretError) return failed("invalid signing secret");
    throw err;
  }
}

/** The ledger's WebhookOutcome of a shared outcome, with what the dashboard's attempt log shows. */
function ledgerOutcome(o: AttemptOutcome, answered: { statusCode?: number; latencyMs?: number }): WebhookOutcome {
  switch (o.kind) {
    case "delivered":
      return { delivered: true, ...answered };
    case "gone":
      return { delivered: false, error: o.error, gone: true, ...answered };
    case "blocked":
      return { delivered: false, error: o.error, blocked: true, ...answered };
    case "failed":
      return { ...failed(o.error), ...answered };
  }
}

/** What the attempt log keeps of an exchange (the ledger keeps the last few): status and latency. */
function answeredBy(outcome: PostOutcome, latencyMs: number): { statusCode?: number; latencyMs: number } {
  return outcome.kind === "response" ? { statusCode: outcome.status, latencyMs } : { latencyMs };
}

/** A WebhookSender (controller/apply.ts) with real HTTPS; see the module comment. */
export function webhookSender(o: WebhookSenderOptions): WebhookSender {
  const now = o.now ?? Date.now;
  const breakers = o.breakers ?? new ReceiverBreakers();
  return async (d) => {
    const check = await o.guard.check(d.url);
    if (!check.ok) return ledgerOutcome(classifyRefusal(check), {});
    const secrets = await secretsFor(d, o.secrets);
    if (!Array.isArray(secrets)) return secrets;
    const request = requestFor(d, secrets, now());
    if (!("body" in request)) return request;
    const host = check.url.host;
    const started = performance.now();
    const outcome = await breakers.send(d.tenant, host, () =>
      postWebhook({
        url: check.url,
        address: check.addresses[0]!,
        headers: request.headers,
        body: request.body,
        timeoutMs: o.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
        ...(o.tls ? { tls: o.tls } : {}),
      }),
    );
    if (outcome === null) return { delivered: false, error: `circuit open: ${host} kept failing`, circuitOpen: true };
    return ledgerOutcome(classifyPost(outcome), answeredBy(outcome, Math.round(performance.now() - started)));
  };
}
