/** The hardened Job template: failure policy, restricted pod security, secrets, names, labels. */
import type { V1Secret } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import {
  buildJob,
  childJobName,
  FAIL_JOB_EXIT_CODES,
  literalEnvValue,
  runnerTimeoutMs,
  type JobTemplateOptions,
} from "../../controller/job-template.ts";
import { accessPreparer } from "../../controller/runner-access.ts";
import { EXIT } from "../../core/errors.ts";
import { type PdfJob } from "../../core/schemas/pdfjob.ts";
import { RunnerPodSpec } from "../../core/schemas/runner-pod.ts";
import { outputKey } from "../../core/schemas/storage-keys.ts";
import { INPUT_KEY, JOB_ID, pdfJob, PREFIX, TEMPLATE, TENANT, UID } from "./fixtures.ts";

const pj = pdfJob();
const job = buildJob(pj, pj.spec, TEMPLATE);
const pod = job.spec!.template.spec!;
const runner = pod.containers[0]!;
const env = (name: string) => runner.env!.find((e) => e.name === name);
/** The kubelet's expansion of an env value without references ($$ → $). */
const expand = (v: string): string => v.replace(/\$\$/g, "$");

describe("the Job template", () => {
  it("should retry once, fail at once on the runner's no-retry exit codes, and ignore disruptions", () => {
    expect(job.spec).toMatchObject({ backoffLimit: 1, completions: 1, parallelism: 1, podReplacementPolicy: "Failed" });
    expect(job.spec!.podFailurePolicy!.rules).toEqual([
      { action: "FailJob", onExitCodes: { containerName: "runner", operator: "In", values: [EXIT.USAGE, EXIT.BAD_INPUT, EXIT.TIMEOUT] } },
      { action: "Ignore", onPodConditions: [{ type: "DisruptionTarget", status: "True" }] },
    ]);
    expect(FAIL_JOB_EXIT_CODES).toContain(EXIT.BAD_INPUT);
    expect(FAIL_JOB_EXIT_CODES).not.toContain(EXIT.INTERNAL);
  });

  it("should take its deadline from the spec and clean up after a TTL", () => {
    expect(job.spec!.activeDeadlineSeconds).toBe(300);
    expect(job.spec!.ttlSecondsAfterFinished).toBe(600);
    expect(buildJob(pj, pj.spec, { ...TEMPLATE, ttlSecondsAfterFinished: 60 }).spec!.ttlSecondsAfterFinished).toBe(60);
  });

  it("should meet the restricted Pod Security Standard", () => {
    expect(pod.restartPolicy).toBe("Never");
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: "RuntimeDefault" } });
    expect(pod.hostNetwork ?? false).toBe(false);
    expect(pod.hostPID ?? false).toBe(false);
    expect(pod.hostIPC ?? false).toBe(false);
    expect(runner.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(runner.securityContext!.capabilities!.add).toBeUndefined();
    expect(runner.ports ?? []).toEqual([]);
    // restricted allows these volume types only
    for (const v of pod.volumes!) expect(Object.keys(v).filter((k) => k !== "name")).toEqual(["emptyDir"]);
  });

  it("should give the read-only root an emptyDir at /tmp, sized when configured", () => {
    expect(runner.volumeMounts).toEqual([{ name: "tmp", mountPath: "/tmp" }]);
    expect(pod.volumes).toEqual([{ name: "tmp", emptyDir: {} }]);
    expect(buildJob(pj, pj.spec, { ...TEMPLATE, tmpSizeLimit: "4Gi" }).spec!.template.spec!.volumes![0]!.emptyDir).toEqual({
      sizeLimit: "4Gi",
    });
    expect(env("FOLIO_TMP_DIR")!.value).toBe("/tmp");
    expect(env("HOME")!.value).toBe("/tmp");
  });

  it("should mount no service-account token and inject no service links", () => {
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.enableServiceLinks).toBe(false);
  });

  it("should request and limit resources, configurably", () => {
    expect(runner.resources!.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(runner.resources!.limits).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    const custom: JobTemplateOptions = {
      ...TEMPLATE,
      resources: { requests: { cpu: "1", memory: "1Gi" }, limits: { cpu: "4", memory: "4Gi" } },
    };
    expect(buildJob(pj, pj.spec, custom).spec!.template.spec!.containers[0]!.resources).toEqual(custom.resources);
  });

  it("should label the Job and its pod for filtered informers", () => {
    const labels = {
      "app.kubernetes.io/managed-by": "folio",
      "folio.dev/pdfjob": pj.metadata.name,
      "folio.dev/tenant": TENANT,
      "folio.dev/job-id": JOB_ID,
    };
    expect(job.metadata!.labels).toEqual(labels);
    expect(job.spec!.template.metadata!.labels).toMatchObject(labels);
    expect(job.metadata!.namespace).toBe("folio");
    for (const v of Object.values(labels)) expect(v).toMatch(/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/);
  });

  it("should be controlled by its PdfJob, blocking the owner's deletion", () => {
    expect(job.metadata!.ownerReferences).toEqual([
      { apiVersion: "folio.dev/v1alpha1", kind: "PdfJob", name: pj.metadata.name, uid: UID, controller: true, blockOwnerDeletion: true },
    ]);
  });

  it("should run `folio runner --pod` and report through the termination message, falling back to the logs", () => {
    expect(runner.name).toBe("runner");
    expect(runner.image).toBe("folio/runner:test");
    expect(runner.command).toEqual(["folio", "runner", "--pod"]);
    expect(runner.terminationMessagePath).toBe("/dev/termination-log");
    expect(runner.terminationMessagePolicy).toBe("FallbackToLogsOnError");
    expect(env("FOLIO_TERMINATION_MESSAGE_PATH")!.value).toBe("/dev/termination-log");
  });

  it("should pass the runner its spec as JSON in FOLIO_RUNNER_SPEC, with the job's storage prefix", () => {
    const spec = RunnerPodSpec.parse(JSON.parse(expand(env("FOLIO_RUNNER_SPEC")!.value!)));
    expect(spec).toEqual({
      job_id: JOB_ID,
      tenant: TENANT,
      operation: "compress",
      inputs: [{ key: INPUT_KEY, filename: "report.pdf" }],
      options: { level: "medium", linearize: false },
      output_prefix: PREFIX,
      limits: { timeout_ms: runnerTimeoutMs(300) },
    });
    expect(outputKey(spec, 0)).toMatch(new RegExp(`^${PREFIX}file_[0-9A-Za-z]{24}$`));
  });

  it("should keep a $( in a filename literal through the kubelet's $(VAR) expansion", () => {
    const tricky = pdfJob({ spec: { inputs: [{ ...pj.spec.inputs[0]!, filename: "a$(HOME)$$b.pdf" }] } });
    const value = buildJob(tricky, tricky.spec, TEMPLATE).spec!.template.spec!.containers[0]!.env![0]!.value!;
    expect(JSON.parse(expand(value)).inputs[0].filename).toBe("a$(HOME)$$b.pdf");
    expect(literalEnvValue("$")).toBe("$$");
  });

  it("should give protect's passwords only as secretKeyRefs to the PdfJob's Secret, never as values", () => {
    const p = pdfJob({
      spec: { operation: "protect", options: { encryption: "aes-256", permissions: {} }, secretRef: { name: "job-9a-secret" } },
    });
    const c = buildJob(p, p.spec, TEMPLATE).spec!.template.spec!.containers[0]!;
    expect(c.env!.filter((e) => e.name.startsWith("FOLIO_OPTION_"))).toEqual([
      { name: "FOLIO_OPTION_USER_PASSWORD", valueFrom: { secretKeyRef: { name: "job-9a-secret", key: "user_password" } } },
      {
        name: "FOLIO_OPTION_OWNER_PASSWORD",
        valueFrom: { secretKeyRef: { name: "job-9a-secret", key: "owner_password", optional: true } },
      },
    ]);
    expect(env("FOLIO_OPTION_USER_PASSWORD")).toBeUndefined();
  });

  it("should map no password for a job whose Secret only signs its webhook", () => {
    const hooked = pdfJob({ spec: { webhook: { url: "https://hooks.example.com/x" }, secretRef: { name: "job-9a-secret" } } });
    const c = buildJob(hooked, hooked.spec, TEMPLATE).spec!.template.spec!.containers[0]!;
    expect(c.env!.filter((e) => e.name.startsWith("FOLIO_OPTION_") || JSON.stringify(e).includes("job-9a-secret"))).toEqual([]);
  });

  it("should give the S3 settings as env, the credentials from their Secret", () => {
    expect(env("FOLIO_S3_BUCKET")!.value).toBe("folio");
    expect(env("FOLIO_S3_ENDPOINT")!.value).toBe("http://127.0.0.1:9000");
    expect(env("FOLIO_S3_FORCE_PATH_STYLE")!.value).toBe("true");
    expect(env("AWS_ACCESS_KEY_ID")).toEqual({
      name: "AWS_ACCESS_KEY_ID",
      valueFrom: { secretKeyRef: { name: "folio-s3", key: "accessKeyId" } },
    });
    expect(env("AWS_SECRET_ACCESS_KEY")!.value).toBeUndefined();
  });

  it("should let the runner time out just before the Job's deadline", () => {
    expect(runnerTimeoutMs(300)).toBe(290_000);
    expect(runnerTimeoutMs(30)).toBe(27_000);
    expect(runnerTimeoutMs(1)).toBe(1000);
  });
});

