/**
 * Smoke check of the test platform: `node test/k8s/smoke.ts` (exit 0 only if every check passes).
 *
 * Starts the control plane and the local kubelet, then in a namespace that enforces the
 * `restricted` Pod Security Standard:
 *   1. a Pod without the restricted securityContext is rejected by PodSecurity admission;
 *   2. a compliant Job reading a Secret (env and volume) and writing an emptyDir and its
 *      termination message completes: the real Job controller sets Complete, and the
 *      ttl-after-finished and garbage collector controllers then remove the Job and its pod;
 *   3. a Job whose command exits 3 fails at once through podFailurePolicy (FailJob on exit code 3);
 *   4. a Job with activeDeadlineSeconds 3 whose process ignores SIGTERM fails with
 *      DeadlineExceeded, and its container is gone (SIGKILL after the 2 s grace period);
 *   5. the real runner (the runner image `make images` built) compresses a PDF from a Secret
 *      volume into an emptyDir, and on a non-PDF exits 3, which fails its Job through
 *      podFailurePolicy with the runner's error JSON as termination message (FallbackToLogsOnError).
 * Every pod runs from the runner image (it has a shell) with runc.
 * FOLIO_K8S_KEEP=1 keeps the temporary directory (component logs) for a post-mortem.
 */
import { readFileSync } from "node:fs";
import { PDFDocument } from "pdf-lib";
import {
  ApiException,
  BatchV1Api,
  CoreV1Api,
  VersionApi,
  type V1ContainerStateTerminated,
  type V1Job,
  type V1JobCondition,
  type V1Pod,
  type V1PodSpec,
} from "@kubernetes/client-node";
import { runnerImage } from "./images.ts";
import { loadKubeConfig } from "./kubeconfig.ts";
import { startPlatform, type Platform } from "./platform.ts";

const NS = "folio-smoke";
/** Any image with a shell: the runner's. */
const SHELL = runnerImage();

/** What every scenario uses: clients, the platform, and the check/timing recorders. */
interface Smoke {
  readonly platform: Platform;
  readonly core: CoreV1Api;
  readonly batch: BatchV1Api;
  check(ok: boolean, what: string): void;
  time(what: string, since: number): void;
}

const print = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

async function waitFor<T>(what: string, timeoutMs: number, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A single-container pod spec that passes the `restricted` Pod Security Standard ("latest"). */
function restrictedPod(
  script: string,
  extra: {
    volumes?: V1PodSpec["volumes"];
    mounts?: { name: string; mountPath: string }[];
    env?: NonNullable<V1PodSpec["containers"][0]["env"]>;
  } = {},
): V1PodSpec {
  return {
    restartPolicy: "Never",
    automountServiceAccountToken: false,
    terminationGracePeriodSeconds: 2,
    securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: { type: "RuntimeDefault" } },
    volumes: [{ name: "tmp", emptyDir: {} }, ...(extra.volumes ?? [])],
    containers: [
      {
        name: "main",
        image: SHELL,
        command: ["sh", "-c", script],
        securityContext: {
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          runAsNonRoot: true,
          capabilities: { drop: ["ALL"] },
        },
        volumeMounts: [{ name: "tmp", mountPath: "/tmp" }, ...(extra.mounts ?? [])],
        env: extra.env ?? [],
      },
    ],
  };
}

const job = (name: string, spec: Omit<NonNullable<V1Job["spec"]>, "template">, pod: V1PodSpec): V1Job => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name, namespace: NS },
  spec: { ...spec, template: { spec: pod } },
});

const condition = (s: Smoke, name: string, type: string) => async (): Promise<V1JobCondition | undefined> =>
  (await s.batch.readNamespacedJobStatus({ name, namespace: NS })).status?.conditions?.find((c) => c.type === type && c.status === "True");

const jobPods = async (s: Smoke, name: string): Promise<V1Pod[]> =>
  (await s.core.listNamespacedPod({ namespace: NS, labelSelector: `batch.kubernetes.io/job-name=${name}` })).items;

