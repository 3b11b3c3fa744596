/**
 * The local kubelet: one Node (this host) whose containers run from their images with runc
 * (issues #4 and #11; the runtime is test/k8s/runtime/). It authenticates as the node (system:node:<name>, so the Node
 * authorizer and NodeRestriction confine it exactly as they confine a real kubelet: it can read
 * only the Secrets of pods bound to it) and, since no scheduler runs, binds unscheduled pods to
 * itself through pods/binding with the scheduler's identity. Everything is level-based: every
 * watch event and every resync calls `sync(pod)`, which decides from the object alone.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { ApiException, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from "@kubernetes/client-node";
import { loadKubeConfig } from "../kubeconfig.ts";
import type { Endpoint } from "../runtime/egress.ts";
import type { ContainerExit } from "../runtime/runc.ts";
import { ContainerRuntime } from "../runtime/runtime.ts";
import type { ObjectSource } from "./env.ts";
import { registerNode, startHeartbeat } from "./node.ts";
import { PodInformer } from "./pod-informer.ts";
import { isTerminal } from "./pod-status.ts";
import { PodWorker, type WorkerContext } from "./pod-worker.ts";

/**
 * Pods whose network is an allow-list (egress.ts) — what the chart's NetworkPolicy does for the
 * runner pods on a cluster: pods with all of `matchLabels` reach only `allow`.
 */
export interface EgressPolicy {
  readonly matchLabels: Readonly<Record<string, string>>;
  readonly allow: readonly Endpoint[];
}

export interface LocalKubeletOptions {
  readonly nodeName: string;
  /** Kubeconfig of the node identity (system:node:<nodeName>). */
  readonly nodeKubeconfig: string;
  /** Kubeconfig allowed to create pods/binding (system:kube-scheduler). */
  readonly schedulerKubeconfig: string;
  /** Reported as the Node's kubeletVersion (the control plane's version). */
  readonly kubeletVersion: string;
  /** OCI archives the node has (`make images`), each with the extra names it answers to. */
  readonly images: readonly { readonly archive: string; readonly aliases?: readonly string[] }[];
  /** Where pods reach the API server: KUBERNETES_SERVICE_HOST/PORT in every container. */
  readonly apiServer?: Endpoint;
  /** Pods whose network is restricted (the runner pods, to the object store). */
  readonly egress?: readonly EgressPolicy[];
  /**
   * At most this many unfinished pods on the node (a node's pod capacity, as the scheduler
   * respects it); the rest stay unscheduled until a place frees up. Unlimited by default.
   */
  readonly maxPods?: number;
  /** Where pod directories go; a fresh temp dir by default, removed on stop. */
  readonly rootDir?: string;
  readonly log?: (line: string) => void;
}

/** What a test may look at for one pod this kubelet ran (kept after the pod is deleted). */
export interface LocalPodView {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** The pod's directory (volumes, bundle); removed once the pod is gone from the API. */
  readonly dir: string;
  /** stdout and stderr; kept until the kubelet stops. */
  readonly logFile: string;
  /** The runc container id, once started. */
  readonly containerId?: string;
  /** Host pid of the container's runc (the parent of its PID 1), once started; gone with the container. */
  readonly pid?: number;
  readonly exit?: ContainerExit;
}

const strategic = setHeaderOptions("Content-Type", PatchStrategy.StrategicMergePatch);
const code = (err: unknown): number | undefined => (err instanceof ApiException ? err.code : undefined);

/** A started local kubelet. */
export class LocalKubelet {
  readonly nodeName: string;
  readonly rootDir: string;
  readonly #opts: LocalKubeletOptions;
  readonly #workers = new Map<string, PodWorker>();
  /** Every pod this kubelet ran, by UID, for tests to inspect after the fact. */
  readonly #ran = new Map<string, { namespace: string; name: string; worker: PodWorker }>();
  readonly #binding = new Set<string>();
  /** Pods bound by us that the node's informer has not delivered yet (they hold a place too). */
  readonly #bound = new Set<string>();
  readonly #core: CoreV1Api;
  readonly #scheduler: CoreV1Api;
  /** Pods bound to this node, watched as the node (the Node authorizer allows no wider list). */
  readonly #informer: PodInformer;
  /** Unscheduled pods, watched as the scheduler, which is the identity that may bind them. */
  readonly #unscheduled: PodInformer;
  readonly #ownsRoot: boolean;
  readonly runtime: ContainerRuntime;
  readonly #log: (line: string) => void;
  #heartbeat: { stop: () => void } | undefined;
  #stopped = false;

