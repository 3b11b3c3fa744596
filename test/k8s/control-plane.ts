/**
 * The real Kubernetes control plane on loopback: etcd, kube-apiserver and kube-controller-manager
 * from the version-pinned cache (build.sh), on free 127.0.0.1 ports, in a fresh temporary
 * directory. `startControlPlane()` returns once /readyz is ok and the controller manager is healthy;
 * `stop()` kills everything and removes the directory. Used by start.ts (CLI), smoke.ts and,
 * later, the e2e suite's vitest globalSetup.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeKubeconfig } from "./kubeconfig.ts";
import { createPki, type Pki } from "./pki.ts";
import { freePort, probe, startDaemon, stopDaemon, waitUntil, type Daemon } from "./processes.ts";
import { ensureBinaries, readVersions, type PinnedVersions } from "./versions.ts";

/**
 * The controllers of kube-controller-manager we run, by their 1.28+ names (`kube-controller-manager
 * --help` lists them): what batch/v1 Jobs need (job, ttl-after-finished, garbage-collector for
 * ownerReferences), namespace deletion, the default ServiceAccount that pod admission requires in
 * every namespace, and the root CA ConfigMap that service-account token volumes project. No scheduler, node-lifecycle or pod-GC controller: the local
 * kubelet binds pods itself, and nothing else should act on the fake node.
 */
export const CONTROLLERS = [
  "job-controller",
  "ttl-after-finished-controller",
  "garbage-collector-controller",
  "namespace-controller",
  "serviceaccount-controller",
  "serviceaccount-token-controller",
  // The kube-root-ca.crt ConfigMap every namespace gets: part of the projected service-account
  // volume that admission adds to pods mounting a token (the local kubelet projects it).
  "root-ca-certificate-publisher-controller",
] as const;

/** The Service CIDR; its first address is the `kubernetes` Service (and a SAN of the serving cert). */
const SERVICE_CIDR = "10.0.0.0/24";
const SERVICE_IP = "10.0.0.1";

export interface ControlPlaneOptions {
  /** The Node name the local kubelet will register: the token file holds its identity. */
  readonly nodeName?: string;
  /** Keep the temporary directory (logs, etcd data) after stop, for debugging. */
  readonly keepDir?: boolean;
  /** Extra kube-apiserver / kube-controller-manager flags (they override ours: last flag wins). */
  readonly apiserverArgs?: readonly string[];
  readonly controllerManagerArgs?: readonly string[];
  /** Progress lines; silent by default. */
  readonly log?: (line: string) => void;
}

/** A running control plane. */
export interface ControlPlane {
  readonly versions: PinnedVersions;
  /** The temporary directory: credentials, kubeconfigs, etcd data, *.log. */
  readonly dir: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  readonly nodeName: string;
  readonly pki: Pki;
  /** Kubeconfig files: admin (tests, CLI), controller manager, scheduler (binding), node (kubelet). */
  readonly kubeconfigs: { readonly admin: string; readonly controllerManager: string; readonly scheduler: string; readonly node: string };
  /** Milliseconds each start step took. */
  readonly timings: Readonly<Record<string, number>>;
  stop(): Promise<void>;
}

