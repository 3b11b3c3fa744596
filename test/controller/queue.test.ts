/** The keyed work queue: client-go's guarantees, backoff and metrics, on a fake clock. */
import { describe, expect, it } from "vitest";
import { ExponentialBackoff, WorkQueue, type Clock } from "../../controller/queue.ts";

/** Timers that fire only when the test advances time. */
class FakeClock implements Clock {
  t = 1_000_000;
  #seq = 0;
  timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.#seq;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.timers.entries()].filter(([, x]) => x.at <= end).sort(([, a], [, b]) => a.at - b.at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
    }
    this.t = end;
  }
}

/** Resolves to the value if the promise settles within a few microtask turns, else "pending". */
async function peek<T>(p: Promise<T>): Promise<T | "pending"> {
  return Promise.race([p, new Promise<"pending">((r) => setImmediate(() => r("pending")))]);
}

function setup() {
  const clock = new FakeClock();
  const m = { adds: 0, depth: [] as number[], latency: [] as number[], work: [] as number[], retries: 0 };
  const q = new WorkQueue({
    clock,
    metrics: {
      adds: () => m.adds++,
      depth: (n) => m.depth.push(n),
      queueLatency: (s) => m.latency.push(s),
      workDuration: (s) => m.work.push(s),
      retries: () => m.retries++,
    },
  });
  return { clock, q, m };
}

describe("WorkQueue", () => {
  it("should hand out a key added many times only once", async () => {
    const { q, m } = setup();
    q.add("ns/a");
    q.add("ns/a");
    q.add("ns/b");
    q.add("ns/a");
    expect(q.depth).toBe(2);
    expect(m.adds).toBe(2);
    expect(await q.get()).toBe("ns/a");
    expect(await q.get()).toBe("ns/b");
    expect(await peek(q.get())).toBe("pending");
  });

  it("should never hand one key to two workers: a key re-added while processing comes back after done()", async () => {
    const { q } = setup();
    q.add("k");
    const key = await q.get();
    q.add("k");
    q.add("k");
    expect(q.depth).toBe(0);
    const second = q.get();
    expect(await peek(second)).toBe("pending");
    q.done(key!);
    expect(await second).toBe("k");
    q.done("k");
    expect(q.depth).toBe(0);
  });

  it("should wake a waiting worker when a key arrives", async () => {
    const { q } = setup();
    const waiting = q.get();
    q.add("x");
    expect(await waiting).toBe("x");
  });

  it("should keep FIFO order across workers", async () => {
    const { q } = setup();
    for (const k of ["1", "2", "3"]) q.add(k);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(["1", "2", "3"]);
  });

  it("should queue addAfter keys only when their time comes, the earliest of two times winning", async () => {
    const { q, clock } = setup();
    q.addAfter("late", 1000);
    q.addAfter("late", 5000);
    q.addAfter("late", 300);
    clock.advance(299);
    expect(q.depth).toBe(0);
    clock.advance(1);
    expect(q.depth).toBe(1);
    expect(await q.get()).toBe("late");
    q.done("late");
    clock.advance(10_000);
    expect(q.depth).toBe(0);
  });

  it("should treat addAfter(0) as add", () => {
    const { q } = setup();
    q.addAfter("now", 0);
    expect(q.depth).toBe(1);
  });

  it("should back off per key exponentially from 5 ms and reset on forget", () => {
    const { q, clock, m } = setup();
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const before = clock.now();
      q.addRateLimited("k");
      const timer = [...clock.timers.values()][0]!;
      delays.push(timer.at - before);
      clock.advance(timer.at - before);
    }
    expect(delays).toEqual([5, 10, 20, 40]);
    expect(q.numRequeues("k")).toBe(4);
    expect(m.retries).toBe(4);
    q.forget("k");
    expect(q.numRequeues("k")).toBe(0);
    q.addRateLimited("other");
    expect([...clock.timers.values()][0]!.at - clock.now()).toBe(5);
  });

  it("should cap the backoff at 1000 s", () => {
    const b = new ExponentialBackoff();
    let last = 0;
    for (let i = 0; i < 40; i++) last = b.when("k");
    expect(last).toBe(1_000_000);
    expect(new ExponentialBackoff(5, 1_000_000).when("fresh")).toBe(5);
  });

  it("should keep backoffs of different keys apart", () => {
    const b = new ExponentialBackoff();
    b.when("a");
    b.when("a");
    expect(b.when("a")).toBe(20);
    expect(b.when("b")).toBe(5);
  });

  it("should report queue latency and work duration from the clock", async () => {
    const { q, clock, m } = setup();
    q.add("k");
    clock.advance(250);
    const key = await q.get();
    clock.advance(1500);
    expect(q.unfinishedWorkSeconds()).toBe(1.5);
    expect(q.longestRunningProcessorSeconds()).toBe(1.5);
    q.done(key!);
    expect(m.latency).toEqual([0.25]);
    expect(m.work).toEqual([1.5]);
    expect(q.unfinishedWorkSeconds()).toBe(0);
  });

  it("should wake idle workers with undefined on shutdown and refuse new keys", async () => {
    const { q, clock } = setup();
    const idle = q.get();
    q.addAfter("later", 1000);
    q.shutDown();
    expect(await idle).toBeUndefined();
    q.add("new");
    clock.advance(5000);
    expect(q.depth).toBe(0);
    expect(await q.get()).toBeUndefined();
    expect(q.shuttingDown).toBe(true);
  });

  it("should still hand out keys queued before the shutdown", async () => {
    const { q } = setup();
    q.add("a");
    q.shutDown();
    expect(await q.get()).toBe("a");
    expect(await q.get()).toBeUndefined();
  });

  it("should resolve shutDownWithDrain only when the workers in flight are done", async () => {
    const { q } = setup();
    q.add("a");
    q.add("b");
    const a = await q.get();
    const b = await q.get();
    const drained = q.shutDownWithDrain();
    expect(await peek(drained)).toBe("pending");
    q.done(a!);
    expect(await peek(drained)).toBe("pending");
    q.done(b!);
    expect(await peek(drained)).toBeUndefined();
  });

  it("should ignore done() for a key it never handed out", () => {
    const { q } = setup();
    expect(() => q.done("stranger")).not.toThrow();
  });
});