async function setUp(s: Smoke): Promise<void> {
  const version = await loadKubeConfig(s.platform.kubeconfig).makeApiClient(VersionApi).getCode();
  s.check(
    version.gitVersion === s.platform.controlPlane.versions.kubernetes,
    `/version reports ${version.gitVersion} (built ${version.buildDate})`,
  );
  await s.core.createNamespace({
    body: {
      metadata: {
        name: NS,
        labels: { "pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest" },
      },
    },
  });
  // Pod admission needs the namespace's default ServiceAccount, which the serviceaccount controller creates.
  await waitFor("the default ServiceAccount", 30_000, async () =>
    s.core.readNamespacedServiceAccount({ name: "default", namespace: NS }).catch(() => undefined),
  );
  await s.core.createNamespacedSecret({ namespace: NS, body: { metadata: { name: "smoke" }, stringData: { token: "s3cret" } } });
}

/**
 * 1. PodSecurity admission rejects a pod that forgets the restricted securityContext (runs as
 *    root, may escalate, keeps capabilities, no seccomp profile) in the restricted namespace.
 */
async function podSecurity(s: Smoke): Promise<void> {
  const t = Date.now();
  try {
    await s.core.createNamespacedPod({
      namespace: NS,
      body: { metadata: { name: "not-restricted" }, spec: { containers: [{ name: "main", image: SHELL }] } },
    });
    s.check(false, "PodSecurity rejects a pod without the restricted securityContext");
  } catch (err) {
    // The API's Status object; its message names the policy and every violation.
    const raw = err instanceof ApiException ? (typeof err.body === "string" ? err.body : JSON.stringify(err.body)) : String(err);
    let message = raw;
    try {
      message = (JSON.parse(raw) as { message?: string }).message ?? raw;
    } catch {
      // Not JSON: keep the raw text.
    }
    s.check(
      err instanceof ApiException && err.code === 403 && message.includes('violates PodSecurity "restricted:latest"'),
      `PodSecurity rejects a pod without the restricted securityContext: ${err instanceof ApiException ? err.code : "?"} ${message}`,
    );
  }
  s.time("pod security rejection", t);
}

/** The terminated state of the pod's container, once it has ended. */
function terminatedOf(pod: V1Pod | undefined): V1ContainerStateTerminated | undefined {
  return pod?.status?.containerStatuses?.[0]?.state?.terminated;
}

/** 2. A compliant Job completes; its Secret arrives as env and as a file; TTL then cleans up. */
async function completes(s: Smoke): Promise<void> {
  const script = [
    'test "$TOKEN" = s3cret',
    'test "$(cat /etc/smoke/token)" = s3cret',
    "echo scratch > /tmp/scratch",
    "test -s /tmp/scratch",
    `echo '{"ok":true}' > /dev/termination-log`,
  ].join(" && ");
  let t = Date.now();
  await s.batch.createNamespacedJob({
    namespace: NS,
    body: job(
      "ok",
      { backoffLimit: 0, ttlSecondsAfterFinished: 2 },
      restrictedPod(script, {
        volumes: [{ name: "smoke", secret: { secretName: "smoke" } }],
        mounts: [{ name: "smoke", mountPath: "/etc/smoke" }],
        env: [{ name: "TOKEN", valueFrom: { secretKeyRef: { name: "smoke", key: "token" } } }],
      }),
    ),
  });
  await waitFor("Job ok Complete", 60_000, condition(s, "ok", "Complete"));
  s.time("job ok: created → Complete", t);
  s.check(true, "Job ok is Complete (Secret as env and volume, emptyDir /tmp)");
  const [pod] = await jobPods(s, "ok");
  const terminated = terminatedOf(pod);
  s.check(
    pod?.status?.phase === "Succeeded" && terminated?.reason === "Completed" && terminated.exitCode === 0,
    `its pod Succeeded, container terminated with reason ${terminated?.reason ?? "?"}`,
  );
  s.check(terminated?.message?.trim() === '{"ok":true}', `termination message ${JSON.stringify(terminated?.message?.trim())}`);
  t = Date.now();
  await waitFor("Job ok deleted by TTL", 60_000, async () =>
    s.batch.readNamespacedJob({ name: "ok", namespace: NS }).then(
      () => undefined,
      () => true,
    ),
  );
  await waitFor("pod of Job ok garbage-collected", 60_000, async () => ((await jobPods(s, "ok")).length === 0 ? true : undefined));
  s.time("job ok: Complete → Job and pod deleted (TTL 2 s, GC)", t);
  s.check(true, "ttl-after-finished deleted the Job, the garbage collector its pod");
}

