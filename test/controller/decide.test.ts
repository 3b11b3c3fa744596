/**
 * decide(): what the reconciler does for each state of the world, one sentence per row, and the
 * level-triggered guarantees: the same inputs give the same actions, and once the status the
 * actions write is applied, reconciling again changes nothing.
 */
import type { V1Job } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { decide, SECRET_WAIT_MS, type Action, type ObservedPod } from "../../controller/decide.ts";
import { JobObject } from "../../core/schemas/api.ts";
import { pdfJobName, PdfJobStatus, type PdfJob } from "../../core/schemas/pdfjob.ts";
import { webhookMessageId } from "../../core/webhooks/events.ts";
import {
  active,
  applied,
  at,
  complete,
  failed,
  INPUT_KEY,
  iso,
  job,
  JOB_ID,
  kinds,
  pdfJob,
  PREFIX,
  resultMessage,
  statusOf,
  TEMPLATE,
} from "./fixtures.ts";

interface Row {
  name: string;
  pj: PdfJob;
  job: V1Job | null;
  now: number;
  pod?: ObservedPod;
  inUse?: string[];
  expect: string[];
  check?: (actions: Action[]) => void;
}

const run = (r: Pick<Row, "pj" | "job" | "now" | "pod" | "inUse">): Action[] => {
  const actions = decide(r.pj, r.job, at(r.now), {
    template: TEMPLATE,
    ...(r.pod ? { observedPod: r.pod } : {}),
    ...(r.inUse ? { inputKeysInUse: new Set(r.inUse) } : {}),
  });
  expectApplyContract(actions);
  return actions;
};

const pending = pdfJob();
const pendingStatus = statusOf(run({ pj: pending, job: null, now: 1 }));
const submitted = pdfJob({ status: pendingStatus });
const running = pdfJob({ status: statusOf(run({ pj: submitted, job: job(submitted, active()), now: 3 })) });
const end = (j: V1Job["status"], pod?: ObservedPod, over: Parameters<typeof pdfJob>[0] = {}): PdfJobStatus =>
  statusOf(run({ pj: pdfJob({ ...over, status: running.status! }), job: job(running, j), now: 21, ...(pod ? { pod } : {}) }));
const succeeded = end(complete(), { terminationMessage: resultMessage(), exitCode: 0 });
const failure = (status: PdfJobStatus) => status.error;

