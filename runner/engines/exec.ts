/**
 * Runs an engine as a child process: no shell, arguments as an array, output captured with a
 * bound, and killed (the whole process group) when the job's signal aborts.
 *
 * Least privilege (core/sandbox.ts): the engine starts with the allow-listed environment (PATH,
 * HOME, TMPDIR, locale) plus what its caller adds — never the runner's own (FOLIO_*, AWS_*, a
 * spec with presigned URLs) — and, inside a job whose sandbox mode is `bwrap`, in that job's
 * bubblewrap sandbox (job-sandbox.ts: one per job, shared by its engines), seeing only its files. An engine killed by the kernel's OOM killer (its container's or
 * its own memory limit) fails the job with `limit_exceeded`, not as an engine fault.
 */
import { spawn } from "node:child_process";
import { JobError } from "../../core/errors.ts";
import { currentSandbox, engineEnv, scopeSession } from "../../core/sandbox.ts";
import { JobSandbox, SandboxAborted } from "./job-sandbox.ts";
import { memoryLimitHit, oomKillCount } from "./oom.ts";

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  signal?: AbortSignal;
  cwd?: string;
  /** Added to the allow-listed environment (undefined removes a name). */
  env?: Record<string, string | undefined>;
  /** Most bytes of stdout and of stderr kept; the rest is dropped. */
  maxOutput?: number;
}

/** Aborted execution: the job's signal fired before the process ended. */
export class ExecAborted extends Error {
  override readonly name = "ExecAborted";
}

/** The job's sandbox, when the job runs its engines in bubblewrap. */
function jobSandbox(): JobSandbox | undefined {
  return currentSandbox()?.mode === "bwrap" ? scopeSession((scope) => new JobSandbox(scope)) : undefined;
}

/** An engine killed by SIGKILL that nobody here sent: the OOM killer, if the cgroup counted a kill. */
function oomVerdict(code: number, signal: NodeJS.Signals | null, oomBefore: number): JobError | undefined {
  if ((signal === "SIGKILL" || code === 137) && memoryLimitHit(oomBefore)) {
    return new JobError("limit_exceeded", "The document needs more memory than the runner may use.");
  }
  return undefined;
}

async function execInSandbox(sandbox: JobSandbox, command: string, args: readonly string[], opts: ExecOptions): Promise<ExecResult> {
  const oomBefore = oomKillCount();
  try {
    const res = await sandbox.run(command, args, {
      maxOutput: opts.maxOutput ?? 1024 * 1024,
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
      ...(opts.env ? { env: opts.env } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const oom = oomVerdict(res.code, null, oomBefore);
    if (oom) throw oom;
    return res;
  } catch (err) {
    if (err instanceof SandboxAborted) throw new ExecAborted(err.message, { cause: err });
    throw err;
  }
}

export function exec(command: string, args: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
  const max = opts.maxOutput ?? 1024 * 1024;
  const sandbox = jobSandbox();
  if (sandbox) return execInSandbox(sandbox, command, args, opts);
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new ExecAborted(`${command} not started: aborted`));
    const oomBefore = oomKillCount();
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: engineEnv(process.env, opts.env),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outLen = 0;
    let errLen = 0;
    child.stdout.on("data", (b: Buffer) => {
      if (outLen < max) out.push(b);
      outLen += b.length;
    });
    child.stderr.on("data", (b: Buffer) => {
      if (errLen < max) err.push(b);
      errLen += b.length;
    });
    const kill = (): void => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    };
    opts.signal?.addEventListener("abort", kill, { once: true });
    child.on("error", (e) => {
      opts.signal?.removeEventListener("abort", kill);
      reject(e);
    });
    child.on("close", (code, sig) => {
      opts.signal?.removeEventListener("abort", kill);
      if (opts.signal?.aborted) return reject(new ExecAborted(`${command} killed: aborted`));
      const oom = oomVerdict(code ?? 0, sig, oomBefore);
      if (oom) return reject(oom);
      resolve({ code: code ?? (sig ? 128 : 1), stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") });
    });
  });
}