/** 3. Exit code 3 (the runner's bad-input code) fails the Job through podFailurePolicy, no retry. */
async function podFailurePolicy(s: Smoke): Promise<void> {
  const t = Date.now();
  await s.batch.createNamespacedJob({
    namespace: NS,
    body: job(
      "bad-input",
      {
        backoffLimit: 6,
        podFailurePolicy: { rules: [{ action: "FailJob", onExitCodes: { operator: "In", values: [3] } }] },
      },
      restrictedPod("echo invalid_pdf > /dev/termination-log; exit 3"),
    ),
  });
  const failed = await waitFor("Job bad-input Failed", 60_000, condition(s, "bad-input", "Failed"));
  s.time("job bad-input: created → Failed", t);
  s.check(failed.reason === "PodFailurePolicy", `Job bad-input Failed with reason ${failed.reason ?? "?"}`);
  const pods = await jobPods(s, "bad-input");
  const terminated = terminatedOf(pods[0]);
  s.check(
    pods.length === 1 && terminated?.exitCode === 3 && terminated.reason === "Error",
    `one pod (${pods.length}), exit code ${terminated?.exitCode ?? "?"}, reason ${terminated?.reason ?? "?"}, message ${JSON.stringify(terminated?.message?.trim())}`,
  );
}

/** 4. activeDeadlineSeconds: the Job controller deletes the pod; SIGTERM is ignored, SIGKILL ends it. */
async function deadline(s: Smoke): Promise<void> {
  const t = Date.now();
  await s.batch.createNamespacedJob({
    namespace: NS,
    body: job("deadline", { backoffLimit: 0, activeDeadlineSeconds: 3 }, restrictedPod("trap '' TERM; sleep 300")),
  });
  const failed = await waitFor("Job deadline Failed", 60_000, condition(s, "deadline", "Failed"));
  s.time("job deadline (3 s, grace 2 s): created → Failed", t);
  s.check(failed.reason === "DeadlineExceeded", `Job deadline Failed with reason ${failed.reason ?? "?"}`);
  const ran = s.platform.kubelet?.pods().find((p) => p.namespace === NS && p.name.startsWith("deadline-"));
  s.check(ran?.exit?.exitCode === 137 && !ran.exit.oomKilled, `its container was killed: exit ${ran?.exit?.exitCode ?? "?"} (SIGKILL)`);
}