const rows: Row[] = [
  {
    name: "a PdfJob without the finalizer gets it first, and nothing else yet",
    pj: pdfJob({ finalizers: [] }),
    job: null,
    now: 1,
    expect: ["addFinalizer"],
  },
  {
    name: "a new PdfJob gets its Job, status Pending naming the Job, and a JobCreated event",
    pj: pending,
    job: null,
    now: 1,
    expect: ["createJob", "updateStatus", "recordEvent"],
    check: (a) => {
      const s = statusOf(a);
      expect(s).toMatchObject({ phase: "Pending", observedGeneration: 1, jobName: s.jobName });
      expect(s.conditions).toEqual([
        {
          type: "Succeeded",
          status: "Unknown",
          reason: "Pending",
          observedGeneration: 1,
          lastTransitionTime: iso(1),
          message: expect.any(String),
        },
      ]);
      expect(a[0]).toMatchObject({ action: "createJob", job: { metadata: { name: s.jobName } } });
    },
  },
  {
    name: "a Job missing from the cache right after its creation is created again (409 counts as success), without another event",
    pj: submitted,
    job: null,
    now: 2,
    expect: ["createJob"],
  },
  {
    name: "a Job whose pod is not created yet leaves the PdfJob Pending: nothing to do",
    pj: submitted,
    job: job(submitted, {}),
    now: 2,
    expect: [],
  },
  {
    name: "an active Job makes the PdfJob Running with the Job's startTime, and says so in an event",
    pj: submitted,
    job: job(submitted, active(2)),
    now: 3,
    expect: ["updateStatus", "recordEvent"],
    check: (a) => {
      expect(statusOf(a)).toMatchObject({ phase: "Running", startTime: iso(2) });
      expect(statusOf(a).conditions![0]).toMatchObject({ status: "Unknown", reason: "Running", lastTransitionTime: iso(1) });
      expect(a[1]).toMatchObject({ type: "Normal", reason: "Started" });
    },
  },
  {
    name: "a Running PdfJob whose Job is still active is the steady state: nothing to do",
    pj: running,
    job: job(running, active(2)),
    now: 100,
    expect: [],
  },
  {
    name: "a Job retrying after a failed pod keeps the PdfJob Running",
    pj: running,
    job: job(running, { failed: 1, active: 0, startTime: at(2) }),
    now: 30,
    expect: [],
  },
  {
    name: "a Running PdfJob whose Job disappeared runs it again and warns",
    pj: running,
    job: null,
    now: 40,
    expect: ["createJob", "recordEvent"],
    check: (a) => expect(a[1]).toMatchObject({ type: "Warning", reason: "JobRecreated" }),
  },
  {
    name: "a Complete Job with the runner's result succeeds with its outputs and figures, deletes the inputs, and expires after the retention",
    pj: running,
    job: job(running, complete(20)),
    now: 21,
    pod: { terminationMessage: resultMessage(2), exitCode: 0 },
    expect: ["deleteStorage", "updateStatus", "recordEvent"],
    check: (a) => {
      expect(a[0]).toEqual({ action: "deleteStorage", keys: [INPUT_KEY], prefixes: [] });
      const s = statusOf(a);
      expect(s).toMatchObject({
        phase: "Succeeded",
        startTime: iso(2),
        completionTime: iso(20),
        expireTime: iso(20 + 3600),
        inputsDeletedTime: iso(21),
      });
      expect(s.outputs).toHaveLength(2);
      expect(s.outputs![0]).toMatchObject({ contentType: "application/pdf", size: 600, pages: 3 });
      expect(s.outputs!.every((o) => o.key.startsWith(PREFIX))).toBe(true);
      expect(s.figures).toEqual({ original_size: 1000, size: 600, ratio: 0.6, compressed: true });
      expect(s.error).toBeUndefined();
      expect(s.conditions![0]).toMatchObject({ type: "Succeeded", status: "True", reason: "Succeeded", lastTransitionTime: iso(21) });
      expect(a[2]).toMatchObject({ type: "Normal", reason: "Succeeded" });
    },
  },
  {
    name: "a Complete Job whose pod left no termination message fails with internal_error",
    pj: running,
    job: job(running, complete()),
    now: 21,
    expect: ["deleteStorage", "updateStatus", "recordEvent"],
    check: (a) => expect(failure(statusOf(a))).toMatchObject({ code: "internal_error" }),
  },
  {
    name: "a Complete Job whose result points to storage that the apply layer did not fetch fails with internal_error",
    pj: running,
    job: job(running, complete()),
    now: 21,
    pod: { terminationMessage: JSON.stringify({ result_key: `${PREFIX}result.json` }) },
    expect: ["deleteStorage", "updateStatus", "recordEvent"],
    check: (a) => expect(a[2]).toMatchObject({ type: "Warning", reason: "InternalError", message: expect.stringContaining("not fetched") }),
  },
  {
    name: "a result naming an output outside the job's prefix is refused: its keys would be deleted later",
    pj: running,
    job: job(running, complete()),
    now: 21,
    pod: { terminationMessage: resultMessage().replace(PREFIX, "ten_other/") },
    expect: ["deleteStorage", "updateStatus", "recordEvent"],
    check: (a) => expect(failure(statusOf(a))).toMatchObject({ code: "internal_error" }),
  },
  {
    name: "a Job failed by podFailurePolicy after the runner reported invalid_pdf fails with invalid_pdf",
    pj: running,
    job: job(running, failed("PodFailurePolicy")),
    now: 21,
    pod: {
      terminationMessage: JSON.stringify({ error: { code: "invalid_pdf", message: 'Input "report.pdf" is not a PDF.' } }),
      exitCode: 3,
    },
    expect: ["deleteStorage", "updateStatus", "recordEvent"],
    check: (a) => {
      const s = statusOf(a);
      expect(s).toMatchObject({
        phase: "Failed",
        error: { code: "invalid_pdf", message: 'Input "report.pdf" is not a PDF.' },
        completionTime: iso(20),
      });
      expect(s.conditions![0]).toMatchObject({ status: "False", reason: "InvalidPdf" });
      expect(a[2]).toMatchObject({ type: "Warning", reason: "InvalidPdf" });
    },
  },
  {
    name: "a Job failed by podFailurePolicy with exit code 3 but no report fails with internal_error, the exit code in the event",
    pj: running,
    job: job(running, failed("PodFailurePolicy")),
    now: 21,
    pod: { exitCode: 3 },
    expect: ["deleteStorage", "updateStatus", "recordEvent"],
    check: (a) => {
      expect(failure(statusOf(a))).toEqual({ code: "internal_error", message: "The job failed because of an internal error." });
      expect(a[2]).toMatchObject({ message: expect.stringContaining("exit code 3") });
    },
  },
  {
    name: "a Job past its activeDeadlineSeconds fails with timeout, whatever the killed runner left",
    pj: running,
    job: job(running, failed("DeadlineExceeded")),
    now: 21,
    pod: { terminationMessage: "Killed\n", exitCode: 137 },
    expect: ["deleteStorage", "updateStatus", "recordEvent"],
    check: (a) => expect(failure(statusOf(a))).toEqual({ code: "timeout", message: "The job ran out of time (its deadline is 300 s)." }),
  },
  {
    name: "a Job out of retries after two crashes (log lines as the message) fails with internal_error",
    pj: running,
    job: job(running, failed("BackoffLimitExceeded")),
    now: 21,
    pod: { terminationMessage: "Error: segfault in engine\n    at …", exitCode: 1 },
    expect: ["deleteStorage", "updateStatus", "recordEvent"],
    check: (a) => expect(failure(statusOf(a))).toMatchObject({ code: "internal_error" }),
  },
  {
    name: "a Job out of retries whose runner was OOMKilled (its memory limit) fails with limit_exceeded, not internal_error",
    pj: running,
    job: job(running, failed("BackoffLimitExceeded")),
    now: 21,
    pod: { terminationMessage: "Converting…\n", exitCode: 137, reason: "OOMKilled" },
    expect: ["deleteStorage", "updateStatus", "recordEvent"],
    check: (a) =>
      expect(failure(statusOf(a))).toEqual({ code: "limit_exceeded", message: "The document needs more memory than the runner may use." }),
  },
  {
    name: "a Job out of retries whose runner reported an error keeps that error",
    pj: running,
    job: job(running, failed("BackoffLimitExceeded")),
    now: 21,
    pod: {
      terminationMessage: JSON.stringify({ error: { code: "conversion_failed", message: "The document could not be converted." } }),
      exitCode: 1,
    },
    expect: ["deleteStorage", "updateStatus", "recordEvent"],
    check: (a) => expect(failure(statusOf(a))).toMatchObject({ code: "conversion_failed" }),
  },
  {
    name: "FailureTarget alone is not the end: the pod may still be terminating",
    pj: running,
    job: job(running, { active: 1, startTime: at(2), conditions: [{ type: "FailureTarget", status: "True", reason: "DeadlineExceeded" }] }),
    now: 21,
    expect: [],
  },
  {
    name: "an input another unfinished job still uses is not deleted",
    pj: running,
    job: job(running, complete()),
    now: 21,
    pod: { terminationMessage: resultMessage() },
    inUse: [INPUT_KEY],
    expect: ["updateStatus", "recordEvent"],
  },
  {
    name: "a spec with a password in its options fails with validation_failed and never gets a Job",
    pj: pdfJob({ spec: { operation: "protect", options: { user_password: "secret", encryption: "aes-256" }, secretRef: { name: "s" } } }),
    job: null,
    now: 1,
    expect: ["deleteStorage", "updateStatus", "recordEvent"],
    check: (a) => {
      expect(statusOf(a)).toMatchObject({ phase: "Failed", error: { code: "validation_failed" } });
      expect(JSON.stringify(a)).not.toContain('secret"');
    },
  },
  {
    name: "protect without its Secret fails with validation_failed",
    pj: pdfJob({ spec: { operation: "protect", options: { encryption: "aes-256" } } }),
    job: null,
    now: 1,
    expect: ["deleteStorage", "updateStatus", "recordEvent"],
    check: (a) => expect(failure(statusOf(a))).toMatchObject({ code: "validation_failed", message: expect.stringContaining("secretRef") }),
  },
  {
    name: "a Job of the same name that another owner controls is never adopted",
    pj: submitted,
    job: {
      ...job(submitted, active()),
      metadata: {
        name: "x",
        ownerReferences: [{ apiVersion: "v1", kind: "PdfJob", name: submitted.metadata.name, uid: "someone-else", controller: true }],
      },
    },
    now: 3,
    expect: ["deleteStorage", "updateStatus", "recordEvent"],
    check: (a) => expect(a[2]).toMatchObject({ message: expect.stringContaining("not controlled") }),
  },
  {
    name: "a Succeeded PdfJob without a webhook waits for its expiry",
    pj: pdfJob({ status: succeeded }),
    job: job(running, complete()),
    now: 100,
    expect: ["requeueAfter"],
    check: (a) => expect(a[0]).toEqual({ action: "requeueAfter", ms: (20 + 3600 - 100) * 1000 }),
  },
  {
    name: "an ended PdfJob whose inputs were never deleted (an older controller ended it) gets them deleted first",
    pj: pdfJob({ status: (({ inputsDeletedTime: _i, ...s }) => s)(succeeded) }),
    job: null,
    now: 100,
    expect: ["deleteStorage", "updateStatus"],
    check: (a) => expect(statusOf(a).inputsDeletedTime).toBe(iso(100)),
  },
  {
    name: "retention over: every object of the job is deleted, then the PdfJob",
    pj: pdfJob({ status: succeeded }),
    job: null,
    now: 20 + 3600,
    expect: ["deleteStorage", "updateStatus", "recordEvent", "deletePdfJob"],
    check: (a) => {
      expect(a[0]).toEqual({ action: "deleteStorage", keys: [INPUT_KEY, ...succeeded.outputs!.map((o) => o.key)], prefixes: [PREFIX] });
      expect(statusOf(a).storageDeletedTime).toBe(iso(3620));
    },
  },
  {
    name: "retention over and storage already deleted: only the PdfJob is deleted",
    pj: pdfJob({ status: { ...succeeded, storageDeletedTime: iso(3620) } }),
    job: null,
    now: 3630,
    expect: ["deletePdfJob"],
  },
];

