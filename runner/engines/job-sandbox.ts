/**
 * One bubblewrap sandbox per job, shared by all of that job's engine processes (core/sandbox.ts).
 *
 * A sandbox per engine process costs a full namespace set-up each time (bwrap: ~25 ms on a quiet
 * core, several times that under load), and one job runs several engines (a merge: five qpdf
 * processes). So the first engine of a job starts the job's sandbox — bwrap with the job's paths,
 * no network, its own PID namespace, the memory cap — running a small shell that runs each further
 * command it is sent, in that same sandbox: set-up once per job, then a fork and an exec per engine.
 *
 * The protocol goes through a control directory in the job's work directory (the sandbox's own
 * writable place; `.engines/`): for command N, Node writes `N.sh` (cd, the engine's own
 * environment, `exec` the engine, every word single-quoted) and sends "N" on the shell's stdin; the
 * shell runs it in the background with stdout and stderr to `N.out` and `N.err` and answers
 * "N <status>" (128 + signal for a killed engine). What a sandboxed engine could do to these files
 * it could do to its job's outputs anyway: the sandbox is the job's, not the command's.
 *
 * Aborting a command (the job's deadline, a conversion's timeout) kills the whole sandbox and
 * every engine in it; the next command of the job, if any, starts a new one.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, open, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { bwrapArgv, engineEnv, type SandboxScope } from "../../core/sandbox.ts";

export interface SandboxedResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Thrown when the command was aborted (its signal fired) or the sandbox died under it. */
export class SandboxAborted extends Error {
  override readonly name = "SandboxAborted";
}

/** POSIX shell single quotes: 'it'\''s'. */
const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

/**
 * The shell: the memory cap (RLIMIT_AS, in KiB: `ulimit -v`, which every engine inherits — one exec
 * less than prlimit), then each line a command number: run N.sh in a subshell in the background
 * (sourced: its `exec` replaces that subshell), answer "N status" when it ends.
 */
const SERVER =
  'd=$1; ulimit -v "$2" || exit 126; while IFS= read -r n; do ( ( . "$d/$n.sh" ) </dev/null >"$d/$n.out" 2>"$d/$n.err"; echo "$n $?" ) & done; wait';

/**
 * Reads at most `max` bytes of a file as UTF-8 ("" when it is missing). The buffer is the file's
 * size, not `max`: callers allow 64 MiB (qpdf's JSON) for outputs that are mostly a few bytes, and
 * zero-filling two 64 MiB buffers per command cost more than the sandbox itself (23 ms a command).
 */
async function head(file: string, max: number): Promise<string> {
  const fh = await open(file, "r").catch(() => null);
  if (!fh) return "";
  try {
    const { size } = await fh.stat();
    if (size === 0) return "";
    const buf = Buffer.allocUnsafe(Math.min(size, max));
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString("utf8");
  } finally {
    await fh.close();
  }
}

/** How long close() waits for a killed sandbox to be reaped (SIGKILL: milliseconds, unless the host is stalled). */
const REAP_WAIT_MS = 5_000;

/**
 * Whether a process of group `pgid` still runs (a zombie does not). The sandbox's outer bwrap can be
 * reaped while the engines in its pid namespace, killed with it, have yet to die: one of them may
 * finish the system call it was in (create one more file) after the outer process's exit is seen.
 */
async function groupRuns(pgid: number): Promise<boolean> {
  for (const entry of await readdir("/proc").catch(() => [])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // "pid (comm) state ppid pgrp …": comm may hold spaces and brackets, so read after the last ")".
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z" && state !== "X") return true;
  }
  return false;
}

/** One running sandbox: its shell, and the commands sent to it that have not answered yet. */
interface Session {
  readonly server: ChildProcess;
  readonly pending: Map<string, { resolve: (status: number) => void; reject: (e: Error) => void }>;
}

export class JobSandbox {
  readonly #scope: SandboxScope;
  readonly #dir: string;
  /** The sandbox new commands go to (starting or running); unset after kill(), so the next command starts a new one. */
  #session: Promise<Session> | undefined;
  #live: Session | undefined;
  /** Bumped by kill(): a sandbox still starting when it was killed is not used. */
  #generation = 0;
  #next = 0;
  /** Set by close(): the job is over, and no command starts a sandbox again. */
  #closed = false;

  /** `scope.writable[0]` (the job's work directory) holds the control directory. */
  constructor(scope: SandboxScope) {
    const work = scope.writable[0];
    if (!work) throw new Error("a job sandbox needs the job's work directory");
    this.#scope = scope;
    this.#dir = path.join(work, ".engines");
  }

