/**
 * One pod's life on the local kubelet, in the order pkg/kubelet's pod workers follow:
 * Pending (ContainerCreating while the image is unpacked and the volumes set up; ErrImagePull for
 * an image the node does not have; CreateContainerConfigError while a reference is missing or the
 * securityContext cannot be honoured — retried) → Running (a runc container from the image) →
 * terminated with exit code, reason (Completed, Error, OOMKilled, StartError) and termination
 * message → phase Succeeded or Failed (restartPolicy Never). Deletion with a grace period sends
 * SIGTERM to the container's PID 1, then SIGKILL once the period (at least the kubelet's 2 s
 * minimum) has passed; once the container is gone and the terminal status written, the pod is
 * deleted with grace 0 so the API server removes it. Pod-level activeDeadlineSeconds is enforced
 * here (reason DeadlineExceeded), and emptyDir sizeLimit the way the eviction manager does it
 * (reason Evicted, with a DisruptionTarget condition).
 */
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { V1Container, V1Pod } from "@kubernetes/client-node";
import type { Endpoint } from "../runtime/egress.ts";
import type { UnpackedImage } from "../runtime/image-store.ts";
import type { ContainerRuntime, StartedContainer } from "../runtime/runtime.ts";
import { cgroupResources } from "../runtime/resources.ts";
import type { ContainerExit } from "../runtime/runc.ts";
import { effectiveSecurity, SecurityContextError } from "../runtime/security.ts";
import { resolveEnv, type ObjectSource } from "./env.ts";
import { containerEnv, resolveArgv, workingDir } from "./images.ts";
import { apiTime, statusPatch, terminatedReason, wasStarted, type ContainerState, type PodRuntimeStatus } from "./pod-status.ts";
import { readTerminationMessage } from "./termination.ts";
import { prepareVolumes, type LimitedDir } from "./volumes.ts";

const sh = promisify(execFile);

/** What a worker needs from the kubelet. */
export interface WorkerContext {
  readonly runtime: ContainerRuntime;
  /** The environment the kubelet adds to every container (HOSTNAME aside): the API server's service variables. */
  readonly serviceEnv: Readonly<Record<string, string>>;
  /** The endpoints a pod may reach, when its network is restricted (see egress.ts); undefined: the host's network. */
  readonly egressFor: (pod: V1Pod) => readonly Endpoint[] | undefined;
  readonly nodeMemoryBytes: number;
  readonly source: ObjectSource;
  /** Strategic-merge patch of pods/status; false when the pod is gone (stop working on it). */
  readonly patchStatus: (pod: V1Pod, patch: Record<string, unknown>) => Promise<boolean>;
  /** DELETE with grace 0 and a UID precondition. */
  readonly deleteNow: (pod: V1Pod) => Promise<void>;
  readonly log: (line: string) => void;
}

interface Prepared {
  readonly start: () => Promise<StartedContainer>;
  readonly terminationLog: string;
  readonly limited: readonly LimitedDir[];
  readonly imageID: string;
}

/** The kubelet never gives a container less than this to stop (minimumGracePeriodInSeconds). */
const MIN_GRACE_SECONDS = 2;
const RETRY_MS = 1000;
/** How often emptyDir usage is measured (the kubelet's housekeeping is every 10 s). */
const EVICTION_CHECK_MS = 1000;

const isDeleting = (pod: V1Pod): boolean => Boolean(pod.metadata?.deletionTimestamp);

/** An image the node does not have: what a failed pull reports (the pod stays Pending). */
class ImageNotPresent extends Error {
  override readonly name = "ImageNotPresent";
}

/** Bytes under `dir` (du, as the kubelet's fsquota-less measurement does). */
async function usage(dir: string): Promise<number> {
  const { stdout } = await sh("du", ["-sb", dir]).catch(() => ({ stdout: "0" }));
  return Number(stdout.split(/\s/)[0]) || 0;
}

/** The running side of one pod (by UID). */
export class PodWorker {
  readonly dir: string;
  #pod: V1Pod;
  readonly #ctx: WorkerContext;
  readonly #startTime = new Date();
  #container: StartedContainer | undefined;
  #exit: ContainerExit | undefined;
  #stopReason: { reason: string; message: string; disruption?: boolean } | undefined;
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