/** What the apply layer relies on: one status write at most, a requeue only last, no attempt beside a write. */
function expectApplyContract(actions: Action[]): void {
  const k = kinds(actions);
  expect(k.filter((x) => x === "updateStatus").length).toBeLessThanOrEqual(1);
  expect(k.filter((x) => x === "requeueAfter").length).toBeLessThanOrEqual(1);
  if (k.includes("requeueAfter")) expect(k.at(-1)).toBe("requeueAfter");
  if (k.includes("deliverWebhook")) expect(k).not.toContain("updateStatus");
}

describe("decide", () => {
  it.each(rows)("$name", (row) => {
    const actions = run(row);
    expect(kinds(actions)).toEqual(row.expect);
    row.check?.(actions);
    for (const a of actions) if (a.action === "updateStatus") expect(() => PdfJobStatus.parse(a.status)).not.toThrow();
  });

  // Adding the finalizer is a step of its own by design (the next reconcile does the rest); the
  // PdfJob's deletion has no "again".
  const settling = rows.filter((r) => !r.expect.includes("deletePdfJob") && !r.expect.includes("addFinalizer"));
  it.each(settling)("is deterministic and settles: $name", (row) => {
    const first = run(row);
    expect(run(row)).toEqual(first);
    // Apply what it decided (the Job it created now exists) and reconcile again: nothing changes.
    const created = first.find((a) => a.action === "createJob");
    const again = run({ ...row, pj: applied(row.pj, first), job: created?.action === "createJob" ? created.job : row.job });
    expect(kinds(again).filter((k) => k !== "requeueAfter")).toEqual([]);
  });
});

