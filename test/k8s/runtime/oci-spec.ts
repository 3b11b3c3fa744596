/**
 * The OCI runtime configuration (config.json, runtime-spec v1.0.2 as runc 1.1 reads it) of one
 * container, built the way containerd's CRI plugin builds it from a pod spec: the default mounts
 * (/proc, /dev, /dev/pts, /dev/shm, /dev/mqueue, /sys, /sys/fs/cgroup read-only), the default
 * masked and read-only paths, namespaces (pid, ipc, uts, mount, and network: the host's, a given
 * one, or a new one with only loopback), the process (argv, env, cwd, user, capabilities,
 * no_new_privs, rlimits, oom_score_adj), seccomp, and cgroup resources. Pure.
 */
import type { OciSeccomp } from "./seccomp.ts";

/** A bind mount into the container (volumes, the termination message file, /etc/hosts …). */
export interface BindMount {
  readonly destination: string;
  readonly source: string;
  readonly readOnly: boolean;
}

export type NetworkMode = { readonly kind: "host" } | { readonly kind: "join"; readonly path: string } | { readonly kind: "new" };

export interface ContainerConfigInput {
  readonly rootfs: string;
  readonly readonlyRootfs: boolean;
  readonly argv: readonly string[];
  /** KEY=VALUE, in order. */
  readonly env: readonly string[];
  readonly cwd: string;
  readonly user: { readonly uid: number; readonly gid: number; readonly additionalGids: readonly number[] };
  readonly hostname: string;
  /** The bounding set (CAP_* names); the effective and permitted sets are empty for non-root. */
  readonly capabilities: readonly string[];
  readonly noNewPrivileges: boolean;
  readonly seccomp?: OciSeccomp;
  readonly mounts: readonly BindMount[];
  readonly network: NetworkMode;
  /** cgroupfs path (runc's cgroupsPath), one per container. */
  readonly cgroupsPath: string;
  readonly resources: {
    readonly memoryBytes?: number;
    /** cpu.cfs_quota_us for a period of 100 ms. */
    readonly cpuQuotaUs?: number;
    readonly cpuShares?: number;
    readonly pids?: number;
  };
  /** RLIMIT_NOFILE (soft = hard): at most the host's hard limit, which runc cannot raise. */
  readonly nofile: number;
  readonly oomScoreAdj?: number;
}

/** Paths containerd masks in every non-privileged container (oci.defaultUnixMaskedPaths). */
export const MASKED_PATHS: readonly string[] = [
  "/proc/acpi",
  "/proc/asound",
  "/proc/kcore",
  "/proc/keys",
  "/proc/latency_stats",
  "/proc/timer_list",
  "/proc/timer_stats",
  "/proc/sched_debug",
  "/proc/scsi",
  "/sys/firmware",
  "/sys/devices/virtual/powercap",
];
export const READONLY_PATHS: readonly string[] = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"];

const DEFAULT_MOUNTS = [
  { destination: "/proc", type: "proc", source: "proc", options: ["nosuid", "noexec", "nodev"] },
  { destination: "/dev", type: "tmpfs", source: "tmpfs", options: ["nosuid", "strictatime", "mode=755", "size=65536k"] },
  {
    destination: "/dev/pts",
    type: "devpts",
    source: "devpts",
    options: ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"],
  },
  { destination: "/dev/shm", type: "tmpfs", source: "shm", options: ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"] },
  { destination: "/dev/mqueue", type: "mqueue", source: "mqueue", options: ["nosuid", "noexec", "nodev"] },
  { destination: "/sys", type: "sysfs", source: "sysfs", options: ["nosuid", "noexec", "nodev", "ro"] },
  { destination: "/sys/fs/cgroup", type: "cgroup", source: "cgroup", options: ["nosuid", "noexec", "nodev", "relatime", "ro"] },
];

/** config.json for one container. */
export function containerConfig(c: ContainerConfigInput): Record<string, unknown> {
  const root = c.user.uid === 0;
  const caps = [...c.capabilities];
  const namespaces: { type: string; path?: string }[] = [{ type: "pid" }, { type: "ipc" }, { type: "uts" }, { type: "mount" }];
  if (c.network.kind === "new") namespaces.push({ type: "network" });
  if (c.network.kind === "join") namespaces.push({ type: "network", path: c.network.path });
  const r = c.resources;
  return {
    ociVersion: "1.0.2",
    process: {
      terminal: false,
      user: { uid: c.user.uid, gid: c.user.gid, ...(c.user.additionalGids.length ? { additionalGids: [...c.user.additionalGids] } : {}) },
      args: [...c.argv],
      env: [...c.env],
      cwd: c.cwd,
      capabilities: {
        bounding: caps,
        // As containerd ≥ 1.7 does: a non-root process gets no effective or permitted
        // capabilities (it could only regain them through a setuid binary, which no_new_privs stops).
        effective: root ? caps : [],
        permitted: root ? caps : [],
        inheritable: [],
        ambient: [],
      },
      noNewPrivileges: c.noNewPrivileges,
      rlimits: [{ type: "RLIMIT_NOFILE", hard: c.nofile, soft: c.nofile }],
      ...(c.oomScoreAdj !== undefined ? { oomScoreAdj: c.oomScoreAdj } : {}),
    },
    root: { path: c.rootfs, readonly: c.readonlyRootfs },
    hostname: c.hostname,
    mounts: [
      ...DEFAULT_MOUNTS,
      ...c.mounts.map((m) => ({
        destination: m.destination,
        type: "bind",
        source: m.source,
        options: ["rbind", "rprivate", m.readOnly ? "ro" : "rw", "nosuid", "nodev"],
      })),
    ],
    linux: {
      namespaces,
      cgroupsPath: c.cgroupsPath,
      resources: {
        devices: [{ allow: false, access: "rwm" }],
        ...(r.memoryBytes !== undefined ? { memory: { limit: r.memoryBytes } } : {}),
        ...(r.cpuQuotaUs !== undefined || r.cpuShares !== undefined
          ? {
              cpu: {
                ...(r.cpuShares !== undefined ? { shares: r.cpuShares } : {}),
                ...(r.cpuQuotaUs !== undefined ? { quota: r.cpuQuotaUs, period: 100_000 } : {}),
              },
            }
          : {}),
        ...(r.pids !== undefined ? { pids: { limit: r.pids } } : {}),
      },
      maskedPaths: [...MASKED_PATHS],
      readonlyPaths: [...READONLY_PATHS],
      ...(c.seccomp ? { seccomp: c.seccomp } : {}),
    },
  };
}
