/**
 * One container run with runc (runc, not crun: crun 1.8 refuses this host's hybrid cgroup layout).
 * Its bundle is a directory of the pod: an overlay whose lower layer is the image's unpacked root
 * file system (shared, never written) and whose upper layer is the container's own, so a writable
 * root file system stays private and a read-only one (root.readonly) cannot be written at all;
 * config.json from oci-spec.ts.
 *
 * `runc run --keep` in the foreground: runc is our child, the container's stdout and stderr go to
 * the log file, and runc exits with the container's status (128 + signal when it was killed).
 * --keep leaves the stopped container — and so its memory cgroup — in place until we have read the
 * cgroup's OOM-kill counter: that is how an OOMKilled container is told from one that was simply
 * SIGKILLed (the kernel counts kills by the OOM killer in memory.oom_control, cgroup v1, or in
 * memory.events, cgroup v2). Then `runc delete`. A start failure (no such executable, a mount
 * that fails) is runc's own error, which it writes to its JSON log: the kubelet reports it as
 * StartError with exit code 128, like containerd.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface ContainerExit {
  readonly exitCode: number;
  readonly finishedAt: Date;
  /** The memory cgroup's OOM killer killed a process of the container. */
  readonly oomKilled: boolean;
  /** runc could not start the process (the kubelet's StartError). */
  readonly startError?: string;
}

/** A running (or finished) container. */
export interface RunningContainer {
  readonly id: string;
  /** Host pid of runc (the container's init is its child). */
  readonly pid: number;
  readonly startedAt: Date;
  readonly exited: Promise<ContainerExit>;
  /**
   * SIGTERM goes to the container's init (PID 1 of its PID namespace), as a runtime's StopContainer
   * does first; SIGKILL kills it, and with it every process of the namespace.
   */
  kill(signal: "SIGTERM" | "SIGKILL"): void;
  /** The same, synchronously: for a process about to exit. */
  killSync(): void;
}

export interface RuncOptions {
  /** runc's state directory (--root), one per kubelet. */
  readonly stateDir: string;
}

export interface RunSpec {
  readonly id: string;
  /** The container's bundle directory (created; removed by `cleanup()`). */
  readonly bundle: string;
  /** The image's unpacked root file system (the overlay's lower layer). */
  readonly imageRootfs: string;
  /** config.json, with root.path left for us to set. */
  readonly config: Record<string, unknown>;
  readonly logFile: string;
}

/** cgroup v1 memory controller mount, or the v2 unified hierarchy. */
function oomKills(cgroupsPath: string): number {
  const v1 = path.join("/sys/fs/cgroup/memory", cgroupsPath, "memory.oom_control");
  const v2 = path.join("/sys/fs/cgroup", cgroupsPath, "memory.events");
  for (const file of [v1, v2]) {
    try {
      const m = /^oom_kill (\d+)$/m.exec(readFileSync(file, "utf8"));
      if (m) return Number(m[1]);
    } catch {
      // not this layout
    }
  }
  return 0;
}

/** runc's own error, from its JSON log (`--log-format json`): the last line at level error. */
function runcError(logFile: string): string | undefined {
  try {
    const lines = readFileSync(logFile, "utf8").trim().split("\n").filter(Boolean);
    for (const line of lines.reverse()) {
      const entry = JSON.parse(line) as { level?: string; msg?: string };
      if (entry.level === "error" || entry.level === "fatal") return entry.msg;
    }
  } catch {
    // no log: runc never got that far
  }
  return undefined;
}

/** Mounts the overlay root file system of a bundle. */
function mountRootfs(bundle: string, lower: string): string {
  const rootfs = path.join(bundle, "rootfs");
  for (const d of ["rootfs", "upper", "work"]) mkdirSync(path.join(bundle, d), { recursive: true });
  execFileSync("mount", [
    "-t",
    "overlay",
    "overlay",
    "-o",
    `lowerdir=${lower},upperdir=${path.join(bundle, "upper")},workdir=${path.join(bundle, "work")}`,
    rootfs,
  ]);
  return rootfs;
}

/** Starts the container; resolves once runc has created it (its init is running). */
export async function runContainer(opts: RuncOptions, spec: RunSpec): Promise<RunningContainer> {
  mkdirSync(spec.bundle, { recursive: true });
  const rootfs = mountRootfs(spec.bundle, spec.imageRootfs);
  const config = { ...spec.config, root: { ...(spec.config.root as object), path: rootfs } };
  writeFileSync(path.join(spec.bundle, "config.json"), JSON.stringify(config));
  const runcLog = path.join(spec.bundle, "runc.log");
  const pidFile = path.join(spec.bundle, "pid");
  const cgroupsPath = (config as { linux?: { cgroupsPath?: string } }).linux?.cgroupsPath ?? "";
  const fd = openSync(spec.logFile, "a", 0o644);
  const runc = spawn(
    "runc",
    [
      "--root",
      opts.stateDir,
      "--log",
      runcLog,
      "--log-format",
      "json",
      "run",
      "--keep",
      "--bundle",
      spec.bundle,
      "--pid-file",
      pidFile,
      spec.id,
    ],
    { stdio: ["ignore", fd, fd], detached: true },
  );
  closeSync(fd);
  await new Promise<void>((resolve, reject) => {
    runc.once("spawn", resolve);
    runc.once("error", reject);
  });
  const startedAt = new Date();
  let done = false;
  const runcKill = (signal: string): Promise<unknown> =>
    run("runc", ["--root", opts.stateDir, "kill", spec.id, signal]).catch(() => undefined); // not running (any more): nothing to kill
  const exited = new Promise<ContainerExit>((resolve) => {
    runc.once("exit", (code, signal) => {
      done = true;
      const finishedAt = new Date();
      const started = existsSync(pidFile);
      const error = code !== 0 ? runcError(runcLog) : undefined;
      const oomKilled = oomKills(cgroupsPath) > 0;
      void run("runc", ["--root", opts.stateDir, "delete", "--force", spec.id])
        .catch(() => undefined)
        .then(() => run("umount", [rootfs]).catch(() => run("umount", ["-l", rootfs]).catch(() => undefined)))
        .then(() => {
          // runc exits with the container's status; killed itself (it never is), 128 + signal.
          const exitCode = code ?? 128 + (signal === "SIGKILL" ? 9 : 15);
          if (!started || (error && /unable to start container process|exec:|starting container process/.test(error))) {
            resolve({ exitCode: 128, finishedAt, oomKilled: false, startError: error ?? `runc exited with ${exitCode}` });
          } else resolve({ exitCode, finishedAt, oomKilled });
        });
    });
  });
  return {
    id: spec.id,
    pid: runc.pid ?? 0,
    startedAt,
    exited,
    kill(signal): void {
      if (!done) void runcKill(signal === "SIGKILL" ? "KILL" : "TERM");
    },
    killSync(): void {
      if (done) return;
      // The process is exiting: no event loop left to clean up after runc, so do it here.
      for (const argv of [
        ["runc", "--root", opts.stateDir, "kill", spec.id, "KILL"],
        ["runc", "--root", opts.stateDir, "delete", "--force", spec.id],
        ["umount", "-l", rootfs],
      ]) {
        try {
          execFileSync(argv[0]!, argv.slice(1), { stdio: "ignore" });
        } catch {
          // gone already
        }
      }
    },
  };
}

/** Removes a finished container's bundle (its overlay is unmounted by then). */
export async function removeBundle(bundle: string): Promise<void> {
  await rm(bundle, { recursive: true, force: true });
}
