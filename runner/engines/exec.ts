/**
 * Runs an engine as a child process: no shell, arguments as an array, output captured with a
 * bound, and killed (the whole process group) when the job's signal aborts.
 *
 * Least privilege (core/sandbox.ts): the engine starts with the allow-listed environment (PATH,
 * HOME, TMPDIR, locale) plus what its caller adds — never the runner's own (FOLIO_*, AWS_*, a
 * spec with presigned URLs) — and, inside a job whose sandbox mode is `bwrap`, in bubblewrap,
 * seeing only that job's files. An engine killed by the kernel's OOM killer (its container's or
 * its own memory limit) fails the job with `limit_exceeded`, not as an engine fault.
 */
import { spawn } from "node:child_process";
import { existsSync, lstatSync, statSync } from "node:fs";
import { JobError } from "../../core/errors.ts";
import { bwrapArgv, currentSandbox, engineEnv } from "../../core/sandbox.ts";
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

const hostFs = {
  exists: (p: string): boolean => existsSync(p),
  isDir: (p: string): boolean => statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false,
  isLink: (p: string): boolean => lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink() ?? false,
};

/** The command line that runs `command` here: wrapped in the job's sandbox when it has one. */
export function sandboxed(command: string, args: readonly string[], cwd?: string): { file: string; args: string[] } {
  const scope = currentSandbox();
  if (scope?.mode !== "bwrap") return { file: command, args: [...args] };
  const [file, ...rest] = bwrapArgv(scope, command, args, cwd, hostFs);
  return { file: file!, args: rest };
}

export function exec(command: string, args: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
  const max = opts.maxOutput ?? 1024 * 1024;
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new ExecAborted(`${command} not started: aborted`));
    const run = sandboxed(command, args, opts.cwd);
    const oomBefore = oomKillCount();
    const child = spawn(run.file, run.args, {
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
      // SIGKILL from nobody here: the OOM killer, when the memory cgroup counted a kill meanwhile.
      const stderr = Buffer.concat(err).toString("utf8");
      if ((sig === "SIGKILL" || code === 137) && memoryLimitHit(oomBefore)) {
        return reject(new JobError("limit_exceeded", "The document needs more memory than the runner may use."));
      }
      resolve({ code: code ?? (sig ? 128 : 1), stdout: Buffer.concat(out).toString("utf8"), stderr });
    });
  });
}
