/**
 * `make bench-k8s`: the PdfJob operator on the local control plane (test/k8s/platform.ts: real
 * kube-apiserver, kube-controller-manager and the local kubelet), a real MinIO and `folio
 * controller` as a container of the API image `make images` built (test/e2e/containers.ts
 * startReadyController: configured through its environment as the chart's Deployment configures
 * it), on this machine. What the bench reads from the controller comes from the container: its
 * Prometheus metrics over HTTP (work queue depth, leadership, reconcile errors), its log (the
 * errors' kinds) and its cgroup (CPU).
 *
 *   1. Latency: small merges (2 × 1 page) one after another. PdfJob created → phase Succeeded,
 *      minus the runner's own time (its container running → terminated), goal p50 ≤ 2 s; with
 *      the stages in between, each timed when a watch first shows it.
 *   2. Backlog: 500 PdfJobs created as fast as several parallel creators can. Jobs created per
 *      second by the controller (goal ≥ 20/s), errors (goal 0), time until every Job exists,
 *      and with `--drain` the time until every PdfJob has succeeded.
 *
 *   0. Container start: what the local kubelet's runtime takes to run a container of the runner
 *      image (runc on the unpacked image, overlay, restricted securityContext, seccomp, cgroup
 *      limits) from start to exit, `true` in it, median of 20 — on the host's network and in a
 *      network namespace of its own (the runner pods'), next to the engines' times in it.
 *
 * The kubelet runs each pod as a runc container of the image; a node's capacity is `--max-pods`
 * pods (the rest wait unscheduled, as on a full cluster), so the backlog measures the controller,
 * not how many containers two cores can start. The control plane is a fresh one in a temporary directory:
 * stopping it at the end removes every object the run made.
 *
 *   node bench/k8s.ts [--latency 30] [--backlog 500] [--creators 8] [--workers 2] [--max-pods 2] [--drain]
 *
 * A short run that still goes through every part (about 2 min on a quiet machine):
 * `node bench/k8s.ts --latency 5 --backlog 50 --drain`.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { parseArgs } from "node:util";
import { BatchV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1Job, type V1Pod } from "@kubernetes/client-node";
import { Informer } from "../controller/informer.ts";
import { apiImage, runnerImage } from "../test/k8s/images.ts";
import { effectiveSecurity } from "../test/k8s/runtime/security.ts";
import { newId } from "../core/ids.ts";
import {
  LABELS,
  MANAGED_BY,
  PDFJOB_API_VERSION,
  PDFJOB_FINALIZER,
  PDFJOB_GROUP,
  PDFJOB_KIND,
  PDFJOB_PLURAL,
  PDFJOB_VERSION,
  pdfJobName,
  type PdfJob,
  type PdfJobInput,
} from "../core/schemas/pdfjob.ts";
import { textPdf } from "../test/fixtures/pdf-fixtures.ts";
import { type E2eWorld, startE2eWorld } from "../test/e2e/support.ts";
import { startReadyController, type ReadyController } from "../test/e2e/containers.ts";
import { requestCounts } from "../test/k8s/apiserver-requests.ts";

const { values: args } = parseArgs({
  options: {
    latency: { type: "string", default: "30" },
    backlog: { type: "string", default: "500" },
    creators: { type: "string", default: "8" },
    workers: { type: "string", default: "2" },
    "max-pods": { type: "string", default: "2" },
    drain: { type: "boolean", default: false },
  },
});
const LATENCY_JOBS = Number(args.latency);
const BACKLOG = Number(args.backlog);
const CREATORS = Number(args.creators);
const WORKERS = Number(args.workers);
const MAX_PODS = Number(args["max-pods"]);

const NS = "bench";
const TENANT = "ten_bench";
const CRD = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL, namespace: NS };

// --- what the watches saw, per PdfJob --------------------------------------------------------------

/** Local times (ms) at which a watch first showed each step of one PdfJob. */
interface Timeline {
  /** Just before the create call. */
  created?: number;
  /** The create call returned. */
  acked?: number;
  job?: number;
  /** The Job's Complete or Failed condition. */
  jobDone?: number;
  pod?: number;
  podRunning?: number;
  podTerminated?: number;
  ended?: number;
  phase?: string;
  /** The runner's report: its own duration (fetching, the operation, storing). */
  runnerMs?: number;
}

