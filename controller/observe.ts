/**
 * Reading the child Job and the runner pod as the Job controller leaves them (pure):
 *
 * - the Job has ended when it has a `Complete` or `Failed` condition that is True (not the
 *   earlier `SuccessCriteriaMet`/`FailureTarget`: pods may still be terminating then);
 * - `Failed` reasons: `DeadlineExceeded` (activeDeadlineSeconds) → `timeout`; `PodFailurePolicy`
 *   (the runner exited with a no-retry code) and `BackoffLimitExceeded` → the error the runner
 *   reported, else `limit_exceeded` when its container was OOMKilled, else `internal_error`;
 * - the runner reports in its termination message (≤ 4 KiB of JSON): a RunnerPodResult, a
 *   RunnerFailure `{error}`, or `{result_key}` when the result was too large and was stored
 *   instead (the apply layer fetches it and passes its text as the termination message).
 */
import type { V1Job } from "@kubernetes/client-node";
import { RunnerFailure } from "../core/schemas/job.ts";
import { isTenantKey } from "./validate.ts";
import { type PdfJob, type PdfJobOutput, type PdfJobSpec } from "../core/schemas/pdfjob.ts";
import { RunnerPodResult, RunnerPodResultRef } from "../core/schemas/runner-pod.ts";
import type { JobErrorCode } from "../core/errors.ts";

/** The runner container's last termination. */
export interface ObservedPod {
  terminationMessage?: string;
  exitCode?: number;
  /** The runtime's reason: OOMKilled when the container's memory cgroup killed it. */
  reason?: string;
}

export type JobError = { code: JobErrorCode; message: string };

export type Outcome =
  | { phase: "Succeeded"; outputs: PdfJobOutput[]; figures: Record<string, unknown>; completionTime?: number | null }
  | { phase: "Failed"; error: JobError; detail?: string; completionTime?: number | null }
  | { phase: "Canceled" };

export type Report =
  | { kind: "result"; result: RunnerPodResult }
  | { kind: "error"; error: JobError }
  | { kind: "ref"; key: string }
  | { kind: "none" }
  | { kind: "invalid" };

/** A time from client-node (Date) or from raw JSON (string) in ms; null when absent or invalid. */
export function toMs(t: Date | string | undefined | null): number | null {
  if (t === undefined || t === null) return null;
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(ms) ? null : ms;
}

function endCondition(job: V1Job): { type: "Complete" | "Failed"; reason?: string; message?: string; at: number | null } | null {
  for (const c of job.status?.conditions ?? []) {
    if ((c.type === "Complete" || c.type === "Failed") && c.status === "True") {
      return {
        type: c.type,
        ...(c.reason ? { reason: c.reason } : {}),
        ...(c.message ? { message: c.message } : {}),
        at: toMs(c.lastTransitionTime),
      };
    }
  }
  return null;
}

export function jobFinished(job: V1Job): boolean {
  return endCondition(job) !== null;
}

/** The Job has (or had) a pod: it is past pending. */
export function jobStarted(job: V1Job): boolean {
  const s = job.status ?? {};
  return (s.active ?? 0) > 0 || (s.ready ?? 0) > 0 || (s.failed ?? 0) > 0 || (s.succeeded ?? 0) > 0;
}

/** The Job's controller ownerReference points at this PdfJob. */
export function ownedBy(job: V1Job, pj: Pick<PdfJob, "metadata">): boolean {
  const owner = job.metadata?.ownerReferences?.find((r) => r.controller);
  if (!owner) return false;
  return owner.kind === "PdfJob" && owner.name === pj.metadata.name && (pj.metadata.uid === undefined || owner.uid === pj.metadata.uid);
}

/** The runner's report in a termination message. */
export function parseReport(message: string | undefined): Report {
  if (message === undefined || message.trim() === "") return { kind: "none" };
  let json: unknown;
  try {
    json = JSON.parse(message);
  } catch {
    return { kind: "invalid" };
  }
  const failure = RunnerFailure.safeParse(json);
  if (failure.success) return { kind: "error", error: failure.data.error };
  const result = RunnerPodResult.safeParse(json);
  if (result.success) return { kind: "result", result: result.data };
  const ref = RunnerPodResultRef.safeParse(json);
  if (ref.success) return { kind: "ref", key: ref.data.result_key };
  return { kind: "invalid" };
}

/** The key to fetch the full result from when the termination message points to one. */
export function resultRefKey(message: string | undefined): string | null {
  const r = parseReport(message);
  return r.kind === "ref" ? r.key : null;
}

const internal = (detail: string, at: number | null): Outcome => ({
  phase: "Failed",
  error: { code: "internal_error", message: "The job failed because of an internal error." },
  detail,
  completionTime: at,
});

function succeeded(report: Report, spec: PdfJobSpec, prefix: string, at: number | null): Outcome {
  if (report.kind === "error") return { phase: "Failed", error: report.error, completionTime: at };
  if (report.kind !== "result")
    return internal(
      `the Job completed but the runner's result is ${report.kind === "ref" ? "stored and was not fetched" : report.kind === "none" ? "missing" : "not valid"}`,
      at,
    );
  const r = report.result;
  if (r.operation !== spec.operation) return internal(`the runner reported operation ${r.operation}`, at);
  // The keys are deleted with the job later: a key outside the job's prefix is never accepted.
  if (r.outputs.some((o) => !o.key.startsWith(prefix) || !isTenantKey(spec.tenant, o.key)))
    return internal("the runner reported an output outside the job's storage prefix", at);
  const outputs = r.outputs.map((o) => ({
    key: o.key,
    filename: o.filename,
    contentType: o.content_type,
    size: o.size,
    sha256: o.sha256,
    ...(o.pages === null ? {} : { pages: o.pages }),
  }));
  return { phase: "Succeeded", outputs, figures: r.figures, completionTime: at };
}

function failed(
  cond: { reason?: string; message?: string; at: number | null },
  report: Report,
  pod: ObservedPod | undefined,
  spec: PdfJobSpec,
): Outcome {
  if (cond.reason === "DeadlineExceeded") {
    return {
      phase: "Failed",
      error: { code: "timeout", message: `The job ran out of time (its deadline is ${spec.deadlineSeconds} s).` },
      completionTime: cond.at,
    };
  }
  if (report.kind === "error") return { phase: "Failed", error: report.error, completionTime: cond.at };
  // Killed by its memory limit before it could report (issue #11): the document needs more memory
  // than a runner may have, which no retry changes — the client's limit, not our fault.
  if (pod?.reason === "OOMKilled") {
    return {
      phase: "Failed",
      error: { code: "limit_exceeded", message: "The document needs more memory than the runner may use." },
      completionTime: cond.at,
    };
  }
  const exit = pod?.exitCode === undefined ? "" : `, exit code ${pod.exitCode}`;
  return internal(`Job failed: ${cond.reason ?? "no reason"}${exit}${cond.message ? `: ${cond.message}` : ""}`, cond.at);
}

/** The job's outcome once its Job has ended; null while it has not. */
export function readOutcome(job: V1Job, pod: ObservedPod | undefined, spec: PdfJobSpec, prefix: string): Outcome | null {
  const cond = endCondition(job);
  if (!cond) return null;
  const report = parseReport(pod?.terminationMessage);
  if (cond.type === "Complete") return succeeded(report, spec, prefix, toMs(job.status?.completionTime) ?? cond.at);
  return failed(cond, report, pod, spec);
}