describe("decide: webhooks", () => {
  const hooked = { spec: { webhook: { url: "https://hooks.example.com/folio" } } };
  const withHook = pdfJob({ ...hooked, status: running.status! });
  const ended = end(complete(), { terminationMessage: resultMessage() }, hooked);

  it("should open a ledger for job.succeeded, due at the completion, when the job ends", () => {
    expect(ended.webhook).toEqual({
      eventType: "job.succeeded",
      messageId: webhookMessageId(JOB_ID, "job.succeeded"),
      status: "pending",
      attempts: 0,
      nextAttemptTime: iso(20),
    });
    expect(statusOf(run({ pj: withHook, job: job(withHook, failed("DeadlineExceeded")), now: 21 })).webhook).toMatchObject({
      eventType: "job.failed",
    });
  });

  it("should deliver a due webhook with the Job object as of the event", () => {
    const a = run({ pj: pdfJob({ ...hooked, status: ended }), job: null, now: 22 });
    expect(kinds(a)).toEqual(["deliverWebhook"]);
    const d = a[0]!.action === "deliverWebhook" ? a[0].delivery : null;
    expect(d).toMatchObject({
      url: "https://hooks.example.com/folio",
      namespace: "folio",
      messageId: ended.webhook!.messageId,
      eventType: "job.succeeded",
      attempt: 1,
    });
    expect(d!.secretName).toBeUndefined();
    expect(d!.payload).toMatchObject({ type: "job.succeeded", timestamp: iso(20) });
    const data = JobObject.parse(d!.payload.data);
    expect(data).toMatchObject({ id: JOB_ID, status: "succeeded", webhook: { status: "pending", attempts: 0 } });
    expect(data.result!.files).toHaveLength(1);
  });

  it("should name the PdfJob's Secret, which holds the signing secrets", () => {
    const withSecret = { spec: { ...hooked.spec, secretRef: { name: "pj-secret" } } };
    const a = run({ pj: pdfJob({ ...withSecret, status: ended }), job: null, now: 22 });
    expect(a[0]!.action === "deliverWebhook" ? a[0].delivery : null).toMatchObject({ namespace: "folio", secretName: "pj-secret" });
  });

  it("should wait for a failing webhook's next attempt, or the expiry if that comes first", () => {
    const failing = {
      ...ended,
      webhook: {
        ...ended.webhook!,
        status: "failing" as const,
        attempts: 1,
        lastAttemptTime: iso(22),
        nextAttemptTime: iso(27),
        lastError: "HTTP 503",
      },
    };
    expect(run({ pj: pdfJob({ ...hooked, status: failing }), job: null, now: 23 })).toEqual([{ action: "requeueAfter", ms: 4000 }]);
    expect(kinds(run({ pj: pdfJob({ ...hooked, status: failing }), job: null, now: 27 }))).toEqual(["deliverWebhook"]);
    const late = { ...failing, webhook: { ...failing.webhook, nextAttemptTime: iso(99_999) } };
    expect(run({ pj: pdfJob({ ...hooked, status: late }), job: null, now: 23 })).toEqual([
      { action: "requeueAfter", ms: (3620 - 23) * 1000 },
    ]);
  });

  it.each([
    ["delivered", { status: "delivered" as const, attempts: 1, deliveredTime: iso(22) }],
    ["gave up", { status: "gave_up" as const, attempts: 8, lastError: "HTTP 500" }],
  ])("should leave a %s webhook alone", (_what, ledger) => {
    const s = { ...ended, webhook: { eventType: ended.webhook!.eventType, messageId: ended.webhook!.messageId, ...ledger } };
    expect(run({ pj: pdfJob({ ...hooked, status: s }), job: null, now: 30 })).toEqual([{ action: "requeueAfter", ms: (3620 - 30) * 1000 }]);
  });
});

