/**
 * The whole test platform in one call: the control plane plus the local kubelet, with Folio's
 * images mapped to the checkout (the runner image runs `node bin/folio.ts`, no build needed).
 * This is what the e2e suite's vitest globalSetup, start.ts and smoke.ts use.
 */
import { join } from "node:path";
import { CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from "./control-plane.ts";
import type { ImageMapping } from "./kubelet/images.ts";
import { LocalKubelet } from "./kubelet/kubelet.ts";
import { loadKubeConfig } from "./kubeconfig.ts";
import { REPO_ROOT } from "./versions.ts";

/** The local command behind `bin/folio.ts`: Node 24 runs the TypeScript sources directly. */
export const FOLIO_COMMAND: readonly string[] = [process.execPath, join(REPO_ROOT, "bin", "folio.ts")];

/**
 * The default image mapping. `folio/runner` (by tag or digest) stands for docker/runner.Dockerfile:
 * ENTRYPOINT `folio`, CMD `runner --pod`, WORKDIR and HOME /tmp; `folio-test/shell` is a plain
 * shell for platform tests. Tests using other image names pass their own `images`.
 */
const RUNNER_IMAGE = { entrypoint: FOLIO_COMMAND, cmd: ["runner", "--pod"], workingDir: "/tmp", env: { HOME: "/tmp" } };
export const DEFAULT_IMAGES: readonly ImageMapping[] = [
  { image: "folio/runner:*", ...RUNNER_IMAGE },
  { image: "folio/runner@*", ...RUNNER_IMAGE },
  { image: "folio-test/shell:*", entrypoint: ["sh", "-c"], cmd: ["true"] },
];

/** `command: [folio, ...]` in a pod spec (the controller's Jobs set it) runs the checkout's CLI too. */
export const DEFAULT_COMMANDS: Readonly<Record<string, readonly string[]>> = {
  folio: FOLIO_COMMAND,
  "/usr/local/bin/folio": FOLIO_COMMAND,
};

export interface PlatformOptions extends ControlPlaneOptions {
  readonly images?: readonly ImageMapping[];
  readonly commands?: Readonly<Record<string, readonly string[]>>;
  /** The node's pod capacity (LocalKubeletOptions.maxPods): a backlog then waits unscheduled. */
  readonly maxPods?: number;
  /** Start the control plane alone (for a test that runs its own kubelet). */
  readonly withoutKubelet?: boolean;
}

/** A running platform. `stop()` stops the kubelet (killing its processes), then the control plane. */
export interface Platform {
  readonly controlPlane: ControlPlane;
  readonly kubelet: LocalKubelet | undefined;
  /** The admin kubeconfig: what tests, kubectl and the Folio controller use. */
  readonly kubeconfig: string;
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
  const controlPlane = await startControlPlane(opts);
  let kubelet: LocalKubelet | undefined;
  try {
    if (!opts.withoutKubelet) {
      kubelet = await LocalKubelet.start({
        nodeName: controlPlane.nodeName,
        nodeKubeconfig: controlPlane.kubeconfigs.node,
        schedulerKubeconfig: controlPlane.kubeconfigs.scheduler,
        kubeletVersion: controlPlane.versions.kubernetes,
        images: opts.images ?? DEFAULT_IMAGES,
        commands: opts.commands ?? DEFAULT_COMMANDS,
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
    async stop(): Promise<void> {
      await kubelet?.stop();
      await controlPlane.stop();
    },
  };
}
