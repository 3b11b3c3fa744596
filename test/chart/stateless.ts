/**
 * `node test/chart/stateless.ts MANIFEST`: the default values render the API that issue #12 asks
 * for (docs/adr/0008, 0009) — a Deployment of 3 replicas spread over nodes and zones, a rolling
 * update that never goes below the replica count (maxUnavailable 0), a PodDisruptionBudget that
 * keeps two of three through a drain, no PersistentVolumeClaim and no volume but emptyDirs and
 * projections (the API keeps no state), each replica told its Service (FOLIO_API_SERVICE: its
 * share of the rate limits); the controller bounds runner Jobs (FOLIO_MAX_RUNNING_JOBS) and names
 * both runner images (the full one for OCR, PDF/A and web pages: docs/adr/0015).
 *
 * Prints every check; exit status 1 if any failed. Run by test/chart/run.sh on the default render.
 */
import { readFileSync } from "node:fs";
import { loadAll } from "js-yaml";

interface Obj {
  kind?: string;
  metadata?: { name?: string; labels?: Record<string, string> };
  spec?: any;
}

const manifest = process.argv[2];
if (!manifest) throw new Error("usage: node test/chart/stateless.ts MANIFEST");
const docs = (loadAll(readFileSync(manifest, "utf8")) as (Obj | null)[]).filter((d): d is Obj => Boolean(d?.kind));
let failures = 0;
const check = (good: boolean, what: string): void => {
  if (!good) failures++;
  process.stdout.write(`  ${good ? "ok  " : "FAIL"}  ${what}\n`);
};

const component = (o: Obj): string | undefined => o.metadata?.labels?.["app.kubernetes.io/component"];
const deployment = (c: string): Obj | undefined => docs.find((d) => d.kind === "Deployment" && component(d) === c);
const env = (d: Obj | undefined, name: string): string | undefined =>
  (d?.spec?.template?.spec?.containers ?? [])
    .flatMap((c: { env?: { name: string; value?: string }[] }) => c.env ?? [])
    .find((e: { name: string }) => e.name === name)?.value;

const api = deployment("api");
const spec = api?.spec;
check(spec?.replicas === 3, `the API Deployment runs 3 replicas (${spec?.replicas})`);
check(
  spec?.strategy?.type === "RollingUpdate" &&
    spec.strategy.rollingUpdate?.maxUnavailable === 0 &&
    spec.strategy.rollingUpdate.maxSurge >= 1,
  `its rolling update surges and never goes below the replica count (${JSON.stringify(spec?.strategy)})`,
);
const keys = (spec?.template?.spec?.topologySpreadConstraints ?? []).map((t: { topologyKey: string }) => t.topologyKey);
check(
  keys.includes("kubernetes.io/hostname") && keys.includes("topology.kubernetes.io/zone"),
  `its pods spread over nodes and zones (${keys.join(", ")})`,
);
const pdb = docs.find((d) => d.kind === "PodDisruptionBudget" && d.spec?.selector?.matchLabels?.["app.kubernetes.io/component"] === "api");
check(pdb?.spec?.maxUnavailable === 1, `a PodDisruptionBudget keeps 2 of 3 API pods through a drain (${JSON.stringify(pdb?.spec)})`);
check(!docs.some((d) => d.kind === "PersistentVolumeClaim" || d.kind === "StatefulSet"), "no PersistentVolumeClaim, no StatefulSet");
const volumes: { name: string; [k: string]: unknown }[] = spec?.template?.spec?.volumes ?? [];
const stateful = volumes.filter((v) => !v.emptyDir && !v.projected && !v.secret && !v.configMap);
check(
  stateful.length === 0,
  `the API's volumes are scratch or configuration only (${volumes.map((v) => v.name).join(", ") || "none"})${stateful.length ? `: not ${stateful.map((v) => v.name).join(", ")}` : ""}`,
);
check(env(api, "FOLIO_BACKEND") === "kubernetes", "the API runs in Kubernetes mode");
check(
  Boolean(env(api, "FOLIO_API_SERVICE")),
  `each replica watches its Service for its share of the rate limits (${env(api, "FOLIO_API_SERVICE")})`,
);
const controller = deployment("controller");
const max = Number(env(controller, "FOLIO_MAX_RUNNING_JOBS"));
check(max > 0, `the controller starts at most FOLIO_MAX_RUNNING_JOBS = ${max} runner Jobs at once`);
// docs/adr/0015: OCR, PDF/A and web-page jobs run the full runner image; the others the lean one.
const runner = env(controller, "FOLIO_RUNNER_IMAGE") ?? "";
const full = env(controller, "FOLIO_RUNNER_FULL_IMAGE") ?? "";
check(
  /^folio\/runner:/.test(runner) && /^folio\/runner-full:/.test(full) && runner.split(":")[1] === full.split(":")[1],
  `the controller names both runner images, same tag (${runner}, ${full})`,
);
process.stdout.write(`stateless API: ${failures ? `${failures} failed` : "every check passed"}\n`);
process.exitCode = failures ? 1 : 0;