/**
 * Three informers (the controller's own Informer class: list, watch, re-list on error) timing
 * what happens to the bench's PdfJobs, Jobs and pods as it becomes visible to any client.
 */
class Recorder {
  readonly timelines = new Map<string, Timeline>();
  readonly jobTimes: number[] = [];
  readonly #informers: Pick<Informer<never>, "start" | "stop" | "waitForSync">[];
  #waiters: (() => void)[] = [];

  constructor(kc: KubeConfig) {
    const custom = kc.makeApiClient(CustomObjectsApi);
    const batch = kc.makeApiClient(BatchV1Api);
    const core = kc.makeApiClient(CoreV1Api);
    const managed = `${LABELS.managedBy}=${MANAGED_BY}`;
    const list = <T>(res: { items: T[]; metadata?: { resourceVersion?: string } }): { items: T[]; resourceVersion: string } => ({
      items: res.items,
      resourceVersion: res.metadata?.resourceVersion ?? "",
    });
    const pdfJobs = new Informer<PdfJob>({
      name: "bench-pdfjobs",
      kubeConfig: kc,
      list: async () => list((await custom.listNamespacedCustomObject(CRD)) as { items: PdfJob[] }),
      watchPath: `/apis/${PDFJOB_GROUP}/${PDFJOB_VERSION}/namespaces/${NS}/${PDFJOB_PLURAL}`,
      onChange: (pj) => this.#pdfJob(pj),
      resyncMs: 0,
    });
    const jobs = new Informer<V1Job>({
      name: "bench-jobs",
      kubeConfig: kc,
      list: async () => list(await batch.listNamespacedJob({ namespace: NS, labelSelector: managed })),
      watchPath: `/apis/batch/v1/namespaces/${NS}/jobs`,
      labelSelector: managed,
      onChange: (job) => this.#job(job),
      resyncMs: 0,
    });
    const pods = new Informer<V1Pod>({
      name: "bench-pods",
      kubeConfig: kc,
      list: async () => list(await core.listNamespacedPod({ namespace: NS, labelSelector: managed })),
      watchPath: `/api/v1/namespaces/${NS}/pods`,
      labelSelector: managed,
      onChange: (pod) => this.#pod(pod),
      resyncMs: 0,
    });
    this.#informers = [pdfJobs, jobs, pods];
  }

  async start(): Promise<void> {
    for (const i of this.#informers) i.start();
    await Promise.all(this.#informers.map((i) => i.waitForSync()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.#informers.map((i) => i.stop()));
  }

  timeline(name: string): Timeline {
    let t = this.timelines.get(name);
    if (!t) this.timelines.set(name, (t = {}));
    return t;
  }

  /** Resolves once `ready()` holds (checked after every event). */
  async until(ready: () => boolean, what: string, timeoutMs: number): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!ready()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 500).unref();
      });
    }
  }

  #changed(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }

  #pdfJob(pj: PdfJob): void {
    const t = this.timeline(pj.metadata.name);
    const phase = pj.status?.phase;
    if ((phase === "Succeeded" || phase === "Failed" || phase === "Canceled") && t.ended === undefined) {
      t.ended = Date.now();
      t.phase = phase;
    }
    this.#changed();
  }

  #job(job: V1Job): void {
    const owner = job.metadata?.labels?.[LABELS.pdfJob];
    if (!owner) return;
    const t = this.timeline(owner);
    if (t.job === undefined) {
      t.job = Date.now();
      this.jobTimes.push(t.job);
    }
    if (
      t.jobDone === undefined &&
      job.status?.conditions?.some((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True")
    )
      t.jobDone = Date.now();
    this.#changed();
  }

  #pod(pod: V1Pod): void {
    const owner = pod.metadata?.labels?.[LABELS.pdfJob];
    if (!owner) return;
    const t = this.timeline(owner);
    const now = Date.now();
    t.pod ??= now;
    const state = pod.status?.containerStatuses?.[0]?.state;
    if (state?.running) t.podRunning ??= now;
    if (state?.terminated) terminated(t, state.terminated.message, now);
    this.#changed();
  }
}

/** The first sighting of the runner's termination stamps the timeline (running too, if that was missed) and keeps its report's duration. */
function terminated(t: Timeline, message: string | undefined, now: number): void {
  if (t.podTerminated !== undefined) return;
  t.podTerminated = now;
  t.podRunning ??= now;
  const runnerMs = reportedDuration(message);
  if (runnerMs !== undefined) t.runnerMs = runnerMs;
}

