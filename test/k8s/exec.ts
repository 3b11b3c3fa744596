/**
 * `kubectl exec` on the local node: a command run inside a pod's running container with
 * `runc exec`, which starts it with the container's own process settings (user, capabilities,
 * no_new_privs, environment, seccomp) in its namespaces and cgroup — what the CRI's ExecSync does.
 * Needs the kubelet's directory (FOLIO_KUBELET_DIR of the platform) and the pod's containerID
 * (`runc://<id>`), so it also works from another process than the platform's.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import type { V1Pod } from "@kubernetes/client-node";

/** Runs `argv` in the pod's (first) container and returns its stdout; throws on a non-zero exit. */
export function execInPod(kubeletDir: string, pod: V1Pod, argv: readonly string[], input?: string): string {
  const id = pod.status?.containerStatuses?.[0]?.containerID?.replace(/^runc:\/\//, "");
  if (!id) throw new Error(`pod ${pod.metadata?.name ?? "?"} has no running container`);
  return execFileSync("runc", ["--root", join(kubeletDir, "runc"), "exec", ...(input === undefined ? [] : ["-i"]), id, ...argv], {
    encoding: "utf8",
    ...(input === undefined ? {} : { input }),
    maxBuffer: 16 * 1024 * 1024,
  });
}
