/**
 * controller/metrics.ts: the metrics move with the real work queue, the reconciler's worker loop
 * and a real object store, and the plain-HTTP server answers /metrics and the probes.
 */
import { Readable } from "node:stream";
import type { KubeClient } from "../../controller/apply.ts";
import { afterEach, describe, expect, it } from "vitest";
import { ControllerMetrics, serveMetrics, type MetricsServer } from "../../controller/metrics.ts";
import { WorkQueue } from "../../controller/queue.ts";
import { Reconciler, type Caches } from "../../controller/reconciler.ts";
import type { PdfJob } from "../../core/schemas/pdfjob.ts";
import { FsObjectStore } from "../../core/storage/fs-store.ts";
import { ObjectNotFound } from "../../core/storage/store.ts";
import { tmpDir } from "../helpers/tools.ts";
import { JOB_ID, pdfJob, TEMPLATE, TENANT } from "./fixtures.ts";

/** The value of one sample in the Prometheus text format; undefined when the series is absent. */
async function sample(m: ControllerMetrics, series: string): Promise<number | undefined> {
  const line = (await m.registry.metrics()).split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
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

  it("should count reconciles by result from the worker loop, with their durations", async () => {
    const m = new ControllerMetrics({ defaultMetrics: false });
    const failing = pdfJob({ finalizers: [] });
    const waiting = pdfJob({ status: { phase: "Succeeded", completionTime: "2026-03-01T12:00:20Z", inputsDeletedTime: "2026-03-01T12:00:20Z", expireTime: "2999-01-01T00:00:00Z" } });
    const objects = new Map<string, PdfJob>([
      ["folio/failing", failing],
      ["folio/waiting", waiting],
    ]);
    const caches: Caches = { pdfJob: (k) => objects.get(k), pdfJobs: () => objects.values(), job: () => undefined, podsOfJob: () => [] };
    // "failing" lacks the finalizer, and adding it fails (the API server says 500): an error.
    const kube = { setFinalizers: () => Promise.reject(Object.assign(new Error("boom"), { code: 500 })) } as unknown as KubeClient;
    const dir = await tmpDir("folio-metrics-");
    const store = new FsObjectStore(dir.dir);
    const r = new Reconciler({ caches, template: TEMPLATE, store, kube, onReconcile: (result, s) => m.reconciled(result, s) });
    const q = new WorkQueue();
    for (const k of ["folio/failing", "folio/waiting", "folio/gone"]) q.add(k);
    q.shutDown();
    await r.work(q);
    expect(await sample(m, 'folio_controller_reconcile_total{result="error"}')).toBe(1);
    // An ended PdfJob waits for its retention's end: success, due again later.
    expect(await sample(m, 'folio_controller_reconcile_total{result="requeue"}')).toBe(1);
    expect(await sample(m, 'folio_controller_reconcile_total{result="success"}')).toBe(1);
    expect(await sample(m, "folio_controller_reconcile_duration_seconds_count")).toBe(3);
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

  it("should use only bounded labels", async () => {
    const m = new ControllerMetrics({ defaultMetrics: false });
    m.observePdfJobs(() => ["Succeeded"]);
    const text = await m.registry.metrics();
    const labels = new Set([...text.matchAll(/[{,]([a-z_]+)="/g)].map((x) => x[1]));
    expect([...labels].sort()).toEqual(["le", "operation", "outcome", "phase", "result"]);
    expect(text).not.toContain(JOB_ID);
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
