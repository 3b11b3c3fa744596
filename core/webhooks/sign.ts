/**
 * Webhook signatures as the Standard Webhooks specification defines them
 * (https://www.standardwebhooks.com, "Signature scheme"), so that a receiver using any of its
 * libraries verifies Folio's requests unchanged:
 *
 * - the secret is `whsec_` + base64 of the key bytes; the HMAC key is the decoded bytes, not the text;
 * - the signed content is `${webhook-id}.${webhook-timestamp}.${body}`, byte for byte what is sent;
 * - `webhook-signature` is a space-separated list of `v1,<base64 HMAC-SHA256>`: one entry per secret
 *   that signs, which is how secret rotation works (the receiver accepts if any entry matches).
 *
 * This module never logs and never returns the secrets; only signatures leave it.
 */
import { createHmac } from "node:crypto";

/** The prefix of a Standard Webhooks secret. */
export const SECRET_PREFIX = "whsec_";

/** The headers of one signed request (Standard Webhooks "Headers"). */
export interface WebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

export class WebhookSecretError extends Error {
  override readonly name = "WebhookSecretError";
}

/**
 * The HMAC key of a `whsec_<base64>` secret. A secret without the prefix is taken as bare base64,
 * as the reference libraries do. Throws WebhookSecretError (whose message never contains the
 * secret) when the secret is not base64 or decodes to nothing.
 */
export function decodeSecret(secret: string): Buffer {
  const b64 = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  // Buffer.from(…, "base64") skips invalid characters silently; reject them instead, so that a
  // mangled secret fails loudly here rather than producing signatures nobody can verify.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) {
    throw new WebhookSecretError("webhook secret is not valid base64");
  }
  const key = Buffer.from(b64, "base64");
  if (key.length === 0) throw new WebhookSecretError("webhook secret is empty");
  return key;
}

/**
 * One `v1,<base64>` signature: HMAC-SHA256 keyed with the decoded secret over
 * `msgId.timestamp.body` (Standard Webhooks "Signature scheme"). `timestamp` is in unix seconds.
 */
export function sign(secret: string, msgId: string, timestamp: number, body: string | Buffer): string {
  const mac = createHmac("sha256", decodeSecret(secret));
  mac.update(`${msgId}.${timestamp}.`, "utf8");
  mac.update(body);
  return `v1,${mac.digest("base64")}`;
}

/**
 * The three headers of a delivery attempt. `msgId` must be the same on every retry of one message
 * (receivers deduplicate on it); `timestamp` is the time of this attempt in unix seconds (receivers
 * reject stale ones, 5 minutes in the reference libraries). With several secrets (rotation), the
 * signature header lists one signature per secret, separated by spaces.
 */
export function signHeaders(secrets: readonly string[], msgId: string, timestamp: number, body: string | Buffer): WebhookHeaders {
  if (secrets.length === 0) throw new WebhookSecretError("no webhook secret to sign with");
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) throw new RangeError("timestamp must be whole unix seconds");
  return {
    "webhook-id": msgId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": secrets.map((s) => sign(s, msgId, timestamp, body)).join(" "),
  };
}

/** Unix seconds of an epoch-milliseconds time, as `webhook-timestamp` carries it. */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
