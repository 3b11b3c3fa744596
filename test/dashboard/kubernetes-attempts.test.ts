/**
 * The dashboard's webhook attempts in Kubernetes mode (api/store/kubernetes/webhook-attempts.ts),
 * as pure logic over a PdfJob: what the job page gets from the controller's ledger, when
 * "redeliver" annotates the PdfJob and with which time. The cluster path (informer cache,
 * annotation, the controller's new series, Chromium) is test/e2e/dashboard-kubernetes.e2e.ts.
 */
import { describe, expect, it } from "vitest";
import { KubernetesWebhookAttempts } from "../../api/store/kubernetes/webhook-attempts.ts";
import type { PdfJob, WebhookLedger } from "../../core/schemas/pdfjob.ts";
import { webhookMessageId } from "../../core/webhooks/events.ts";
import { iso, JOB_ID, pdfJob, TENANT } from "../controller/fixtures.ts";

const MSG = webhookMessageId(JOB_ID, "job.failed");
const ledger = (over: Partial<WebhookLedger> = {}): WebhookLedger => ({
  eventType: "job.failed",
  messageId: MSG,
  status: "delivered",
  attempts: 2,
  lastAttemptTime: iso(26),
  deliveredTime: iso(26),
  recentAttempts: [
    { time: iso(20), statusCode: 500, latencyMs: 65, error: "HTTP 500", nextAttemptTime: iso(25) },
    { time: iso(26), statusCode: 204, latencyMs: 6 },
  ],
  ...over,
});
const hooked = (w: WebhookLedger, annotations: Record<string, string> = {}): PdfJob => {
  const pj = pdfJob({ spec: { webhook: { url: "https://hooks.example.com/x" } }, status: { phase: "Failed", webhook: w } });
  return { ...pj, metadata: { ...pj.metadata, resourceVersion: "7", annotations } };
};

/** A cache holding `cached`, an apiserver holding `current`, annotate answering from `answers` (false = 409). */
function store(cached: PdfJob | undefined, current: PdfJob | undefined = cached, answers: boolean[] = [true]) {
  const annotated: { rv: string | undefined; annotations: Record<string, string> }[] = [];
  const attempts = new KubernetesWebhookAttempts(
    { byJobId: (id) => (id === JOB_ID ? cached : undefined), all: () => (cached ? [cached] : []) },
    {
      listByLabel: (selector) => Promise.resolve(current && selector.includes(JOB_ID) ? [current] : []),
      annotate: (pj, annotations) => {
        annotated.push({ rv: pj.metadata.resourceVersion, annotations });
        return Promise.resolve(answers.shift() ?? true);
      },
    },
  );
  return { attempts, annotated };
}

describe("webhook attempts in Kubernetes mode", () => {
  it("gives the job page the delivery and each attempt the ledger kept", async () => {
    const { attempts } = store(hooked(ledger({ status: "failing", nextAttemptTime: iso(90) })));
    const got = await attempts.forJob(TENANT, JOB_ID);
    expect(got.deliveries).toEqual([
      {
        id: MSG,
        event_type: "job.failed",
        url: "https://hooks.example.com/x",
        status: "failing",
        attempts: 2,
        next_attempt_at: Date.parse(iso(90)),
      },
    ]);
    expect(got.attempts).toEqual([
      {
        delivery_id: MSG,
        job_id: JOB_ID,
        tenant_id: TENANT,
        at: Date.parse(iso(20)),
        status_code: 500,
        latency_ms: 65,
        error: "HTTP 500",
        next_attempt_at: Date.parse(iso(25)),
      },
      {
        delivery_id: MSG,
        job_id: JOB_ID,
        tenant_id: TENANT,
        at: Date.parse(iso(26)),
        status_code: 204,
        latency_ms: 6,
        error: null,
        next_attempt_at: null,
      },
    ]);
    expect(await attempts.backlog()).toBe(1);
  });

  it("shows nothing of another tenant's job, or of a job without a ledger", async () => {
    expect(await store(hooked(ledger())).attempts.forJob("ten_other0000000000000000000", JOB_ID)).toEqual({ deliveries: [], attempts: [] });
    expect(await store(pdfJob()).attempts.forJob(TENANT, JOB_ID)).toEqual({ deliveries: [], attempts: [] });
    expect(await store(hooked(ledger())).attempts.backlog()).toBe(0);
  });

  it("asks for a redelivery with the annotation, guarded by the resourceVersion", async () => {
    const { attempts, annotated } = store(hooked(ledger()));
    const now = Date.parse("2026-03-01T13:00:00.250Z");
    expect(await attempts.redeliver(TENANT, JOB_ID, MSG, now)).toBe(true);
    expect(annotated).toEqual([{ rv: "7", annotations: { "folio.dev/redeliver-requested": "2026-03-01T13:00:00.250Z" } }]);
  });

  it("asks later than the last request even when this replica's clock is behind", async () => {
    const { attempts, annotated } = store(hooked(ledger(), { "folio.dev/redeliver-requested": "2026-03-01T13:00:05.000Z" }));
    expect(await attempts.redeliver(TENANT, JOB_ID, MSG, Date.parse("2026-03-01T13:00:00Z"))).toBe(true);
    expect(annotated[0]!.annotations["folio.dev/redeliver-requested"]).toBe("2026-03-01T13:00:05.001Z");
  });

  it("reads the PdfJob again once when the cached copy is stale (409)", async () => {
    const current = { ...hooked(ledger()), metadata: { ...hooked(ledger()).metadata, resourceVersion: "9" } };
    const { attempts, annotated } = store(hooked(ledger()), current, [false, true]);
    expect(await attempts.redeliver(TENANT, JOB_ID, MSG)).toBe(true);
    expect(annotated.map((a) => a.rv)).toEqual(["7", "9"]);
  });

  it.each([
    ["a webhook still being retried", hooked(ledger({ status: "failing" })), MSG, TENANT],
    ["another message id", hooked(ledger()), webhookMessageId(JOB_ID, "job.succeeded"), TENANT],
    ["another tenant", hooked(ledger()), MSG, "ten_other0000000000000000000"],
    ["a job without a ledger", pdfJob(), MSG, TENANT],
  ])("refuses to redeliver %s, annotating nothing", async (_what, pj, id, tenant) => {
    const { attempts, annotated } = store(pj);
    expect(await attempts.redeliver(tenant, JOB_ID, id)).toBe(false);
    expect(annotated).toEqual([]);
  });
});
