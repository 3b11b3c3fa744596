/**
 * A container as a local process: its own process group (so `sh -c` children die with it),
 * stdout and stderr in one log file (what `kubectl logs` would show), the exit code reported
 * the way container runtimes do (128 + signal number when killed: 137 for SIGKILL, 143 for
 * SIGTERM), and the termination message read like the kubelet reads it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { constants } from "node:os";

/** What a process needs to start: all paths already local. */
export interface ProcessSpec {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly logFile: string;
}

/** How the process ended. */
export interface ProcessExit {
  readonly exitCode: number;
  readonly signal?: NodeJS.Signals;
  readonly finishedAt: Date;
}

/** A running (or finished) container process. */
export interface LocalProcess {
  readonly pid: number;
  readonly startedAt: Date;
  /** Resolves once the process has exited (and its whole process group has been killed). */
  readonly exited: Promise<ProcessExit>;
  /**
   * Stops the container like a runtime does: SIGTERM goes to the main process only (a
   * container's PID 1), SIGKILL to every process in it. A no-op once it has exited.
   */
  kill(signal: "SIGTERM" | "SIGKILL"): void;
}

/** Signals a process group; ESRCH (already gone) is not an error. */
const killGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
};

/**
 * Starts the process. Rejects when it cannot start at all (ENOENT: the mapped command does not
 * exist), which the kubelet reports like a runtime's StartError (exit code 128).
 */
export async function startProcess(spec: ProcessSpec): Promise<LocalProcess> {
  const [file, ...args] = spec.argv;
  if (file === undefined) throw new Error("empty argv");
  const fd = openSync(spec.logFile, "a", 0o644);
  let child: ChildProcess;
  try {
    // detached: a new process group, so kill(-pid) reaches every descendant, as a container's
    // PID namespace would on SIGKILL.
    child = spawn(file, args, { cwd: spec.cwd, env: spec.env, stdio: ["ignore", fd, fd], detached: true });
  } finally {
    closeSync(fd);
  }
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  const pid = child.pid ?? 0;
  let done = false;
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once("exit", (code, signal) => {
      done = true;
      // When a container's PID 1 exits, the kernel kills everything left in its PID namespace;
      // the nearest local equivalent is killing the process group.
      killGroup(pid, "SIGKILL");
      const signo = signal ? (constants.signals[signal] ?? 9) : 0;
      resolve({ exitCode: code ?? 128 + signo, ...(signal ? { signal } : {}), finishedAt: new Date() });
    });
  });
  return {
    pid,
    startedAt: new Date(),
    exited,
    kill(signal: "SIGTERM" | "SIGKILL"): void {
      if (done) return;
      if (signal === "SIGKILL") killGroup(pid, signal);
      else child.kill(signal);
    },
  };
}

/** The kubelet's limits (pkg/kubelet/kuberuntime: maxContainerTerminationMessageLength*). */
const MAX_MESSAGE_BYTES = 4096;
const FALLBACK_LOG_LINES = 80;
const FALLBACK_LOG_BYTES = 2048;

/**
 * The termination message: the file at terminationMessagePath (at most 4096 bytes); with
 * policy FallbackToLogsOnError and a failed container whose file is empty, the last 80 lines
 * (at most 2048 bytes) of its log instead.
 */
export function readTerminationMessage(messageFile: string, logFile: string, policy: string | undefined, exitCode: number): string {
  let message = "";
  try {
    message = readFileSync(messageFile).subarray(0, MAX_MESSAGE_BYTES).toString("utf8");
  } catch {
    // No file: the process removed it; same as empty.
  }
  if (message === "" && policy === "FallbackToLogsOnError" && exitCode !== 0) {
    try {
      const tail = readFileSync(logFile, "utf8")
        .split("\n")
        .slice(-FALLBACK_LOG_LINES - 1)
        .join("\n");
      const bytes = Buffer.from(tail, "utf8");
      message = bytes.subarray(Math.max(0, bytes.length - FALLBACK_LOG_BYTES)).toString("utf8");
    } catch {
      // No log yet.
    }
  }
  return message;
}
