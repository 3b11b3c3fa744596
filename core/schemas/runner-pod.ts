/**
 * The contract of the runner pod the controller starts for a PdfJob (controller/job-template.ts,
 * runner/pod.ts): its environment, its spec (snake_case like the rest of the runner contract,
 * core/schemas/job.ts) and the report it leaves in its termination message.
 */
import { z } from "zod";
import { RunnerLimits, RunnerResult } from "./job.ts";
import { Operation, PageRangeSpec } from "./options.ts";
import type { SecretOptionKey } from "./pdfjob.ts";

/** The environment variable carrying the RunnerPodSpec as JSON. */
export const RUNNER_SPEC_ENV = "FOLIO_RUNNER_SPEC";
/** The environment variable naming the file the runner writes its report to. */
export const TERMINATION_MESSAGE_PATH_ENV = "FOLIO_TERMINATION_MESSAGE_PATH";
/** The environment variable (from the job's access Secret) with the runner's presigned URLs (controller/runner-access.ts). */
export const RUNNER_ACCESS_ENV = "FOLIO_RUNNER_ACCESS";
/** The environment variables carrying the secret options (from secretKeyRefs to the PdfJob's Secret). */
export const SECRET_OPTION_ENV: Readonly<Record<SecretOptionKey, string>> = {
  user_password: "FOLIO_OPTION_USER_PASSWORD",
  owner_password: "FOLIO_OPTION_OWNER_PASSWORD",
  password: "FOLIO_OPTION_PASSWORD",
};
/** The kubelet keeps at most this much of a termination message. */
export const TERMINATION_MESSAGE_MAX_BYTES = 4096;

/**
 * What a runner pod runs: the inputs by object-store key; each output `i` is stored at
 * `outputKey(spec, i)`. Options come without secrets (see SECRET_OPTION_ENV).
 */
export const RunnerPodSpec = z.strictObject({
  job_id: z.string().min(1).max(100),
  tenant: z.string().min(1),
  operation: Operation,
  inputs: z.array(z.strictObject({ key: z.string().min(1), filename: z.string().min(1).max(255), pages: PageRangeSpec.optional() })),
  options: z.record(z.string(), z.unknown()),
  /** Every object the runner writes has a key under this prefix (deleted as a whole with the job). */
  output_prefix: z.string().min(1),
  output_filename: z.string().min(1).max(200).optional(),
  limits: RunnerLimits.partial().optional(),
});
export type RunnerPodSpec = z.infer<typeof RunnerPodSpec>;

export const RunnerPodOutput = z.object({
  key: z.string().min(1),
  filename: z.string(),
  content_type: z.string(),
  size: z.int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  pages: z.int().nonnegative().nullable(),
});

/** The runner pod's result: the RunnerResult with object keys instead of local paths. */
export const RunnerPodResult = RunnerResult.extend({ outputs: z.array(RunnerPodOutput) });
export type RunnerPodResult = z.infer<typeof RunnerPodResult>;

/**
 * The termination message when the result is larger than TERMINATION_MESSAGE_MAX_BYTES (a split
 * into many parts): the result is stored at `resultKey(spec)` and the message points to it.
 */
export const RunnerPodResultRef = z.object({ result_key: z.string().min(1) });