describe("the child Job's name", () => {
  const named = (name: string, uid = UID): PdfJob => ({ ...pj, metadata: { ...pj.metadata, name, uid } });

  it("should be deterministic, so a second create is a 409 and never a second Job", () => {
    expect(childJobName(pj)).toBe(childJobName(pdfJob()));
    expect(job.metadata!.name).toBe(childJobName(pj));
  });

  it("should differ for a re-created PdfJob of the same name (another uid)", () => {
    expect(childJobName(named(pj.metadata.name, "another-uid"))).not.toBe(childJobName(pj));
  });

  it.each([
    ["a job id's PdfJob name", pdfJob().metadata.name],
    ["a 253-character name with dots", `${"a.".repeat(126)}b`],
    ["a name that is cut at a dash", `${"x".repeat(51)}-yyyy`],
  ])("should be a DNS-1123 label of at most 63 characters for %s", (_what, name) => {
    const n = childJobName(named(name));
    expect(n.length).toBeLessThanOrEqual(63);
    expect(n).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });
});

describe("the Job template with presigned access (issue #11)", () => {
  const presigned = buildJob(pj, pj.spec, { ...TEMPLATE, access: "presigned" });
  const container = presigned.spec!.template.spec!.containers[0]!;

  it("should give the runner no storage settings or credentials, only its access Secret", () => {
    const names = container.env!.map((e) => e.name);
    expect(names.filter((n) => n.startsWith("AWS_") || n.startsWith("FOLIO_S3_"))).toEqual([]);
    expect(container.env!.find((e) => e.name === "FOLIO_RUNNER_ACCESS")).toEqual({
      name: "FOLIO_RUNNER_ACCESS",
      valueFrom: { secretKeyRef: { name: `${childJobName(pj)}-access`, key: "access" } },
    });
    expect(container.envFrom ?? []).toEqual([]);
  });
});

