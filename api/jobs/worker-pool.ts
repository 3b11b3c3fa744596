/**
 * A bounded pool of runner worker processes (`folio runner --worker`), each taking one job at a
 * time as a line of JSON on stdin and answering with a line on stdout. A crashing or runaway
 * engine never takes the API down: a worker that dies fails only its own job and is replaced;
 * cancelling a job kills its worker. The API imports nothing of runner/ but this contract.
 *
 * With FOLIO_SANDBOX=bwrap each worker runs in bubblewrap and sees only its staging directory
 * (worker-sandbox.ts): the pool stages each job's inputs there, takes the outputs out, and
 * empties it before the worker's next job.
 */
import { spawn, type ChildProcess, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { jsonLine } from "../../core/json-line.ts";
import type { Logger } from "../../core/logger.ts";
import type { RunnerResult, RunnerSpec } from "../../core/schemas/job.ts";
import { engineEnv } from "../../core/sandbox.ts";
import { Stage, workerSandbox, type WorkerSandbox } from "./worker-sandbox.ts";

export type WorkerAnswer = { result: RunnerResult } | { error: { code: string; message: string } };

/** Thrown when a job's worker died or was killed (cancel) before answering. */
export class WorkerLost extends Error {
  override readonly name = "WorkerLost";
}

interface Slot {
  child: ChildProcess;
  startedAt: number;
  /** The job the slot holds, from staging its inputs until its stage is emptied again. */
  busy: { jobId: string } | null;
  /** The answer awaited from the worker (set while the job's line is out). */
  waiting: { resolve: (a: WorkerAnswer) => void; reject: (e: Error) => void } | null;
  jobs: number;
  /** The worker's staging directory when it is sandboxed. */
  stage: Stage | null;
}

/**
 * What a runner worker needs of the API's environment: the engines' allow-list (PATH, HOME, TMPDIR,
 * locale), Node's own settings, and the configuration keys the runner reads — never the API's
 * other secrets or settings. (The data directory's and TLS files' paths go along only so the
 * sandbox can hide them: core/sandbox.ts.)
 */
const RUNNER_KEYS =
  /^(FOLIO_(LOG_LEVEL|PRETTY_LOGS|TMP_DIR|QPDF|SOFFICE\w*|MAX_\w+|JOB_TIMEOUT_MS|SANDBOX\w*|DATA_DIR|TLS_CERT|TLS_KEY)|NODE_\w+)$/;

export function workerEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = engineEnv(env);
  for (const [k, v] of Object.entries(env)) if (v !== undefined && RUNNER_KEYS.test(k)) out[k] = v;
  return out;
}

