/**
 * The hardened batch/v1 Job that runs one PdfJob (ARCHITECTURE.md "Controller rules"):
 *
 * - one pod, `backoffLimit: 1`, `restartPolicy: Never`, `podReplacementPolicy: Failed` (a retry
 *   starts only once the failed pod has stopped, so two runners never write the same keys);
 * - `podFailurePolicy`: the runner's exit codes for errors a retry cannot fix (bad input, usage,
 *   timeout) fail the Job at once; disruptions (eviction, preemption) do not count as failures;
 * - `activeDeadlineSeconds` from the spec, `ttlSecondsAfterFinished` to clean up;
 * - the "restricted" Pod Security Standard: non-root uid 10001, seccomp RuntimeDefault, no
 *   privilege escalation, every capability dropped, a read-only root file system with an
 *   emptyDir at /tmp; no service-account token and no service links;
 * - labels for filtered informers, a controller ownerReference to the PdfJob;
 * - with `access: "presigned"`, no storage credentials at all: the runner reads its inputs and
 *   writes its outputs through presigned URLs from its Secret (controller/runner-access.ts).
 *
 * The pod gets its RunnerPodSpec as JSON in FOLIO_RUNNER_SPEC (no ConfigMap to create and
 * clean up; the Job object carries it) and the protect passwords from the PdfJob's Secret as
 * secretKeyRef env vars, so they are in neither the Job nor the PdfJob. The runner reports in its
 * termination message (FallbackToLogsOnError: a crash still leaves its last log lines).
 */
import { createHash } from "node:crypto";
import type { V1EnvVar, V1Job, V1ResourceRequirements, V1Toleration } from "@kubernetes/client-node";
import type { Config } from "../core/config.ts";
import { EXIT, JOB_ERRORS } from "../core/errors.ts";
import { jobIdOf } from "../core/pdfjob-view.ts";
import { accessSecretName, RUNNER_ACCESS_ENV, RUNNER_ACCESS_KEY } from "./runner-access.ts";
import type { RunnerLimits } from "../core/schemas/job.ts";
import { LABELS, MANAGED_BY, PDFJOB_API_VERSION, PDFJOB_KIND, type PdfJob, type PdfJobSpec } from "../core/schemas/pdfjob.ts";
import { RUNNER_SPEC_ENV, SECRET_OPTION_ENV, TERMINATION_MESSAGE_PATH_ENV, type RunnerPodSpec } from "../core/schemas/runner-pod.ts";
import { jobStoragePrefix } from "../core/schemas/storage-keys.ts";
import { runnerImageFor } from "./runner-image.ts";

export const RUNNER_CONTAINER = "runner";
export const TERMINATION_MESSAGE_PATH = "/dev/termination-log";
export const RUNNER_UID = 10001;

/**
 * Exit codes that fail the Job without a retry: every job error's code except INTERNAL (a crash
 * or an engine fault may pass on a second try; bad input, invalid options or a timeout will not).
 */
export const FAIL_JOB_EXIT_CODES: readonly number[] = [...new Set(Object.values(JOB_ERRORS).map((e) => e.exit as number))]
  .filter((code) => code !== EXIT.INTERNAL && code !== EXIT.OK)
  .sort((a, b) => a - b);

/** S3-compatible storage as the runner reads it from its environment. */
export interface S3Settings {
  bucket: string;
  region?: string;
  endpoint?: string;
  forcePathStyle?: boolean;
  /** A Secret with the access key (the AWS SDK reads AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY). */
  credentialsSecret?: { name: string; accessKeyIdKey?: string; secretAccessKeyKey?: string };
}

export const S3_ENV = {
  bucket: "FOLIO_S3_BUCKET",
  region: "FOLIO_S3_REGION",
  endpoint: "FOLIO_S3_ENDPOINT",
  forcePathStyle: "FOLIO_S3_FORCE_PATH_STYLE",
} as const;