describe("the runner's access Secret (controller/runner-access.ts)", () => {
  const presigned = buildJob(pj, pj.spec, { ...TEMPLATE, access: "presigned" });
  const target = { bucket: "folio", region: "us-east-1", endpoint: "http://127.0.0.1:9000", forcePathStyle: true };
  const creds = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI-never-in-the-secret" };

  it("should presign a GET for each input of the job and a POST for its output prefix only, owned by the PdfJob", async () => {
    let created: V1Secret | undefined;
    await accessPreparer({
      target,
      credentials: () => Promise.resolve(creds),
      maxBytes: 1024,
      createSecret: (_ns, s) => {
        created = s;
        return Promise.resolve();
      },
      now: () => new Date("2030-01-01T00:00:00Z"),
    })("default", presigned);
    expect(created!.metadata!.name).toBe(`${childJobName(pj)}-access`);
    expect(created!.metadata!.ownerReferences).toMatchObject([{ kind: "PdfJob", uid: UID, controller: false }]);
    const access = JSON.parse(created!.stringData!.access!) as { get: Record<string, string>; post: { prefix: string; url: string } };
    expect(Object.keys(access.get)).toEqual([INPUT_KEY]);
    expect(new URL(access.get[INPUT_KEY]!).searchParams.get("X-Amz-Expires")).toBe(String(300 + 300));
    expect(access.post.prefix).toBe(PREFIX);
    expect(access.post.url).toBe("http://127.0.0.1:9000/folio");
    expect(created!.stringData!.access).not.toContain(creds.secretAccessKey);
  });
});
