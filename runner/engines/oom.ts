/**
 * Whether the kernel's OOM killer has been at work in this process's memory cgroup: in a runner
 * pod, the container's (its memory limit). The kernel counts its kills per cgroup — `oom_kill` in
 * memory.oom_control (cgroup v1, the container's own cgroup mounted at /sys/fs/cgroup/memory) or
 * in memory.events (cgroup v2, at /sys/fs/cgroup) — so an engine that died of SIGKILL while the
 * count went up died of the memory limit, which is the job's `limit_exceeded`, not an engine fault.
 * Outside a memory cgroup (or where it cannot be read) the count stays 0 and nothing changes.
 */
import { readFileSync } from "node:fs";

const FILES = ["/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"];

/** The OOM kills counted so far in this process's memory cgroup (0 when unknown). */
export function oomKillCount(): number {
  for (const file of FILES) {
    try {
      const m = /^oom_kill (\d+)$/m.exec(readFileSync(file, "utf8"));
      if (m) return Number(m[1]);
    } catch {
      // not this cgroup layout
    }
  }
  return 0;
}

/** True when an OOM kill was counted since `before` (a value of oomKillCount()). */
export function memoryLimitHit(before: number): boolean {
  return oomKillCount() > before;
}
