/**
 * The local Kubernetes platform of test/k8s, started for the chart test:
 *
 *   node test/chart/platform.ts --write-env FILE
 *
 * Same control plane and local kubelet as `node test/k8s/start.ts`, plus the kube-controller-manager
 * controllers a Helm release's objects need to come alive: deployment and replicaset (so that
 * the chart's Deployments create pods, each judged by PodSecurity admission like on any cluster)
 * and disruption (PodDisruptionBudget status). The kubelet binds those pods; their images are not
 * mapped to local commands (there is no registry, and the API's Kubernetes backend and the
 * controller come with issue #4), so they stay Pending with ErrImagePull — admitted, not run.
 *
 * Writes KUBECONFIG/FOLIO_K8S_SERVER/FOLIO_K8S_DIR to FILE once ready, then runs until SIGTERM or
 * SIGINT and stops everything.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { CONTROLLERS } from "../k8s/control-plane.ts";
import { startPlatform } from "../k8s/platform.ts";

const EXTRA_CONTROLLERS = ["deployment-controller", "replicaset-controller", "disruption-controller"];

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { "write-env": { type: "string" }, keep: { type: "boolean", default: false } } });
  const log = (line: string): void => {
    process.stderr.write(`[k8s] ${line}\n`);
  };
  const started = Date.now();
  const platform = await startPlatform({
    log,
    keepDir: values.keep,
    // The last --controllers flag wins (control-plane.ts appends these after its own).
    controllerManagerArgs: [`--controllers=${[...CONTROLLERS, ...EXTRA_CONTROLLERS].join(",")}`],
  });
  const cp = platform.controlPlane;
  log(`ready in ${Date.now() - started} ms (Kubernetes ${cp.versions.kubernetes}; logs in ${cp.dir})`);
  const env = `export KUBECONFIG=${platform.kubeconfig}\nexport FOLIO_K8S_SERVER=${cp.server}\nexport FOLIO_K8S_DIR=${cp.dir}\n`;
  if (values["write-env"]) writeFileSync(values["write-env"], env, { mode: 0o600 });
  else process.stdout.write(env);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  log("stopping");
  await platform.stop();
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`[k8s] failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