describe("decide: redelivery asked for on the dashboard (folio.dev/redeliver-requested)", () => {
  const hooked = { spec: { webhook: { url: "https://hooks.example.com/folio" } } };
  const ended = end(complete(), { terminationMessage: resultMessage() }, hooked);
  const delivered = {
    ...ended,
    webhook: { ...ended.webhook!, status: "delivered" as const, attempts: 1, lastAttemptTime: iso(22), deliveredTime: iso(22) },
  };
  delete (delivered.webhook as { nextAttemptTime?: string }).nextAttemptTime;
  const asking = (status: PdfJobStatus, value: string): PdfJob => {
    const pj = pdfJob({ ...hooked, status });
    return { ...pj, metadata: { ...pj.metadata, annotations: { "folio.dev/redeliver-requested": value } } };
  };
  const request = new Date(at(40).getTime() + 123).toISOString();

  it("should start a new series of the same message once, attempt it, and not repeat it", () => {
    const pj = asking(delivered, request);
    const first = run({ pj, job: null, now: 41 });
    expect(kinds(first)).toEqual(["updateStatus", "recordEvent"]);
    const s = statusOf(first);
    expect(s.webhook).toMatchObject({
      messageId: webhookMessageId(JOB_ID, "job.succeeded"),
      status: "pending",
      attempts: 1,
      nextAttemptTime: iso(41),
      redelivery: { requestedTime: request, attemptsBefore: 1 },
    });
    expect(s.webhook!.deliveredTime).toBeUndefined();
    expect(s.conditions!.find((c) => c.type === "WebhookDelivered")).toMatchObject({ status: "Unknown", reason: "Redelivering" });
    expect(run({ pj, job: null, now: 41 })).toEqual(first);
    // The written ledger is attempted like any other, with the same webhook-id.
    const written = applied(pj, first);
    const attempt = run({ pj: written, job: null, now: 41 });
    expect(kinds(attempt)).toEqual(["deliverWebhook"]);
    expect(attempt[0]!.action === "deliverWebhook" ? attempt[0].delivery : null).toMatchObject({
      messageId: delivered.webhook.messageId,
      attempt: 2,
    });
    // Delivered again: the same request, still on the PdfJob, starts nothing more.
    const again = asking({ ...s, webhook: { ...s.webhook!, status: "delivered", attempts: 2, deliveredTime: iso(42) } }, request);
    expect(kinds(run({ pj: again, job: null, now: 43 }))).toEqual(["requeueAfter"]);
  });

  it("should redeliver a webhook that gave up", () => {
    const gaveUp = { ...ended, webhook: { ...ended.webhook!, status: "gave_up" as const, attempts: 8, lastError: "HTTP 500" } };
    const s = statusOf(run({ pj: asking(gaveUp, request), job: null, now: 41 }));
    expect(s.webhook).toMatchObject({ status: "pending", attempts: 8, redelivery: { attemptsBefore: 8 } });
    expect(s.webhook!.lastError).toBeUndefined();
  });

  it.each([
    [
      "a webhook still being retried",
      { ...ended, webhook: { ...ended.webhook!, status: "failing" as const, attempts: 1, nextAttemptTime: iso(60) } },
      request,
    ],
    [
      "a request already answered",
      { ...delivered, webhook: { ...delivered.webhook, redelivery: { requestedTime: request, attemptsBefore: 1 } } },
      request,
    ],
    [
      "a request older than the last answered",
      { ...delivered, webhook: { ...delivered.webhook, redelivery: { requestedTime: iso(45), attemptsBefore: 1 } } },
      request,
    ],
    ["a value that is not a time", delivered, "now please"],
  ])("should start nothing for %s", (_what, status, value) => {
    expect(kinds(run({ pj: asking(status, value), job: null, now: 41 }))).toEqual(["requeueAfter"]);
  });

  it("should start nothing for a job without a webhook", () => {
    const plain = end(complete(), { terminationMessage: resultMessage() });
    expect(kinds(run({ pj: { ...asking(plain, request), spec: pdfJob().spec }, job: null, now: 41 }))).toEqual(["requeueAfter"]);
  });
});

