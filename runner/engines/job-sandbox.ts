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
import { mkdir, open, rm, writeFile } from "node:fs/promises";
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

export class JobSandbox {
  readonly #scope: SandboxScope;
  readonly #dir: string;
  #server: ChildProcess | undefined;
  #ready: Promise<void> | undefined;
  #next = 0;
  readonly #pending = new Map<string, { resolve: (status: number) => void; reject: (e: Error) => void }>();

  /** `scope.writable[0]` (the job's work directory) holds the control directory. */
  constructor(scope: SandboxScope) {
    const work = scope.writable[0];
    if (!work) throw new Error("a job sandbox needs the job's work directory");
    this.#scope = scope;
    this.#dir = path.join(work, ".engines");
  }

  #start(): Promise<void> {
    this.#ready ??= (async () => {
      await mkdir(this.#dir, { recursive: true, mode: 0o700 });
      const kib = String(Math.floor(this.#scope.memoryBytes / 1024));
      // The shell sets the memory cap itself (`ulimit -v`): no prlimit in front.
      const [file, ...args] = bwrapArgv(this.#scope, "/bin/sh", ["-c", SERVER, "folio-engines", this.#dir, kib], undefined);
      const server = spawn(file!, args, { env: engineEnv(), stdio: ["pipe", "pipe", "ignore"], detached: true });
      this.#server = server;
      createInterface({ input: server.stdout }).on("line", (line) => {
        const [n, status] = line.split(" ");
        const p = this.#pending.get(n ?? "");
        this.#pending.delete(n ?? "");
        p?.resolve(Number(status));
      });
      server.stdin.on("error", () => undefined);
      server.once("exit", () => {
        if (this.#server === server) {
          this.#server = undefined;
          this.#ready = undefined;
        }
        for (const p of this.#pending.values()) p.reject(new SandboxAborted("the job's sandbox ended"));
        this.#pending.clear();
      });
      await new Promise<void>((resolve, reject) => {
        server.once("spawn", resolve);
        server.once("error", reject);
      });
    })();
    return this.#ready;
  }

  /** Runs `command args` in the job's sandbox; rejects with SandboxAborted when `signal` fires. */
  async run(
    command: string,
    args: readonly string[],
    opts: { cwd?: string; env?: Record<string, string | undefined>; signal?: AbortSignal; maxOutput: number },
  ): Promise<SandboxedResult> {
    if (opts.signal?.aborted) throw new SandboxAborted(`${command} not started: aborted`);
    await this.#start();
    const n = String(this.#next++);
    const script = [
      ...(opts.cwd ? [`cd ${quote(opts.cwd)} || exit 127`] : []),
      ...Object.entries(opts.env ?? {}).map(([k, v]) => (v === undefined ? `unset ${k}` : `export ${k}=${quote(v)}`)),
      `exec ${[command, ...args].map(quote).join(" ")}`,
      "",
    ].join("\n");
    const base = path.join(this.#dir, n);
    await writeFile(`${base}.sh`, script, { mode: 0o600 });
    const done = new Promise<number>((resolve, reject) => this.#pending.set(n, { resolve, reject }));
    const onAbort = (): void => this.kill();
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      this.#server?.stdin?.write(`${n}\n`);
      const code = await done;
      return { code, stdout: await head(`${base}.out`, opts.maxOutput), stderr: await head(`${base}.err`, opts.maxOutput) };
    } catch (err) {
      throw opts.signal?.aborted ? new SandboxAborted(`${command} killed: aborted`, { cause: err }) : err;
    } finally {
      opts.signal?.removeEventListener("abort", onAbort);
      await Promise.all([".sh", ".out", ".err"].map((ext) => rm(`${base}${ext}`, { force: true })));
    }
  }

  /** Kills the sandbox and every engine in it. */
  kill(): void {
    const pid = this.#server?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // gone already
    }
  }

  /** Kills the sandbox (its engines have all answered by now) without waiting for it to be reaped. */
  async close(): Promise<void> {
    this.#server?.stdin?.end();
    this.kill();
    await rm(this.#dir, { recursive: true, force: true });
  }
}
