/**
 * The fake Node: registered the way the kubelet registers itself (pkg/kubelet/kubelet_node_status.go
 * registerWithAPIServer: create, or on AlreadyExists patch the status), then kept alive by the
 * two heartbeats of KEP-589: renewing its Lease in kube-node-lease every 10 s (a quarter of the
 * 40 s lease duration) and refreshing the Ready condition's lastHeartbeatTime every minute.
 */
import { cpus, release, totalmem } from "node:os";
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
  type KubeConfig,
  type V1Node,
  type V1NodeCondition,
} from "@kubernetes/client-node";

const LEASE_NAMESPACE = "kube-node-lease";
const LEASE_DURATION_SECONDS = 40;
const LEASE_RENEW_MS = 10_000;
const STATUS_REPORT_MS = 60_000;

function conditions(now: Date): V1NodeCondition[] {
  const c = (type: string, status: string, reason: string, message: string): V1NodeCondition => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  });
  return [
    c("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    c("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    c("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    c("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
  ];
}

/** The Node object: capacity from this machine, loopback address, no taints. */
function nodeObject(name: string, kubeletVersion: string, now: Date): V1Node {
  const resources = { cpu: String(cpus().length), memory: `${Math.floor(totalmem() / 1024)}Ki`, pods: "110", "ephemeral-storage": "100Gi" };
  return {
    apiVersion: "v1",
    kind: "Node",
    // Only labels NodeRestriction lets a node set on itself.
    metadata: {
      name,
      labels: {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": process.arch === "x64" ? "amd64" : process.arch,
      },
    },
    spec: {},
    status: {
      capacity: resources,
      allocatable: resources,
      conditions: conditions(now),
      addresses: [
        { type: "InternalIP", address: "127.0.0.1" },
        { type: "Hostname", address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 0 } },
      nodeInfo: {
        architecture: process.arch === "x64" ? "amd64" : process.arch,
        operatingSystem: "linux",
        osImage: "folio local kubelet",
        kernelVersion: release(),
        kubeletVersion,
        kubeProxyVersion: "",
        containerRuntimeVersion: "folio-local://1",
        machineID: name,
        systemUUID: name,
        bootID: name,
      },
    },
  };
}

const strategic = setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch);
const merge = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

/** Registers the node (idempotent) and returns its uid, for the Lease's owner reference. */
export async function registerNode(kc: KubeConfig, name: string, kubeletVersion: string): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const now = new Date();
  try {
    const created = await core.createNode({ body: nodeObject(name, kubeletVersion, now) });
    return created.metadata?.uid ?? "";
  } catch (err) {
    if (!(err instanceof ApiException) || err.code !== 409) throw err;
  }
  const patched = await core.patchNodeStatus({ name, body: { status: { conditions: conditions(now) } } }, strategic);
  return patched.metadata?.uid ?? "";
}

/** Renews the node's Lease, creating it on first use (owned by the Node, as the kubelet does). */
async function renewLease(kc: KubeConfig, name: string, nodeUid: string): Promise<void> {
  const coordination = kc.makeApiClient(CoordinationV1Api);
  // Lease times are MicroTime: the API rejects anything but six fractional digits, which the
  // client's V1MicroTime serializes (a plain Date would give three).
  const renewTime = new V1MicroTime();
  try {
    await coordination.patchNamespacedLease(
      { name, namespace: LEASE_NAMESPACE, body: { spec: { holderIdentity: name, renewTime } } },
      merge,
    );
  } catch (err) {
    if (!(err instanceof ApiException) || err.code !== 404) throw err;
    await coordination.createNamespacedLease({
      namespace: LEASE_NAMESPACE,
      body: {
        metadata: { name, namespace: LEASE_NAMESPACE, ownerReferences: [{ apiVersion: "v1", kind: "Node", name, uid: nodeUid }] },
        spec: { holderIdentity: name, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime },
      },
    });
  }
}

/** Starts both heartbeats; the first Lease renewal happens before this resolves. */
export async function startHeartbeat(
  kc: KubeConfig,
  name: string,
  nodeUid: string,
  log: (line: string) => void,
): Promise<{ stop: () => void }> {
  await renewLease(kc, name, nodeUid);
  const core = kc.makeApiClient(CoreV1Api);
  const report =
    (what: string) =>
    (err: unknown): void => {
      log(`node ${name}: ${what} failed: ${String(err)}`);
    };
  const lease = setInterval(() => {
    renewLease(kc, name, nodeUid).catch(report("lease renewal"));
  }, LEASE_RENEW_MS);
  const status = setInterval(() => {
    core.patchNodeStatus({ name, body: { status: { conditions: conditions(new Date()) } } }, strategic).catch(report("status report"));
  }, STATUS_REPORT_MS);
  return {
    stop(): void {
      clearInterval(lease);
      clearInterval(status);
    },
  };
}
