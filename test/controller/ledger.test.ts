/** The webhook ledger and conditions: the shared retry schedule, seeded jitter, 410 Gone, giving up. */
import { describe, expect, it } from "vitest";
import {
  camelReason,
  deferWebhook,
  newLedger,
  recordWebhookAttempt,
  redeliveredLedger,
  redeliveryRequestMs,
  withCondition,
} from "../../controller/ledger.ts";
import { RETRY_SCHEDULE_MS } from "../../core/webhooks/schedule.ts";
import { PdfJobStatus } from "../../core/schemas/pdfjob.ts";
import { at, iso, JOB_ID } from "./fixtures.ts";

const base = (): PdfJobStatus => ({
  phase: "Succeeded",
  observedGeneration: 1,
  webhook: newLedger(JOB_ID, "job.succeeded", at(20).getTime()),
});

/** Fails `n` attempts in a row, starting at t = 20 s, each when it is due. */
function failTimes(n: number): { status: PdfJobStatus; delays: (number | null)[] } {
  let status = base();
  let t = at(20);
  const delays: (number | null)[] = [];
  for (let i = 0; i < n; i++) {
    const r = recordWebhookAttempt(status, { delivered: false, error: "HTTP 503" }, t);
    delays.push(r.requeueAfterMs);
    status = r.status;
    if (r.requeueAfterMs !== null) t = new Date(t.getTime() + r.requeueAfterMs);
  }
  return { status, delays };
}

