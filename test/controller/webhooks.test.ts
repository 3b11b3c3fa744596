/**
 * controller/webhooks.ts against a real HTTPS receiver on 127.0.0.1 with a self-signed
 * certificate (trusted through the sender's test-only `tls.ca`; 127.0.0.1 on the SSRF guard's
 * allow-list), verified with the stock `standardwebhooks` library. The Secret reader is a plain
 * function over the data a Secret would hold (the e2e suite reads real Secrets).
 */
import { randomBytes } from "node:crypto";
import { ApiException } from "@kubernetes/client-node";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { WebhookDelivery } from "../../controller/decide.ts";
import type { WebhookOutcome } from "../../controller/ledger.ts";
import { signingSecrets, webhookSender, type SecretData, type WebhookSenderOptions } from "../../controller/webhooks.ts";
import { SsrfGuard } from "../../core/net/ssrf.ts";
import { ReceiverBreakers } from "../../core/webhooks/breaker.ts";
import { WEBHOOK_SECRETS_KEY } from "../../core/schemas/pdfjob.ts";
import { startHttpsReceiver, type HttpsReceiver } from "../helpers/https-receiver.ts";

type Reply = number | "hang" | { status: number; location: string };
interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
}

const OLD = `whsec_${randomBytes(24).toString("base64")}`;
const NEW = `whsec_${randomBytes(24).toString("base64")}`;
const TOKEN = "s3cr3t-path-token";
const b64 = (s: string): string => Buffer.from(s).toString("base64");

let cert: Buffer;
let receiver: HttpsReceiver;
let base: string;
let received: Received[] = [];
let reply: Reply = 204;

/** Secrets in the shape of a Secret's data: `webhook_secrets` in base64, one per line. */
const secretStore =
  (secrets: Record<string, Record<string, string> | null>): SecretData =>
  (ns, name) =>
    Promise.resolve(secrets[`${ns}/${name}`] ?? null);
const withSecrets = secretStore({ "folio/pj-secret": { [WEBHOOK_SECRETS_KEY]: b64(`${OLD}\n${NEW}\n`), user_password: b64("pw") } });

function delivery(over: Partial<WebhookDelivery> = {}): WebhookDelivery {
  return {
    url: `${base}/hooks/${TOKEN}`,
    tenant: "ten_x",
    namespace: "folio",
    secretName: "pj-secret",
    messageId: "msg_9aQm2LkT7cXv1B4nZp0RsWd8",
    eventType: "job.succeeded",
    attempt: 1,
    payload: { type: "job.succeeded", timestamp: "2026-03-01T12:00:20Z", data: { id: "job_9aQm2LkT7cXv1B4nZp0RsWd8" } as never },
    ...over,
  };
}

function send(d: WebhookDelivery, over: Partial<WebhookSenderOptions> = {}): Promise<WebhookOutcome> {
  return webhookSender({ secrets: withSecrets, guard: new SsrfGuard(["127.0.0.1"]), tls: { ca: cert }, ...over })(d);
}

/** No error text may carry a secret or the URL (its path holds a token here). */
function expectClean(outcome: WebhookOutcome): void {
  const text = JSON.stringify(outcome);
  for (const s of [OLD, NEW, OLD.slice(6), NEW.slice(6), TOKEN, "hunter2"]) expect(text).not.toContain(s);
}

beforeAll(async () => {
  receiver = await startHttpsReceiver((r, res) => {
    received.push({ path: r.path, headers: r.headers, body: r.raw.toString("utf8") });
    if (reply === "hang") return;
    if (typeof reply === "number") res.writeHead(reply).end();
    else res.writeHead(reply.status, { location: reply.location }).end();
  });
  ({ base, cert } = receiver);
});

afterAll(() => receiver.close());

beforeEach(() => {
  received = [];
  reply = 204;
});

/** An outcome without its latency, which must be there (an exchange was made) and plausible. */
function timed(outcome: WebhookOutcome): WebhookOutcome {
  const { latencyMs, ...rest } = outcome;
  expect(latencyMs).toBeGreaterThanOrEqual(0);
  expect(latencyMs).toBeLessThan(20_000);
  return rest;
}