  private constructor(opts: LocalKubeletOptions) {
    this.#opts = opts;
    this.nodeName = opts.nodeName;
    this.#ownsRoot = opts.rootDir === undefined;
    this.rootDir = opts.rootDir ?? mkdtempSync(join(tmpdir(), "folio-kubelet-"));
    this.#log = opts.log ?? ((): void => undefined);
    this.runtime = new ContainerRuntime({ rootDir: this.rootDir, log: this.#log });
    const kc = loadKubeConfig(opts.nodeKubeconfig);
    this.#core = kc.makeApiClient(CoreV1Api);
    this.#scheduler = loadKubeConfig(opts.schedulerKubeconfig).makeApiClient(CoreV1Api);
    this.#informer = new PodInformer(kc, {
      fieldSelector: `spec.nodeName=${opts.nodeName}`,
      onUpsert: (pod) => {
        this.#sync(pod);
      },
      onDelete: (pod) => {
        this.#forget(pod);
      },
      log: this.#log,
    });
    this.#unscheduled = new PodInformer(loadKubeConfig(opts.schedulerKubeconfig), {
      fieldSelector: "spec.nodeName=",
      onUpsert: (pod) => {
        this.#bind(pod);
      },
      onDelete: () => undefined,
      resyncMs: 2000,
      log: this.#log,
    });
    // Container processes must not outlive this process, however it ends.
    process.once("exit", this.#killAll);
  }

  readonly #killAll = (): void => {
    for (const worker of this.#workers.values()) worker.container?.killSync();
  };

  /** Registers the Node, starts its heartbeats and the pod informer. */
  static async start(opts: LocalKubeletOptions): Promise<LocalKubelet> {
    const kubelet = new LocalKubelet(opts);
    try {
      for (const image of opts.images) await kubelet.runtime.images.load(image.archive, image.aliases ?? []);
      const kc = loadKubeConfig(opts.nodeKubeconfig);
      const uid = await registerNode(kc, opts.nodeName, opts.kubeletVersion);
      kubelet.#heartbeat = await startHeartbeat(kc, opts.nodeName, uid, kubelet.#log);
      await kubelet.#informer.start();
      await kubelet.#unscheduled.start();
    } catch (err) {
      await kubelet.stop();
      throw err;
    }
    kubelet.#log(`kubelet: node ${opts.nodeName} is Ready`);
    return kubelet;
  }

  /** Every pod this kubelet has run (or is running), oldest first. */
  pods(): LocalPodView[] {
    return [...this.#ran].map(([uid, { namespace, name, worker }]) => ({
      namespace,
      name,
      uid,
      dir: worker.dir,
      logFile: worker.logFile,
      ...(worker.container ? { containerId: worker.container.id, pid: worker.container.pid } : {}),
      ...(worker.exit ? { exit: worker.exit } : {}),
    }));
  }

  /** Stops watching and kills every process (a node going away, not a drain). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#informer.stop();
    this.#unscheduled.stop();
    this.#heartbeat?.stop();
    process.off("exit", this.#killAll);
    const exits: Promise<unknown>[] = [];
    for (const worker of this.#workers.values()) {
      worker.vanish();
      if (worker.container) exits.push(worker.container.exited);
    }
    await Promise.all(exits);
    this.runtime.close();
    if (this.#ownsRoot) rmSync(this.rootDir, { recursive: true, force: true });
  }

  #sync(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? "";
    if (pod.spec?.nodeName !== this.nodeName) return;
    this.#bound.delete(uid);
    const worker = this.#workers.get(uid);
    if (worker) {
      worker.update(pod);
      // A place on a full node freed up: bind the next pod now rather than at the next resync.
      if (this.#opts.maxPods !== undefined && isTerminal(pod)) this.#unscheduled.resync();
      return;
    }
    if (isTerminal(pod)) {
      // Finished before we (re)started: only a pending deletion is left to complete.
      if (pod.metadata?.deletionTimestamp) this.#deleteNow(pod).catch(() => undefined);
      return;
    }
    this.#start(pod, uid);
  }

  /** Starts a worker for a new pod of this node. */
  #start(pod: V1Pod, uid: string): void {
    // Logs live apart from the pod directory, as /var/log/pods/<ns>_<name>_<uid>/<container>/
    // does, so a test can read them after the pod is gone.
    const { namespace = "", name = "" } = pod.metadata ?? {};
    const logDir = join(this.rootDir, "logs", `${namespace}_${name}_${uid}`);
    mkdirSync(logDir, { recursive: true });
    const logFile = join(logDir, `${pod.spec?.containers[0]?.name ?? "container"}.log`);
    const created = new PodWorker(pod, join(this.rootDir, "pods", uid), logFile, this.#context());
    this.#workers.set(uid, created);
    this.#ran.set(uid, { namespace, name, worker: created });
    void created.run();
    created.update(pod); // a pod already being deleted starts terminating at once
  }

  /** Pods holding a place on the node: being bound, bound but not seen yet, or still running. */
  #podsOnNode(): number {
    let n = this.#binding.size + this.#bound.size;
    for (const worker of this.#workers.values()) if (!worker.finished && worker.exit === undefined) n++;
    return n;
  }

  /**
   * Plays the scheduler for pods that name no node: every pod fits the one node there is, up to
   * `maxPods` (then the unscheduled informer's resync, or a pod finishing, tries again).
   */
  #bind(pod: V1Pod): void {
    const key = pod.metadata?.uid ?? "";
    if (!this.#needsBinding(pod, key)) return;
    this.#binding.add(key);
    const { name = "", namespace = "", uid } = pod.metadata ?? {};
    this.#scheduler
      .createNamespacedPodBinding({
        name,
        namespace,
        body: {
          apiVersion: "v1",
          kind: "Binding",
          metadata: { name, namespace, ...(uid ? { uid } : {}) },
          target: { apiVersion: "v1", kind: "Node", name: this.nodeName },
        },
      })
      .then(
        () => {
          if (this.#opts.maxPods !== undefined && !this.#workers.has(key)) this.#bound.add(key);
        },
        (err: unknown) => {
          // 409: already bound (a resync raced the watch); 404: deleted meanwhile. Anything else is
          // retried by the next resync.
          if (code(err) !== 409 && code(err) !== 404) this.#log(`kubelet: binding ${namespace}/${name} failed: ${String(err)}`);
        },
      )
      .finally(() => {
        this.#binding.delete(key);
      });
  }

  /** A live pod for the default scheduler, on no node yet and not being bound, while the node has room. */
  #needsBinding(pod: V1Pod, key: string): boolean {
    if (pod.spec?.nodeName) return false;
    const scheduler = pod.spec?.schedulerName ?? "default-scheduler";
    if (this.#binding.has(key) || isTerminal(pod) || pod.metadata?.deletionTimestamp || scheduler !== "default-scheduler") return false;
    return this.#opts.maxPods === undefined || this.#podsOnNode() < this.#opts.maxPods;
  }

  /** The pod left the API: kill what is left of it and remove its directory. */
  #forget(pod: V1Pod): void {
    const uid = pod.metadata?.uid ?? "";
    this.#bound.delete(uid);
    const worker = this.#workers.get(uid);
    if (!worker) return;
    this.#workers.delete(uid);
    worker.vanish();
    const exited = worker.container?.exited ?? Promise.resolve();
    void exited.then(() => {
      rmSync(worker.dir, { recursive: true, force: true });
    });
  }

  async #deleteNow(pod: V1Pod): Promise<void> {
    if (this.#stopped) return;
    const { name = "", namespace = "", uid } = pod.metadata ?? {};
    try {
      await this.#core.deleteNamespacedPod({
        name,
        namespace,
        gracePeriodSeconds: 0,
        body: { gracePeriodSeconds: 0, ...(uid ? { preconditions: { uid } } : {}) },
      });
    } catch (err) {
      // Gone already, or a new pod under the same name (UID precondition): nothing to delete.
      if (code(err) !== 404 && code(err) !== 409) throw err;
    }
  }

  /**
   * PATCH pods/status, retrying what a retry can fix (5xx, 429, connection errors) like the
   * kubelet's status manager does. False when the pod is gone or replaced (404, or the UID in
   * the patch no longer matches: 409/422).
   */
  async #patchStatus(pod: V1Pod, patch: Record<string, unknown>): Promise<boolean> {
    const { name = "", namespace = "" } = pod.metadata ?? {};
    for (let attempt = 0; !this.#stopped; attempt++) {
      try {
        await this.#core.patchNamespacedPodStatus({ name, namespace, body: patch }, strategic);
        return true;
      } catch (err) {
        const status = code(err);
        if (status === 404 || status === 409) return false;
        if ((status !== undefined && status < 500 && status !== 429) || attempt >= 5) {
          this.#log(`kubelet: status of ${namespace}/${name} not written: ${String(err)}`);
          return false;
        }
        await new Promise((resolve) => setTimeout(resolve, 200 * 2 ** attempt));
      }
    }
    return false; // stopped: a node going away reports nothing more
  }

  #context(): WorkerContext {
    const api = this.#opts.apiServer;
    const policies = this.#opts.egress ?? [];
    return {
      runtime: this.runtime,
      // The variables the kubelet always sets for the default/kubernetes Service (enableServiceLinks
      // or not), pointing where this node reaches the API server.
      serviceEnv: api
        ? {
            KUBERNETES_SERVICE_HOST: api.host,
            KUBERNETES_SERVICE_PORT: String(api.port),
            KUBERNETES_SERVICE_PORT_HTTPS: String(api.port),
            KUBERNETES_PORT: `tcp://${api.host}:${api.port}`,
          }
        : {},
      egressFor: (pod) => {
        const labels = pod.metadata?.labels ?? {};
        const hit = policies.filter((p) => Object.entries(p.matchLabels).every(([k, v]) => labels[k] === v));
        return hit.length ? hit.flatMap((p) => p.allow) : undefined;
      },
      nodeMemoryBytes: totalmem(),
      source: this.#source(),
      patchStatus: (pod, patch) => this.#patchStatus(pod, patch),
      deleteNow: (pod) => this.#deleteNow(pod),
      log: this.#log,
    };
  }

  /** Secrets and ConfigMaps, read as the node (the Node authorizer's graph must allow it). */
  #source(): ObjectSource {
    const read = async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
      try {
        return await fn();
      } catch (err) {
        if (code(err) === 404) return undefined;
        throw err; // 403 until the authorizer's graph has seen the binding: retried by the worker
      }
    };
    return {
      secret: (namespace, name) => read(() => this.#core.readNamespacedSecret({ name, namespace })),
      configMap: (namespace, name) => read(() => this.#core.readNamespacedConfigMap({ name, namespace })),
      // TokenRequest bound to the pod, as the node (the Node authorizer allows only the pod's own
      // ServiceAccount, and only while the pod is bound here).
      token: async (pod, audience, expirationSeconds) => {
        const { name = "", namespace = "default", uid } = pod.metadata ?? {};
        const sa = pod.spec?.serviceAccountName ?? "default";
        const tr = await this.#core.createNamespacedServiceAccountToken({
          name: sa,
          namespace,
          body: {
            spec: {
              audiences: audience ? [audience] : [],
              expirationSeconds,
              boundObjectRef: { apiVersion: "v1", kind: "Pod", name, ...(uid ? { uid } : {}) },
            },
          },
        });
        return tr.status?.token ?? "";
      },
    };
  }
}