export interface JobTemplateOptions {
  image: string;
  /** The runner image with Chromium, OCR and veraPDF, for the jobs that need them (runner-image.ts). */
  fullImage?: string;
  imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  /** Default: `folio runner --pod` (the runner reads FOLIO_RUNNER_SPEC). */
  command?: readonly string[];
  resources?: V1ResourceRequirements;
  /** How long a finished Job and its pod stay (the controller copies the outcome long before). */
  ttlSecondsAfterFinished?: number;
  storage?: S3Settings;
  /**
   * "presigned": the runner gets no storage settings or credentials, only the presigned URLs of
   * its Secret (controller/runner-access.ts; the controller creates it with the Job).
   */
  access?: "presigned";
  /** More environment for the runner (log level, engine settings). */
  env?: readonly V1EnvVar[];
  /** Size limit of the /tmp emptyDir (inputs, outputs and the engines' scratch space). */
  tmpSizeLimit?: string;
  /** Runner limits passed in the spec; `timeout_ms` defaults to just under the deadline. */
  limits?: Partial<RunnerLimits>;
  serviceAccountName?: string;
  priorityClassName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: V1Toleration[];
  terminationGracePeriodSeconds?: number;
}

/**
 * The largest RunnerPodSpec the pod can be given: Linux caps one environment string at 128 KiB
 * (MAX_ARG_STRLEN); a job beyond (thousands of inputs or huge page ranges) fails with limit_exceeded.
 */
export const RUNNER_SPEC_MAX_BYTES = 96 * 1024;

export const DEFAULT_COMMAND: readonly string[] = ["folio", "runner", "--pod"];
export const DEFAULT_TTL_SECONDS = 600;
export const DEFAULT_RESOURCES: V1ResourceRequirements = {
  requests: { cpu: "250m", memory: "512Mi", "ephemeral-storage": "1Gi" },
  limits: { cpu: "2", memory: "2Gi", "ephemeral-storage": "8Gi" },
};

/**
 * The child Job's name: the PdfJob's name (at most 52 characters) and 10 hex digits of a hash
 * of its name and uid, so it is deterministic (a second create is a 409, not a second Job),
 * differs for a re-created PdfJob of the same name, and is a DNS-1123 label of ≤ 63 characters
 * (Job names end up in the pods' job-name label).
 */
export function childJobName(pj: Pick<PdfJob, "metadata">): string {
  const base =
    pj.metadata.name
      .toLowerCase()
      .replace(/[^a-z0-9-]/g, "-")
      .slice(0, 52)
      .replace(/^-+|-+$/g, "") || "pdfjob";
  const hash = createHash("sha256")
    .update(`${pj.metadata.name}/${pj.metadata.uid ?? ""}`)
    .digest("hex")
    .slice(0, 10);
  return `${base}-${hash}`;
}

/** The runner's deadline: just under the Job's, so it reports `timeout` itself before it is killed. */
export function runnerTimeoutMs(deadlineSeconds: number): number {
  const ms = deadlineSeconds * 1000;
  return Math.max(1000, ms - Math.min(10_000, Math.round(ms / 10)));
}

/** The spec the runner pod runs. */
export function runnerPodSpec(pj: PdfJob, spec: PdfJobSpec, limits: Partial<RunnerLimits> = {}): RunnerPodSpec {
  const jobId = jobIdOf(pj);
  return {
    job_id: jobId,
    tenant: spec.tenant,
    operation: spec.operation,
    inputs: spec.inputs.map((i) => ({ key: i.key, filename: i.filename, ...(i.pages ? { pages: i.pages } : {}) })),
    options: spec.options,
    output_prefix: jobStoragePrefix(spec.tenant, jobId),
    ...(spec.outputFilename ? { output_filename: spec.outputFilename } : {}),
    limits: { timeout_ms: runnerTimeoutMs(spec.deadlineSeconds), ...limits },
  };
}

/**
 * An env value taken literally: the kubelet expands `$(NAME)` in env values and turns `$$` into
 * `$` (Kubernetes API, EnvVar.value), so every `$` is doubled.
 */
export function literalEnvValue(value: string): string {
  return value.replaceAll("$", "$$$$");
}