/** Starts etcd, kube-apiserver and kube-controller-manager; builds the binaries first if needed. */
export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = opts.log ?? ((): void => undefined);
  const nodeName = opts.nodeName ?? "folio-local-node";
  const versions = readVersions();
  const timings: Record<string, number> = {};
  let t = Date.now();
  const lap = (step: string): void => {
    timings[step] = Date.now() - t;
    t = Date.now();
  };

  const bins = await ensureBinaries();
  lap("binaries");
  const dir = mkdtempSync(join(tmpdir(), "folio-k8s-"));
  const daemons: Daemon[] = [];
  // If this process exits without stop() (a crashed test run), take the daemons with it.
  const killAll = (): void => {
    for (const d of daemons) d.child.kill("SIGKILL");
  };
  process.once("exit", killAll);
  const stop = async (): Promise<void> => {
    process.off("exit", killAll);
    for (const d of [...daemons].reverse()) await stopDaemon(d);
    if (!opts.keepDir) rmSync(dir, { recursive: true, force: true });
  };

  try {
    const pki = createPki(dir, nodeName, SERVICE_IP);
    lap("pki");
    const [etcdPort, peerPort, apiPort, kcmPort] = [await freePort(), await freePort(), await freePort(), await freePort()];

    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    log(`etcd ${versions.etcd} on ${etcdUrl}`);
    const etcd = startDaemon(
      "etcd",
      bins.etcd,
      [
        "--name=folio",
        `--data-dir=${join(dir, "etcd")}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=folio=${peerUrl}`,
        // A throwaway test store: durability buys nothing and fsync costs latency on shared disks.
        "--unsafe-no-fsync",
        "--log-level=warn",
      ],
      join(dir, "etcd.log"),
    );
    daemons.push(etcd);
    await waitUntil(etcd, "/health", async () => (await probe(`${etcdUrl}/health`)) === 200, 30_000);
    lap("etcd");

    const server = `https://127.0.0.1:${apiPort}`;
    log(`kube-apiserver ${versions.kubernetes} on ${server}`);
    const apiserver = startDaemon(
      "kube-apiserver",
      bins.kubeApiserver,
      [
        `--etcd-servers=${etcdUrl}`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        `--secure-port=${apiPort}`,
        `--cert-dir=${join(dir, "apiserver-certs")}`,
        `--tls-cert-file=${pki.servingCert}`,
        `--tls-private-key-file=${pki.servingKey}`,
        `--client-ca-file=${pki.caCert}`,
        `--token-auth-file=${pki.tokenFile}`,
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${pki.saPublicKey}`,
        `--service-account-signing-key-file=${pki.saSigningKey}`,
        // Node before RBAC as on every kubeadm cluster: the kubelet identity is confined to its node.
        "--authorization-mode=Node,RBAC",
        // Added to the default plugin set (which already includes PodSecurity, ServiceAccount,
        // NamespaceLifecycle, ...): NodeRestriction confines the node identity's writes to its node.
        "--enable-admission-plugins=NodeRestriction",
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        // As kubeadm sets it: privileged pods are a Pod Security decision, not an API server one.
        "--allow-privileged=true",
        "--anonymous-auth=false",
        "--profiling=false",
        "--v=1",
        ...(opts.apiserverArgs ?? []),
      ],
      join(dir, "kube-apiserver.log"),
    );
    daemons.push(apiserver);
    const ca = readFileSync(pki.caCert, "utf8");
    await waitUntil(apiserver, "/readyz", async () => (await probe(`${server}/readyz`, { ca, token: pki.admin.token })) === 200, 120_000);
    lap("kube-apiserver");

    const kubeconfigs = {
      admin: writeKubeconfig(join(dir, "admin.kubeconfig"), server, pki.caCert, pki.admin),
      controllerManager: writeKubeconfig(join(dir, "controller-manager.kubeconfig"), server, pki.caCert, pki.controllerManager),
      scheduler: writeKubeconfig(join(dir, "scheduler.kubeconfig"), server, pki.caCert, pki.scheduler),
      node: writeKubeconfig(join(dir, "node.kubeconfig"), server, pki.caCert, pki.node),
    };

    log(`kube-controller-manager (${CONTROLLERS.join(",")})`);
    const kcm = startDaemon(
      "kube-controller-manager",
      bins.kubeControllerManager,
      [
        `--kubeconfig=${kubeconfigs.controllerManager}`,
        // Delegated authn/authz for its own /healthz and /metrics endpoint, as kubeadm configures it.
        `--authentication-kubeconfig=${kubeconfigs.controllerManager}`,
        `--authorization-kubeconfig=${kubeconfigs.controllerManager}`,
        "--bind-address=127.0.0.1",
        `--secure-port=${kcmPort}`,
        `--cert-dir=${join(dir, "kcm-certs")}`,
        `--controllers=${CONTROLLERS.join(",")}`,
        // Each controller acts as its own ServiceAccount (kube-system/job-controller, ...), so RBAC
        // applies to it exactly as on a production cluster.
        "--use-service-account-credentials=true",
        `--service-account-private-key-file=${pki.saSigningKey}`,
        `--root-ca-file=${pki.caCert}`,
        "--leader-elect=false",
        // The defaults (20 QPS, burst 30) would cap the Job backlog benchmark below its 20 Jobs/s goal.
        "--kube-api-qps=200",
        "--kube-api-burst=400",
        "--concurrent-job-syncs=10",
        "--v=1",
        ...(opts.controllerManagerArgs ?? []),
      ],
      join(dir, "kube-controller-manager.log"),
    );
    daemons.push(kcm);
    await waitUntil(kcm, "/healthz", async () => (await probe(`https://127.0.0.1:${kcmPort}/healthz`, { insecure: true })) === 200, 60_000);
    lap("kube-controller-manager");

    return { versions, dir, server, nodeName, pki, kubeconfigs, timings, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
