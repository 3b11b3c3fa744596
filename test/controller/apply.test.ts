/** controller/apply.ts with a recording KubeClient and an in-memory store. */
import { ApiException, type V1Job } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { applyActions, type KubeClient, type PhaseChange } from "../../controller/apply.ts";
import type { Action } from "../../controller/decide.ts";
import { SentAttempts } from "../../controller/sent-attempts.ts";
import type { WebhookOutcome } from "../../controller/ledger.ts";
import { PDFJOB_FINALIZER, type PdfJob, type PdfJobStatus } from "../../core/schemas/pdfjob.ts";
import type { ObjectStore } from "../../core/storage/store.ts";
import { FakeKube } from "./fake-kube.ts";
import { at, iso, pdfJob } from "./fixtures.ts";

const apiError = (code: number): ApiException<string> => new ApiException(code, "error", "body", {});

function fakes(fail: Partial<Record<keyof KubeClient, number>> = {}): {
  kube: KubeClient;
  store: ObjectStore;
  calls: string[];
  statuses: PdfJobStatus[];
} {
  const calls: string[] = [];
  const statuses: PdfJobStatus[] = [];
  let rv = 1;
  const maybeFail = (op: keyof KubeClient): void => {
    const code = fail[op];
    if (code !== undefined) throw apiError(code);
  };
  const kube: KubeClient = {
    createJob: (_ns, job: V1Job) => {
      calls.push(`createJob ${job.metadata?.name}`);
      maybeFail("createJob");
      return Promise.resolve();
    },
    deleteJobForeground: (_ns, name) => {
      calls.push(`deleteJob ${name}`);
      maybeFail("deleteJobForeground");
      return Promise.resolve();
    },
    replaceStatus: (pj, status: PdfJobStatus) => {
      calls.push(`replaceStatus rv=${pj.metadata.resourceVersion} ${status.phase}`);
      statuses.push(status);
      maybeFail("replaceStatus");
      return Promise.resolve({ ...pj, metadata: { ...pj.metadata, resourceVersion: String(++rv) }, status });
    },
    deleteSecret: (_ns, name) => {
      calls.push(`deleteSecret ${name}`);
      return Promise.resolve();
    },
    setFinalizers: (pj, finalizers) => {
      calls.push(`setFinalizers rv=${pj.metadata.resourceVersion} [${finalizers.join(",")}]`);
      maybeFail("setFinalizers");
      return Promise.resolve({ ...pj, metadata: { ...pj.metadata, resourceVersion: String(++rv), finalizers } });
    },
    deletePdfJob: (_ns, name) => {
      calls.push(`deletePdfJob ${name}`);
      maybeFail("deletePdfJob");
      return Promise.resolve();
    },
    createEvent: (_ns, e) => {
      calls.push(`event ${e.reason}`);
      maybeFail("createEvent");
      return Promise.resolve();
    },
  };
  const store = {
    delete: (key: string) => {
      calls.push(`delete ${key}`);
      return Promise.resolve();
    },
    deletePrefix: (prefix: string) => {
      calls.push(`deletePrefix ${prefix}`);
      return Promise.resolve();
    },
  } as unknown as ObjectStore;
  return { kube, store, calls, statuses };
}

const withRv = (pj: PdfJob): PdfJob => ({ ...pj, metadata: { ...pj.metadata, resourceVersion: "1" } });
const job = { metadata: { name: "j" } } as V1Job;

const delivery = {
  url: "https://h",
  tenant: "t",
  namespace: "folio",
  messageId: "msg_x",
  eventType: "job.succeeded" as const,
  attempt: 1,
  payload: {} as never,
};

