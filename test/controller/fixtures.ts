/** PdfJobs, Jobs and termination messages for the controller's pure tests. */
import type { V1Job } from "@kubernetes/client-node";
import { buildJob, type JobTemplateOptions } from "../../controller/job-template.ts";
import type { Action } from "../../controller/decide.ts";
import { PDFJOB_FINALIZER, pdfJobName, type PdfJob, type PdfJobSpec, type PdfJobStatus } from "../../core/schemas/pdfjob.ts";
import { jobStoragePrefix, outputKey } from "../../core/schemas/storage-keys.ts";

export const JOB_ID = "job_9aQm2LkT7cXv1B4nZp0RsWd8";
export const TENANT = "ten_4fJ2kq9XcT1mZ8rB0aLw7eYd";
export const UID = "0b7c6a1e-5f0d-4c1e-9a51-7d7f0e6c2b11";
export const T0 = Date.parse("2026-03-01T12:00:00Z");
export const at = (seconds: number): Date => new Date(T0 + seconds * 1000);
export const iso = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

export const TEMPLATE: JobTemplateOptions = {
  image: "folio/runner:test",
  storage: {
    bucket: "folio",
    region: "us-east-1",
    endpoint: "http://127.0.0.1:9000",
    forcePathStyle: true,
    credentialsSecret: { name: "folio-s3" },
  },
};

export const INPUT_KEY = `${TENANT}/file_Aa0Bb1Cc2Dd3Ee4Ff5Gg6Hh7`;
export const PREFIX = jobStoragePrefix(TENANT, JOB_ID);

export function spec(over: Partial<PdfJobSpec> = {}): PdfJobSpec {
  return {
    tenant: TENANT,
    operation: "compress",
    inputs: [
      {
        key: INPUT_KEY,
        fileId: "file_Aa0Bb1Cc2Dd3Ee4Ff5Gg6Hh7",
        filename: "report.pdf",
        contentType: "application/pdf",
        size: 1000,
        sha256: "a".repeat(64),
        pageCount: 3,
      },
    ],
    options: { level: "medium", linearize: false },
    deadlineSeconds: 300,
    retentionSeconds: 3600,
    ...over,
  };
}

export function pdfJob(o: { spec?: Partial<PdfJobSpec>; status?: PdfJobStatus; deleting?: boolean; finalizers?: string[] } = {}): PdfJob {
  return {
    apiVersion: "folio.dev/v1alpha1",
    kind: "PdfJob",
    metadata: {
      name: pdfJobName(JOB_ID),
      namespace: "folio",
      uid: UID,
      generation: 1,
      creationTimestamp: iso(0),
      finalizers: o.finalizers ?? [PDFJOB_FINALIZER],
      ...(o.deleting ? { deletionTimestamp: iso(50) } : {}),
    },
    spec: spec(o.spec),
    ...(o.status ? { status: o.status } : {}),
  };
}

/** The Job the controller would create for `pj`, with a status as the Job controller writes it. */
export function job(pj: PdfJob, status: V1Job["status"] = {}, extra: { deleting?: boolean } = {}): V1Job {
  const j = buildJob(pj, pj.spec, TEMPLATE);
  return { ...j, metadata: { ...j.metadata, uid: "job-uid", ...(extra.deleting ? { deletionTimestamp: at(60) } : {}) }, status };
}

export const active = (startSeconds = 2): V1Job["status"] => ({ active: 1, startTime: at(startSeconds) });
export const complete = (endSeconds = 20): V1Job["status"] => ({
  succeeded: 1,
  startTime: at(2),
  completionTime: at(endSeconds),
  conditions: [
    { type: "SuccessCriteriaMet", status: "True", reason: "CompletionsReached", lastTransitionTime: at(endSeconds - 1) },
    { type: "Complete", status: "True", reason: "CompletionsReached", lastTransitionTime: at(endSeconds) },
  ],
});
export const failed = (reason: string, endSeconds = 20): V1Job["status"] => ({
  failed: 1,
  startTime: at(2),
  conditions: [
    { type: "FailureTarget", status: "True", reason, lastTransitionTime: at(endSeconds - 1) },
    { type: "Failed", status: "True", reason, message: `Job failed: ${reason}`, lastTransitionTime: at(endSeconds) },
  ],
});

/** The runner's result as it writes it into its termination message. */
export function resultMessage(outputs = 1): string {
  const spec = { output_prefix: PREFIX, tenant: TENANT, job_id: JOB_ID };
  return JSON.stringify({
    operation: "compress",
    outputs: Array.from({ length: outputs }, (_, i) => ({
      key: outputKey(spec, i),
      filename: `report${i || ""}.pdf`,
      content_type: "application/pdf",
      size: 600,
      sha256: "b".repeat(64),
      pages: 3,
    })),
    figures: { original_size: 1000, size: 600, ratio: 0.6, compressed: true },
    duration_ms: 1234,
  });
}

/** The PdfJob after the apply layer performed `actions` (status, finalizers). */
export function applied(pj: PdfJob, actions: readonly Action[]): PdfJob {
  let next = pj;
  for (const a of actions) {
    if (a.action === "updateStatus") next = { ...next, status: a.status };
    if (a.action === "addFinalizer")
      next = { ...next, metadata: { ...next.metadata, finalizers: [...(next.metadata.finalizers ?? []), PDFJOB_FINALIZER] } };
    if (a.action === "removeFinalizer")
      next = {
        ...next,
        metadata: { ...next.metadata, finalizers: (next.metadata.finalizers ?? []).filter((f) => f !== PDFJOB_FINALIZER) },
      };
  }
  return next;
}

/** The action kinds in order, for compact expectations. */
export const kinds = (actions: readonly Action[]): string[] => actions.map((a) => a.action);

export function statusOf(actions: readonly Action[]): PdfJobStatus {
  const u = actions.filter((a) => a.action === "updateStatus").at(-1);
  if (!u || u.action !== "updateStatus") throw new Error("no updateStatus among the actions");
  return u.status;
}
