/** controller/apply.ts with a recording KubeClient and an in-memory store. */
import { ApiException, type V1Job } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { applyActions, type KubeClient } from "../../controller/apply.ts";
import type { Action } from "../../controller/decide.ts";
import { PDFJOB_FINALIZER, type PdfJob, type PdfJobStatus } from "../../core/schemas/pdfjob.ts";
import type { ObjectStore } from "../../core/storage/store.ts";
import { pdfJob } from "./fixtures.ts";

const apiError = (code: number): ApiException<string> => new ApiException(code, "error", "body", {});

function fakes(fail: Partial<Record<keyof KubeClient, number>> = {}): { kube: KubeClient; store: ObjectStore; calls: string[] } {
  const calls: string[] = [];
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
      maybeFail("replaceStatus");
      return Promise.resolve({ ...pj, metadata: { ...pj.metadata, resourceVersion: String(++rv) }, status });
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
  return { kube, store, calls };
}

const withRv = (pj: PdfJob): PdfJob => ({ ...pj, metadata: { ...pj.metadata, resourceVersion: "1" } });
const job = { metadata: { name: "j" } } as V1Job;

const delivery = { url: "https://h", tenant: "t", namespace: "folio", messageId: "msg_x", eventType: "job.succeeded" as const, attempt: 1, payload: {} as never };

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
    const { kube, store, calls } = fakes();
    const pj = withRv(pdfJob({ status: { phase: "Succeeded", webhook: { messageId: "msg_x", eventType: "job.succeeded", status: "pending", attempts: 0 } } }));
    const r = await applyActions(pj, [{ action: "deliverWebhook", delivery }], { kube, store, sendWebhook: () => Promise.resolve({ delivered: false, error: "HTTP 500" }) });
    expect(r.error).toBeUndefined();
    expect(r.requeueAfterMs).toBeGreaterThan(0);
    expect(calls).toEqual(["replaceStatus rv=1 Succeeded", "event WebhookFailed"]);
  });

  it.each([
    ["delivered", { delivered: true as const }, 0, ["delivered"]],
    ["failed", { delivered: false as const, error: "HTTP 500" }, 0, ["failed"]],
    ["blocked", { delivered: false as const, error: "blocked: webhook_url must not point to a loopback address", blocked: true }, 0, ["blocked"]],
    ["gone", { delivered: false as const, error: "HTTP 410 Gone", gone: true }, 0, ["failed", "gave_up"]],
    ["the last attempt failed", { delivered: false as const, error: "HTTP 500" }, 7, ["failed", "gave_up"]],
  ])("should report a webhook attempt to the metrics hook: %s", async (_what, outcome, attempts, expected) => {
    const { kube, store } = fakes();
    const pj = withRv(pdfJob({ status: { phase: "Succeeded", webhook: { messageId: "msg_x", eventType: "job.succeeded", status: "pending", attempts } } }));
    const seen: string[] = [];
    await applyActions(pj, [{ action: "deliverWebhook", delivery }], { kube, store, sendWebhook: () => Promise.resolve(outcome), onWebhookAttempt: (r) => seen.push(r) });
    expect(seen).toEqual(expected);
  });
});