describe("applyActions", () => {
  it("should perform the actions in order, later writes using the resourceVersion of earlier ones", async () => {
    const { kube, store, calls } = fakes();
    const actions: Action[] = [
      { action: "createJob", job },
      { action: "updateStatus", status: { phase: "Pending" } },
      { action: "recordEvent", type: "Normal", reason: "JobCreated", message: "m" },
      { action: "deleteStorage", keys: ["k1"], prefixes: ["t/j/"] },
      { action: "requeueAfter", ms: 500 },
    ];
    const r = await applyActions(withRv(pdfJob()), actions, { kube, store });
    expect(r).toEqual({ performed: 5, requeueAfterMs: 500 });
    expect(calls).toEqual(["createJob j", "replaceStatus rv=1 Pending", "event JobCreated", "delete k1", "deletePrefix t/j/"]);
  });

  it("should treat 409 on create and 404 on deletes as success, and a failed event as nothing", async () => {
    const { kube, store } = fakes({ createJob: 409, deleteJobForeground: 404, deletePdfJob: 404, createEvent: 500 });
    const actions: Action[] = [
      { action: "createJob", job },
      { action: "deleteJob", name: "j" },
      { action: "recordEvent", type: "Warning", reason: "X", message: "m" },
      { action: "deletePdfJob" },
    ];
    expect(await applyActions(withRv(pdfJob()), actions, { kube, store })).toEqual({ performed: 4 });
  });

  it("should stop at the first error (a 409 Conflict on the status included)", async () => {
    const { kube, store, calls } = fakes({ replaceStatus: 409 });
    const actions: Action[] = [
      { action: "createJob", job },
      { action: "updateStatus", status: { phase: "Pending" } },
      { action: "recordEvent", type: "Normal", reason: "JobCreated", message: "m" },
    ];
    const r = await applyActions(withRv(pdfJob()), actions, { kube, store });
    expect(r.performed).toBe(1);
    expect((r.error as ApiException<string>).code).toBe(409);
    expect(calls).toEqual(["createJob j", "replaceStatus rv=1 Pending"]);
  });

  it("should add and remove the finalizer with the object's resourceVersion", async () => {
    const { kube, store, calls } = fakes();
    await applyActions(withRv(pdfJob({ finalizers: [] })), [{ action: "addFinalizer" }], { kube, store });
    await applyActions(withRv(pdfJob({ finalizers: ["other", PDFJOB_FINALIZER] })), [{ action: "removeFinalizer" }], { kube, store });
    expect(calls).toEqual([`setFinalizers rv=1 [${PDFJOB_FINALIZER}]`, "setFinalizers rv=1 [other]"]);
  });

  it("should record a webhook attempt in the status and requeue for the next one", async () => {
    const { kube, store, calls, statuses } = fakes();
    const pj = withRv(
      pdfJob({
        status: { phase: "Succeeded", webhook: { messageId: "msg_x", eventType: "job.succeeded", status: "pending", attempts: 0 } },
      }),
    );
    const before = Date.now();
    const r = await applyActions(pj, [{ action: "deliverWebhook", delivery }], {
      kube,
      store,
      sendWebhook: () => Promise.resolve({ delivered: false, error: "HTTP 500" }),
    });
    expect(r.error).toBeUndefined();
    expect(r.requeueAfterMs).toBeGreaterThan(0);
    expect(calls).toEqual(["replaceStatus rv=1 Succeeded", "event WebhookFailed"]);
    // The record itself: one attempt more, its error, when it was made and when the next is due.
    const ledger = statuses[0]!.webhook!;
    expect(ledger).toMatchObject({ messageId: "msg_x", eventType: "job.succeeded", status: "failing", attempts: 1, lastError: "HTTP 500" });
    expect(Date.parse(ledger.lastAttemptTime!)).toBeGreaterThanOrEqual(before - 1000);
    // Both times are written in whole seconds (RFC 3339): their difference is the delay to within 1 s.
    expect(Math.abs(Date.parse(ledger.nextAttemptTime!) - Date.parse(ledger.lastAttemptTime!) - r.requeueAfterMs!)).toBeLessThan(1000);
  });

  it.each([
    ["delivered", { delivered: true as const }, 0, ["delivered"]],
    ["failed", { delivered: false as const, error: "HTTP 500" }, 0, ["failed"]],
    [
      "blocked",
      { delivered: false as const, error: "blocked: webhook_url must not point to a loopback address", blocked: true },
      0,
      ["blocked"],
    ],
    ["gone", { delivered: false as const, error: "HTTP 410 Gone", gone: true }, 0, ["failed", "gave_up"]],
    ["the last attempt failed", { delivered: false as const, error: "HTTP 500" }, 7, ["failed", "gave_up"]],
  ])("should report a webhook attempt to the metrics hook: %s", async (_what, outcome, attempts, expected) => {
    const { kube, store } = fakes();
    const pj = withRv(
      pdfJob({ status: { phase: "Succeeded", webhook: { messageId: "msg_x", eventType: "job.succeeded", status: "pending", attempts } } }),
    );
    const seen: string[] = [];
    await applyActions(pj, [{ action: "deliverWebhook", delivery }], {
      kube,
      store,
      sendWebhook: () => Promise.resolve(outcome),
      onWebhookAttempt: (r) => seen.push(r),
    });
    expect(seen).toEqual(expected);
  });

  it("should neither write nor count a delivery whose receiver's circuit is open, only requeue it; past its window, give it up", async () => {
    const open = () => Promise.resolve({ delivered: false as const, error: "circuit open: h:443 kept failing", circuitOpen: true });
    const webhook = { messageId: "msg_x", eventType: "job.succeeded" as const, status: "failing" as const, attempts: 3 };
    const seen: string[] = [];
    const onWebhookAttempt = (r: string): number => seen.push(r);
    const deferred = fakes();
    const justEnded = withRv(pdfJob({ status: { phase: "Succeeded", completionTime: new Date().toISOString(), webhook } }));
    const r = await applyActions(justEnded, [{ action: "deliverWebhook", delivery }], {
      kube: deferred.kube,
      store: deferred.store,
      sendWebhook: open,
      onWebhookAttempt,
    });
    expect(r.error).toBeUndefined();
    expect(r.requeueAfterMs).toBeGreaterThanOrEqual(60_000);
    expect(deferred.calls).toEqual([]);
    expect(seen).toEqual([]);
    const late = fakes();
    const longAgo = withRv(pdfJob({ status: { phase: "Succeeded", completionTime: "2020-01-01T00:00:00Z", webhook } }));
    await applyActions(longAgo, [{ action: "deliverWebhook", delivery }], {
      kube: late.kube,
      store: late.store,
      sendWebhook: open,
      onWebhookAttempt,
    });
    expect(late.calls).toEqual(["replaceStatus rv=1 Succeeded", "event WebhookGaveUp"]);
    expect(late.statuses[0]!.webhook).toMatchObject({ status: "gave_up", attempts: 3 });
    expect(seen).toEqual(["gave_up"]);
  });
});

