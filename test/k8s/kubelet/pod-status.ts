/**
 * Pod status as the kubelet writes it (pkg/kubelet/status and kubelet_pods.go
 * generateAPIPodStatus), built as strategic-merge patches of `pods/status`: conditions merge by
 * `type`, so a patch never clobbers a condition another actor owns (PodScheduled from the
 * binding, DisruptionTarget from eviction); containerStatuses has no merge strategy and is
 * replaced whole, so a container's old state (waiting) never lingers beside its new one.
 * Pure functions.
 */
import type { V1Container, V1Pod } from "@kubernetes/client-node";

/** metav1.Time: RFC 3339 with second precision, as the API serializes it. */
export const apiTime = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, "Z");

/** The one container's state, in API shape (core/v1 ContainerState). */
export type ContainerState =
  | { readonly waiting: { readonly reason: string; readonly message?: string } }
  | { readonly running: { readonly startedAt: string } }
  | {
      readonly terminated: {
        readonly exitCode: number;
        readonly reason: string;
        readonly message?: string;
        readonly startedAt?: string;
        readonly finishedAt: string;
        readonly containerID?: string;
      };
    };

/** Everything the status of a single-container pod depends on. */
export interface PodRuntimeStatus {
  readonly phase: "Pending" | "Running" | "Succeeded" | "Failed";
  readonly state: ContainerState;
  readonly startTime: Date;
  readonly containerID?: string;
  /** `<repository>@sha256:…` of the image the container runs. */
  readonly imageID?: string;
  /** Pod-level reason and message (DeadlineExceeded, Evicted). */
  readonly reason?: string;
  readonly message?: string;
  /** The kubelet ended the pod (eviction): condition DisruptionTarget, reason TerminationByKubelet. */
  readonly disruption?: boolean;
}

/** The host and pod address the local kubelet reports: every process shares the loopback. */
const LOOPBACK = "127.0.0.1";

/**
 * A condition that keeps its lastTransitionTime while its status does not change (the API
 * conventions: "the last time the condition transitioned from one status to another").
 */
function condition(pod: V1Pod, type: string, status: boolean, now: Date, reason?: string, message?: string): Record<string, unknown> {
  const previous = pod.status?.conditions?.find((c) => c.type === type);
  const value = status ? "True" : "False";
  // Objects from a watch carry the API's strings; objects from typed calls carry Dates.
  const since: unknown = previous?.status === value && previous.lastTransitionTime ? previous.lastTransitionTime : now;
  return {
    type,
    status: value,
    lastProbeTime: null, // what the kubelet writes: it runs no probes for these conditions
    lastTransitionTime: since instanceof Date ? apiTime(since) : String(since),
    // null deletes a key in a merge patch: a Ready condition must not keep the reason or
    // message of its previous status.
    reason: reason ?? null,
    message: message ?? null,
    ...(pod.metadata?.generation !== undefined ? { observedGeneration: pod.metadata.generation } : {}),
  };
}

/**
 * The pod's conditions in `s`. Readiness follows the kubelet for a container without a readiness
 * probe: ready while running; once the pod is terminal, Ready and ContainersReady are False with
 * reason PodCompleted and the sandbox condition PodReadyToStartContainers is False.
 */
function podConditions(pod: V1Pod, s: PodRuntimeStatus, name: string, now: Date): Record<string, unknown>[] {
  const running = "running" in s.state;
  const terminal = s.phase === "Succeeded" || s.phase === "Failed";
  const [reason, message] = running
    ? [undefined, undefined]
    : terminal
      ? ["PodCompleted", undefined]
      : ["ContainersNotReady", `containers with unready status: [${name}]`];
  return [
    // True while the "sandbox" (the process) exists; False before it starts and once torn down.
    condition(pod, "PodReadyToStartContainers", running, now),
    condition(pod, "Initialized", true, now),
    condition(pod, "Ready", running, now, reason, message),
    condition(pod, "ContainersReady", running, now, reason, message),
    ...(s.disruption ? [condition(pod, "DisruptionTarget", true, now, "TerminationByKubelet", s.message)] : []),
  ];
}

/** The status of the pod's one container in `s`. */
function containerStatus(container: V1Container | undefined, s: PodRuntimeStatus): Record<string, unknown> {
  const running = "running" in s.state;
  return {
    name: container?.name ?? "",
    image: container?.image ?? "",
    imageID: s.imageID ?? "",
    ...(s.containerID ? { containerID: s.containerID } : {}),
    ready: running,
    started: running,
    restartCount: 0,
    state: s.state,
    lastState: {},
  };
}

/** The status patch for `pod` in `s` (conditions: see podConditions). */
export function statusPatch(pod: V1Pod, s: PodRuntimeStatus, now: Date = new Date()): Record<string, unknown> {
  const container = pod.spec?.containers[0];
  return {
    // The kubelet's status manager puts the UID in every patch: a pod deleted and recreated
    // under the same name must not receive the old pod's status.
    metadata: { uid: pod.metadata?.uid },
    status: {
      phase: s.phase,
      ...(pod.metadata?.generation !== undefined ? { observedGeneration: pod.metadata.generation } : {}),
      conditions: podConditions(pod, s, container?.name ?? "", now),
      hostIP: LOOPBACK,
      hostIPs: [{ ip: LOOPBACK }],
      podIP: LOOPBACK,
      podIPs: [{ ip: LOOPBACK }],
      startTime: apiTime(s.startTime),
      ...(s.reason ? { reason: s.reason } : {}),
      ...(s.message ? { message: s.message } : {}),
      containerStatuses: [containerStatus(container, s)],
    },
  };
}

/** True when the pod's phase is terminal: the kubelet never runs it again. */
export const isTerminal = (pod: V1Pod): boolean => pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";

/** True when the kubelet has started the pod's container before (it has a running or terminated state). */
export const wasStarted = (pod: V1Pod): boolean =>
  (pod.status?.containerStatuses ?? []).some((c) => c.state?.running !== undefined || c.state?.terminated !== undefined);

/** The reason the kubelet gives a finished container (containerd/CRI: Completed, Error). */
export const terminatedReason = (exitCode: number): string => (exitCode === 0 ? "Completed" : "Error");