describe("the controller's webhook sender", () => {
  it("should POST the payload signed with every secret of the PdfJob's Secret (rotation)", async () => {
    const d = delivery();
    const outcome = await send(d);
    expect(timed(outcome)).toEqual({ delivered: true, statusCode: 204 });
    expect(received).toHaveLength(1);
    const r = received[0]!;
    expect(r.path).toBe(`/hooks/${TOKEN}`);
    expect(r.headers["content-type"]).toBe("application/json");
    expect(r.headers["webhook-id"]).toBe(d.messageId);
    expect(r.body).toBe(JSON.stringify(d.payload));
    expect(r.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    // A receiver that knows only one of the two secrets accepts the request either way.
    for (const secret of [OLD, NEW]) expect(new Webhook(secret).verify(r.body, r.headers)).toEqual(d.payload);
    const other = `whsec_${randomBytes(24).toString("base64")}`;
    expect(() => new Webhook(other).verify(r.body, r.headers)).toThrow();
  });

  it("should keep the webhook-id on a retry and sign it afresh", async () => {
    await send(delivery());
    await send(delivery({ attempt: 2 }));
    expect(received.map((r) => r.headers["webhook-id"])).toEqual([delivery().messageId, delivery().messageId]);
    for (const r of received) expect(new Webhook(OLD).verify(r.body, r.headers)).toEqual(delivery().payload);
  });

  it.each([
    [410, { delivered: false, error: "HTTP 410 Gone: the receiver asked to stop", gone: true }],
    [500, { delivered: false, error: "HTTP 500" }],
    [429, { delivered: false, error: "HTTP 429" }],
    [200, { delivered: true }],
    [299, { delivered: true }],
  ])("should map HTTP %i", async (status, expected) => {
    reply = status;
    const outcome = await send(delivery());
    expect(timed(outcome)).toEqual({ ...expected, statusCode: status });
    expectClean(outcome);
  });

  it("should not follow a redirect", async () => {
    reply = { status: 307, location: `${base}/elsewhere` };
    const outcome = await send(delivery());
    expect(timed(outcome)).toEqual({ delivered: false, error: "redirect (HTTP 307) not followed", statusCode: 307 });
    expect(received.map((r) => r.path)).toEqual([`/hooks/${TOKEN}`]);
  });

  it("should refuse loopback unless the operator allow-lists it, with a stable message and no request", async () => {
    const outcome = await send(delivery(), { guard: new SsrfGuard([]) });
    expect(outcome).toEqual({ delivered: false, error: "blocked: webhook_url must not point to a loopback address", blocked: true });
    expect(received).toEqual([]);
  });

  it("should refuse credentials in the URL without repeating them", async () => {
    const outcome = await send(delivery({ url: `https://user:hunter2@127.0.0.1:${new URL(base).port}/hooks/${TOKEN}` }));
    expect(outcome).toMatchObject({
      delivered: false,
      blocked: true,
      error: "blocked: webhook_url must not contain credentials (user:password@)",
    });
    expectClean(outcome);
    expect(received).toEqual([]);
  });

  it.each([
    ["no secretRef", { secretName: null }, withSecrets, "no signing secret"],
    ["no such Secret", { secretName: "gone" }, withSecrets, "no signing secret"],
    ["a Secret without the key", {}, secretStore({ "folio/pj-secret": { user_password: b64("pw") } }), "no signing secret"],
    ["an empty key", {}, secretStore({ "folio/pj-secret": { [WEBHOOK_SECRETS_KEY]: b64("\n") } }), "no signing secret"],
    ["a Secret in another namespace", { namespace: "other" }, withSecrets, "no signing secret"],
    [
      "an unreadable Secret",
      {},
      () => Promise.reject(new ApiException(403, "Forbidden", "secrets is forbidden", {})),
      "could not read the signing secret (HTTP 403)",
    ],
    [
      "a mangled secret",
      {},
      secretStore({ "folio/pj-secret": { [WEBHOOK_SECRETS_KEY]: b64("whsec_not base64!") } }),
      "invalid signing secret",
    ],
  ] as const)("should fail an attempt without a usable signing secret (%s), sending nothing", async (_what, over, secrets, error) => {
    const { secretName, ...rest } = { ...delivery(), ...over };
    const d: WebhookDelivery = secretName === null ? rest : { ...rest, secretName };
    const outcome = await send(d, { secrets });
    expect(outcome).toEqual({ delivered: false, error });
    expect(received).toEqual([]);
  });

  it("should stop sending to a receiver whose circuit opened, reporting it as no attempt (the ledger defers it)", async () => {
    reply = 503;
    const breakers = new ReceiverBreakers({ policy: { volumeThreshold: 2, resetTimeoutMs: 60_000 } });
    try {
      const sender = webhookSender({ secrets: withSecrets, guard: new SsrfGuard(["127.0.0.1"]), tls: { ca: cert }, breakers });
      expect(timed(await sender(delivery()))).toEqual({ delivered: false, error: "HTTP 503", statusCode: 503 });
      expect(timed(await sender(delivery({ attempt: 2 })))).toEqual({ delivered: false, error: "HTTP 503", statusCode: 503 });
      const host = new URL(base).host;
      const open = await sender(delivery({ messageId: "msg_other000000000000000000" }));
      expect(open).toEqual({ delivered: false, error: `circuit open: ${host} kept failing`, circuitOpen: true });
      expect(received).toHaveLength(2);
      expectClean(open);
      // Another tenant's deliveries to the same host are not held back.
      expect(timed(await sender(delivery({ tenant: "ten_y" })))).toMatchObject({ statusCode: 503 });
      expect(received).toHaveLength(3);
    } finally {
      breakers.shutdown();
    }
  });

  it("should fail on a certificate it does not trust", async () => {
    const outcome = await webhookSender({ secrets: withSecrets, guard: new SsrfGuard(["127.0.0.1"]) })(delivery());
    expect(outcome.delivered).toBe(false);
    expect(outcome).toMatchObject({
      error: expect.stringMatching(
        /^request failed \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)$/,
      ) as unknown,
    });
    expect(received).toEqual([]);
  });

  it("should give up an attempt at its timeout", async () => {
    reply = "hang";
    const started = Date.now();
    const outcome = await send(delivery(), { timeoutMs: 400 });
    expect(outcome).toMatchObject({ delivered: false, error: "timed out after 400 ms" });
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(390);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(received).toHaveLength(1);
  });
});

describe("signingSecrets", () => {
  it("should read one secret per line, ignoring blank lines, spaces and CRLF", () => {
    expect(signingSecrets({ [WEBHOOK_SECRETS_KEY]: b64(` ${OLD}\r\n\r\n${NEW} \n`) })).toEqual([OLD, NEW]);
    expect(signingSecrets({ other: b64(OLD) })).toEqual([]);
    expect(signingSecrets(null)).toEqual([]);
  });
});
