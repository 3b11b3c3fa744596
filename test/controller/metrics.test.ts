/**
 * controller/metrics.ts: the metrics move with the real work queue, the reconciler's worker loop
 * (and its reconciles against an API server that enforces resourceVersions) and a real object
 * store, and the plain-HTTP server answers /metrics and the probes.
 */
import { Readable, Writable } from "node:stream";
import type { V1Job, V1Pod } from "@kubernetes/client-node";
import type { KubeClient } from "../../controller/apply.ts";
import { afterEach, describe, expect, it } from "vitest";
import { RUNNER_CONTAINER } from "../../controller/job-template.ts";
import { ControllerMetrics, serveMetrics, type MetricsServer } from "../../controller/metrics.ts";
import { WorkQueue } from "../../controller/queue.ts";
import { Reconciler, type Caches, type ReconcileOutcome } from "../../controller/reconciler.ts";
import { createLogger } from "../../core/logger.ts";
import { pdfJobName, type PdfJob } from "../../core/schemas/pdfjob.ts";
import { FsObjectStore } from "../../core/storage/fs-store.ts";
import { ObjectNotFound, type ObjectStore } from "../../core/storage/store.ts";
import { tmpDir } from "../helpers/tools.ts";
import { FakeKube } from "./fake-kube.ts";
import { active, at, complete, failed, iso, job, JOB_ID, pdfJob, resultMessage, TEMPLATE, TENANT, UID } from "./fixtures.ts";

/** The value of one sample in the Prometheus text format; undefined when the series is absent. */
async function sample(m: ControllerMetrics, series: string): Promise<number | undefined> {
  const line = (await m.registry.metrics()).split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

const KEY = `folio/${pdfJobName(JOB_ID)}`;

/** The runner pod as the pod informer shows it once the runner exited with `message`. */
const exitedPod = (message: string, exitCode = 0): V1Pod => ({
  metadata: { creationTimestamp: at(2) },
  status: {
    containerStatuses: [
      {
        name: RUNNER_CONTAINER,
        image: TEMPLATE.image,
        imageID: "",
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode, message } },
      },
    ],
  },
});

/**
 * One PdfJob's life: reconciles of the real reconciler at given times, against a FakeKube holding
 * the PdfJob, with the Job and pods the test says the cluster has, the job series going to `m`.
 */
function life(m: ControllerMetrics, store: ObjectStore) {
  const server = new FakeKube();
  server.put(pdfJob());
  let world: { job?: V1Job["status"]; pods?: V1Pod[]; stale?: PdfJob } = {};
  let now = 0;
  const caches: Caches = {
    pdfJob: (key) => (key === KEY ? (world.stale ?? server.get(key)) : undefined),
    pdfJobs: () => [server.get(KEY)].filter((pj) => pj !== undefined),
    job: () => (world.job ? job(server.get(KEY) ?? pdfJob(), world.job) : undefined),
    podsOfJob: () => world.pods ?? [],
  };
  const reconciler = new Reconciler({
    caches,
    template: TEMPLATE,
    store,
    kube: server.client,
    now: () => at(now),
    onPhaseChange: (c) => m.phaseChanged(c),
  });
  return {
    server,
    reconcile: (seconds: number, w: typeof world = {}): Promise<ReconcileOutcome | null> => {
      now = seconds;
      world = w;
      return reconciler.reconcile(KEY);
    },
    /** Created at 0, Pending at 1, Running at 3 (its Job started at 2). */
    async untilRunning(): Promise<void> {
      await this.reconcile(1);
      await this.reconcile(3, { job: active(2) });
      expect(server.get(KEY)?.status).toMatchObject({ phase: "Running", startTime: iso(2) });
    },
  };
}

