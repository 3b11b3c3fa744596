/**
 * One pod's life on the local kubelet, in the order pkg/kubelet's pod workers follow:
 * Pending (ContainerCreating, or CreateContainerConfigError / ErrImagePull while a reference is
 * missing, retried) → Running → terminated with exit code, reason and termination message →
 * phase Succeeded or Failed (restartPolicy Never). Deletion with a grace period sends SIGTERM,
 * then SIGKILL once the period (at least the kubelet's 2 s minimum) has passed; once the process
 * is gone and the terminal status is written, the pod is deleted with grace 0 so the API server
 * removes it. Pod-level activeDeadlineSeconds is enforced here too (reason DeadlineExceeded).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { V1Pod } from "@kubernetes/client-node";
import { resolveEnv, type ObjectSource } from "./env.ts";
import { findMapping, resolveArgv, type ImageMapping } from "./images.ts";
import { readTerminationMessage, startProcess, type LocalProcess, type ProcessExit, type ProcessSpec } from "./process.ts";
import { apiTime, statusPatch, terminatedReason, wasStarted, type ContainerState, type PodRuntimeStatus } from "./pod-status.ts";
import { prepareVolumes, translatePaths } from "./volumes.ts";

/** What a worker needs from the kubelet. */
export interface WorkerContext {
  readonly images: readonly ImageMapping[];
  readonly commands: Readonly<Record<string, readonly string[]>>;
  /** Environment every container starts with (the image's ENV stands in for it: PATH, LANG). */
  readonly baseEnv: Readonly<Record<string, string>>;
  readonly source: ObjectSource;
  /** Strategic-merge patch of pods/status; false when the pod is gone (stop working on it). */
  readonly patchStatus: (pod: V1Pod, patch: Record<string, unknown>) => Promise<boolean>;
  /** DELETE with grace 0 and a UID precondition. */
  readonly deleteNow: (pod: V1Pod) => Promise<void>;
  readonly log: (line: string) => void;
}

/** A container ready to start. */
interface PreparedSpec {
  readonly process: ProcessSpec;
  readonly terminationLog: string;
  readonly rootfs: string;
}

/** The kubelet never gives a container less than this to stop (minimumGracePeriodInSeconds). */
const MIN_GRACE_SECONDS = 2;
const RETRY_MS = 1000;

const isDeleting = (pod: V1Pod): boolean => Boolean(pod.metadata?.deletionTimestamp);

/** The running side of one pod (by UID). */
export class PodWorker {
  readonly dir: string;
  #pod: V1Pod;
  readonly #ctx: WorkerContext;
  readonly #startTime = new Date();
  #proc: LocalProcess | undefined;
  #exit: ProcessExit | undefined;
  #stopReason: { reason: string; message: string } | undefined;
  #terminating = false;
  #finished = false;
  #deleting = false;
  #wake: (() => void) | undefined;
  #timers: NodeJS.Timeout[] = [];

  /** Where stdout and stderr go; kept after the pod is gone, like /var/log/pods. */
  readonly logFile: string;

  constructor(pod: V1Pod, dir: string, logFile: string, ctx: WorkerContext) {
    this.#pod = pod;
    this.dir = dir;
    this.logFile = logFile;
    this.#ctx = ctx;
  }

  /** The process, once started (tests use its pid and log). */
  get process(): LocalProcess | undefined {
    return this.#proc;
  }
  get exit(): ProcessExit | undefined {
    return this.#exit;
  }
  /** The terminal status is written: the pod no longer takes a place on the node. */
  get finished(): boolean {
    return this.#finished;
  }

