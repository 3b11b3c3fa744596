/**
 * Runs an engine as a child process: no shell, arguments as an array, output captured with a
 * bound, and killed (the whole process group) when the job's signal aborts.
 */
import { spawn } from "node:child_process";

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  signal?: AbortSignal;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Most bytes of stdout and of stderr kept; the rest is dropped. */
  maxOutput?: number;
}

/** Aborted execution: the job's signal fired before the process ended. */
export class ExecAborted extends Error {
  override readonly name = "ExecAborted";
}

export function exec(command: string, args: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
  const max = opts.maxOutput ?? 1024 * 1024;
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new ExecAborted(`${command} not started: aborted`));
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
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
      resolve({
        code: code ?? (sig ? 128 : 1),
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
  });
}