describe("ControllerMetrics", () => {
  it("should count the work queue's adds, depth and latency", async () => {
    const m = new ControllerMetrics({ defaultMetrics: false });
    const q = new WorkQueue({ metrics: m.queueMetrics() });
    q.add("ns/a");
    q.add("ns/b");
    q.add("ns/a");
    expect(await sample(m, "folio_controller_workqueue_adds_total")).toBe(2);
    expect(await sample(m, "folio_controller_workqueue_depth")).toBe(2);
    const key = await q.get();
    expect(await sample(m, "folio_controller_workqueue_depth")).toBe(1);
    expect(await sample(m, "folio_controller_workqueue_queue_duration_seconds_count")).toBe(1);
    q.done(key!);
    q.addRateLimited("ns/c");
    expect(await sample(m, "folio_controller_workqueue_retries_total")).toBe(1);
    expect(await sample(m, "folio_controller_workqueue_work_duration_seconds_count")).toBe(1);
    q.shutDown();
  });

  it("should count reconciles by result from the worker loop, with their durations, and log each failure as one structured warning", async () => {
    const m = new ControllerMetrics({ defaultMetrics: false });
    const failing = pdfJob({ finalizers: [] });
    const waiting = pdfJob({
      status: {
        phase: "Succeeded",
        completionTime: "2026-03-01T12:00:20Z",
        inputsDeletedTime: "2026-03-01T12:00:20Z",
        expireTime: "2999-01-01T00:00:00Z",
      },
    });
    const objects = new Map<string, PdfJob>([
      ["folio/failing", failing],
      ["folio/waiting", waiting],
    ]);
    const caches: Caches = { pdfJob: (k) => objects.get(k), pdfJobs: () => objects.values(), job: () => undefined, podsOfJob: () => [] };
    // "failing" lacks the finalizer, and adding it fails (the API server says 500): an error;
    // "racing" too, but with 409 Conflict (another write came first): routine, logged at debug.
    const racing = pdfJob({ finalizers: [] });
    objects.set("folio/racing", racing);
    const kube = {
      setFinalizers: (pj: PdfJob) =>
        Promise.reject(Object.assign(new Error(pj === racing ? "conflict" : "boom"), { code: pj === racing ? 409 : 500 })),
    } as unknown as KubeClient;
    const dir = await tmpDir("folio-metrics-");
    const store = new FsObjectStore(dir.dir);
    const lines: Record<string, any>[] = [];
    const destination = new Writable({
      write(line: Buffer, _enc, done): void {
        lines.push(JSON.parse(line.toString("utf8")) as Record<string, any>);
        done();
      },
    });
    const logger = createLogger({ level: "info", destination }, { component: "controller" });
    const r = new Reconciler({ caches, template: TEMPLATE, store, kube, logger, onReconcile: (result, s) => m.reconciled(result, s) });
    const q = new WorkQueue();
    for (const k of ["folio/failing", "folio/racing", "folio/waiting", "folio/gone"]) q.add(k);
    q.shutDown();
    await r.work(q);
    expect(lines).toEqual([
      expect.objectContaining({
        level: "warn",
        msg: "reconcile failed; retrying with backoff",
        pdfjob: "folio/failing",
        tenant: TENANT,
        err: expect.objectContaining({ message: "boom" }),
      }),
    ]);
    expect(await sample(m, 'folio_controller_reconcile_total{result="error"}')).toBe(2);
    // An ended PdfJob waits for its retention's end: success, due again later.
    expect(await sample(m, 'folio_controller_reconcile_total{result="requeue"}')).toBe(1);
    expect(await sample(m, 'folio_controller_reconcile_total{result="success"}')).toBe(1);
    expect(await sample(m, "folio_controller_reconcile_duration_seconds_count")).toBe(4);
    await dir.cleanup();
  });

  it("should report PdfJobs by phase only while its source answers", async () => {
    const m = new ControllerMetrics({ defaultMetrics: false });
    expect(await sample(m, 'folio_pdfjobs{phase="Pending"}')).toBeUndefined();
    let leading = true;
    m.observePdfJobs(() => (leading ? [undefined, "Pending", "Running", "Succeeded", "Succeeded"] : null));
    expect(await sample(m, 'folio_pdfjobs{phase="Pending"}')).toBe(2);
    expect(await sample(m, 'folio_pdfjobs{phase="Running"}')).toBe(1);
    expect(await sample(m, 'folio_pdfjobs{phase="Succeeded"}')).toBe(2);
    expect(await sample(m, 'folio_pdfjobs{phase="Failed"}')).toBe(0);
    leading = false;
    expect(await sample(m, 'folio_pdfjobs{phase="Succeeded"}')).toBeUndefined();
  });

  it("should set the leader gauge and count webhook outcomes", async () => {
    const m = new ControllerMetrics({ defaultMetrics: false });
    expect(await sample(m, "folio_controller_leader")).toBe(0);
    m.setLeader(true);
    expect(await sample(m, "folio_controller_leader")).toBe(1);
    m.webhook("delivered");
    m.webhook("failed");
    m.webhook("gave_up");
    expect(await sample(m, 'folio_controller_webhook_deliveries_total{outcome="delivered"}')).toBe(1);
    expect(await sample(m, 'folio_controller_webhook_deliveries_total{outcome="gave_up"}')).toBe(1);
    expect(await sample(m, 'folio_controller_webhook_deliveries_total{outcome="blocked"}')).toBe(0);
  });

  it("should count failed object-store calls by operation, but not a missing object", async () => {
    const m = new ControllerMetrics({ defaultMetrics: false });
    const dir = await tmpDir("folio-metrics-");
    const store = m.instrumentStore(new FsObjectStore(dir.dir));
    await store.put(`${TENANT}/file_a`, Readable.from([Buffer.from("x")]));
    expect(await store.exists(`${TENANT}/file_a`)).toBe(true);
    await expect(store.get(`${TENANT}/file_missing`)).rejects.toBeInstanceOf(ObjectNotFound);
    await expect(store.deletePrefix("no-trailing-slash")).rejects.toThrow(/unsafe storage prefix/);
    expect(await sample(m, 'folio_controller_s3_errors_total{operation="deletePrefix"}')).toBe(1);
    expect(await sample(m, 'folio_controller_s3_errors_total{operation="get"}')).toBe(0);
    expect(await sample(m, 'folio_controller_s3_errors_total{operation="put"}')).toBe(0);
    await dir.cleanup();
  });

  it("should pass get's signal through to the store", async () => {
    const m = new ControllerMetrics({ defaultMetrics: false });
    const dir = await tmpDir("folio-metrics-");
    const signals: (AbortSignal | undefined)[] = [];
    // FsObjectStore ignores the signal (S3ObjectStore aborts its request with it): record it instead.
    class Recording extends FsObjectStore {
      override get(key: string, opts?: { signal?: AbortSignal }): Promise<Readable> {
        signals.push(opts?.signal);
        return super.get(key);
      }
    }
    const store = m.instrumentStore(new Recording(dir.dir));
    await store.put(`${TENANT}/file_a`, Readable.from([Buffer.from("x")]));
    const signal = new AbortController().signal;
    // Read to the end (a destroyed read stream may still open its file after the folder is gone).
    let body = "";
    for await (const chunk of await store.get(`${TENANT}/file_a`, { signal })) body += String(chunk);
    expect(body).toBe("x");
    expect(signals).toEqual([signal]);
    await dir.cleanup();
  });

  it("should count a job that succeeded once, with its queue wait and duration, even when its end is applied twice", async () => {
    const m = new ControllerMetrics({ defaultMetrics: false });
    const dir = await tmpDir("folio-metrics-");
    const l = life(m, new FsObjectStore(dir.dir));
    await l.untilRunning();
    // The queue wait is observed when the job starts: created at 0, started at 2.
    expect(await sample(m, 'folio_job_queue_wait_seconds_count{operation="compress"}')).toBe(1);
    expect(await sample(m, 'folio_job_queue_wait_seconds_sum{operation="compress"}')).toBe(2);
    expect(await sample(m, 'folio_jobs_total{operation="compress",outcome="succeeded"}')).toBeUndefined();
    const running = l.server.get(KEY);
    const ended = { job: complete(20), pods: [exitedPod(resultMessage())] };
    expect((await l.reconcile(21, ended))?.result.error).toBeUndefined();
    expect(l.server.get(KEY)?.status?.phase).toBe("Succeeded");
    // A lagging cache still shows it Running: the same end again, from a stale copy, is refused.
    const again = await l.reconcile(22, { ...ended, ...(running ? { stale: running } : {}) });
    expect(again?.actions.some((a) => a.action === "updateStatus" && a.status.phase === "Succeeded")).toBe(true);
    expect(again?.result.error).toMatchObject({ code: 409 });
    await l.reconcile(23, ended);
    expect(await sample(m, 'folio_jobs_total{operation="compress",outcome="succeeded"}')).toBe(1);
    expect(await sample(m, 'folio_job_duration_seconds_count{operation="compress",outcome="succeeded"}')).toBe(1);
    expect(await sample(m, 'folio_job_duration_seconds_sum{operation="compress",outcome="succeeded"}')).toBe(18);
    expect(await sample(m, 'folio_job_queue_wait_seconds_count{operation="compress"}')).toBe(1);
    await dir.cleanup();
  });

  it("should count a failed job by its error code, and a canceled one as canceled, running or not", async () => {
    const m = new ControllerMetrics({ defaultMetrics: false });
    const dir = await tmpDir("folio-metrics-");
    const store = new FsObjectStore(dir.dir);
    // Past its deadline: failed with timeout.
    const timedOut = life(m, store);
    await timedOut.untilRunning();
    await timedOut.reconcile(21, { job: failed("DeadlineExceeded"), pods: [exitedPod("Killed\n", 137)] });
    // Deleted while running: the Canceled status is written, then the Job stops and it is let go.
    const deletedRunning = life(m, store);
    await deletedRunning.untilRunning();
    deletedRunning.server.delete(KEY, iso(30));
    await deletedRunning.reconcile(31, { job: active(2) });
    expect(deletedRunning.server.get(KEY)?.status?.phase).toBe("Canceled");
    await deletedRunning.reconcile(40);
    expect(deletedRunning.server.get(KEY)).toBeUndefined();
    // Deleted while Pending, without a webhook: no terminal status is written; it ends when let go.
    const deletedPending = life(m, store);
    await deletedPending.reconcile(1);
    deletedPending.server.delete(KEY, iso(4));
    await deletedPending.reconcile(5);
    expect(deletedPending.server.get(KEY)).toBeUndefined();
    expect(deletedPending.server.calls.filter((c) => c.startsWith("replaceStatus"))).toEqual(["replaceStatus Pending"]);

    expect(await sample(m, 'folio_jobs_total{operation="compress",outcome="timeout"}')).toBe(1);
    expect(await sample(m, 'folio_jobs_total{operation="compress",outcome="canceled"}')).toBe(2);
    expect(await sample(m, 'folio_jobs_total{operation="compress",outcome="succeeded"}')).toBeUndefined();
    expect(await sample(m, 'folio_job_duration_seconds_count{operation="compress",outcome="failed"}')).toBe(1);
    // Only the canceled job that had started has a duration (2 → 31) and a queue wait.
    expect(await sample(m, 'folio_job_duration_seconds_count{operation="compress",outcome="canceled"}')).toBe(1);
    expect(await sample(m, 'folio_job_duration_seconds_sum{operation="compress",outcome="canceled"}')).toBe(29);
    expect(await sample(m, 'folio_job_queue_wait_seconds_count{operation="compress"}')).toBe(2);
    await dir.cleanup();
  });

  it("should observe the queue wait at the end of a job never seen Running", async () => {
    const m = new ControllerMetrics({ defaultMetrics: false });
    const dir = await tmpDir("folio-metrics-");
    const l = life(m, new FsObjectStore(dir.dir));
    await l.reconcile(1);
    // The runner started at 2 and ended at 20 before a reconcile saw it run.
    await l.reconcile(21, { job: complete(20), pods: [exitedPod(resultMessage())] });
    expect(l.server.get(KEY)?.status).toMatchObject({ phase: "Succeeded", startTime: iso(2) });
    expect(await sample(m, 'folio_job_queue_wait_seconds_count{operation="compress"}')).toBe(1);
    expect(await sample(m, 'folio_job_queue_wait_seconds_sum{operation="compress"}')).toBe(2);
    expect(await sample(m, 'folio_jobs_total{operation="compress",outcome="succeeded"}')).toBe(1);
    await dir.cleanup();
  });

  it("should use only bounded labels", async () => {
    const m = new ControllerMetrics({ defaultMetrics: false });
    m.observePdfJobs(() => ["Succeeded"]);
    const ended = pdfJob({
      status: {
        phase: "Failed",
        startTime: iso(2),
        completionTime: iso(9),
        error: { code: "internal_error", message: `Job ${JOB_ID} of ${TENANT} failed` },
      },
    });
    m.phaseChanged({ from: "Running", pdfJob: ended });
    const text = await m.registry.metrics();
    expect(text).toContain('folio_jobs_total{operation="compress",outcome="internal_error"} 1');
    const labels = new Set([...text.matchAll(/[{,]([a-z_]+)="/g)].map((x) => x[1]));
    expect([...labels].sort()).toEqual(["le", "operation", "outcome", "phase", "result"]);
    for (const id of [JOB_ID, pdfJobName(JOB_ID), TENANT, UID]) expect(text).not.toContain(id);
  });
});

describe("serveMetrics", () => {
  let server: MetricsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("should serve /metrics, /healthz and /readyz (503 until the informers synced)", async () => {
    const m = new ControllerMetrics();
    let ready = false;
    server = await serveMetrics({ registry: m.registry, port: 0, host: "127.0.0.1", ready: () => ready });
    const url = (p: string): string => `http://127.0.0.1:${server!.port}${p}`;
    expect((await fetch(url("/healthz"))).status).toBe(200);
    expect((await fetch(url("/readyz"))).status).toBe(503);
    ready = true;
    expect((await fetch(url("/readyz"))).status).toBe(200);
    const res = await fetch(url("/metrics"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toContain("# TYPE folio_controller_reconcile_total counter");
    expect(text).toContain("folio_controller_leader 0");
    // The process's default metrics, prefixed like the API's.
    expect(text).toMatch(/^folio_process_resident_memory_bytes \d+/m);
    expect((await fetch(url("/nope"))).status).toBe(404);
    expect((await fetch(url("/metrics"), { method: "POST" })).status).toBe(405);
  });
});
