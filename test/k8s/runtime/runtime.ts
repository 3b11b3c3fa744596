/**
 * The container runtime of the local node: images (image-store.ts), runc (runc.ts), the default
 * seccomp profile (seccomp.ts), the network of isolated pods (egress.ts). The kubelet asks it to
 * run one container from a resolved description; tests that need a container outside Kubernetes
 * (the API and controller of the fail-over suite, the start-up benchmark) use the same.
 *
 * Refuses to start without runc, skopeo and umoci, naming the Debian packages.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { EgressGateway, type Endpoint } from "./egress.ts";
import { ImageStore, type UnpackedImage } from "./image-store.ts";
import { containerConfig, type BindMount } from "./oci-spec.ts";
import { runContainer, type RunningContainer } from "./runc.ts";
import { defaultProfile, toOciSeccomp } from "./seccomp.ts";
import type { EffectiveSecurity } from "./security.ts";

export interface ContainerRequest {
  /** Unique on this node (the runc container id, the cgroup's name). */
  readonly id: string;
  /** Where the bundle goes (a directory of the pod's). */
  readonly bundle: string;
  readonly image: UnpackedImage;
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly hostname: string;
  readonly security: EffectiveSecurity;
  readonly mounts: readonly BindMount[];
  readonly resources: {
    readonly memoryBytes?: number;
    readonly cpuQuotaUs?: number;
    readonly cpuShares?: number;
    readonly oomScoreAdj?: number;
  };
  /** Undefined: the host's network (every pod of this node shares it); a list: only these endpoints. */
  readonly egress?: readonly Endpoint[];
  readonly logFile: string;
}

export interface StartedContainer extends RunningContainer {
  /** The network namespace's relay, stopped with the container. */
  readonly isolated: boolean;
}

/** This process's oom_score_adj: the lowest a container may get without CAP_SYS_RESOURCE. */
const OWN_OOM_SCORE_ADJ = ((): number => {
  try {
    return Number(readFileSync("/proc/self/oom_score_adj", "utf8").trim()) || 0;
  } catch {
    return 0;
  }
})();

/** Which Debian package brings each command the runtime needs. */
const TOOLS: Readonly<Record<string, string>> = { runc: "runc", skopeo: "skopeo", umoci: "umoci", unshare: "util-linux", mount: "mount" };

/** Throws naming the package of the first missing command. */
export function checkTools(): void {
  for (const [cmd, pkg] of Object.entries(TOOLS)) {
    try {
      execFileSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" });
    } catch {
      throw new Error(
        `the local kubelet runs containers with ${cmd}, which is missing: install the Debian package ${pkg} (make setup does)`,
      );
    }
  }
}

export class ContainerRuntime {
  readonly images: ImageStore;
  readonly #stateDir: string;
  readonly #egress: EgressGateway;
  /** RLIMIT_NOFILE for containers: the host's hard limit, which runc cannot raise (no CAP_SYS_RESOURCE). */
  readonly #nofile: number;
  readonly #cgroupParent: string;

  constructor(opts: { rootDir: string; images?: ImageStore; log?: (line: string) => void }) {
    checkTools();
    this.images = opts.images ?? new ImageStore(opts.log ? { log: opts.log } : {});
    this.#stateDir = path.join(opts.rootDir, "runc");
    mkdirSync(this.#stateDir, { recursive: true });
    this.#egress = new EgressGateway(path.join(opts.rootDir, "egress"));
    this.#nofile = Math.min(1_048_576, Number(execFileSync("sh", ["-c", "ulimit -Hn"], { encoding: "utf8" }).trim()) || 1024);
    this.#cgroupParent = `/folio-kubelet-${path.basename(opts.rootDir)}`;
  }

  async start(req: ContainerRequest): Promise<StartedContainer> {
    const s = req.security;
    const network = req.egress ? await this.#egress.isolate(req.egress) : undefined;
    try {
      const config = containerConfig({
        rootfs: "rootfs",
        readonlyRootfs: s.readonlyRootfs,
        argv: req.argv,
        env: Object.entries(req.env).map(([k, v]) => `${k}=${v}`),
        cwd: req.cwd,
        user: { uid: s.uid, gid: s.gid, additionalGids: s.additionalGids },
        hostname: req.hostname,
        capabilities: s.capabilities,
        noNewPrivileges: s.noNewPrivileges,
        ...(s.seccomp === "runtime-default" ? { seccomp: toOciSeccomp(defaultProfile(), s.capabilities, process.arch, os.release()) } : {}),
        mounts: req.mounts,
        network: network ? { kind: "join", path: network.netns } : { kind: "host" },
        cgroupsPath: `${this.#cgroupParent}/${req.id}`,
        resources: {
          ...(req.resources.memoryBytes !== undefined ? { memoryBytes: req.resources.memoryBytes } : {}),
          ...(req.resources.cpuQuotaUs !== undefined ? { cpuQuotaUs: req.resources.cpuQuotaUs } : {}),
          ...(req.resources.cpuShares !== undefined ? { cpuShares: req.resources.cpuShares } : {}),
        },
        nofile: this.#nofile,
        // Never below our own: lowering oom_score_adj needs CAP_SYS_RESOURCE, which root lacks here
        // (runc's init would fail, as containerd's does without restrict_oom_score_adj; ADR 0006).
        ...(req.resources.oomScoreAdj !== undefined ? { oomScoreAdj: Math.max(req.resources.oomScoreAdj, OWN_OOM_SCORE_ADJ) } : {}),
      });
      const container = await runContainer(
        { stateDir: this.#stateDir },
        { id: req.id, bundle: req.bundle, imageRootfs: req.image.rootfs, config, logFile: req.logFile },
      );
      if (network) void container.exited.finally(network.stop);
      return Object.assign(container, { isolated: network !== undefined });
    } catch (err) {
      network?.stop();
      throw err;
    }
  }

  /** Stops the egress sockets and removes this node's (empty) parent cgroups. */
  close(): void {
    this.#egress.close();
    for (const controller of readdirSync("/sys/fs/cgroup", { withFileTypes: true })) {
      if (!controller.isDirectory()) continue;
      try {
        rmdirSync(path.join("/sys/fs/cgroup", controller.name, this.#cgroupParent));
      } catch {
        // not there (cgroup v2, or a controller runc does not use), or a container still in it
      }
    }
  }
}