/** 5. The real runner as a pod: one good PDF (Complete), one non-PDF (exit 3 → FailJob). */
async function runner(s: Smoke): Promise<void> {
  const pdf = await PDFDocument.create();
  pdf.addPage([200, 200]);
  const spec = (input: string): string =>
    JSON.stringify({ operation: "compress", inputs: [{ path: `/spec/${input}`, filename: input }], output_dir: "/work/out" });
  await s.core.createNamespacedSecret({
    namespace: NS,
    body: {
      metadata: { name: "runner-input" },
      data: {
        "in.pdf": Buffer.from(await pdf.save()).toString("base64"),
        "bad.pdf": Buffer.from("not a pdf").toString("base64"),
        "good.json": Buffer.from(spec("in.pdf")).toString("base64"),
        "bad.json": Buffer.from(spec("bad.pdf")).toString("base64"),
      },
    },
  });
  const runnerJob = (name: string, specFile: string): V1Job => {
    const pod = restrictedPod("", {
      volumes: [
        { name: "spec", secret: { secretName: "runner-input" } },
        { name: "work", emptyDir: {} },
      ],
      mounts: [
        { name: "spec", mountPath: "/spec" },
        { name: "work", mountPath: "/work" },
      ],
    });
    const container = pod.containers[0]!;
    Object.assign(container, {
      image: runnerImage(),
      command: undefined,
      args: ["runner", "--spec", `/spec/${specFile}`],
      workingDir: "/spec",
      terminationMessagePolicy: "FallbackToLogsOnError",
    });
    return job(
      name,
      { backoffLimit: 2, podFailurePolicy: { rules: [{ action: "FailJob", onExitCodes: { operator: "In", values: [3] } }] } },
      pod,
    );
  };
  let t = Date.now();
  await s.batch.createNamespacedJob({ namespace: NS, body: runnerJob("runner-ok", "good.json") });
  await waitFor("Job runner-ok Complete", 60_000, condition(s, "runner-ok", "Complete"));
  s.time("job runner-ok (compress): created → Complete", t);
  const ran = s.platform.kubelet?.pods().find((p) => p.namespace === NS && p.name.startsWith("runner-ok-"));
  const log = ran ? readFileSync(ran.logFile, "utf8") : "";
  s.check(
    log.includes('"operation":"compress"') && log.includes("/work/out/in.pdf"),
    "the runner compressed the PDF into the emptyDir (result JSON in its log)",
  );
  t = Date.now();
  await s.batch.createNamespacedJob({ namespace: NS, body: runnerJob("runner-bad", "bad.json") });
  const failed = await waitFor("Job runner-bad Failed", 60_000, condition(s, "runner-bad", "Failed"));
  s.time("job runner-bad (not a PDF): created → Failed", t);
  const [pod] = await jobPods(s, "runner-bad");
  const terminated = terminatedOf(pod);
  s.check(
    failed.reason === "PodFailurePolicy" && terminated?.exitCode === 3 && (terminated.message ?? "").includes('"code":"invalid_pdf"'),
    `runner exit ${terminated?.exitCode ?? "?"} failed the Job (${failed.reason ?? "?"}); message ends ${JSON.stringify((terminated?.message ?? "").trim().split("\n").pop())}`,
  );
}

async function main(): Promise<number> {
  const t0 = Date.now();
  const keep = process.env.FOLIO_K8S_KEEP === "1";
  const platform = await startPlatform({
    keepDir: keep,
    log: (l) => {
      process.stderr.write(`  [k8s] ${l}\n`);
    },
  });
  const timings: [string, number][] = Object.entries(platform.controlPlane.timings);
  timings.push(["platform ready (total)", Date.now() - t0]);
  const kc = loadKubeConfig(platform.kubeconfig);
  const failures: string[] = [];
  const s: Smoke = {
    platform,
    core: kc.makeApiClient(CoreV1Api),
    batch: kc.makeApiClient(BatchV1Api),
    check(ok, what) {
      print(`${ok ? "PASS" : "FAIL"} ${what}`);
      if (!ok) failures.push(what);
    },
    time(what, since) {
      timings.push([what, Date.now() - since]);
    },
  };
  try {
    for (const scenario of [setUp, podSecurity, completes, podFailurePolicy, deadline, runner]) await scenario(s);
  } catch (err) {
    s.check(false, err instanceof Error ? err.message : String(err));
  } finally {
    if (failures.length) print(`component logs: ${platform.controlPlane.dir}${keep ? "" : " (removed; FOLIO_K8S_KEEP=1 keeps them)"}`);
    const stopAt = Date.now();
    await platform.stop();
    s.time("stop", stopAt);
  }
  print("\ntimings:");
  for (const [what, ms] of timings) print(`  ${what.padEnd(52)} ${String(ms).padStart(6)} ms`);
  print(failures.length ? `\n${failures.length} check(s) failed` : "\nall checks passed");
  return failures.length ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`smoke: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