describe("the webhook ledger", () => {
  it("should record a delivery: delivered, its time, the condition True", () => {
    const r = recordWebhookAttempt(base(), { delivered: true }, at(21));
    expect(r.status.webhook).toMatchObject({ status: "delivered", attempts: 1, lastAttemptTime: iso(21), deliveredTime: iso(21) });
    expect(r.status.webhook!.nextAttemptTime).toBeUndefined();
    expect(r.status.conditions).toEqual([
      expect.objectContaining({ type: "WebhookDelivered", status: "True", reason: "Delivered", observedGeneration: 1 }),
    ]);
    expect(r.requeueAfterMs).toBeNull();
    expect(r.event).toMatchObject({ type: "Normal", reason: "WebhookDelivered" });
  });

  it("should retry after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (±20 %), then give up after the 8th attempt", () => {
    const { status, delays } = failTimes(8);
    expect(delays.at(-1)).toBeNull();
    for (const [i, d] of delays.slice(0, 7).entries()) {
      expect(d!).toBeGreaterThanOrEqual(RETRY_SCHEDULE_MS[i]! * 0.8);
      expect(d!).toBeLessThanOrEqual(RETRY_SCHEDULE_MS[i]! * 1.2);
    }
    expect(status.webhook).toMatchObject({ status: "gave_up", attempts: 8, lastError: "HTTP 503" });
    expect(status.conditions![0]).toMatchObject({ type: "WebhookDelivered", status: "False", reason: "GaveUp" });
  });

  it("should compute the same retry time on every replica (seeded jitter) yet spread different messages", () => {
    expect(failTimes(3).delays).toEqual(failTimes(3).delays);
    const other = { ...base(), webhook: newLedger("job_0000000000000000000000zz", "job.succeeded", 0) };
    const a = recordWebhookAttempt(base(), { delivered: false, error: "x" }, at(20)).requeueAfterMs;
    const b = recordWebhookAttempt(other, { delivered: false, error: "x" }, at(20)).requeueAfterMs;
    expect(a).not.toBe(b);
  });

  it("should mark a failed attempt failing with the next attempt's time and the condition Unknown", () => {
    const r = recordWebhookAttempt(base(), { delivered: false, error: "connect ECONNREFUSED" }, at(20));
    expect(r.status.webhook).toMatchObject({ status: "failing", attempts: 1, lastError: "connect ECONNREFUSED", lastAttemptTime: iso(20) });
    expect(Date.parse(r.status.webhook!.nextAttemptTime!)).toBe(Math.floor((at(20).getTime() + r.requeueAfterMs!) / 1000) * 1000);
    expect(r.status.conditions![0]).toMatchObject({ status: "Unknown", reason: "Failing" });
    expect(r.event).toMatchObject({ type: "Warning", reason: "WebhookFailed" });
  });

  it("should stop at once when the receiver answers 410 Gone", () => {
    const r = recordWebhookAttempt(base(), { delivered: false, error: "HTTP 410 Gone", gone: true }, at(20));
    expect(r.status.webhook).toMatchObject({ status: "gave_up", attempts: 1 });
    expect(r.requeueAfterMs).toBeNull();
  });

  it("should keep the last 10 attempts with their time, HTTP status, latency, error and next retry", () => {
    const first = recordWebhookAttempt(base(), { delivered: false, error: "HTTP 503", statusCode: 503, latencyMs: 41.6 }, at(20));
    expect(first.status.webhook!.recentAttempts).toEqual([
      { time: iso(20), statusCode: 503, latencyMs: 42, error: "HTTP 503", nextAttemptTime: first.status.webhook!.nextAttemptTime },
    ]);
    const refused = recordWebhookAttempt(first.status, { delivered: false, error: "connection refused", latencyMs: 3 }, at(26));
    const ok = recordWebhookAttempt(refused.status, { delivered: true, statusCode: 204, latencyMs: 7 }, at(400));
    expect(ok.status.webhook!.recentAttempts!.slice(1)).toEqual([
      { time: iso(26), latencyMs: 3, error: "connection refused", nextAttemptTime: refused.status.webhook!.nextAttemptTime },
      { time: iso(400), statusCode: 204, latencyMs: 7 },
    ]);
    const { status } = failTimes(8);
    expect(status.webhook!.attempts).toBe(8);
    expect(status.webhook!.recentAttempts).toHaveLength(8);
    let many = status;
    for (let i = 0; i < 5; i++) many = recordWebhookAttempt(many, { delivered: false, error: `HTTP 50${i}` }, at(99_000 + i)).status;
    expect(many.webhook!.recentAttempts).toHaveLength(10);
    expect(many.webhook!.recentAttempts!.at(-1)).toMatchObject({ time: iso(99_004), error: "HTTP 504" });
    expect(PdfJobStatus.parse(many)).toEqual(many);
  });

  it("should start a redelivery of a settled ledger once per request: same message, due now, a new series of retries", () => {
    const { status: gaveUp } = failTimes(8);
    const w = gaveUp.webhook!;
    const asked = Date.parse("2026-03-02T00:00:00.250Z");
    const again = redeliveredLedger(w, asked, asked + 1000)!;
    expect(again).toMatchObject({
      messageId: w.messageId,
      status: "pending",
      attempts: 8,
      nextAttemptTime: new Date(asked + 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
      redelivery: { requestedTime: "2026-03-02T00:00:00.250Z", attemptsBefore: 8 },
    });
    expect(again.lastError).toBeUndefined();
    // The series follows the schedule from its start: a failure is retried after ~5 s, not given up.
    const failed = recordWebhookAttempt({ ...gaveUp, webhook: again }, { delivered: false, error: "HTTP 500" }, new Date(asked + 1000));
    expect(failed.status.webhook).toMatchObject({ status: "failing", attempts: 9 });
    expect(failed.requeueAfterMs).toBeGreaterThanOrEqual(RETRY_SCHEDULE_MS[0]! * 0.8);
    expect(failed.requeueAfterMs).toBeLessThanOrEqual(RETRY_SCHEDULE_MS[0]! * 1.2);
    // Not while it runs, not twice for one request, not for an older one; a newer one starts another.
    expect(redeliveredLedger(again, asked + 5000, asked + 6000)).toBeNull();
    const delivered = recordWebhookAttempt({ ...gaveUp, webhook: again }, { delivered: true }, new Date(asked + 2000)).status.webhook!;
    expect(redeliveredLedger(delivered, asked, asked + 9000)).toBeNull();
    expect(redeliveredLedger(delivered, asked - 1, asked + 9000)).toBeNull();
    expect(redeliveredLedger(delivered, asked + 1, asked + 9000)?.redelivery).toEqual({
      requestedTime: "2026-03-02T00:00:00.251Z",
      attemptsBefore: 9,
    });
  });

  it.each([
    ["2026-03-02T00:00:00Z", Date.parse("2026-03-02T00:00:00Z")],
    ["2026-03-02T00:00:00.250Z", Date.parse("2026-03-02T00:00:00.250Z")],
    ["yesterday", null],
    ["1700000000000", null],
    ["", null],
    [undefined, null],
  ])("should read the redeliver-requested annotation %j as %j", (value, ms) => {
    expect(redeliveryRequestMs(value)).toBe(ms);
  });

  it("should defer a delivery that met an open circuit by about the breaker's reset, recording nothing", () => {
    const { status: failing } = failTimes(2);
    const error = "circuit open: hooks.example:443 kept failing";
    const r = deferWebhook({ ...failing, completionTime: iso(20) }, error, at(30));
    expect(Object.keys(r)).toEqual(["deferMs"]);
    // Back when the breaker lets a probe through: a minute, up to +20 %.
    const { deferMs } = r as { deferMs: number };
    expect(deferMs).toBeGreaterThanOrEqual(60_000);
    expect(deferMs).toBeLessThanOrEqual(72_000);
    // The same answer for the same input, on any replica.
    expect(deferWebhook({ ...failing, completionTime: iso(20) }, error, at(30))).toEqual(r);
    // Not an attempt: the attempt recorder refuses it rather than count it.
    expect(() => recordWebhookAttempt(failing, { delivered: false, error, circuitOpen: true }, at(30))).toThrow(/circuit open/);
  });

  it("should defer no further than the end of the series' retry window, counted from a redelivery's request", () => {
    const windowS = (RETRY_SCHEDULE_MS.reduce((a, b) => a + b) * 1.2) / 1000;
    const { status: failing } = failTimes(2);
    expect(deferWebhook({ ...failing, completionTime: iso(20) }, "circuit open", at(20 + windowS - 10))).toEqual({ deferMs: 10_000 });
    const { status: gaveUp } = failTimes(8);
    const again = redeliveredLedger(gaveUp.webhook!, at(200_000).getTime(), at(200_000).getTime())!;
    const r = deferWebhook({ ...gaveUp, completionTime: iso(20), webhook: again }, "circuit open", at(200_030));
    expect((r as { deferMs: number }).deferMs).toBeGreaterThanOrEqual(60_000);
  });

  it("should give up, attempts unchanged, a delivery still facing an open circuit when its retry window is over", () => {
    const { status: failing } = failTimes(3);
    const error = "circuit open: hooks.example:443 kept failing";
    const windowEnd = 20 + (RETRY_SCHEDULE_MS.reduce((a, b) => a + b) * 1.2) / 1000;
    const r = deferWebhook({ ...failing, completionTime: iso(20) }, error, at(windowEnd));
    if ("deferMs" in r) throw new Error("deferred past the window");
    expect(r.status.webhook).toMatchObject({ status: "gave_up", attempts: 3, lastError: error });
    expect(r.status.webhook!.nextAttemptTime).toBeUndefined();
    expect(r.status.webhook!.recentAttempts).toEqual(failing.webhook!.recentAttempts);
    expect(r.status.conditions![0]).toMatchObject({ status: "False", reason: "GaveUp" });
    expect(r.event).toMatchObject({ type: "Warning", reason: "WebhookGaveUp" });
    expect(r.requeueAfterMs).toBeNull();
  });

  it("should refuse a status without a ledger", () => {
    expect(() => recordWebhookAttempt({}, { delivered: true }, at(0))).toThrow(/no webhook ledger/);
  });
});

describe("conditions", () => {
  it("should keep lastTransitionTime while the status stays, and move it when the status changes", () => {
    const c1 = withCondition(undefined, { type: "Succeeded", status: "Unknown", reason: "Pending", message: "" }, at(1).getTime(), 1);
    const c2 = withCondition(c1, { type: "Succeeded", status: "Unknown", reason: "Running", message: "" }, at(5).getTime(), 1);
    const c3 = withCondition(c2, { type: "Succeeded", status: "True", reason: "Succeeded", message: "" }, at(9).getTime(), 1);
    expect(c2[0]).toMatchObject({ reason: "Running", lastTransitionTime: iso(1) });
    expect(c3[0]).toMatchObject({ status: "True", lastTransitionTime: iso(9) });
    expect(c3).toHaveLength(1);
  });

  it.each([
    ["invalid_pdf", "InvalidPdf"],
    ["internal_error", "InternalError"],
    ["timeout", "Timeout"],
  ])("should write the job error %s as the reason %s", (code, reason) => {
    expect(camelReason(code)).toBe(reason);
  });
});
