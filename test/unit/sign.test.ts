/**
 * Webhook signing against the Standard Webhooks specification: its published test vector, and the
 * stock `standardwebhooks` library's Webhook.verify, unchanged, as any receiver would run it.
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { decodeSecret, sign, signHeaders, unixSeconds, WebhookSecretError } from "../../core/webhooks/sign.ts";

const newSecret = (): string => `whsec_${randomBytes(24).toString("base64")}`;
const body = JSON.stringify({ type: "job.succeeded", timestamp: "2026-01-01T00:00:00Z", data: { id: "job_x", note: "ünïcødé" } });
const nowSeconds = (): number => unixSeconds(Date.now());

describe("webhook signatures (Standard Webhooks)", () => {
  it("reproduces the specification's published test vector", () => {
    expect(sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}')).toBe(
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
  });

  it("should verify with the stock library's Webhook.verify, unchanged", () => {
    const secret = newSecret();
    const headers = signHeaders([secret], "msg_abc", nowSeconds(), body);
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it("should sign the same bytes whether given a string or a Buffer (UTF-8 body)", () => {
    const secret = newSecret();
    const ts = nowSeconds();
    expect(sign(secret, "msg_1", ts, Buffer.from(body, "utf8"))).toBe(sign(secret, "msg_1", ts, body));
  });

  it("should put one signature per secret during a rotation, each verifiable on its own", () => {
    const [current, previous] = [newSecret(), newSecret()];
    const headers = signHeaders([current, previous], "msg_rot", nowSeconds(), body);
    const parts = headers["webhook-signature"].split(" ");
    expect(parts).toHaveLength(2);
    for (const p of parts) expect(p).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(() => new Webhook(current).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(previous).verify(body, { ...headers })).not.toThrow();
    expect(() => new Webhook(newSecret()).verify(body, { ...headers })).toThrow(/No matching signature/);
  });

  it("should carry the message id and the attempt's unix time in the headers", () => {
    const headers = signHeaders([newSecret()], "msg_same", 1_700_000_000, body);
    expect(headers["webhook-id"]).toBe("msg_same");
    expect(headers["webhook-timestamp"]).toBe("1700000000");
    expect(unixSeconds(1_700_000_000_999)).toBe(1_700_000_000);
  });

  it("should be rejected by the receiver when the body, id or timestamp was tampered with", () => {
    const secret = newSecret();
    const ts = nowSeconds();
    const headers = signHeaders([secret], "msg_t", ts, body);
    const wh = new Webhook(secret);
    expect(() => wh.verify(body.replace("job_x", "job_y"), { ...headers })).toThrow();
    expect(() => wh.verify(body, { ...headers, "webhook-id": "msg_u" })).toThrow();
    expect(() => wh.verify(body, { ...headers, "webhook-timestamp": String(ts + 1) })).toThrow();
  });

  it("should be rejected by the receiver when the timestamp is stale (replay after 5 minutes)", () => {
    const secret = newSecret();
    const headers = signHeaders([secret], "msg_old", nowSeconds() - 600, body);
    expect(() => new Webhook(secret).verify(body, { ...headers })).toThrow(/too old/);
  });

  it("should refuse malformed secrets without echoing them", () => {
    for (const bad of ["whsec_", "whsec_@@@@", "whsec_abc"]) {
      let err: unknown;
      try {
        decodeSecret(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(WebhookSecretError);
      expect((err as Error).message).not.toContain(bad.slice(6) || "\u0000");
    }
    expect(() => signHeaders([], "msg_none", 1, body)).toThrow(WebhookSecretError);
    expect(decodeSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")).toHaveLength(24);
  });
});
