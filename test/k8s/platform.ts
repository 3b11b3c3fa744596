/**
 * The whole test platform in one call: the control plane plus the local kubelet, whose node has
 * the images `make images` built (dist/images/*.oci.tar) and runs every pod from them with runc.
 * This is what the e2e suites, start.ts, smoke.ts, the chart test and bench-k8s use.
 *
 * Runner pods (labelled as controller/job-template.ts labels them, which is what the chart's
 * NetworkPolicy selects) get a network of their own that reaches only the object store the
 * test names with `allowObjectStore()`: nothing at all until it does.
 */
import { existsSync } from "node:fs";
import { CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from "./control-plane.ts";
import { imageCatalogue } from "./images.ts";
import { LocalKubelet, type EgressPolicy } from "./kubelet/kubelet.ts";
import { loadKubeConfig } from "./kubeconfig.ts";
import type { Endpoint } from "./runtime/egress.ts";

/** The labels of runner pods (controller/job-template.ts) that the chart's NetworkPolicy selects. */
export const RUNNER_POD_LABELS: Readonly<Record<string, string>> = {
  "app.kubernetes.io/managed-by": "folio",
  "app.kubernetes.io/component": "runner",
};

/** An http(s) URL's host and port. */
export function endpointOf(url: string): Endpoint {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || (u.protocol === "https:" ? 443 : 80)) };
}

export interface PlatformOptions extends ControlPlaneOptions {
  /** More names the built images answer to (`folio.test/folio/api:0.1.0`), by docker/images.txt name. */
  readonly aliases?: Readonly<Record<string, readonly string[]>>;
  /** The node's pod capacity (LocalKubeletOptions.maxPods): a backlog then waits unscheduled. */
  readonly maxPods?: number;
  /**
   * More image lists of the form of docker/images.txt whose built images the node also holds
   * (`["images-full.txt"]`: the full runner image of `make images-full`).
   */
  readonly imageLists?: readonly string[];
  /** Start the control plane alone (for a test that runs its own kubelet). */
  readonly withoutKubelet?: boolean;
}

/** A running platform. `stop()` stops the kubelet (killing its processes), then the control plane. */
export interface Platform {
  readonly controlPlane: ControlPlane;
  readonly kubelet: LocalKubelet | undefined;
  /** The admin kubeconfig: what tests, kubectl and the Folio controller use. */
  readonly kubeconfig: string;
  /** Lets runner pods reach this object store (its endpoint URL), and nothing else. */
  allowObjectStore(url: string): void;
  stop(): Promise<void>;
}

/**
 * Removes the `node.kubernetes.io/not-ready` taint that TaintNodesByCondition admission puts on
 * every new Node. The node-lifecycle controller lifts it once the node reports Ready; it is not
 * among the controllers we run (nothing else of it is wanted), and NodeRestriction forbids the
 * node to touch its own taints, so the platform does this one step with the admin identity.
 */
async function untaintReadyNode(kubeconfig: string, nodeName: string): Promise<void> {
  const core = loadKubeConfig(kubeconfig).makeApiClient(CoreV1Api);
  const node = await core.readNode({ name: nodeName });
  const taints = (node.spec?.taints ?? []).filter((t) => t.key !== "node.kubernetes.io/not-ready");
  await core.patchNode(
    { name: nodeName, body: { spec: { taints: taints.length ? taints : null } } },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
}

/** Starts the control plane (building it first if the cache is empty) and the local kubelet. */
export async function startPlatform(opts: PlatformOptions = {}): Promise<Platform> {
  const images = opts.withoutKubelet
    ? []
    : ["images.txt", ...(opts.imageLists ?? [])].flatMap(imageCatalogue).map((i) => {
        if (!existsSync(i.archive))
          throw new Error(
            `${i.archive} is missing: run "make images" or, for docker/images-full.txt, "make images-full" (the local kubelet runs pods from the built images)`,
          );
        return { archive: i.archive, aliases: opts.aliases?.[i.name] ?? [] };
      });
  const controlPlane = await startControlPlane(opts);
  const runnerEgress: Endpoint[] = [];
  const egress: EgressPolicy[] = [{ matchLabels: RUNNER_POD_LABELS, allow: runnerEgress }];
  let kubelet: LocalKubelet | undefined;
  try {
    if (!opts.withoutKubelet) {
      kubelet = await LocalKubelet.start({
        nodeName: controlPlane.nodeName,
        nodeKubeconfig: controlPlane.kubeconfigs.node,
        schedulerKubeconfig: controlPlane.kubeconfigs.scheduler,
        kubeletVersion: controlPlane.versions.kubernetes,
        images,
        apiServer: endpointOf(controlPlane.server),
        egress,
        ...(opts.maxPods === undefined ? {} : { maxPods: opts.maxPods }),
        ...(opts.log ? { log: opts.log } : {}),
      });
      await untaintReadyNode(controlPlane.kubeconfigs.admin, controlPlane.nodeName);
    }
  } catch (err) {
    await kubelet?.stop();
    await controlPlane.stop();
    throw err;
  }
  return {
    controlPlane,
    kubelet,
    kubeconfig: controlPlane.kubeconfigs.admin,
    allowObjectStore(url: string): void {
      runnerEgress.push(endpointOf(url));
    },
    async stop(): Promise<void> {
      await kubelet?.stop();
      await controlPlane.stop();
    },
  };
}
