/**
 * The local Kubernetes platform of test/k8s and a MinIO, started for the chart test:
 *
 *   node test/chart/platform.ts --write-env FILE
 *
 * Same control plane and local kubelet as `node test/k8s/start.ts`, plus:
 * - the kube-controller-manager controllers a Helm release's objects need to come alive:
 *   deployment and replicaset (so that the chart's Deployments create pods, each judged by
 *   PodSecurity admission like on any cluster) and disruption (PodDisruptionBudget status);
 * - the OwnerReferencesPermissionEnforcement admission plugin (as on OpenShift): an owner
 *   reference with blockOwnerDeletion — the controller's Jobs, the API's Secrets — is admitted only
 *   from who may update the owner's finalizers, so the chart's RBAC is tested for it;
 * - the images `make images` built, also under the test registry `folio.test`
 *   (test/chart/images.ts): `folio.test/folio/api` runs `folio serve` (or the pod's command:
 *   `folio controller`, the `helm test` pod's `node -e …`), `folio.test/folio/runner` runs
 *   `folio runner --pod`, each as a runc container. Other images (the chart's defaults,
 *   registry.example.com) stay Pending with ErrImagePull: admitted, not run; runner pods reach
 *   only the MinIO below (the chart's NetworkPolicy, as the local kubelet enforces it);
 * - MinIO (test/s3/server.ts, the binary cached in ~/.cache/folio-s3) for the live release.
 *
 * Writes KUBECONFIG, FOLIO_K8S_SERVER, FOLIO_K8S_DIR, FOLIO_KUBELET_DIR (where pods' volumes
 * live: `<dir>/pods/<uid>/rootfs/<mountPath>`) and the S3 server's settings (CHART_S3_*) to FILE
 * once ready, then runs until SIGTERM or SIGINT and stops everything it started.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { CONTROLLERS } from "../k8s/control-plane.ts";
import { startPlatform, type Platform } from "../k8s/platform.ts";
import { startS3Server, type S3Server } from "../s3/server.ts";
import { chartImageAliases } from "./images.ts";

const EXTRA_CONTROLLERS = ["deployment-controller", "replicaset-controller", "disruption-controller"];
/** The API server's defaults plus these (control-plane.ts enables NodeRestriction; the last flag wins). */
const ADMISSION_PLUGINS = ["NodeRestriction", "OwnerReferencesPermissionEnforcement"];

const shellQuote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { "write-env": { type: "string" }, keep: { type: "boolean", default: false } } });
  const log = (line: string): void => {
    process.stderr.write(`[k8s] ${line}\n`);
  };
  let platform: Platform | undefined;
  let s3: S3Server | undefined;
  const stop = async (): Promise<void> => {
    await platform?.stop();
    await s3?.stop();
  };
  const stopping = new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  try {
    const started = Date.now();
    s3 = await startS3Server({ bucket: "folio-chart" });
    log(`MinIO ready in ${Date.now() - started} ms on ${s3.endpoint}`);
    platform = await startPlatform({
      log,
      keepDir: values.keep,
      aliases: chartImageAliases(),
      apiserverArgs: [`--enable-admission-plugins=${ADMISSION_PLUGINS.join(",")}`],
      // The last --controllers flag wins (control-plane.ts appends these after its own).
      controllerManagerArgs: [`--controllers=${[...CONTROLLERS, ...EXTRA_CONTROLLERS].join(",")}`],
    });
    platform.allowObjectStore(s3.endpoint);
    const cp = platform.controlPlane;
    log(`ready in ${Date.now() - started} ms (Kubernetes ${cp.versions.kubernetes}; logs in ${cp.dir})`);
    const env = {
      KUBECONFIG: platform.kubeconfig,
      FOLIO_K8S_SERVER: cp.server,
      FOLIO_K8S_DIR: cp.dir,
      FOLIO_KUBELET_DIR: platform.kubelet?.rootDir ?? "",
      CHART_S3_ENDPOINT: s3.endpoint,
      CHART_S3_REGION: s3.region,
      CHART_S3_BUCKET: s3.bucket,
      CHART_S3_ACCESS_KEY_ID: s3.accessKeyId,
      CHART_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    };
    const text = Object.entries(env)
      .map(([k, v]) => `export ${k}=${shellQuote(v)}\n`)
      .join("");
    if (values["write-env"]) writeFileSync(values["write-env"], text, { mode: 0o600 });
    else process.stdout.write(text);
  } catch (err) {
    await stop();
    throw err;
  }
  await stopping;
  log("stopping");
  await stop();
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
