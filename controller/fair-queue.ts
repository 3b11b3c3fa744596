/**
 * Fair queueing of runner Jobs (issue #12): at most `maxRunning` runner Jobs at once in total,
 * shared between tenants so that a tenant with 1,000 queued jobs never delays another tenant's
 * single job by more than one job's run time.
 *
 * The order (max-min fairness, like a round robin over tenants): the next free place goes to the
 * tenant with the fewest jobs running (counting places already handed out in this round), ties to
 * the tenant whose oldest queued job is oldest; within a tenant, first come first served. A tenant
 * arriving with one job while another holds every place therefore gets the very next place that
 * frees — at most one run time away.
 *
 * It is fed by the PdfJob informer (`observe`) and asked by the reconciler before it creates a
 * Job (`admit`, which reserves the place until the cache shows the Job's name in the PdfJob's
 * status, so two workers never hand out one place twice). Only the leader's workers ask; every
 * replica keeps the state warm. When places free, the PdfJobs that now may start are enqueued;
 * queued PdfJobs whose shown position (`shownPosition`) changed are enqueued too, so that their
 * status says where they stand — `kubectl get pj -o wide`.
 */
import { PDFJOB_ANNOTATIONS, TERMINAL_PHASES, type PdfJob } from "../core/schemas/pdfjob.ts";
import { objectKey } from "./informer.ts";

interface Entry {
  key: string;
  tenant: string;
  createdMs: number;
  /** A Job exists (status.jobName) or a place was handed out for one. */
  running: boolean;
  shown: number | undefined;
}

/**
 * The position a queued PdfJob's status shows: exact up to 10, then rounded up to 20, 50, 100,
 * 200, 500, 1,000, … ("at most N ahead"), so that a job's status is written O(log n) times while
 * it waits rather than once per job started before it.
 */
export function shownPosition(p: number): number {
  if (p <= 10) return p;
  for (let step = 10; ; step *= 10) for (const m of [2, 5, 10]) if (p <= step * m) return step * m;
}

const createdMs = (pj: PdfJob): number =>
  Number(pj.metadata.annotations?.[PDFJOB_ANNOTATIONS.createdMs]) || Date.parse(pj.metadata.creationTimestamp ?? "") || 0;

/** A PdfJob that waits for or holds a place: not ended, not being deleted, not taken back. */
const competes = (pj: PdfJob): boolean =>
  !pj.metadata.deletionTimestamp &&
  pj.metadata.annotations?.[PDFJOB_ANNOTATIONS.rejected] === undefined &&
  !TERMINAL_PHASES.includes(pj.status?.phase ?? "Pending");

export class FairQueue {
  readonly #max: number;
  readonly #enqueue: (key: string) => void;
  readonly #entries = new Map<string, Entry>();
  /** Places handed out whose Job the cache does not show yet. */
  readonly #reserved = new Set<string>();
  #dispatching: NodeJS.Timeout | undefined;

  /** `maxRunning` 0: no limit (every PdfJob starts at once). */
  constructor(maxRunning: number, enqueue: (key: string) => void) {
    this.#max = maxRunning > 0 ? maxRunning : Infinity;
    this.#enqueue = enqueue;
  }

  /** Feeds a PdfJob's change from the informer. */
  observe(pj: PdfJob, kind: "add" | "update" | "delete" | "resync"): void {
    const key = objectKey(pj);
    const before = this.#entries.get(key);
    if (kind === "delete" || !competes(pj)) {
      if (before) {
        this.#entries.delete(key);
        this.#reserved.delete(key);
        this.#soon();
      }
      return;
    }
    const running = Boolean(pj.status?.jobName) || this.#reserved.has(key);
    if (pj.status?.jobName) this.#reserved.delete(key);
    this.#entries.set(key, { key, tenant: pj.spec.tenant, createdMs: createdMs(pj), running, shown: pj.status?.queuePosition });
    if (!before || before.running !== running) this.#soon();
  }

  get running(): number {
    let n = 0;
    for (const e of this.#entries.values()) if (e.running) n++;
    return n;
  }

  get queued(): number {
    return this.#entries.size - this.running;
  }

  /**
   * May this PdfJob's Job be created now? A queued PdfJob may when it is among the first free
   * places of the fair order; the place is then reserved for it. `position` is its place in the
   * queue otherwise (1 = next).
   */
  admit(key: string): { start: boolean; position: number; reserved?: true } {
    const e = this.#entries.get(key);
    if (!e || e.running) return { start: true, position: 0 };
    const order = this.order();
    const position = order.indexOf(key) + 1;
    const free = this.#max - this.running;
    if (position > 0 && position <= free) {
      e.running = true;
      this.#reserved.add(key);
      return { start: true, position: 0, reserved: true };
    }
    return { start: false, position: Math.max(1, position - Math.max(0, free)) };
  }

  /** Gives back a place `admit` handed out but that was not used (no Job was created). */
  release(key: string): void {
    if (!this.#reserved.delete(key)) return;
    const e = this.#entries.get(key);
    if (e) e.running = false;
    this.#soon();
  }

  /** The queued PdfJobs' keys in the order they get places. */
  order(): string[] {
    const queues = new Map<string, Entry[]>();
    const running = new Map<string, number>();
    for (const e of this.#entries.values()) {
      if (e.running) running.set(e.tenant, (running.get(e.tenant) ?? 0) + 1);
      else {
        let q = queues.get(e.tenant);
        if (!q) queues.set(e.tenant, (q = []));
        q.push(e);
      }
    }
    for (const q of queues.values()) q.sort((a, b) => a.createdMs - b.createdMs || (a.key < b.key ? -1 : 1));
    const heads = [...queues.entries()].map(([tenant, q]) => ({ tenant, q, i: 0, load: running.get(tenant) ?? 0 }));
    const out: string[] = [];
    for (;;) {
      let best: (typeof heads)[number] | undefined;
      for (const h of heads) {
        if (h.i >= h.q.length) continue;
        if (!best || h.load < best.load || (h.load === best.load && h.q[h.i]!.createdMs < best.q[best.i]!.createdMs)) best = h;
      }
      if (!best) return out;
      out.push(best.q[best.i++]!.key);
      best.load++;
    }
  }

  /** Coalesces dispatches: one per tick however many changes came in. */
  #soon(): void {
    if (this.#dispatching) return;
    this.#dispatching = setTimeout(() => {
      this.#dispatching = undefined;
      this.dispatch();
    }, 0);
    this.#dispatching.unref();
  }

  /** Enqueues the PdfJobs that may start now, and those whose shown position changed. */
  dispatch(): void {
    const order = this.order();
    const free = Math.max(0, this.#max - this.running);
    for (const [i, key] of order.entries()) {
      const e = this.#entries.get(key)!;
      if (i < free || e.shown !== shownPosition(i - free + 1)) this.#enqueue(key);
    }
  }

  stop(): void {
    if (this.#dispatching) clearTimeout(this.#dispatching);
  }
}