  #start(): Promise<Session> {
    if (this.#closed) return Promise.reject(new SandboxAborted("the job's sandbox is closed"));
    this.#session ??= (async () => {
      const generation = this.#generation;
      await mkdir(this.#dir, { recursive: true, mode: 0o700 });
      if (generation !== this.#generation) throw new SandboxAborted("the job's sandbox was killed while it started");
      const kib = String(Math.floor(this.#scope.memoryBytes / 1024));
      // The shell sets the memory cap itself (`ulimit -v`): no prlimit in front.
      const [file, ...args] = bwrapArgv(this.#scope, "/bin/sh", ["-c", SERVER, "folio-engines", this.#dir, kib], undefined);
      const server = spawn(file!, args, { env: engineEnv(), stdio: ["pipe", "pipe", "ignore"], detached: true });
      const session: Session = { server, pending: new Map() };
      this.#live = session;
      createInterface({ input: server.stdout }).on("line", (line) => {
        const [n, status] = line.split(" ");
        const p = session.pending.get(n ?? "");
        session.pending.delete(n ?? "");
        p?.resolve(Number(status));
      });
      server.stdin.on("error", () => undefined);
      server.once("exit", () => {
        if (this.#live === session) this.#forget();
        for (const p of session.pending.values()) p.reject(new SandboxAborted("the job's sandbox ended"));
        session.pending.clear();
      });
      await new Promise<void>((resolve, reject) => {
        server.once("spawn", resolve);
        server.once("error", reject);
      });
      return session;
    })();
    return this.#session;
  }

  /** Runs `command args` in the job's sandbox; rejects with SandboxAborted when `signal` fires. */
  async run(
    command: string,
    args: readonly string[],
    opts: { cwd?: string; env?: Record<string, string | undefined>; signal?: AbortSignal; maxOutput: number },
  ): Promise<SandboxedResult> {
    if (opts.signal?.aborted) throw new SandboxAborted(`${command} not started: aborted`);
    const session = await this.#start();
    const n = String(this.#next++);
    const script = [
      ...(opts.cwd ? [`cd ${quote(opts.cwd)} || exit 127`] : []),
      ...Object.entries(opts.env ?? {}).map(([k, v]) => (v === undefined ? `unset ${k}` : `export ${k}=${quote(v)}`)),
      `exec ${[command, ...args].map(quote).join(" ")}`,
      "",
    ].join("\n");
    const base = path.join(this.#dir, n);
    await writeFile(`${base}.sh`, script, { mode: 0o600 });
    const done = new Promise<number>((resolve, reject) => session.pending.set(n, { resolve, reject }));
    const onAbort = (): void => this.kill();
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      // Killed meanwhile (another command's abort): its exit rejects `done`.
      if (session.server.exitCode === null && session.server.signalCode === null) session.server.stdin?.write(`${n}\n`);
      else session.pending.get(n)?.reject(new SandboxAborted("the job's sandbox ended"));
      const code = await done;
      return { code, stdout: await head(`${base}.out`, opts.maxOutput), stderr: await head(`${base}.err`, opts.maxOutput) };
    } catch (err) {
      throw opts.signal?.aborted ? new SandboxAborted(`${command} killed: aborted`, { cause: err }) : err;
    } finally {
      opts.signal?.removeEventListener("abort", onAbort);
      await Promise.all([".sh", ".out", ".err"].map((ext) => rm(`${base}${ext}`, { force: true })));
    }
  }

  /** The sandbox is no longer the one new commands go to: the next command starts a new one. */
  #forget(): void {
    this.#live = undefined;
    this.#session = undefined;
    this.#generation++;
  }

  /**
   * Kills the sandbox and every engine in it. Commands already in it fail (SandboxAborted); a
   * command sent after this starts a new sandbox, never the dying one.
   */
  kill(): void {
    const pid = this.#live?.server.pid;
    this.#forget();
    if (pid === undefined) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // gone already
    }
  }

  /**
   * Ends the job's sandbox for good: kills it and every engine still in it (an engine of a job
   * that failed early may still run: another input's inspection), waits for it to be reaped and for
   * its engines to be gone (groupRuns), and removes the control directory. A command sent
   * afterwards fails (SandboxAborted) instead of starting a sandbox that would outlive the job.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const server = this.#live?.server;
    server?.stdin?.end();
    this.kill();
    const deadline = Date.now() + REAP_WAIT_MS;
    if (server && server.exitCode === null && server.signalCode === null) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, REAP_WAIT_MS);
        server.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    // Then its engines: none may write into the work directory once the job is closed.
    while (server?.pid !== undefined && Date.now() < deadline && (await groupRuns(server.pid))) await new Promise((r) => setTimeout(r, 10));
    await rm(this.#dir, { recursive: true, force: true, maxRetries: 3 });
  }
}