describe("applyActions' memory of the webhook attempts made (controller/sent-attempts.ts)", () => {
  const pending = (attempts = 0): PdfJob =>
    withRv(
      pdfJob({ status: { phase: "Succeeded", webhook: { messageId: "msg_x", eventType: "job.succeeded", status: "pending", attempts } } }),
    );
  /** A sender that counts what it sent and answers `outcomes` in turn (the last one after). */
  const sender = (...outcomes: WebhookOutcome[]) => {
    const sent: number[] = [];
    const send = (): Promise<WebhookOutcome> => Promise.resolve(outcomes[Math.min(sent.push(1), outcomes.length) - 1]!);
    return { sent, send };
  };

  it("should record, not send again, an attempt it delivered when a reconcile reads the copy from before the record", async () => {
    const { kube, store, statuses } = fakes();
    const memory = new SentAttempts();
    const { sent, send } = sender({ delivered: true, statusCode: 204, latencyMs: 12 });
    const seen: string[] = [];
    const deps = { kube, store, sent: memory, sendWebhook: send, onWebhookAttempt: (r: string) => void seen.push(r) };
    await applyActions(pending(), [{ action: "deliverWebhook", delivery }], { ...deps, now: () => at(30) });
    // The informer's cache still holds the PdfJob as it was before the write: decide() asks again.
    const r = await applyActions(pending(), [{ action: "deliverWebhook", delivery }], { ...deps, now: () => at(31) });
    expect(r.error).toBeUndefined();
    expect(sent).toHaveLength(1);
    // The second write says what the first did (the stale copy's write is refused by the API server: 409).
    expect(statuses).toHaveLength(2);
    expect(statuses[1]).toEqual(statuses[0]);
    expect(statuses[1]!.webhook).toMatchObject({ status: "delivered", attempts: 1, deliveredTime: iso(30) });
    expect(seen).toEqual(["delivered", "delivered"]);
  });

  it("should record a delivered attempt whose write lost a race (409) on the next reconcile without sending it again, counting it once", async () => {
    const memory = new SentAttempts();
    const { sent, send } = sender({ delivered: true });
    const seen: string[] = [];
    const onWebhookAttempt = (r: string): number => seen.push(r);
    const lost = fakes({ replaceStatus: 409 });
    const first = await applyActions(pending(), [{ action: "deliverWebhook", delivery }], {
      kube: lost.kube,
      store: lost.store,
      sent: memory,
      sendWebhook: send,
      onWebhookAttempt,
      now: () => at(30),
    });
    expect((first.error as ApiException<string>).code).toBe(409);
    const retry = fakes();
    await applyActions(pending(), [{ action: "deliverWebhook", delivery }], {
      kube: retry.kube,
      store: retry.store,
      sent: memory,
      sendWebhook: send,
      onWebhookAttempt,
      now: () => at(40),
    });
    expect(sent).toHaveLength(1);
    expect(retry.statuses[0]!.webhook).toMatchObject({ status: "delivered", attempts: 1, deliveredTime: iso(30) });
    expect(seen).toEqual(["delivered"]);
  });

  it("should record, not send again, an attempt that failed; send the series' next attempt, a redelivery, and what an open circuit deferred", async () => {
    const { kube, store, statuses } = fakes();
    const memory = new SentAttempts();
    const open = { delivered: false as const, error: "circuit open: h:443 kept failing", circuitOpen: true };
    const { sent, send } = sender({ delivered: false, error: "HTTP 500", statusCode: 500 }, open, { delivered: true });
    const deps = { kube, store, sent: memory, sendWebhook: send };
    await applyActions(pending(), [{ action: "deliverWebhook", delivery }], { ...deps, now: () => at(30) });
    // A stale copy asks for the same attempt: its failure is recorded again, nothing is sent (it would reach the receiver early).
    await applyActions(pending(), [{ action: "deliverWebhook", delivery }], { ...deps, now: () => at(31) });
    expect(sent).toHaveLength(1);
    expect(statuses[1]).toEqual(statuses[0]);
    expect(statuses[1]!.webhook).toMatchObject({ status: "failing", attempts: 1, lastAttemptTime: iso(30) });
    // The series' next attempt is sent; an open circuit sent nothing, so the attempt is made when it closes.
    await applyActions(pending(1), [{ action: "deliverWebhook", delivery }], deps);
    await applyActions(pending(1), [{ action: "deliverWebhook", delivery }], deps);
    expect(sent).toHaveLength(3);
    // A redelivery: the same message, pending again, its attempts counting on from the recorded ones.
    await applyActions(pending(2), [{ action: "deliverWebhook", delivery }], deps);
    expect(sent).toHaveLength(4);
  });

  it("should remember a bounded number of attempts, the oldest forgotten first", () => {
    const memory = new SentAttempts(2);
    const attempt = { outcome: { delivered: true as const }, at: at(1) };
    for (const name of ["a", "b", "c"]) memory.remember(name, attempt);
    expect(memory.size).toBe(2);
    expect(memory.recall("a")).toBeUndefined();
    expect(memory.recall("c")).toEqual(attempt);
  });
});

