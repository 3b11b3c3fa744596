/**
 * Least privilege for runner pods (issue #11): a runner gets no credentials for the bucket. For
 * each Job, the controller — which holds the credentials — signs exactly what that runner needs
 * (core/storage/presign.ts):
 *
 * - a presigned GET URL per input key of the job, and nothing else to read: not another job's
 *   objects, not another tenant's;
 * - one POST policy for the job's output prefix (`outputs/<tenant>/<job id>/`), where its outputs
 *   and, for a large result, its result.json go — any number of them, each at most
 *   FOLIO_MAX_OUTPUT_BYTES;
 * all valid for the Job's deadline and a few minutes more. They go in a Secret (`<job>-access`,
 * key `access`), which the pod reads through a secretKeyRef (FOLIO_RUNNER_ACCESS): never in the
 * Job or PdfJob object, which more people may read. The Secret is owned by the PdfJob, so the
 * garbage collector removes it with it, and it is created just before the Job (409 is fine: the
 * name is deterministic).
 */
import type { V1Job, V1Secret } from "@kubernetes/client-node";
import { RUNNER_ACCESS_ENV, RUNNER_SPEC_ENV, RunnerPodSpec } from "../core/schemas/runner-pod.ts";
import { presignGet, presignPost, type BucketTarget, type PostPolicy, type SigningCredentials } from "../core/storage/presign.ts";

export { RUNNER_ACCESS_ENV };
export const RUNNER_ACCESS_KEY = "access";
/** Validity beyond the Job's deadline: the pod may wait to be scheduled, the upload may be long. */
const SLACK_SECONDS = 300;

/** What a runner may do in the bucket: read these keys, upload under this prefix. */
export interface RunnerAccess {
  readonly get: Readonly<Record<string, string>>;
  readonly post: PostPolicy;
}

export const accessSecretName = (jobName: string): string => `${jobName}-access`;

/** The spec the Job hands its runner (FOLIO_RUNNER_SPEC, whose every `$` the template doubled). */
function podSpecOf(job: V1Job): RunnerPodSpec {
  const raw = job.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === RUNNER_SPEC_ENV)?.value;
  if (raw === undefined) throw new Error(`Job ${job.metadata?.name ?? "?"} has no ${RUNNER_SPEC_ENV}`);
  return RunnerPodSpec.parse(JSON.parse(raw.replaceAll("$$", "$")));
}

/** The access of one runner: its inputs to read, its output prefix to write (pure). */
export function runnerAccess(
  spec: RunnerPodSpec,
  target: BucketTarget,
  creds: SigningCredentials,
  o: { maxBytes: number; expiresSeconds: number; now: Date },
): RunnerAccess {
  return {
    get: Object.fromEntries(spec.inputs.map((i) => [i.key, presignGet(target, creds, i.key, o.expiresSeconds, o.now)])),
    post: presignPost(target, creds, spec.output_prefix, o.maxBytes, o.expiresSeconds, o.now),
  };
}

/** The Secret for `job`'s runner, owned by the job's PdfJob. */
export function accessSecret(job: V1Job, access: RunnerAccess): V1Secret {
  const owner = job.metadata?.ownerReferences?.find((r) => r.controller);
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "Opaque",
    metadata: {
      name: accessSecretName(job.metadata?.name ?? ""),
      ...(job.metadata?.namespace ? { namespace: job.metadata.namespace } : {}),
      labels: { ...job.metadata?.labels },
      ...(owner ? { ownerReferences: [{ ...owner, controller: false, blockOwnerDeletion: false }] } : {}),
    },
    stringData: { [RUNNER_ACCESS_KEY]: JSON.stringify(access) },
  };
}

export interface AccessPreparerOptions {
  readonly target: BucketTarget;
  /** The controller's own credentials (the SDK's provider: env, web identity, instance profile…). */
  readonly credentials: () => Promise<SigningCredentials>;
  readonly maxBytes: number;
  readonly createSecret: (namespace: string, secret: V1Secret) => Promise<void>;
  readonly now?: () => Date;
}

/** The apply layer's hook before a Job is created: its runner's access Secret. */
export function accessPreparer(o: AccessPreparerOptions): (namespace: string, job: V1Job) => Promise<void> {
  return async (namespace, job) => {
    const spec = podSpecOf(job);
    const deadline = job.spec?.activeDeadlineSeconds ?? Math.ceil((spec.limits?.timeout_ms ?? 3_600_000) / 1000);
    const access = runnerAccess(spec, o.target, await o.credentials(), {
      maxBytes: o.maxBytes,
      expiresSeconds: deadline + SLACK_SECONDS,
      now: o.now?.() ?? new Date(),
    });
    await o.createSecret(namespace, accessSecret(job, access));
  };
}