  /** The container, once started (tests use its id, pid and log). */
  get container(): StartedContainer | undefined {
    return this.#container;
  }
  get exit(): ContainerExit | undefined {
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
    this.#container?.kill("SIGKILL");
  }

  #name(): string {
    return `${this.#pod.metadata?.namespace ?? ""}/${this.#pod.metadata?.name ?? ""}`;
  }

  async #patch(s: Omit<PodRuntimeStatus, "startTime">): Promise<boolean> {
    return this.#ctx.patchStatus(this.#pod, statusPatch(this.#pod, { ...s, startTime: this.#startTime }));
  }

  #terminate(graceSeconds: number, reason?: { reason: string; message: string; disruption?: boolean }): void {
    if (this.#terminating) return;
    this.#terminating = true;
    this.#stopReason = reason;
    this.#wake?.();
    this.#signal(graceSeconds);
  }

  #signal(graceSeconds: number): void {
    const container = this.#container;
    if (!container) return;
    if (graceSeconds <= 0) {
      container.kill("SIGKILL");
      return;
    }
    container.kill("SIGTERM");
    this.#timers.push(setTimeout(() => container.kill("SIGKILL"), Math.max(MIN_GRACE_SECONDS, graceSeconds) * 1000));
  }

  async #run(): Promise<void> {
    const lost = {
      exitCode: 137,
      reason: "ContainerStatusUnknown",
      message: "The container could not be located when the pod was terminated",
    };
    if (wasStarted(this.#pod)) {
      // A container this kubelet started before it restarted: it is lost, which the kubelet
      // reports as ContainerStatusUnknown (exit 137) and a Failed pod.
      await this.#finish(lost);
      return;
    }
    if (!(await this.#patch({ phase: "Pending", state: { waiting: { reason: "ContainerCreating" } } }))) return;
    const prepared = await this.#prepareUntilReady();
    if (!prepared) {
      await this.#finish(lost);
      return;
    }
    const container = await this.#start(prepared);
    if (!container) return;
    this.#container = container;
    const containerID = `runc://${container.id}`;
    this.#ctx.log(`pod ${this.#name()}: started container ${container.id}${container.isolated ? " (egress restricted)" : ""}`);
    await this.#patch({
      phase: "Running",
      containerID,
      imageID: prepared.imageID,
      state: { running: { startedAt: apiTime(container.startedAt) } },
    });
    this.#armActiveDeadline();
    this.#watchEmptyDirs(prepared.limited);
    if (this.#terminating) this.#signal(this.#pod.metadata?.deletionGracePeriodSeconds ?? 0);
    const exit = await container.exited;
    this.#exit = exit;
    for (const t of this.#timers) clearTimeout(t);
    const policy = this.#pod.spec?.containers[0]?.terminationMessagePolicy;
    const message = exit.startError ?? readTerminationMessage(prepared.terminationLog, this.logFile, policy, exit.exitCode);
    const reason = exitReason(exit);
    this.#ctx.log(`pod ${this.#name()}: container exited with ${exit.exitCode} (${reason})`);
    await this.#finish({
      exitCode: exit.exitCode,
      reason,
      message,
      startedAt: container.startedAt,
      finishedAt: exit.finishedAt,
      containerID,
      imageID: prepared.imageID,
    });
  }

  /** Starts the prepared container; a start that fails ends the pod (StartError, exit 128) and gives undefined. */
  async #start(prepared: Prepared): Promise<StartedContainer | undefined> {
    try {
      return await prepared.start();
    } catch (err) {
      await this.#finish({ exitCode: 128, reason: "StartError", message: err instanceof Error ? err.message : String(err) });
      return undefined;
    }
  }

  /** Writes the terminal status, then deletes the pod if its deletion is pending. */
  async #finish(t: {
    exitCode: number;
    reason: string;
    message?: string;
    startedAt?: Date;
    finishedAt?: Date;
    containerID?: string;
    imageID?: string;
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
    await this.#patch({
      phase,
      state,
      ...(t.containerID ? { containerID: t.containerID } : {}),
      ...(t.imageID ? { imageID: t.imageID } : {}),
      ...(this.#stopReason ?? {}),
    });
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

  /**
   * The eviction manager's emptyDir check (pkg/kubelet/eviction: localStorageEviction): a volume
   * over its sizeLimit evicts the pod at once (grace 0), reason Evicted, with the DisruptionTarget
   * condition the kubelet adds (reason TerminationByKubelet).
   */
  #watchEmptyDirs(limited: readonly LimitedDir[]): void {
    if (limited.length === 0) return;
    let checking = false;
    const timer = setInterval(() => {
      if (checking || this.#terminating) return;
      checking = true;
      void (async () => {
        for (const v of limited) {
          if ((await usage(v.dir)) > v.limitBytes) {
            const message = `Usage of EmptyDir volume "${v.name}" exceeds the limit "${v.limit}". `;
            this.#ctx.log(`pod ${this.#name()}: evicted: ${message}`);
            this.#terminate(0, { reason: "Evicted", message, disruption: true });
            return;
          }
        }
      })().finally(() => (checking = false));
    }, EVICTION_CHECK_MS);
    this.#timers.push(timer);
  }

  /** Builds the container, retrying while a reference is missing, until started or deleted. */
  async #prepareUntilReady(): Promise<Prepared | undefined> {
    let reported = "";
    while (!this.#terminating) {
      try {
        const prepared = await this.#prepare();
        return this.#terminating ? undefined : prepared;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        const reason = err instanceof ImageNotPresent ? "ErrImagePull" : "CreateContainerConfigError";
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

  async #prepare(): Promise<Prepared> {
    const pod = this.#pod;
    const container = onlyContainer(pod);
    const { runtime } = this.#ctx;
    const loaded = runtime.images.find(container.image ?? "");
    if (!loaded) throw new ImageNotPresent(`image "${container.image ?? ""}" is not present on the node (load it: ImageStore.load)`);
    const image = await runtime.images.unpack(loaded);
    const security = podSecurity(pod, container, image);
    const apiEnv = await resolveEnv(pod, container, this.#ctx.source);
    mkdirSync(this.dir, { recursive: true });
    const volumes = await prepareVolumes(pod, container, this.dir, this.#ctx.source);
    const hostname = pod.spec?.hostname ?? pod.metadata?.name ?? "";
    const env = containerEnv(image.config, { HOSTNAME: hostname, ...this.#ctx.serviceEnv }, apiEnv);
    const argv = resolveArgv(container, image.config, env);
    const resources = cgroupResources(container, this.#ctx.nodeMemoryBytes);
    const egress = this.#ctx.egressFor(pod);
    const id = `${pod.metadata?.uid ?? "pod"}-${container.name}`;
    const repo = (loaded.names[0] ?? "").replace(/:[^/]*$/, "");
    return {
      terminationLog: volumes.terminationMessageFile,
      limited: volumes.limited,
      imageID: `${repo}@${image.digest}`,
      start: () =>
        runtime.start({
          id,
          bundle: join(this.dir, "bundle"),
          image,
          argv,
          env,
          cwd: workingDir(container, image.config),
          hostname,
          security,
          mounts: volumes.mounts,
          resources,
          ...(egress ? { egress } : {}),
          logFile: this.logFile,
        }),
    };
  }
}

/** The pod's one container: the local kubelet runs pods with exactly one and no init containers. */
function onlyContainer(pod: V1Pod): V1Container {
  const containers = pod.spec?.containers ?? [];
  const container = containers[0];
  if (!container || containers.length > 1 || pod.spec?.initContainers?.length) {
    throw new Error("the local kubelet runs pods with exactly one container and no init containers");
  }
  return container;
}

/** The container's effective security settings, user and group names resolved in the image's /etc/passwd and /etc/group. */
function podSecurity(pod: V1Pod, container: V1Container, image: UnpackedImage): ReturnType<typeof effectiveSecurity> {
  const readImageFile = (f: string): string => {
    try {
      return readFileSync(join(image.rootfs, f), "utf8");
    } catch {
      return "";
    }
  };
  try {
    return effectiveSecurity(pod.spec?.securityContext, container, image.config.user, {
      passwd: readImageFile("etc/passwd"),
      group: readImageFile("etc/group"),
    });
  } catch (err) {
    if (err instanceof SecurityContextError) throw new Error(err.message);
    throw err;
  }
}

/** The reason the kubelet reports for a container that exited. */
function exitReason(exit: ContainerExit): string {
  if (exit.startError) return "StartError";
  return exit.oomKilled ? "OOMKilled" : terminatedReason(exit.exitCode);
}