describe("applyActions' phase changes (the job metrics' hook)", () => {
  const hook = () => {
    const seen: { from: string | undefined; to: string | undefined; completionTime: string | undefined }[] = [];
    const onPhaseChange = (c: PhaseChange): void =>
      void seen.push({ from: c.from, to: c.pdfJob.status?.phase, completionTime: c.pdfJob.status?.completionTime });
    return { seen, onPhaseChange };
  };

  it("should report each phase change it writes, and no status write that keeps the phase", async () => {
    const { kube, store } = fakes();
    const { seen, onPhaseChange } = hook();
    await applyActions(withRv(pdfJob()), [{ action: "updateStatus", status: { phase: "Pending" } }], { kube, store, onPhaseChange });
    await applyActions(
      withRv(pdfJob({ status: { phase: "Pending" } })),
      [{ action: "updateStatus", status: { phase: "Running", startTime: iso(2) } }],
      { kube, store, onPhaseChange },
    );
    await applyActions(
      withRv(pdfJob({ status: { phase: "Running" } })),
      [{ action: "updateStatus", status: { phase: "Running", jobName: "j" } }],
      { kube, store, onPhaseChange },
    );
    const ended: PdfJobStatus = { phase: "Failed", completionTime: iso(20), error: { code: "timeout", message: "m" } };
    await applyActions(withRv(pdfJob({ status: { phase: "Running" } })), [{ action: "updateStatus", status: ended }], {
      kube,
      store,
      onPhaseChange,
    });
    // A webhook attempt rewrites a terminal status, its phase unchanged.
    const withLedger = withRv(
      pdfJob({ status: { ...ended, webhook: { messageId: "msg_x", eventType: "job.failed", status: "pending", attempts: 0 } } }),
    );
    await applyActions(withLedger, [{ action: "deliverWebhook", delivery }], {
      kube,
      store,
      onPhaseChange,
      sendWebhook: () => Promise.resolve({ delivered: true }),
    });
    expect(seen).toEqual([
      { from: undefined, to: "Pending", completionTime: undefined },
      { from: "Pending", to: "Running", completionTime: undefined },
      { from: "Running", to: "Failed", completionTime: iso(20) },
    ]);
  });

  it("should report nothing for a status write that fails, 409 Conflict included", async () => {
    const { kube, store } = fakes({ replaceStatus: 409 });
    const { seen, onPhaseChange } = hook();
    const r = await applyActions(
      withRv(pdfJob({ status: { phase: "Running" } })),
      [{ action: "updateStatus", status: { phase: "Succeeded" } }],
      { kube, store, onPhaseChange },
    );
    expect((r.error as ApiException<string>).code).toBe(409);
    expect(seen).toEqual([]);
  });

  it("should report a PdfJob let go before it ended as Canceled then, and one that ended or is gone (404) not at all", async () => {
    const { seen, onPhaseChange } = hook();
    const letGo = (status: PdfJobStatus | undefined, fail: Partial<Record<keyof KubeClient, number>> = {}) => {
      const { kube, store } = fakes(fail);
      const pj = withRv(pdfJob({ deleting: true, ...(status ? { status } : {}) }));
      return applyActions(pj, [{ action: "removeFinalizer" }], { kube, store, onPhaseChange, now: () => at(50) });
    };
    await letGo({ phase: "Running", startTime: iso(2) });
    await letGo(undefined);
    await letGo({ phase: "Canceled", completionTime: iso(40) });
    await letGo({ phase: "Running" }, { setFinalizers: 404 });
    expect((await letGo({ phase: "Running" }, { setFinalizers: 409 })).error).toBeDefined();
    expect(seen).toEqual([
      { from: "Running", to: "Canceled", completionTime: iso(50) },
      { from: undefined, to: "Canceled", completionTime: iso(50) },
    ]);
  });

  it("should report a job's end once when the same end is applied twice: the second write is stale", async () => {
    const server = new FakeKube();
    const running = server.put(pdfJob({ status: { phase: "Running", startTime: iso(2) } }));
    const { seen, onPhaseChange } = hook();
    const actions: Action[] = [{ action: "updateStatus", status: { phase: "Succeeded", startTime: iso(2), completionTime: iso(20) } }];
    const store = fakes().store;
    expect(await applyActions(running, actions, { kube: server.client, store, onPhaseChange })).toEqual({ performed: 1 });
    // The same transition from the same (now stale) copy, as a second reconcile from a lagging cache does.
    const again = await applyActions(running, actions, { kube: server.client, store, onPhaseChange });
    expect((again.error as ApiException<string>).code).toBe(409);
    expect(server.calls).toEqual(["replaceStatus Succeeded", "409 replaceStatus"]);
    expect(seen).toEqual([{ from: "Running", to: "Succeeded", completionTime: iso(20) }]);
  });
});