describe("decide: a PdfJob being deleted", () => {
  const hooked = { spec: { webhook: { url: "https://hooks.example.com/folio" } } };

  it("should cancel a running job: Canceled status, stop the Job (foreground) and wait for its runner", () => {
    const pj = pdfJob({ status: running.status!, deleting: true });
    const a = run({ pj, job: job(pj, active()), now: 55 });
    expect(kinds(a)).toEqual(["updateStatus", "recordEvent", "deleteJob", "requeueAfter"]);
    expect(statusOf(a)).toMatchObject({ phase: "Canceled", completionTime: iso(55) });
    expect(statusOf(a).conditions![0]).toMatchObject({ status: "False", reason: "Canceled" });
    expect(a[2]).toEqual({ action: "deleteJob", name: running.status!.jobName });
  });

  it("should not delete a Job twice while it goes", () => {
    const pj = pdfJob({ status: { ...running.status!, phase: "Canceled" }, deleting: true });
    expect(kinds(run({ pj, job: job(pj, active(), { deleting: true }), now: 56 }))).toEqual(["requeueAfter"]);
  });

  it("should delete every object of the job once the runner is gone, then let the PdfJob go", () => {
    const pj = pdfJob({ status: { ...running.status!, phase: "Canceled" }, deleting: true });
    const a = run({ pj, job: null, now: 60 });
    expect(a).toEqual([{ action: "deleteStorage", keys: [INPUT_KEY], prefixes: [PREFIX] }, { action: "removeFinalizer" }]);
  });

  it("should delete a finished job's storage at once: its Job has no runner left", () => {
    const pj = pdfJob({ status: succeeded, deleting: true });
    expect(kinds(run({ pj, job: job(pj, complete()), now: 60 }))).toEqual(["deleteStorage", "removeFinalizer"]);
  });

  it("should see the job.canceled webhook through before letting go", () => {
    const pj = pdfJob({ ...hooked, status: running.status!, deleting: true });
    const first = run({ pj, job: null, now: 60 });
    expect(kinds(first)).toEqual(["deleteStorage", "updateStatus", "recordEvent"]);
    expect(statusOf(first)).toMatchObject({
      phase: "Canceled",
      storageDeletedTime: iso(60),
      webhook: { eventType: "job.canceled", status: "pending" },
    });
    const second = run({ pj: applied(pj, first), job: null, now: 61 });
    expect(kinds(second)).toEqual(["deliverWebhook"]);
    const d = second[0]!.action === "deliverWebhook" ? second[0].delivery : null;
    expect(d!.payload.data).toMatchObject({ status: "canceled", completed_at: iso(60) });
    const delivered = applied(pj, [
      {
        action: "updateStatus",
        status: { ...statusOf(first), webhook: { ...statusOf(first).webhook!, status: "delivered", attempts: 1 } },
      },
    ]);
    expect(run({ pj: delivered, job: null, now: 62 })).toEqual([{ action: "removeFinalizer" }]);
  });

  it("should do nothing for a PdfJob whose finalizer is already gone", () => {
    expect(run({ pj: pdfJob({ status: succeeded, deleting: true, finalizers: [] }), job: null, now: 60 })).toEqual([]);
  });
});