function storageEnv(s: S3Settings | undefined): V1EnvVar[] {
  if (!s) return [];
  const env: V1EnvVar[] = [{ name: S3_ENV.bucket, value: s.bucket }];
  if (s.region) env.push({ name: S3_ENV.region, value: s.region });
  if (s.endpoint) env.push({ name: S3_ENV.endpoint, value: s.endpoint });
  if (s.forcePathStyle !== undefined) env.push({ name: S3_ENV.forcePathStyle, value: String(s.forcePathStyle) });
  const c = s.credentialsSecret;
  if (c) {
    env.push(
      { name: "AWS_ACCESS_KEY_ID", valueFrom: { secretKeyRef: { name: c.name, key: c.accessKeyIdKey ?? "accessKeyId" } } },
      { name: "AWS_SECRET_ACCESS_KEY", valueFrom: { secretKeyRef: { name: c.name, key: c.secretAccessKeyKey ?? "secretAccessKey" } } },
    );
  }
  return env;
}

/** The runner's storage access: its presigned URLs, from the Secret named after its Job. */
function accessEnv(jobName: string): V1EnvVar[] {
  return [{ name: RUNNER_ACCESS_ENV, valueFrom: { secretKeyRef: { name: accessSecretName(jobName), key: RUNNER_ACCESS_KEY } } }];
}

function secretEnv(spec: PdfJobSpec): V1EnvVar[] {
  const name = spec.secretRef?.name;
  // edit may carry the password that opens its input (optional: most edits have none).
  if (name && spec.operation === "edit")
    return [{ name: SECRET_OPTION_ENV.password, valueFrom: { secretKeyRef: { name, key: "password", optional: true } } }];
  // Only protect and edit have passwords: the Secret of another job holds just its webhook signing secrets.
  if (!name || spec.operation !== "protect") return [];
  return [
    { name: SECRET_OPTION_ENV.user_password, valueFrom: { secretKeyRef: { name, key: "user_password" } } },
    // The owner password is optional: without it the runner makes a random one.
    { name: SECRET_OPTION_ENV.owner_password, valueFrom: { secretKeyRef: { name, key: "owner_password", optional: true } } },
  ];
}

export function labelsFor(pj: PdfJob, spec: PdfJobSpec): Record<string, string> {
  return {
    [LABELS.managedBy]: MANAGED_BY,
    [LABELS.pdfJob]: pj.metadata.name,
    [LABELS.tenant]: spec.tenant,
    [LABELS.jobId]: jobIdOf(pj),
  };
}