/** The command that starts a worker: this checkout's `folio` entry point, compiled or not. */
export function defaultWorkerCommand(): string[] {
  const compiled = fileURLToPath(new URL("../../bin/folio.js", import.meta.url));
  const source = fileURLToPath(new URL("../../bin/folio.ts", import.meta.url));
  return [process.execPath, existsSync(compiled) ? compiled : source, "runner", "--worker"];
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly waiters: (() => void)[] = [];
  private closed = false;
  /** Consecutive workers that died young; drives the respawn backoff. */
  private crashStreak = 0;
  private readonly command: string[];
  private readonly env: NodeJS.ProcessEnv;
  private readonly log: Logger;
  private readonly sandbox: WorkerSandbox | null;
  readonly size: number;

  constructor(opts: { size: number; command?: string[]; env: NodeJS.ProcessEnv; log: Logger }) {
    this.size = opts.size;
    this.command = opts.command ?? defaultWorkerCommand();
    this.env = workerEnv(opts.env);
    this.log = opts.log;
    this.sandbox = opts.size > 0 ? workerSandbox(this.env) : null;
    for (let i = 0; i < opts.size; i++) this.slots.push(this.spawnSlot());
  }

  /** Starts a worker: in bubblewrap with a stage of its own when sandboxed (as nobody under root). */
  private startWorker(): { child: ChildProcessByStdio<Writable, Readable, null>; stage: Stage | null } {
    const stage = this.sandbox ? new Stage(this.sandbox) : null;
    const [cmd, ...args] = stage ? stage.argv(this.command) : this.command;
    const user = this.sandbox?.user ?? {};
    const child = spawn(cmd!, args, { stdio: ["pipe", "pipe", "inherit"], env: stage ? stage.env(this.env) : this.env, ...user });
    return { child, stage };
  }

  private spawnSlot(): Slot {
    const { child, stage } = this.startWorker();
    const slot: Slot = { child, startedAt: Date.now(), busy: null, waiting: null, jobs: 0, stage };
    const lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      const waiting = slot.waiting;
      if (!waiting) return;
      slot.waiting = null;
      try {
        waiting.resolve(JSON.parse(line) as WorkerAnswer);
      } catch {
        waiting.reject(new WorkerLost("the worker answered with something that is not JSON"));
      }
    });
    child.on("exit", (code, signal) => {
      const waiting = slot.waiting;
      slot.waiting = null;
      if (waiting) waiting.reject(new WorkerLost(`the worker exited (${signal ?? code}) during the job`));
      void stage?.remove().catch(() => undefined);
      if (this.closed) return;
      // A worker that dies within seconds of starting (a broken install) must not respawn in a
      // tight loop: back off exponentially up to 30 s, and reset once one lives long enough.
      this.crashStreak = Date.now() - slot.startedAt < 5000 ? this.crashStreak + 1 : 0;
      const delay = this.crashStreak > 1 ? Math.min(30_000, 250 * 2 ** this.crashStreak) : 0;
      this.log.warn({ code, signal, respawn_in_ms: delay }, "Runner worker exited; starting a new one");
      const timer = setTimeout(() => {
        const i = this.slots.indexOf(slot);
        if (i >= 0 && !this.closed) this.slots[i] = this.spawnSlot();
        this.release();
      }, delay);
      timer.unref();
    });
    child.stdin.on("error", () => {
      /* the exit handler deals with a dead worker */
    });
    return slot;
  }

  private release(): void {
    this.waiters.shift()?.();
  }

  /** How many workers are running a job now. */
  get busyCount(): number {
    return this.slots.filter((s) => s.busy).length;
  }

  get idleCount(): number {
    return this.slots.filter((s) => !s.busy).length;
  }

  /** Runs a spec on the next idle worker (waiting for one if all are busy). */
  async run(jobId: string, spec: RunnerSpec): Promise<WorkerAnswer> {
    for (;;) {
      if (this.closed) throw new WorkerLost("the pool is closed");
      const slot = this.slots.find((s) => !s.busy && !s.child.killed && s.child.exitCode === null);
      if (slot) {
        slot.busy = { jobId };
        slot.jobs++;
        return this.runOn(slot, jobId, spec);
      }
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  /** The job on `slot`: staged in, sent, answered, its outputs taken out, the stage emptied. */
  private async runOn(slot: Slot, jobId: string, spec: RunnerSpec): Promise<WorkerAnswer> {
    const stage = slot.stage;
    try {
      const sent = stage ? await stage.stageSpec(spec) : spec;
      const answer = await new Promise<WorkerAnswer>((resolve, reject) => {
        // Killed (cancel) or dead while its inputs were staged: nothing will answer.
        if (slot.child.killed || slot.child.exitCode !== null || slot.child.signalCode !== null)
          return reject(new WorkerLost("the worker exited before the job"));
        slot.waiting = { resolve, reject };
        slot.child.stdin!.write(jsonLine({ id: jobId, spec: sent }));
      });
      return stage && "result" in answer ? { result: await stage.collect(answer.result, spec.output_dir) } : answer;
    } finally {
      await stage?.wipe();
      slot.busy = null;
      this.release();
    }
  }

  /** Kills the worker running `jobId` (its job rejects with WorkerLost); true if one was. */
  cancel(jobId: string): boolean {
    const slot = this.slots.find((s) => s.busy?.jobId === jobId);
    if (!slot) return false;
    slot.child.kill("SIGKILL");
    return true;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      this.slots.map(
        (s) =>
          new Promise<void>((resolve) => {
            if (s.child.exitCode !== null || s.child.signalCode !== null) return resolve();
            s.child.once("exit", () => resolve());
            s.child.stdin!.end();
            setTimeout(() => s.child.kill("SIGKILL"), 5000).unref();
          }),
      ),
    );
    for (const w of this.waiters.splice(0)) w();
  }
}
