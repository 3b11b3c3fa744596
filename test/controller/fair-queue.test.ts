/**
 * The fair queue (controller/fair-queue.ts): at most N runner Jobs in total, places handed out
 * max-min fair between tenants, first come first served within one, and shown positions that
 * change O(log n) times.
 */
import { describe, expect, it } from "vitest";
import { FairQueue, shownPosition } from "../../controller/fair-queue.ts";
import type { PdfJob } from "../../core/schemas/pdfjob.ts";
import { pdfJob } from "./fixtures.ts";

let seq = 0;
function queuedJob(tenant: string, createdMs: number, status: PdfJob["status"] = undefined): PdfJob {
  const base = pdfJob({ spec: { tenant }, ...(status ? { status } : {}) });
  return {
    ...base,
    metadata: { ...base.metadata, name: `pj-${tenant}-${++seq}`, annotations: { "folio.dev/created-ms": String(createdMs) } },
  };
}
const key = (pj: PdfJob): string => `${pj.metadata.namespace}/${pj.metadata.name}`;

describe("FairQueue", () => {
  it("shows exact places up to 10, then rounded up to 20, 50, 100, 200, 500, 1000, …", () => {
    expect([1, 9, 10, 11, 20, 21, 50, 51, 100, 101, 437, 999, 1000, 1001, 12_345].map(shownPosition)).toEqual([
      1, 9, 10, 20, 20, 50, 50, 100, 100, 200, 500, 1000, 1000, 2000, 20_000,
    ]);
  });

  it("starts at most N, and gives the next free place to a newcomer tenant before the busy one's backlog", () => {
    const q = new FairQueue(3, () => undefined);
    const busy = Array.from({ length: 1000 }, (_, i) => queuedJob("busy", i + 1));
    for (const pj of busy) q.observe(pj, "add");
    const started = busy.filter((pj) => q.admit(key(pj)).start);
    expect(started).toHaveLength(3);
    expect(started.map((pj) => pj.metadata.name)).toEqual(busy.slice(0, 3).map((pj) => pj.metadata.name));
    // The Jobs exist now (status.jobName): they hold the three places.
    for (const pj of started) q.observe({ ...pj, status: { phase: "Running", jobName: "j" } }, "update");
    const single = queuedJob("newcomer", 5000);
    q.observe(single, "add");
    expect(q.admit(key(single))).toEqual({ start: false, position: 1 });
    expect(q.admit(key(busy[3]!)).start).toBe(false);
    // One busy job ends: the newcomer gets the place, not the 997 that came before it.
    q.observe({ ...started[0]!, status: { phase: "Succeeded", jobName: "j" } }, "update");
    expect(q.admit(key(busy[3]!)).start).toBe(false);
    expect(q.admit(key(single)).start).toBe(true);
    expect(q.running).toBe(3);
  });

  it("alternates between tenants with equal load, oldest first", () => {
    const q = new FairQueue(1, () => undefined);
    const a = [queuedJob("a", 1), queuedJob("a", 2), queuedJob("a", 3)];
    const b = [queuedJob("b", 10), queuedJob("b", 11)];
    for (const pj of [...a, ...b]) q.observe(pj, "add");
    expect(q.order()).toEqual([a[0], b[0], a[1], b[1], a[2]].map((pj) => key(pj!)));
  });

  it("never hands one place to two PdfJobs before the cache shows the first Job, and takes an unused place back", () => {
    const q = new FairQueue(1, () => undefined);
    const [x, y] = [queuedJob("t", 1), queuedJob("u", 2)];
    q.observe(x, "add");
    q.observe(y, "add");
    expect(q.admit(key(x)).start).toBe(true);
    expect(q.admit(key(y)).start).toBe(false);
    // Not used (e.g. the create failed): the place is back, for the same order as before.
    q.release(key(x));
    expect(q.admit(key(y)).start).toBe(false);
    expect(q.admit(key(x)).start).toBe(true);
    q.observe({ ...x, metadata: { ...x.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } }, "update");
    expect(q.admit(key(y)).start).toBe(true);
  });

  it("enqueues the PdfJobs that may start, and those whose shown place changed, when places free", async () => {
    const enqueued: string[] = [];
    const q = new FairQueue(1, (k) => enqueued.push(k));
    const jobs = Array.from({ length: 4 }, (_, i) => queuedJob("t", i + 1));
    for (const pj of jobs) q.observe(pj, "add");
    await new Promise((r) => setTimeout(r, 5));
    // Nothing has a shown position yet: all are enqueued (the first to start, the rest to show theirs).
    expect(new Set(enqueued)).toEqual(new Set(jobs.map(key)));
    q.stop();
  });

  it("has no limit when N is 0", () => {
    const q = new FairQueue(0, () => undefined);
    const jobs = Array.from({ length: 50 }, (_, i) => queuedJob("t", i));
    for (const pj of jobs) q.observe(pj, "add");
    expect(jobs.every((pj) => q.admit(key(pj)).start)).toBe(true);
  });
});