/** The Job for a PdfJob whose spec has been validated (`spec` is the parsed one). */
export function buildJob(pj: PdfJob, spec: PdfJobSpec, o: JobTemplateOptions): V1Job {
  const labels = labelsFor(pj, spec);
  const podSpec = runnerPodSpec(pj, spec, o.limits);
  const env: V1EnvVar[] = [
    { name: RUNNER_SPEC_ENV, value: literalEnvValue(JSON.stringify(podSpec)) },
    { name: TERMINATION_MESSAGE_PATH_ENV, value: TERMINATION_MESSAGE_PATH },
    { name: "FOLIO_TMP_DIR", value: "/tmp" },
    // LibreOffice writes its profile under $HOME; the root file system is read-only.
    { name: "HOME", value: "/tmp" },
    ...(o.access === "presigned" ? accessEnv(childJobName(pj)) : storageEnv(o.storage)),
    ...(o.env ?? []),
    ...secretEnv(spec),
  ];
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name: childJobName(pj),
      ...(pj.metadata.namespace ? { namespace: pj.metadata.namespace } : {}),
      labels,
      ownerReferences: [
        {
          apiVersion: PDFJOB_API_VERSION,
          kind: PDFJOB_KIND,
          name: pj.metadata.name,
          uid: pj.metadata.uid ?? "",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      backoffLimit: 1,
      completions: 1,
      parallelism: 1,
      activeDeadlineSeconds: spec.deadlineSeconds,
      ttlSecondsAfterFinished: o.ttlSecondsAfterFinished ?? DEFAULT_TTL_SECONDS,
      podReplacementPolicy: "Failed",
      podFailurePolicy: {
        rules: [
          { action: "FailJob", onExitCodes: { containerName: RUNNER_CONTAINER, operator: "In", values: [...FAIL_JOB_EXIT_CODES] } },
          { action: "Ignore", onPodConditions: [{ type: "DisruptionTarget", status: "True" }] },
        ],
      },
      template: {
        metadata: { labels: { ...labels, "app.kubernetes.io/name": "folio-runner", "app.kubernetes.io/component": "runner" } },
        spec: {
          restartPolicy: "Never",
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          ...(o.serviceAccountName ? { serviceAccountName: o.serviceAccountName } : {}),
          ...(o.priorityClassName ? { priorityClassName: o.priorityClassName } : {}),
          ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
          ...(o.tolerations ? { tolerations: o.tolerations } : {}),
          ...(o.terminationGracePeriodSeconds !== undefined ? { terminationGracePeriodSeconds: o.terminationGracePeriodSeconds } : {}),
          securityContext: {
            runAsNonRoot: true,
            runAsUser: RUNNER_UID,
            runAsGroup: RUNNER_UID,
            fsGroup: RUNNER_UID,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [
            {
              name: RUNNER_CONTAINER,
              image: runnerImageFor(spec, o),
              ...(o.imagePullPolicy ? { imagePullPolicy: o.imagePullPolicy } : {}),
              command: [...(o.command ?? DEFAULT_COMMAND)],
              env,
              resources: o.resources ?? DEFAULT_RESOURCES,
              terminationMessagePath: TERMINATION_MESSAGE_PATH,
              terminationMessagePolicy: "FallbackToLogsOnError",
              securityContext: {
                runAsNonRoot: true,
                runAsUser: RUNNER_UID,
                allowPrivilegeEscalation: false,
                privileged: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ["ALL"] },
                seccompProfile: { type: "RuntimeDefault" },
              },
              volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
            },
          ],
          volumes: [{ name: "tmp", emptyDir: o.tmpSizeLimit ? { sizeLimit: o.tmpSizeLimit } : {} }],
        },
      },
    },
  };
}

/** The Job template's settings from the configuration the chart sets (core/config.ts FOLIO_RUNNER_*). */
export function jobTemplateFromConfig(config: Config, image: string): JobTemplateOptions {
  const c = config;
  return {
    image,
    access: "presigned",
    ...(c.FOLIO_RUNNER_FULL_IMAGE ? { fullImage: c.FOLIO_RUNNER_FULL_IMAGE } : {}),
    ...(c.FOLIO_RUNNER_IMAGE_PULL_POLICY ? { imagePullPolicy: c.FOLIO_RUNNER_IMAGE_PULL_POLICY } : {}),
    ...(c.FOLIO_RUNNER_RESOURCES ? { resources: c.FOLIO_RUNNER_RESOURCES } : {}),
    ttlSecondsAfterFinished: c.FOLIO_RUNNER_TTL_SECONDS,
    ...(c.FOLIO_RUNNER_TIMEOUT_MS ? { limits: { timeout_ms: c.FOLIO_RUNNER_TIMEOUT_MS } } : {}),
    ...(c.FOLIO_RUNNER_TMP_SIZE_LIMIT ? { tmpSizeLimit: c.FOLIO_RUNNER_TMP_SIZE_LIMIT } : {}),
    ...(c.FOLIO_RUNNER_SERVICE_ACCOUNT ? { serviceAccountName: c.FOLIO_RUNNER_SERVICE_ACCOUNT } : {}),
    ...(c.FOLIO_RUNNER_PRIORITY_CLASS ? { priorityClassName: c.FOLIO_RUNNER_PRIORITY_CLASS } : {}),
    ...(c.FOLIO_RUNNER_NODE_SELECTOR ? { nodeSelector: c.FOLIO_RUNNER_NODE_SELECTOR } : {}),
    ...(c.FOLIO_RUNNER_TOLERATIONS ? { tolerations: c.FOLIO_RUNNER_TOLERATIONS } : {}),
  };
}
