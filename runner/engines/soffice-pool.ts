/**
 * A pool of warm LibreOffice instances: a fixed number of slots, one office and one job at a time
 * per slot, a FIFO queue when every slot is busy. The pool owns the lifecycle rules:
 *  - a job that runs past its timeout (or whose job deadline fires) kills its office, which is
 *    restarted; the job fails with `timeout`;
 *  - an office that dies between jobs is restarted at once; one that dies during a job fails that
 *    job with `conversion_failed` (the document crashed it) and is restarted;
 *  - an office is recycled after `maxJobs` conversions or when soffice.bin's RSS passes `maxRssMb`
 *    (LibreOffice's caches grow and it leaks on some documents), before the next job reaches it.
 * Slots start eagerly, so a long-lived worker is warm before its first job.
 */
import { randomBytes } from "node:crypto";
import { readdir, rm, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { JobError } from "../../core/errors.ts";
import type { Logger } from "../../core/logger.ts";
import { pathToFileURL } from "node:url";
import { IpcAborted, IpcInterrupted, IpcUnavailable, pipePathFor } from "./soffice-ipc.ts";
import { RM_RETRYING, SofficeInstance } from "./soffice-instance.ts";
import type { OfficeSandbox } from "./soffice-sandbox.ts";
import {
  conversionTimeout,
  stageInput,
  verifyPdfOutput,
  type SofficeConvertOptions,
  type SofficeProvider,
  type StagedJob,
} from "./soffice-job.ts";

export interface SofficePoolOptions {
  soffice: string;
  size: number;
  /** Parent directory for the instances' profiles (FOLIO_TMP_DIR). */
  tmpDir: string;
  jobTimeoutMs: number;
  maxJobs: number;
  maxRssMb: number;
  log: Logger;
  startTimeoutMs?: number;
  /** Each office in a bwrap sandbox of its own (soffice-sandbox.ts) when the mode is bwrap. */
  sandbox?: OfficeSandbox;
}

/** Counters and the live instances, for tests, benchmarks and metrics. */
export interface SofficePoolStats {
  size: number;
  /** Directory holding every instance's profile; each soffice's command line contains it. */
  root: string;
  starts: number;
  /** Instances replaced for any reason (timeout, crash, recycling). */
  restarts: number;
  recycles: number;
  crashes: number;
  timeouts: number;
  completed: number;
  queued: number;
  busy: number;
  instances: { slot: number; generation: number; pid: number | null; binPid: number | null; jobs: number; alive: boolean }[];
}

interface Slot {
  index: number;
  generation: number;
  busy: boolean;
  instance: SofficeInstance | null;
  ready: Promise<SofficeInstance> | null;
}

interface Waiter {
  resolve: (slot: Slot) => void;
  reject: (err: Error) => void;
}

type Reason = "timeout" | "crash" | "recycle";

export class SofficePool implements SofficeProvider {
  readonly engine = "warm";
  private readonly opts: SofficePoolOptions;
  private readonly root: string;
  private readonly slots: Slot[];
  private readonly waiters: Waiter[] = [];
  private closed = false;
  private readonly counts = { starts: 0, restarts: 0, recycles: 0, crashes: 0, timeouts: 0, completed: 0 };

  constructor(opts: SofficePoolOptions) {
    this.opts = opts;
    this.root = path.join(opts.tmpDir, `folio-soffice-${process.pid}-${randomBytes(4).toString("hex")}`);
    this.slots = Array.from({ length: Math.max(1, opts.size) }, (_, index) => ({
      index,
      generation: 0,
      busy: false,
      instance: null,
      ready: null,
    }));
    void sweepStaleRoots(opts.tmpDir);
    // A failed start is logged by launch() and reaches the jobs waiting on slot.ready; this catch
    // only keeps it from being unhandled when no job waits (the slot starts again for the next one).
    for (const slot of this.slots) void this.launch(slot).catch(() => undefined);
  }

  async toPdf(input: string, opts: SofficeConvertOptions): Promise<string> {
    if (this.closed) throw poolClosed();
    const job = await stageInput(input, opts);
    const slot = await this.acquire(opts.signal);
    let output: string[];
    try {
      output = await this.runOn(slot, job, opts.signal, true);
    } finally {
      this.release(slot);
    }
    try {
      await verifyPdfOutput(job.expected);
    } catch (err) {
      // LibreOffice names the reason on its stdout ("Error: source file could not be loaded").
      this.opts.log.info({ slot: slot.index, output }, "LibreOffice could not convert a document");
      throw err;
    }
    return job.expected;
  }

  /** Runs one conversion on the slot's office; returns what the office printed meanwhile. */
  private async runOn(slot: Slot, job: StagedJob, jobSignal: AbortSignal, mayRetry: boolean): Promise<string[]> {
    const instance = await this.instanceOf(slot, jobSignal);
    const limit = AbortSignal.timeout(this.opts.jobTimeoutMs);
    try {
      await instance.convert(job.input, job.outDir, AbortSignal.any([jobSignal, limit]));
    } catch (err) {
      if (err instanceof IpcAborted) {
        this.counts.timeouts++;
        this.opts.log.warn({ slot: slot.index, soffice_pid: instance.binPid }, "Killed LibreOffice after a conversion ran out of time");
        await this.replace(slot, instance, "timeout");
        throw limit.aborted
          ? conversionTimeout(this.opts.jobTimeoutMs)
          : new JobError("timeout", "The job ran out of time during the conversion.");
      }
      if (err instanceof IpcUnavailable && mayRetry) {
        // It died between jobs before we noticed: nothing of this job reached it, so try once more.
        await this.replace(slot, instance, "crash");
        return this.runOn(slot, job, jobSignal, false);
      }
      if (err instanceof IpcInterrupted || err instanceof IpcUnavailable) {
        this.opts.log.warn({ slot: slot.index, output: instance.lastOutput, err }, "LibreOffice died during a conversion");
        await this.replace(slot, instance, "crash");
        throw new JobError("conversion_failed", "LibreOffice crashed while converting the document.", { cause: err });
      }
      throw err;
    }
    this.counts.completed++;
    const rss = await instance.rssMb();
    if (instance.jobs >= this.opts.maxJobs || (rss !== null && rss > this.opts.maxRssMb)) {
      this.opts.log.info({ slot: slot.index, jobs: instance.jobs, rss_mb: rss }, "Recycled LibreOffice");
      await this.replace(slot, instance, "recycle");
    }
    return instance.lastOutput;
  }

  /** The slot's office, started if needed (never once the pool is closed: nothing would kill it). */
  private async instanceOf(slot: Slot, signal: AbortSignal): Promise<SofficeInstance> {
    if (this.closed) throw poolClosed();
    const ready = slot.ready ?? this.launch(slot);
    const aborted = new Promise<never>((_, reject) => {
      const onAbort = (): void => reject(new JobError("timeout", "The job ran out of time waiting for LibreOffice to start."));
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      void ready.finally(() => signal.removeEventListener("abort", onAbort)).catch(() => undefined);
    });
    return Promise.race([ready, aborted]);
  }

  private launch(slot: Slot): Promise<SofficeInstance> {
    slot.generation++;
    this.counts.starts++;
    const instance = new SofficeInstance({
      soffice: this.opts.soffice,
      dir: path.join(this.root, `slot${slot.index}-gen${slot.generation}`),
      log: this.opts.log,
      startTimeoutMs: this.opts.startTimeoutMs ?? 60_000,
      ...(this.opts.sandbox ? { sandbox: this.opts.sandbox } : {}),
    });
    instance.onUnexpectedExit = () => {
      // Crash between jobs: restart now, so the next job finds a warm office. During a job, the
      // job's IPC connection breaks and runOn() does the replacing.
      if (slot.instance === instance && !slot.busy && !this.closed) {
        // No job awaits this replacement; it fails only when the dead office cannot be cleared away.
        this.replace(slot, instance, "crash").catch((err: unknown) =>
          this.opts.log.error({ err, slot: slot.index }, "Could not clear away a crashed LibreOffice"),
        );
      }
    };
    slot.instance = instance;
    const ready = instance.start().then(
      () => {
        this.opts.log.info({ slot: slot.index, soffice_pid: instance.binPid }, "Started LibreOffice");
        return instance;
      },
      async (err: unknown) => {
        // Closing the pool (or replacing the office) stops a start half-way: not a failure to report.
        const cancelled = this.closed || instance.stopped;
        await instance.kill();
        if (slot.ready === ready) slot.ready = null;
        if (slot.instance === instance) slot.instance = null;
        if (cancelled) this.opts.log.debug({ slot: slot.index }, "LibreOffice start cancelled: the office was stopped");
        else this.opts.log.error({ err, slot: slot.index }, "LibreOffice did not start");
        // A job waiting for this office learns why it will not get one.
        throw this.closed ? poolClosed(err) : new Error("LibreOffice did not start", { cause: err });
      },
    );
    slot.ready = ready;
    return ready;
  }

  /**
   * Kills `old` (if it is still the slot's office) and starts its successor. Until the old office
   * is gone, the slot's `ready` is "kill, then launch": a job that takes the slot meanwhile waits
   * for it rather than starting an office of its own, so the pool never runs more offices than
   * it has slots, not even for a moment.
   */
  private async replace(slot: Slot, old: SofficeInstance, reason: Reason): Promise<void> {
    if (slot.instance !== old) return;
    slot.instance = null;
    this.counts.restarts++;
    if (reason === "recycle") this.counts.recycles++;
    if (reason === "crash") this.counts.crashes++;
    const killed = old.kill();
    const next = killed.then(() => (this.closed ? Promise.reject(poolClosed()) : this.launch(slot)));
    // A job that takes the slot meanwhile awaits `next` and handles its failure; until then, no one may.
    next.catch(() => undefined);
    slot.ready = next;
    await killed;
  }

  private acquire(signal: AbortSignal): Promise<Slot> {
    // close() has failed the queue already: a job arriving after it would wait for ever.
    if (this.closed) return Promise.reject(poolClosed());
    // Prefer a free slot whose office is up; otherwise any free slot (it will start its office).
    const free = this.slots.filter((s) => !s.busy);
    const slot = free.find((s) => s.instance?.isAlive) ?? free[0];
    if (slot) {
      slot.busy = true;
      return Promise.resolve(slot);
    }
    return new Promise<Slot>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: (s) => {
          signal.removeEventListener("abort", onAbort);
          resolve(s);
        },
        reject,
      };
      const onAbort = (): void => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new JobError("timeout", "The job ran out of time waiting for a free LibreOffice."));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private release(slot: Slot): void {
    const next = this.waiters.shift();
    if (next && !this.closed) next.resolve(slot);
    else slot.busy = false;
  }

  stats(): SofficePoolStats {
    return {
      size: this.slots.length,
      root: this.root,
      ...this.counts,
      queued: this.waiters.length,
      busy: this.slots.filter((s) => s.busy).length,
      instances: this.slots.map((s) => ({
        slot: s.index,
        generation: s.generation,
        pid: s.instance?.pid ?? null,
        binPid: s.instance?.binPid ?? null,
        jobs: s.instance?.jobs ?? 0,
        alive: s.instance?.isAlive ?? false,
      })),
    };
  }

  /**
   * Fails queued jobs, kills every office (and its process group) and removes the profiles. An
   * office still starting is cancelled: close() returns once its start has given up and cleaned
   * up after itself, so no start of the pool (its office, its profile, its log line) outlives it.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(poolClosed());
    await Promise.all(
      this.slots.map(async (slot) => {
        const { instance, ready } = slot;
        slot.instance = null;
        slot.ready = null;
        await instance?.kill();
        // Only waiting for it to settle: its failure is handled by whoever asked for the office.
        await ready?.catch(() => undefined);
      }),
    );
    await rm(this.root, RM_RETRYING);
  }
}

/** What a job gets from a closed pool; `cause` is what the closing interrupted, if anything. */
function poolClosed(cause?: unknown): Error {
  return new Error("the LibreOffice pool is closed", cause === undefined ? undefined : { cause });
}

/**
 * Removes the profile directories of pools whose process is gone (a runner killed before close();
 * its offices died with it through the watchdog, but their profiles stayed on disk).
 */
async function sweepStaleRoots(tmpDir: string): Promise<void> {
  for (const name of await readdir(tmpDir).catch(() => [] as string[])) {
    const pid = /^folio-soffice-(\d+)-[0-9a-f]+$/.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid) continue;
    if (await stat(`/proc/${pid}`).catch(() => null)) continue;
    // Their IPC sockets stayed in /tmp as well; the names follow from the profile URLs.
    for (const slot of await readdir(path.join(tmpDir, name)).catch(() => [] as string[])) {
      const url = pathToFileURL(path.join(tmpDir, name, slot, "profile")).href;
      await unlink(pipePathFor(url, process.getuid?.() ?? 0)).catch(() => undefined);
    }
    await rm(path.join(tmpDir, name), { recursive: true, force: true }).catch(() => undefined);
  }
}
