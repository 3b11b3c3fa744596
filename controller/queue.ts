/**
 * A keyed work queue with client-go's semantics (k8s.io/client-go/util/workqueue), which
 * controller-runtime builds on:
 *
 * - a key is queued at most once (adds of a queued key are deduplicated);
 * - a key is handed to at most one worker at a time: a key added while it is being processed is
 *   queued again when the worker calls `done(key)`;
 * - `addAfter(key, ms)` queues later (the earliest of several pending times wins);
 * - `addRateLimited(key)` queues after a per-key exponential backoff (5 ms · 2^failures, capped
 *   at 1000 s, controller-runtime's defaults) until `forget(key)` resets it;
 * - `shutDown()` stops accepting keys and wakes idle workers; keys still queued are handed out
 *   (as client-go does) and `shutDownWithDrain()` also waits for the workers in flight.
 *
 * Its figures are the ones controller-runtime exports: depth, adds, queue latency, work
 * duration, retries, unfinished work and the longest running processor.
 */

/** Time and timers, injectable so that tests drive them. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    // A pending requeue alone never keeps the process alive.
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** How long to wait before retrying a key that failed. */
export interface RateLimiter {
  when(key: string): number;
  forget(key: string): void;
  retries(key: string): number;
}

/** Per-key exponential backoff: base · 2^failures, capped (client-go ItemExponentialFailureRateLimiter). */
export class ExponentialBackoff implements RateLimiter {
  readonly #failures = new Map<string, number>();
  readonly #baseMs: number;
  readonly #maxMs: number;

  constructor(baseMs = 5, maxMs = 1_000_000) {
    this.#baseMs = baseMs;
    this.#maxMs = maxMs;
  }

  when(key: string): number {
    const n = this.#failures.get(key) ?? 0;
    this.#failures.set(key, n + 1);
    return Math.min(this.#baseMs * 2 ** n, this.#maxMs);
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  retries(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
}

/** Hooks for the workqueue metrics (prom-client counters, gauges and histograms, in seconds). */
export interface QueueMetrics {
  adds?(): void;
  depth?(n: number): void;
  queueLatency?(seconds: number): void;
  workDuration?(seconds: number): void;
  retries?(): void;
}

export interface WorkQueueOptions {
  clock?: Clock;
  rateLimiter?: RateLimiter;
  metrics?: QueueMetrics;
}

export class WorkQueue {
  readonly #clock: Clock;
  readonly #limiter: RateLimiter;
  readonly #metrics: QueueMetrics;
  /** FIFO of keys ready to be handed out; `#head` avoids O(n) shifts. */
  #queue: string[] = [];
  #head = 0;
  /** Keys that need processing (queued, or re-added while processing), with when they were added. */
  readonly #dirty = new Map<string, number>();
  /** Keys being processed, with when their worker got them. */
  readonly #processing = new Map<string, number>();
  readonly #waiting = new Map<string, { at: number; handle: unknown }>();
  #getters: ((key: string | undefined) => void)[] = [];
  #drained: (() => void)[] = [];
  #shuttingDown = false;

  constructor(o: WorkQueueOptions = {}) {
    this.#clock = o.clock ?? systemClock;
    this.#limiter = o.rateLimiter ?? new ExponentialBackoff();
    this.#metrics = o.metrics ?? {};
  }

  /** Queues `key` unless it is queued already; a key being processed is queued again at done(). */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#metrics.adds?.();
    this.#dirty.set(key, this.#clock.now());
    if (this.#processing.has(key)) return;
    this.#enqueue(key);
  }

  /** Queues `key` after `ms`; of several pending times for one key the earliest wins. */
  addAfter(key: string, ms: number): void {
    if (this.#shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = this.#clock.now() + ms;
    const prior = this.#waiting.get(key);
    if (prior && prior.at <= at) return;
    if (prior) this.#clock.clearTimeout(prior.handle);
    const handle = this.#clock.setTimeout(() => {
      this.#waiting.delete(key);
      this.add(key);
    }, ms);
    this.#waiting.set(key, { at, handle });
  }

  /** Queues `key` after its backoff (a failed reconcile). */
  addRateLimited(key: string): void {
    this.#metrics.retries?.();
    this.addAfter(key, this.#limiter.when(key));
  }

  /** Resets `key`'s backoff (a reconcile that succeeded). */
  forget(key: string): void {
    this.#limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.#limiter.retries(key);
  }

  /**
   * The next key to process, waiting until there is one; undefined once the queue is shut down
   * and empty. The caller must call `done(key)` when it has finished with it.
   */
  get(): Promise<string | undefined> {
    if (this.#head < this.#queue.length) return Promise.resolve(this.#take());
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#getters.push(resolve));
  }

  /** Marks `key` processed; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    const started = this.#processing.get(key);
    if (started === undefined) return;
    this.#processing.delete(key);
    this.#metrics.workDuration?.((this.#clock.now() - started) / 1000);
    if (this.#dirty.has(key)) this.#enqueue(key);
    if (this.#processing.size === 0) for (const resolve of this.#drained.splice(0)) resolve();
  }

  /** Keys waiting to be handed out (workqueue_depth). */
  get depth(): number {
    return this.#queue.length - this.#head;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Seconds of work in flight, summed over the workers (workqueue_unfinished_work_seconds). */
  unfinishedWorkSeconds(): number {
    const now = this.#clock.now();
    let sum = 0;
    for (const started of this.#processing.values()) sum += now - started;
    return sum / 1000;
  }

  /** Seconds the longest-running worker has been at its key (workqueue_longest_running_processor_seconds). */
  longestRunningProcessorSeconds(): number {
    const now = this.#clock.now();
    let max = 0;
    for (const started of this.#processing.values()) max = Math.max(max, now - started);
    return max / 1000;
  }

  /** Stops accepting keys, cancels pending addAfters and wakes idle workers with undefined. */
  shutDown(): void {
    this.#shuttingDown = true;
    for (const { handle } of this.#waiting.values()) this.#clock.clearTimeout(handle);
    this.#waiting.clear();
    for (const resolve of this.#getters.splice(0)) resolve(undefined);
  }

  /** shutDown(), then resolves once no key is being processed. */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.#processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drained.push(resolve));
  }

  #enqueue(key: string): void {
    const getter = this.#getters.shift();
    if (getter) {
      // An idle worker takes it at once; the FIFO stays empty while workers wait.
      this.#queue.push(key);
      getter(this.#take());
      return;
    }
    this.#queue.push(key);
    this.#metrics.depth?.(this.depth);
  }

  #take(): string {
    const key = this.#queue[this.#head++]!;
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
    const now = this.#clock.now();
    this.#metrics.queueLatency?.((now - (this.#dirty.get(key) ?? now)) / 1000);
    this.#metrics.depth?.(this.depth);
    this.#dirty.delete(key);
    this.#processing.set(key, now);
    return key;
  }
}