  /** Runs the pod to completion; never rejects. */
  run(): Promise<void> {
    return this.#run().catch((err: unknown) => {
      this.#ctx.log(`pod ${this.#name()}: worker failed: ${err instanceof Error ? err.stack : String(err)}`);
    });
  }

  /** The latest object from the watch: a deletionTimestamp starts graceful termination. */
  update(pod: V1Pod): void {
    this.#pod = pod;
    if (!isDeleting(pod)) return;
    if (this.#finished) this.#deleteOnce();
    else this.#terminate(pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30);
  }

  /** The pod is gone from the API (force-deleted): nothing is left to report to, kill now. */
  vanish(): void {
    this.#terminating = true;
    this.#wake?.();
    this.#proc?.kill("SIGKILL");
  }

  #name(): string {
    return `${this.#pod.metadata?.namespace ?? ""}/${this.#pod.metadata?.name ?? ""}`;
  }

  async #patch(s: Omit<PodRuntimeStatus, "startTime">): Promise<boolean> {
    return this.#ctx.patchStatus(this.#pod, statusPatch(this.#pod, { ...s, startTime: this.#startTime }));
  }

  #terminate(graceSeconds: number, reason?: { reason: string; message: string }): void {
    if (this.#terminating) return;
    this.#terminating = true;
    this.#stopReason = reason;
    this.#wake?.();
    this.#signal(graceSeconds);
  }

  #signal(graceSeconds: number): void {
    if (!this.#proc) return;
    this.#proc.kill("SIGTERM");
    const proc = this.#proc;
    this.#timers.push(
      setTimeout(
        () => {
          proc.kill("SIGKILL");
        },
        Math.max(MIN_GRACE_SECONDS, graceSeconds) * 1000,
      ),
    );
  }

  async #run(): Promise<void> {
    if (wasStarted(this.#pod)) {
      // A container this kubelet started before it restarted: the process is lost, which the
      // kubelet reports as ContainerStatusUnknown (exit 137) and a Failed pod.
      await this.#finish({
        exitCode: 137,
        reason: "ContainerStatusUnknown",
        message: "The container could not be located when the pod was terminated",
      });
      return;
    }
    if (!(await this.#patch({ phase: "Pending", state: { waiting: { reason: "ContainerCreating" } } }))) return;
    const spec = await this.#prepareUntilReady();
    if (!spec) {
      await this.#finish({
        exitCode: 137,
        reason: "ContainerStatusUnknown",
        message: "The container could not be located when the pod was terminated",
      });
      return;
    }
    try {
      this.#proc = await startProcess(spec.process);
    } catch (err) {
      // What containerd reports when the entrypoint cannot be executed.
      await this.#finish({ exitCode: 128, reason: "StartError", message: err instanceof Error ? err.message : String(err) });
      return;
    }
    const containerID = `folio-local://${this.#proc.pid}`;
    this.#ctx.log(`pod ${this.#name()}: started ${spec.process.argv.join(" ")} (pid ${this.#proc.pid})`);
    await this.#patch({ phase: "Running", containerID, state: { running: { startedAt: apiTime(this.#proc.startedAt) } } });
    this.#armActiveDeadline();
    if (this.#terminating) this.#signal(this.#pod.metadata?.deletionGracePeriodSeconds ?? 0);
    const exit = await this.#proc.exited;
    this.#exit = exit;
    for (const t of this.#timers) clearTimeout(t);
    const container = this.#pod.spec?.containers[0];
    // Paths the process reports are local; the API should see the container's (rootfs → "/").
    const message = readTerminationMessage(
      spec.terminationLog,
      this.logFile,
      container?.terminationMessagePolicy,
      exit.exitCode,
    ).replaceAll(`${spec.rootfs}/`, "/");
    this.#ctx.log(`pod ${this.#name()}: exited with ${exit.exitCode}${exit.signal ? ` (${exit.signal})` : ""}`);
    await this.#finish({
      exitCode: exit.exitCode,
      reason: terminatedReason(exit.exitCode),
      message,
      startedAt: this.#proc.startedAt,
      finishedAt: exit.finishedAt,
      containerID,
    });
  }

  /** Writes the terminal status, then deletes the pod if its deletion is pending. */
  async #finish(t: {
    exitCode: number;
    reason: string;
    message?: string;
    startedAt?: Date;
    finishedAt?: Date;
    containerID?: string;
  }): Promise<void> {
    const state: ContainerState = {
      terminated: {
        exitCode: t.exitCode,
        reason: t.reason,
        finishedAt: apiTime(t.finishedAt ?? new Date()),
        ...(t.message ? { message: t.message } : {}),
        ...(t.startedAt ? { startedAt: apiTime(t.startedAt) } : {}),
        ...(t.containerID ? { containerID: t.containerID } : {}),
      },
    };
    const phase = t.exitCode === 0 && !this.#stopReason ? "Succeeded" : "Failed";
    await this.#patch({ phase, state, ...(t.containerID ? { containerID: t.containerID } : {}), ...(this.#stopReason ?? {}) });
    this.#finished = true;
    if (isDeleting(this.#pod)) this.#deleteOnce();
  }

  #deleteOnce(): void {
    if (this.#deleting) return;
    this.#deleting = true;
    this.#ctx.deleteNow(this.#pod).catch((err: unknown) => {
      this.#deleting = false; // the next resync retries
      this.#ctx.log(`pod ${this.#name()}: delete failed: ${String(err)}`);
    });
  }

  /** The kubelet's activeDeadlineHandler: measured from status.startTime. */
  #armActiveDeadline(): void {
    const seconds = this.#pod.spec?.activeDeadlineSeconds;
    if (seconds === undefined) return;
    const left = this.#startTime.getTime() + seconds * 1000 - Date.now();
    this.#timers.push(
      setTimeout(
        () => {
          this.#terminate(this.#pod.spec?.terminationGracePeriodSeconds ?? 30, {
            reason: "DeadlineExceeded",
            message: "Pod was active on the node longer than the specified deadline",
          });
        },
        Math.max(0, left),
      ),
    );
  }

  /** Builds the process spec, retrying while a reference is missing, until started or deleted. */
  async #prepareUntilReady(): Promise<PreparedSpec | undefined> {
    let reported = "";
    while (!this.#terminating) {
      try {
        const spec = await this.#prepare();
        return this.#terminating ? undefined : spec;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const reason = err instanceof ImageNotMappedError ? "ErrImagePull" : "CreateContainerConfigError";
        if (message !== reported) {
          reported = message;
          this.#ctx.log(`pod ${this.#name()}: ${reason}: ${message}`);
          await this.#patch({ phase: "Pending", state: { waiting: { reason, message } } });
        }
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
          setTimeout(resolve, RETRY_MS);
        });
      }
    }
    return undefined;
  }

  async #prepare(): Promise<PreparedSpec> {
    const pod = this.#pod;
    const containers = pod.spec?.containers ?? [];
    const container = containers[0];
    if (!container || containers.length > 1 || pod.spec?.initContainers?.length) {
      throw new Error("the local kubelet runs pods with exactly one container and no init containers");
    }
    const mapping = findMapping(this.#ctx.images, container.image ?? "");
    if (!mapping)
      throw new ImageNotMappedError(`no local command is mapped for image "${container.image ?? ""}" (LocalKubelet images option)`);
    mkdirSync(join(this.dir, "home"), { recursive: true });
    const apiEnv = await resolveEnv(pod, container, this.#ctx.source);
    const { mounts, terminationMessageFile, rootfs } = await prepareVolumes(pod, container, this.dir, this.#ctx.source, (m) => {
      this.#ctx.log(`pod ${this.#name()}: ${m}`);
    });
    const tmp = mounts.find((m) => m.containerPath.replace(/\/+$/, "") === "/tmp");
    const env: Record<string, string> = {
      ...this.#ctx.baseEnv,
      HOSTNAME: pod.metadata?.name ?? "",
      // A runtime's defaults, never the kubelet user's: its own home, and /tmp when mounted.
      HOME: join(this.dir, "home"),
      ...(tmp ? { TMPDIR: tmp.hostPath } : {}),
    };
    // The image's ENV, then the pod's: container values, so container paths are rewritten.
    for (const [k, v] of [...Object.entries(mapping.env ?? {}), ...Object.entries(apiEnv)]) env[k] = translatePaths(v, mounts);
    const argv = resolveArgv(container, mapping, apiEnv, this.#ctx.commands, (a) => translatePaths(a, mounts));
    // The container's workingDir, else the image's WORKDIR (both container paths), else "/":
    // here the pod's rootfs.
    const wanted = container.workingDir ?? mapping.workingDir;
    const cwd = wanted ? translatePaths(wanted, mounts) : rootfs;
    if (!existsSync(cwd)) throw new Error(`workingDir ${wanted ?? ""} is neither under a volume mount nor a local directory`);
    return { process: { argv, env, cwd, logFile: this.logFile }, terminationLog: terminationMessageFile, rootfs };
  }
}

/** No image mapping: the local stand-in for a failed image pull (the pod stays Pending). */
class ImageNotMappedError extends Error {
  override readonly name = "ImageNotMappedError";
}
