/**
 * CLI for the local Kubernetes test platform:
 *
 *   node test/k8s/start.ts [--no-kubelet] [--keep] [--write-env FILE]
 *
 * Builds the control plane if the cache is empty, starts it and the local kubelet, prints
 * `export KUBECONFIG=...` on stdout (progress and kubelet logs go to stderr), then runs until
 * SIGINT or SIGTERM, when it stops everything and removes its temporary directory (unless
 * --keep). With --write-env it also writes KUBECONFIG/FOLIO_K8S_SERVER/FOLIO_K8S_DIR there, for
 * scripts that start it in the background:
 *
 *   node test/k8s/start.ts --write-env /tmp/k8s.env & pid=$!
 *   until [ -s /tmp/k8s.env ]; do sleep 1; done; source /tmp/k8s.env
 *   kubectl get nodes   # any client, with $KUBECONFIG
 *   kill $pid           # stop: SIGTERM
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { startPlatform } from "./platform.ts";

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      "no-kubelet": { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      "write-env": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    process.stderr.write("usage: node test/k8s/start.ts [--no-kubelet] [--keep] [--write-env FILE]\n");
    return 0;
  }
  const log = (line: string): void => {
    process.stderr.write(`[k8s] ${line}\n`);
  };
  const started = Date.now();
  const platform = await startPlatform({ log, keepDir: values.keep, withoutKubelet: values["no-kubelet"] });
  const cp = platform.controlPlane;
  log(
    `ready in ${Date.now() - started} ms (${Object.entries(cp.timings)
      .map(([k, v]) => `${k} ${v} ms`)
      .join(", ")})`,
  );
  log(`logs and credentials in ${cp.dir}`);
  const env = `export KUBECONFIG=${platform.kubeconfig}\nexport FOLIO_K8S_SERVER=${cp.server}\nexport FOLIO_K8S_DIR=${cp.dir}\n`;
  if (values["write-env"]) writeFileSync(values["write-env"], env, { mode: 0o600 });
  process.stdout.write(env);

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