describe("decide: the API's rejections, idempotency holds and the fair queue", () => {
  const annotated = (pj: PdfJob, annotations: Record<string, string>): PdfJob => ({
    ...pj,
    metadata: { ...pj.metadata, annotations: { ...pj.metadata.annotations, ...annotations } },
  });
  const keyed = (pj: PdfJob): PdfJob =>
    annotated(pj, { "folio.dev/idempotency-hash": "h", "folio.dev/created-ms": String(at(0).getTime()) });

  it("should run nothing for a PdfJob the API took back, and let it go without a webhook or touching its inputs", () => {
    const taken = annotated(pdfJob({ spec: { webhook: { url: "https://hooks.example.com/x" } } }), {
      "folio.dev/rejected": "too_many_jobs",
    });
    expect(run({ pj: taken, job: null, now: 1 })).toEqual([]);
    const deleting = annotated(pdfJob({ deleting: true }), { "folio.dev/rejected": "too_many_jobs" });
    expect(run({ pj: deleting, job: null, now: 2 })).toEqual([{ action: "removeFinalizer" }]);
    // A Job that started in the moment before the rejection is stopped first.
    expect(kinds(run({ pj: deleting, job: job(deleting, active()), now: 2 }))).toEqual(["deleteJob", "requeueAfter"]);
  });

  it("should hold a deleted keyed PdfJob until its key is 24 h old, deleting its Secret at once, then let it go", () => {
    const pj = keyed(pdfJob({ spec: { secretRef: { name: "job-secret" } }, status: succeeded, deleting: true }));
    const first = run({ pj, job: null, now: 100 });
    expect(kinds(first)).toEqual(["deleteStorage", "deleteSecret", "updateStatus", "requeueAfter"]);
    expect(first[1]).toEqual({ action: "deleteSecret", name: "job-secret" });
    expect(statusOf(first).idempotencyHeldUntil).toBe(iso(24 * 3600));
    expect(first.at(-1)).toEqual({ action: "requeueAfter", ms: (24 * 3600 - 100) * 1000 });
    const held = applied(pj, first);
    expect(run({ pj: held, job: null, now: 200 })).toEqual([{ action: "requeueAfter", ms: (24 * 3600 - 200) * 1000 }]);
    expect(run({ pj: held, job: null, now: 24 * 3600 })).toEqual([{ action: "removeFinalizer" }]);
  });

  it("should not hold a PdfJob without a key", () => {
    expect(kinds(run({ pj: pdfJob({ status: succeeded, deleting: true }), job: null, now: 100 }))).toEqual([
      "deleteStorage",
      "removeFinalizer",
    ]);
  });

  it("should keep a PdfJob queued, showing its place, until the fair queue lets it start", () => {
    const wait = (position: number, now = 1): Action[] =>
      decide(pending, null, at(now), { template: TEMPLATE, queue: { start: false, position } });
    const q = wait(3);
    expect(kinds(q)).toEqual(["updateStatus"]);
    expect(statusOf(q)).toMatchObject({ phase: "Pending", queuePosition: 3 });
    expect(statusOf(q).conditions![0]).toMatchObject({ status: "Unknown", reason: "Queued" });
    expect(statusOf(q).jobName).toBeUndefined();
    // Positions far back are shown rounded up: no write until the shown place changes.
    const far = applied(pending, wait(437));
    expect(far.status!.queuePosition).toBe(500);
    expect(decide(far, null, at(2), { template: TEMPLATE, queue: { start: false, position: 301 } })).toEqual([]);
    const started = decide(far, null, at(3), { template: TEMPLATE, queue: { start: true, position: 0 } });
    expect(kinds(started)).toEqual(["createJob", "updateStatus", "recordEvent"]);
    expect(statusOf(started).queuePosition).toBeUndefined();
  });

  it("should start no Job while the Secret a PdfJob names is missing, and fail it once the wait is over", () => {
    // The API replica that created the PdfJob stopped before it wrote the Secret: the client's
    // retry writes it (api/jobs/kubernetes.ts); meanwhile no runner starts without its passwords.
    const pj = pdfJob({ spec: { webhook: { url: "https://hooks.example.com/x" }, secretRef: { name: pdfJobName(JOB_ID) } } });
    const missing = (now: number): Action[] => decide(pj, null, at(now), { template: TEMPLATE, secretMissing: true });
    expect(missing(1)).toEqual([{ action: "requeueAfter", ms: 1000 }]);
    expect(missing(SECRET_WAIT_MS / 1000 - 1)).toEqual([{ action: "requeueAfter", ms: 1000 }]);
    // The Secret came: the Job is created as for any new PdfJob.
    expect(kinds(decide(pj, null, at(30), { template: TEMPLATE }))).toEqual(["createJob", "updateStatus", "recordEvent"]);
    const ended = missing(SECRET_WAIT_MS / 1000);
    expect(kinds(ended)).toContain("updateStatus");
    expect(kinds(ended)).not.toContain("createJob");
    expect(statusOf(ended)).toMatchObject({ phase: "Failed", error: { code: "internal_error" } });
    expect(statusOf(ended).error?.message).toMatch(/not fully recorded; send it again/);
  });
});