/** The runner's own duration from its termination message (its JSON report), if it is one. */
function reportedDuration(message: string | undefined): number | undefined {
  try {
    const report = JSON.parse(message ?? "") as { duration_ms?: unknown };
    return typeof report.duration_ms === "number" ? report.duration_ms : undefined;
  } catch {
    return undefined; // not a report (a crash's log tail): no runner figure for this one
  }
}

// --- the platform -----------------------------------------------------------------------------------

interface Bench extends E2eWorld {
  /** `folio controller`, a container of the API image, ready and leading. */
  controller: ReadyController;
  /** From the container's start until its /readyz answered 200 and it held the leader Lease. */
  controllerStartMs: number;
  /** CPU seconds the controller container has used so far (its cgroup), if the cgroup was found. */
  controllerCpu: () => number | undefined;
  recorder: Recorder;
  files: string[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitForServiceAccount(kc: KubeConfig): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  for (;;) {
    try {
      await core.readNamespacedServiceAccount({ namespace: NS, name: "default" });
      return;
    } catch {
      await sleep(100);
    }
  }
}

/** The controller's Prometheus text, from its metrics port over plain HTTP (as Prometheus scrapes it). */
async function scrape(c: ReadyController): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${c.metricsPort}/metrics`, { signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`controller GET /metrics: HTTP ${res.status}`);
  return res.text();
}

/** The sum of a metric's samples in Prometheus text (every label set containing `labels`); 0 if absent. */
function metricSum(text: string, name: string, labels = ""): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m && m[1] === name && (m[2] ?? "").includes(labels)) sum += Number(m[3]);
  }
  return sum;
}

/** `reconcile failed` error message → a short kind: the HTTP status when there is one. */
function errorKind(message: string): string {
  const code = /HTTP-Code: (\d{3})|\b(409|422|429|500|503)\b/.exec(message);
  if (code) return `HTTP ${code[1] ?? code[2]}${/conflict|modified/i.test(message) ? " (conflict)" : ""}`;
  return message.slice(0, 60);
}

/** The controller's failed reconciles by kind, from its structured (JSON) log lines. */
function errorKinds(log: string): Map<string, number> {
  const kinds = new Map<string, number>();
  for (const line of log.split("\n")) {
    if (!line.startsWith("{")) continue;
    let entry: { msg?: string; err?: { message?: string } };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue; // a line cut where the log was read
    }
    if (!entry.msg?.startsWith("reconcile failed")) continue;
    const kind = errorKind(entry.err?.message ?? "unknown");
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  return kinds;
}

/**
 * A reader of the CPU time a container has used: its cgroup, which the runtime names by the
 * container's id (cgroup v1 cpuacct.usage, else v2 cpu.stat). Found through a process in it;
 * undefined when none is (not Linux, or the container has exited).
 */
function containerCpu(id: string): () => number | undefined {
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    let lines: string[];
    try {
      lines = readFileSync(`/proc/${pid}/cgroup`, "utf8").split("\n");
    } catch {
      continue; // gone meanwhile
    }
    for (const line of lines) {
      const [, controllers = "", group = ""] = line.split(":");
      if (!group.endsWith(`/${id}`)) continue;
      const v1 = controllers.split(",").includes("cpuacct") ? path.join("/sys/fs/cgroup", controllers, group, "cpuacct.usage") : undefined;
      const v2 = controllers === "" ? path.join("/sys/fs/cgroup", group, "cpu.stat") : undefined;
      if (v1) return () => Number(readFileSync(v1, "utf8")) / 1e9;
      if (v2)
        return () => {
          const usec = /^usage_usec (\d+)$/m.exec(readFileSync(v2, "utf8"))?.[1];
          return usec === undefined ? undefined : Number(usec) / 1e6;
        };
    }
  }
  return () => undefined;
}

async function setUp(): Promise<Bench> {
  const world = await startE2eWorld("folio-bench-k8s-", { platform: { maxPods: MAX_PODS } });
  const { dir, s3, kc } = world;
  let controller: ReadyController | undefined;
  let recorder: Recorder | undefined;
  try {
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: NS } } });
    await waitForServiceAccount(kc);
    const started = Date.now();
    // `folio controller` in a container of the API image, configured as the chart configures it;
    // the runner Jobs it creates name the runner image (pulled never: it is on the node) and get
    // presigned URLs for their objects, no bucket credentials.
    controller = await startReadyController(world.platform, {
      ...s3.env,
      FOLIO_CONTROLLER_NAMESPACE: NS,
      FOLIO_CONTROLLER_WORKERS: String(WORKERS),
      FOLIO_CONTROLLER_LEADER_ELECTION: "true",
      // No admission limit (the chart's default is 50 runner Jobs at once): the backlog measures
      // how fast the controller creates Jobs, not how fast 2 runner pods at a time drain them.
      FOLIO_MAX_RUNNING_JOBS: "0",
      FOLIO_LOG_LEVEL: "debug", // conflicts (409) are logged at debug: their kinds are counted too
    });
    const c = controller;
    recorder = new Recorder(kc);
    await recorder.start();
    const end = Date.now() + 60_000;
    while (metricSum(await scrape(c), "folio_controller_leader") !== 1) {
      if (Date.now() > end) throw new Error(`the controller container did not become the leader within 60 s:\n${c.logs()}`);
      await sleep(100);
    }
    const controllerStartMs = Date.now() - started;
    const files = [await textPdf(path.join(dir, "a.pdf"), 1, "alpha"), await textPdf(path.join(dir, "b.pdf"), 1, "beta")];
    return { ...world, controller: c, controllerStartMs, controllerCpu: containerCpu(c.id), recorder, files };
  } catch (err) {
    await recorder?.stop();
    await controller?.stop();
    await controller?.cleanup();
    await world.stop();
    throw err;
  }
}

async function tearDown(b: Bench): Promise<void> {
  await b.recorder.stop();
  await b.controller.stop();
  await b.controller.cleanup();
  await b.stop();
}

async function upload(b: Bench, file: string): Promise<PdfJobInput> {
  const bytes = await readFile(file);
  const fileId = newId("file");
  const key = `${TENANT}/${fileId}`;
  await b.store.put(key, Readable.from([bytes]));
  return {
    key,
    fileId,
    filename: path.basename(file),
    contentType: "application/pdf",
    size: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  };
}

/** Creates one merge PdfJob (with the finalizer, as the API does); returns its name. */
async function createPdfJob(b: Bench, inputs: PdfJobInput[]): Promise<string> {
  const name = pdfJobName(newId("job"));
  const t = b.recorder.timeline(name);
  t.created = Date.now();
  const body = {
    apiVersion: PDFJOB_API_VERSION,
    kind: PDFJOB_KIND,
    metadata: { name, namespace: NS, finalizers: [PDFJOB_FINALIZER] },
    spec: { tenant: TENANT, operation: "merge", inputs, options: { outline: "keep" }, deadlineSeconds: 600, retentionSeconds: 3600 },
  };
  await b.custom.createNamespacedCustomObject({ ...CRD, body });
  t.acked = Date.now();
  return name;
}

/** Requests between two requestCounts() whose `VERB resource` matches, and how many were 409s. */
function requestsBetween(
  before: Map<string, number>,
  after: Map<string, number>,
  verb: string,
  resource: string,
): { n: number; conflicts: number } {
  let n = 0;
  let conflicts = 0;
  for (const [key, value] of after) {
    const [v, r, code] = key.split(" ");
    if (v !== verb || r !== resource) continue;
    const delta = value - (before.get(key) ?? 0);
    n += delta;
    if (code === "409") conflicts += delta;
  }
  return { n, conflicts };
}

/**
 * CPU seconds used so far by the control plane's daemons (their command lines name its
 * directory), MinIO (its data directory), the controller container (its cgroup) and this process
 * (the kubelet, the watches and the creators share it). Linux only; clock ticks of 1/100 s.
 */
function cpuSeconds(b: Bench): Map<string, number> {
  const markers = [b.platform.controlPlane.dir, b.s3.dataDir];
  const out = new Map<string, number>();
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      if (!markers.some((m) => argv.some((a) => a.includes(m)))) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const name = path.basename(argv[0] ?? pid);
      out.set(name, (out.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // gone meanwhile
    }
  }
  const controller = b.controllerCpu();
  if (controller !== undefined) out.set("folio controller (container)", controller);
  const self = process.cpuUsage();
  out.set("this process (kubelet, watches, creators)", (self.user + self.system) / 1e6);
  return out;
}

// --- figures ----------------------------------------------------------------------------------------

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
}

const row = (cols: (string | number)[]): string =>
  cols
    .map((c, i) => String(c).padEnd(i === 0 ? 54 : 12))
    .join("")
    .trimEnd();
const secs = (ms: number): string => (Number.isNaN(ms) ? "–" : (ms / 1000).toFixed(2));
const load = (): string =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

function spanRow(label: string, xs: number[], goal = ""): string {
  return row([label, secs(quantile(xs, 0.5)), secs(quantile(xs, 0.9)), secs(Math.max(...xs)), goal]);
}

/** One merge, start to end; its name. */
async function oneMerge(b: Bench): Promise<string> {
  const inputs = [await upload(b, b.files[0]!), await upload(b, b.files[1]!)];
  const name = await createPdfJob(b, inputs);
  await b.recorder.until(() => b.recorder.timeline(name).ended !== undefined, `PdfJob ${name} to end`, 120_000);
  return name;
}

/** Part 1: sequential small merges (after one warm-up merge, not counted). */
async function latency(b: Bench): Promise<void> {
  await oneMerge(b);
  const names: string[] = [];
  for (let i = 0; i < LATENCY_JOBS; i++) names.push(await oneMerge(b));
  const ts = names.map((n) => b.recorder.timeline(n));
  const failed = ts.filter((t) => t.phase !== "Succeeded").length;
  const ok = ts.filter(
    (t): t is Required<Timeline> =>
      t.phase === "Succeeded" && [t.created, t.job, t.jobDone, t.pod, t.podRunning, t.podTerminated, t.ended].every((x) => x !== undefined),
  );
  const d = (f: (t: Required<Timeline>) => number): number[] => ok.map(f);
  console.log(`1. PdfJob created → Succeeded: ${LATENCY_JOBS} merges (2 × 1 page) one after another — load ${load()}\n`);
  console.log(row(["", "p50 s", "p90 s", "max s", "goal"]));
  console.log(
    spanRow(
      "total: created → Succeeded",
      d((t) => t.ended - t.created),
    ),
  );
  console.log(
    spanRow(
      "runner process: container running → exited",
      d((t) => t.podTerminated - t.podRunning),
    ),
  );
  console.log(
    spanRow(
      "  of which the runner's reported work",
      ok.filter((t) => t.runnerMs !== undefined).map((t) => t.runnerMs),
    ),
  );
  console.log(
    spanRow(
      "overhead: total − runner process",
      d((t) => t.ended - t.created - (t.podTerminated - t.podRunning)),
      "p50 ≤ 2",
    ),
  );
  console.log(
    spanRow(
      "  created → Job seen (controller)",
      d((t) => t.job - t.created),
    ),
  );
  console.log(
    spanRow(
      "  Job → pod seen (Job controller)",
      d((t) => t.pod - t.job),
    ),
  );
  console.log(
    spanRow(
      "  pod → running (kubelet: bind, start process)",
      d((t) => t.podRunning - t.pod),
    ),
  );
  console.log(
    spanRow(
      "  exited → Job Complete seen (Job controller)",
      d((t) => t.jobDone - t.podTerminated),
    ),
  );
  console.log(
    spanRow(
      "  Job Complete → Succeeded seen (controller)",
      d((t) => t.ended - t.jobDone),
    ),
  );
  console.log(`\n   failed: ${failed} of ${names.length}\n`);
}

/** Part 0: container start, median of 20 (after one unpack, not counted). */
async function containerStart(b: Bench): Promise<void> {
  const runtime = b.platform.kubelet!.runtime;
  const image = await runtime.images.unpack(runtime.images.find(runnerImage())!);
  const security = effectiveSecurity(
    { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: "RuntimeDefault" } },
    { name: "bench", securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } } },
    image.config.user,
    { passwd: "", group: "" },
  );
  const base = path.join(b.platform.kubelet!.rootDir, "bench");
  let n = 0;
  const once = async (argv: string[], egress?: { host: string; port: number }[]): Promise<number> => {
    const id = `bench-${n++}`;
    const started = performance.now();
    const c = await runtime.start({
      id,
      bundle: path.join(base, id),
      image,
      argv,
      env: { PATH: "/opt/folio/.tools/node/bin:/usr/bin:/bin", HOME: "/tmp" },
      cwd: "/",
      hostname: id,
      security,
      mounts: [],
      resources: { memoryBytes: 2 * 1024 ** 3, cpuQuotaUs: 200_000 },
      ...(egress ? { egress } : {}),
      logFile: path.join(base, `${id}.log`),
    });
    const exit = await c.exited;
    if (exit.exitCode !== 0) throw new Error(`container ${id} exited with ${exit.exitCode}`);
    return performance.now() - started;
  };
  const median = async (runs: number, fn: () => Promise<number>): Promise<number> => {
    const xs: number[] = [];
    for (let i = 0; i < runs; i++) xs.push(await fn());
    return quantile(xs, 0.5);
  };
  const s3 = new URL(b.s3.endpoint);
  await once(["true"]);
  const rows: [string, number][] = [
    ["container `true`, host network", await median(20, () => once(["true"]))],
    [
      "container `true`, own network (object store relay)",
      await median(20, () => once(["true"], [{ host: s3.hostname, port: Number(s3.port) }])),
    ],
    ["  engine in it: qpdf --version", await median(20, () => once(["qpdf", "--version"]))],
    ["  engine in it: node -e 0 (the runner's Node)", await median(20, () => once(["node", "-e", "0"]))],
  ];
  console.log(`0. Container start (runc, runner image, restricted), median of 20 — load ${load()}
`);
  console.log(row(["", "ms"]));
  for (const [what, ms] of rows) console.log(row([what, ms.toFixed(0)]));
  console.log();
}

/** Part 2: a backlog created as fast as possible. */
async function backlog(b: Bench): Promise<void> {
  // One pair of inputs for the whole backlog (the controller keeps inputs another unfinished
  // PdfJob still uses): the creators then only create PdfJobs.
  const inputs = [await upload(b, b.files[0]!), await upload(b, b.files[1]!)];
  const jobsBefore = b.recorder.jobTimes.length;
  let maxDepth = 0;
  let maxRunning = 0;
  // The work queue's depth as the controller reports it (its /metrics), scraped every 100 ms. The
  // samplers' timers do not keep the process alive if the bench fails before it stops them.
  let sampling = true;
  const depthSampler = (async (): Promise<void> => {
    while (sampling) {
      try {
        maxDepth = Math.max(maxDepth, metricSum(await scrape(b.controller), "folio_controller_workqueue_depth"));
      } catch {
        // a scrape that timed out under load: the next one counts
      }
      await new Promise((r) => setTimeout(r, 100).unref());
    }
  })();
  const logFrom = b.controller.logs().length;
  const reconcileErrors = async (): Promise<number> =>
    metricSum(await scrape(b.controller), "folio_controller_reconcile_total", 'result="error"');
  const errorsBefore = await reconcileErrors();
  const sampler = setInterval(() => {
    const running = (b.platform.kubelet?.pods() ?? []).filter((p) => p.pid !== undefined && p.exit === undefined).length;
    maxRunning = Math.max(maxRunning, running);
  }, 20).unref();
  const names: string[] = [];
  let createErrors = 0;
  let next = 0;
  const loadBefore = load();
  const countsBefore = await requestCounts(b.kc, { byCode: true });
  const cpuBefore = cpuSeconds(b);
  const start = Date.now();
  await Promise.all(
    Array.from({ length: CREATORS }, async () => {
      while (next < BACKLOG) {
        next++;
        try {
          names.push(await createPdfJob(b, inputs));
        } catch {
          createErrors++;
        }
      }
    }),
  );
  const created = Date.now();
  await b.recorder.until(() => names.every((n) => b.recorder.timeline(n).job !== undefined), "every Job to exist", 600_000);
  const allJobs = Date.now();
  const countsAfter = await requestCounts(b.kc, { byCode: true });
  const cpuAfter = cpuSeconds(b);
  const jobTimes = b.recorder.jobTimes.slice(jobsBefore).sort((x, y) => x - y);
  const first = jobTimes[0] ?? start;
  const last = jobTimes[jobTimes.length - 1] ?? start;
  // The middle 80 % of the Jobs, away from the ramp-up and the tail.
  const p10 = jobTimes[Math.floor(jobTimes.length * 0.1)] ?? first;
  const p90 = jobTimes[Math.floor(jobTimes.length * 0.9)] ?? last;
  const lag = names.map((n) => b.recorder.timeline(n)).map((t) => (t.job ?? NaN) - (t.acked ?? NaN));
  const errorsDuring = (await reconcileErrors()) - errorsBefore;
  const errorsByKind = [...errorKinds(b.controller.logs().slice(logFrom))];
  console.log(`2. Backlog: ${BACKLOG} PdfJobs by ${CREATORS} parallel creators — load before ${loadBefore}, after ${load()}\n`);
  console.log(row(["", "value", "goal"]));
  console.log(row(["PdfJobs created per second (creators)", (names.length / ((created - start) / 1000)).toFixed(1)]));
  console.log(row(["Jobs created per second, overall", (jobTimes.length / ((last - start) / 1000)).toFixed(1), "≥ 20"]));
  console.log(
    row(["Jobs created per second, middle 80 %", ((jobTimes.length * 0.8) / Math.max(0.001, (p90 - p10) / 1000)).toFixed(1), "≥ 20"]),
  );
  console.log(row(["time until all Jobs exist (s)", secs(allJobs - start)]));
  console.log(
    row([
      "PdfJob created → Job seen, p50 / p90 / max (s)",
      `${secs(quantile(lag, 0.5))} / ${secs(quantile(lag, 0.9))} / ${secs(Math.max(...lag))}`,
    ]),
  );
  console.log(row(["work queue depth, max", maxDepth]));
  console.log(row(["create errors", createErrors, "0"]));
  console.log(row(["reconcile errors (retried with backoff; its /metrics)", errorsDuring, "0"]));
  for (const [kind, n] of errorsByKind) console.log(row([`  ${kind} (its log)`, n]));
  console.log(row([`CPU until every Job existed (${secs(allJobs - start)} s wall)`, "cpu s", "% of a core"]));
  for (const [name, after] of [...cpuAfter].sort((x, y) => y[1] - x[1])) {
    const used = after - (cpuBefore.get(name) ?? 0);
    console.log(row([`  ${name}`, used.toFixed(1), ((100 * used) / ((allJobs - start) / 1000)).toFixed(0)]));
  }
  console.log(row(["API requests per PdfJob until every Job existed", "", "(409s)"]));
  for (const [verb, resource, who] of [
    ["POST", "jobs", "controller"],
    ["PUT", "pdfjobs/status", "controller"],
    ["PATCH", "pdfjobs", "controller"],
    ["POST", "events", "all clients"],
    ["PATCH", "pods/status", "kubelet"],
    ["PUT", "jobs/status", "Job controller"],
  ] as const) {
    const r = requestsBetween(countsBefore, countsAfter, verb, resource);
    if (r.n > 0) console.log(row([`  ${verb} ${resource} (${who})`, (r.n / BACKLOG).toFixed(2), r.conflicts ? `${r.conflicts}` : ""]));
  }
  if (args.drain) {
    await b.recorder.until(() => names.every((n) => b.recorder.timeline(n).ended !== undefined), "every PdfJob to end", BACKLOG * 30_000);
    const drained = Date.now();
    const notOk = names.filter((n) => b.recorder.timeline(n).phase !== "Succeeded").length;
    console.log(row([`time until all PdfJobs ended, ${MAX_PODS} pods at a time (s)`, secs(drained - start)]));
    console.log(row(["PdfJobs ended per second", (names.length / ((drained - start) / 1000)).toFixed(2)]));
    console.log(row(["PdfJobs not Succeeded", notOk, "0"]));
    console.log(row(["runner processes at once, max (node capacity)", maxRunning, `≤ ${MAX_PODS}`]));
  } else {
    console.log(row(["(completion not measured: add --drain)", ""]));
  }
  clearInterval(sampler);
  sampling = false;
  await depthSampler;
  console.log();
}

async function main(): Promise<void> {
  const t = Date.now();
  const b = await setUp();
  try {
    const v = b.platform.controlPlane.versions;
    console.log(
      `folio operator benchmark — ${new Date().toISOString()} — ${os.cpus().length} cores, load ${load()}, node ${process.version}`,
    );
    console.log(`kubernetes ${v.kubernetes}, etcd ${v.etcd}, platform up in ${secs(Date.now() - t)} s; node capacity ${MAX_PODS} pods`);
    console.log(
      `controller: a container of ${apiImage()}, ${WORKERS} workers, leader election on, no limit on running Jobs, started → ready and leading in ${secs(b.controllerStartMs)} s\n`,
    );
    await containerStart(b);
    if (LATENCY_JOBS > 0) await latency(b);
    if (BACKLOG > 0) await backlog(b);
  } finally {
    await tearDown(b);
  }
}

await main();
