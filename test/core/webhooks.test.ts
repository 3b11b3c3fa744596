/**
 * The webhook rules both modes share (core/webhooks): the body builder — the body signed is the
 * body sent, byte for byte, checked by a real HTTPS receiver with the stock `standardwebhooks`
 * library — the outcome of an attempt, what follows it, and the per-receiver circuit breaker.
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { circuitDeferral, DEFAULT_BREAKER_POLICY, ReceiverBreakers, unhealthy } from "../../core/webhooks/breaker.ts";
import { webhookBody, webhookEventFor, webhookRequest, WEBHOOK_EVENT_TYPES, type WebhookPayload } from "../../core/webhooks/events.ts";
import { postWebhook, type PostOutcome } from "../../core/webhooks/http.ts";
import {
  classifyPost,
  classifyRefusal,
  classifyResponse,
  DEFAULT_RETRY_POLICY,
  nextStep,
  retryWindowMs,
  type AttemptOutcome,
} from "../../core/webhooks/retry.ts";
import { RETRY_SCHEDULE_MS } from "../../core/webhooks/schedule.ts";
import { startHttpsReceiver, type HttpsReceiver, type ReceivedRequest } from "../helpers/https-receiver.ts";

const secret = (): string => `whsec_${randomBytes(24).toString("base64")}`;
const payload: WebhookPayload = {
  type: "job.succeeded",
  timestamp: "2026-03-01T12:00:20Z",
  // Non-ASCII text: content-length and the signature must count bytes, not characters.
  data: { id: "job_9aQm2LkT7cXv1B4nZp0RsWd8", metadata: { note: "ünïcødé ✓ 日本" }, outputs: [] },
};

describe("the webhook body", () => {
  it("should be JSON with type, timestamp and data in that order, whatever order the payload was built in", () => {
    const shuffled = { data: payload.data, timestamp: payload.timestamp, type: payload.type } as WebhookPayload;
    expect(webhookBody(shuffled)).toBe(webhookBody(payload));
    expect(Object.keys(JSON.parse(webhookBody(payload)) as object)).toEqual(["type", "timestamp", "data"]);
    expect(JSON.parse(webhookBody(payload))).toEqual(payload);
  });

  it("should sign the bytes it returns, the same from the payload (controller) as from the stored body (embedded)", () => {
    const s = secret();
    const fromPayload = webhookRequest([s], "msg_1", 1_772_366_420_000, payload);
    const fromStored = webhookRequest([s], "msg_1", 1_772_366_420_000, webhookBody(payload));
    expect(fromPayload).toEqual(fromStored);
    expect(fromPayload.body).toBe(webhookBody(payload));
    expect(fromPayload.headers).toMatchObject({
      "content-type": "application/json",
      "webhook-id": "msg_1",
      "webhook-timestamp": "1772366420",
    });
  });

  it("should announce each ending with its own event", () => {
    expect([webhookEventFor("Succeeded"), webhookEventFor("Failed"), webhookEventFor("Canceled")]).toEqual([...WEBHOOK_EVENT_TYPES]);
  });

  describe("over HTTPS", () => {
    let receiver: HttpsReceiver;
    let cert: Buffer;
    let url: URL;
    let received: ReceivedRequest[];

    beforeAll(async () => {
      receiver = await startHttpsReceiver();
      ({ cert, received } = receiver);
      url = new URL(`${receiver.base}/hook`);
    });

    afterAll(() => receiver.close());

    it("should deliver byte for byte the body it signed, which the stock library verifies", async () => {
      const s = secret();
      const request = webhookRequest([s], "msg_bytes", Date.now(), payload);
      const outcome = await postWebhook({
        url,
        address: { address: "127.0.0.1", family: 4 },
        headers: request.headers,
        body: request.body,
        timeoutMs: 5000,
        tls: { ca: cert },
      });
      expect(outcome).toEqual({ kind: "response", status: 204 });
      const got = received.at(-1)!;
      expect(got.raw.equals(Buffer.from(request.body, "utf8"))).toBe(true);
      expect(Number(got.headers["content-length"])).toBe(got.raw.length);
      expect(new Webhook(s).verify(got.raw.toString("utf8"), got.headers)).toEqual(payload);
    });
  });
});

describe("the outcome of an attempt", () => {
  it.each<[string, number, AttemptOutcome]>([
    ["any 2xx is delivered", 200, { kind: "delivered" }],
    ["204 No Content is delivered", 204, { kind: "delivered" }],
    ["410 Gone asks to stop", 410, { kind: "gone", error: "HTTP 410 Gone: the receiver asked to stop" }],
    ["a redirect is not followed", 302, { kind: "failed", error: "redirect (HTTP 302) not followed" }],
    ["a permanent redirect is not followed either", 308, { kind: "failed", error: "redirect (HTTP 308) not followed" }],
    ["404 is an ordinary failure", 404, { kind: "failed", error: "HTTP 404" }],
    ["429 is an ordinary failure", 429, { kind: "failed", error: "HTTP 429" }],
    ["503 is an ordinary failure", 503, { kind: "failed", error: "HTTP 503" }],
  ])("%s (HTTP %i)", (_what, status, expected) => {
    expect(classifyResponse(status)).toEqual(expected);
    expect(classifyPost({ kind: "response", status })).toEqual(expected);
  });

  it("should take a network error as a failure with its text", () => {
    expect(classifyPost({ kind: "error", error: "connection refused", aborted: false })).toEqual({
      kind: "failed",
      error: "connection refused",
    });
  });

  it("should fail an unresolvable host (DNS may recover) and block any other refusal with a stable message", () => {
    expect(classifyRefusal({ ok: false, code: "unresolvable", reason: "host does not resolve" })).toEqual({
      kind: "failed",
      error: "host does not resolve",
    });
    expect(classifyRefusal({ ok: false, code: "blocked", reason: "resolves to a loopback address" })).toEqual({
      kind: "blocked",
      error: "blocked: webhook_url resolves to a loopback address",
    });
  });
});

describe("what follows an attempt", () => {
  const exact = { ...DEFAULT_RETRY_POLICY, jitter: 0 };
  const failed: AttemptOutcome = { kind: "failed", error: "HTTP 503" };

  it("should be done once delivered, whatever the attempt", () => {
    expect(nextStep(1, { kind: "delivered" }, exact, Math.random)).toEqual({ kind: "done" });
    expect(nextStep(8, { kind: "delivered" }, exact, Math.random)).toEqual({ kind: "done" });
  });

  it("should give up at once on 410 Gone", () => {
    expect(nextStep(1, { kind: "gone", error: "gone" }, exact, Math.random)).toEqual({ kind: "give_up" });
  });

  it("should retry after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then give up after the 8th attempt", () => {
    const steps = Array.from({ length: 8 }, (_, i) => nextStep(i + 1, failed, exact, Math.random));
    expect(steps).toEqual([
      ...[5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000].map((delayMs) => ({ kind: "retry", delayMs })),
      { kind: "give_up" },
    ]);
  });

  it("should retry a URL the guard blocked like any failure", () => {
    expect(nextStep(2, { kind: "blocked", error: "blocked: …" }, exact, Math.random)).toEqual(nextStep(2, failed, exact, Math.random));
  });

  it("should jitter each delay within ±20 % by the caller's random", () => {
    expect(nextStep(1, failed, DEFAULT_RETRY_POLICY, () => 0)).toEqual({ kind: "retry", delayMs: 4_000 });
    expect(nextStep(1, failed, DEFAULT_RETRY_POLICY, () => 0.5)).toEqual({ kind: "retry", delayMs: 5_000 });
    expect(nextStep(1, failed, DEFAULT_RETRY_POLICY, () => 0.999_999)).toEqual({ kind: "retry", delayMs: 6_000 });
  });

  it("should bound a series by the schedule's sum at its largest jitter", () => {
    expect(retryWindowMs(DEFAULT_RETRY_POLICY)).toBe(Math.round(RETRY_SCHEDULE_MS.reduce((a, b) => a + b) * 1.2));
  });
});

describe("the receivers' circuit breaker", () => {
  const policy = { breaker: DEFAULT_BREAKER_POLICY, retry: DEFAULT_RETRY_POLICY };
  const response = (status: number): PostOutcome => ({ kind: "response", status });

  it.each<[string, PostOutcome, boolean]>([
    ["a network error", { kind: "error", error: "connection refused", aborted: false }, true],
    ["an aborted attempt (the worker stopping)", { kind: "error", error: "aborted", aborted: true }, false],
    ["a 5xx", response(502), true],
    ["408 Request Timeout", response(408), true],
    ["429 Too Many Requests", response(429), true],
    ["a 4xx from a healthy host", response(404), false],
    ["410 Gone", response(410), false],
    ["a redirect", response(302), false],
    ["a 2xx", response(200), false],
  ])("should count %s as unwell: %s", (_what, outcome, expected) => {
    expect(unhealthy(outcome)).toBe(expected);
  });

  it("should defer by about the reset timeout, jittered, within the series' window", () => {
    expect(circuitDeferral(1_000, 0, policy, () => 0)).toBe(61_000);
    expect(circuitDeferral(1_000, 0, policy, () => 0.5)).toBe(67_000);
  });

  it("should defer no further than the window's end, and give up once it has passed", () => {
    const end = retryWindowMs(DEFAULT_RETRY_POLICY);
    expect(circuitDeferral(end - 10, 0, policy, () => 0)).toBe(end);
    expect(circuitDeferral(end, 0, policy, () => 0)).toBeNull();
  });

  it("should open after enough unwell answers, then send nothing to that tenant's host, but still to another tenant's", async () => {
    const breakers = new ReceiverBreakers({ policy: { volumeThreshold: 2, resetTimeoutMs: 60_000 } });
    let posts = 0;
    const failing = (): Promise<PostOutcome> => {
      posts++;
      return Promise.resolve(response(503));
    };
    try {
      expect(await breakers.send("ten_a", "hooks.example:443", failing)).toEqual(response(503));
      expect(await breakers.send("ten_a", "hooks.example:443", failing)).toEqual(response(503));
      expect(await breakers.send("ten_a", "hooks.example:443", failing)).toBeNull();
      expect(posts).toBe(2);
      expect(await breakers.send("ten_b", "hooks.example:443", failing)).toEqual(response(503));
      expect(posts).toBe(3);
    } finally {
      breakers.shutdown();
    }
  });

  it("should stay closed on answers from a healthy host, however many", async () => {
    const breakers = new ReceiverBreakers({ policy: { volumeThreshold: 2 } });
    try {
      for (let i = 0; i < 6; i++)
        expect(await breakers.send("ten_a", "h:443", () => Promise.resolve(response(400)))).toEqual(response(400));
    } finally {
      breakers.shutdown();
    }
  });
});
