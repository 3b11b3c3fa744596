/**
 * The PdfJob custom resource (ARCHITECTURE.md "The PdfJob resource"): the zod schemas its CRD is
 * generated from (controller/crd.ts), its names, labels and annotations, and its Secret. Where a
 * job's files live is core/schemas/storage-keys.ts; the runner pod's contract is
 * core/schemas/runner-pod.ts.
 *
 * Field names are camelCase as the Kubernetes API conventions ask; the runner pod's own spec and
 * report are snake_case like the rest of the runner contract (core/schemas/job.ts).
 *
 * Secrets never enter a PdfJob: `spec.options` is the operation's options without the protect
 * passwords, which live in a Secret owned by the PdfJob (`spec.secretRef`) and reach the runner
 * as environment variables from secretKeyRefs. The same Secret carries the tenant's webhook
 * signing secrets as they were when the job was created (WEBHOOK_SECRETS_KEY), which the
 * controller signs with; the runner pod never sees them (it only maps the password keys).
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { JOB_ERROR_CODES } from "../errors.ts";
import { ID_PATTERN } from "../ids.ts";
import { WEBHOOK_STATUSES } from "./api.ts";
import { WEBHOOK_EVENT_TYPES } from "../webhooks/events.ts";
import { OPTIONS_SCHEMAS, Operation, PageRangeSpec } from "./options.ts";

export const PDFJOB_GROUP = "folio.dev";
export const PDFJOB_VERSION = "v1alpha1";
export const PDFJOB_API_VERSION = `${PDFJOB_GROUP}/${PDFJOB_VERSION}`;
export const PDFJOB_KIND = "PdfJob";
export const PDFJOB_PLURAL = "pdfjobs";

/**
 * Set by the API at creation (and by the controller if missing): the controller removes it once
 * the Job has stopped, the storage objects are deleted and the webhook is settled.
 */
export const PDFJOB_FINALIZER = "folio.dev/cleanup";

/** Labels on PdfJobs, Jobs and pods, for filtered informers and list selectors. */
export const LABELS = {
  managedBy: "app.kubernetes.io/managed-by",
  pdfJob: "folio.dev/pdfjob",
  tenant: "folio.dev/tenant",
  jobId: "folio.dev/job-id",
  /** On PdfJobs: outputTag(job id), the prefix of its output file ids. */
  outputTag: "folio.dev/output-tag",
} as const;
export const MANAGED_BY = "folio";

/** Annotations on PdfJobs that the API writes and the controller reads. */
export const PDFJOB_ANNOTATIONS = {
  /** When the API created the job, in epoch milliseconds (creationTimestamp has whole seconds). */
  createdMs: "folio.dev/created-ms",
  /** Output file ids the client deleted (comma-separated). */
  deletedOutputs: "folio.dev/deleted-outputs",
  /**
   * The request hash of the Idempotency-Key the PdfJob was created under (its name derives from
   * the tenant and the key: idempotentPdfJobName). The controller keeps such a PdfJob, once
   * deleted, until the key is 24 h old, so that the name — the key — stays taken (docs/adr/0008).
   */
  idempotencyHash: "folio.dev/idempotency-hash",
  /**
   * Set by the API on a PdfJob it takes back before answering (the tenant was at its cap): the
   * controller runs nothing for it and sends no webhook; nobody was told it exists.
   */
  rejected: "folio.dev/rejected",
  /**
   * Set by the dashboard (RFC 3339 time) to ask for the job's settled webhook to be sent again:
   * the controller starts a new attempt series once for each newer time (WebhookLedger.redelivery).
   */
  redeliverRequested: "folio.dev/redeliver-requested",
} as const;

/** How long an idempotency key holds (API.md "Operations"). */
export const IDEMPOTENCY_KEY_MS = 24 * 3600 * 1000;

/**
 * The PdfJob name of a request with an Idempotency-Key: derived from (tenant, key) alone, so that
 * of any number of identical requests on any number of API replicas, the apiserver lets exactly
 * one create it (409 AlreadyExists for the others). `idem-` + 32 base32 characters (160 bits of
 * SHA-256); the job id is separate (a label), random as always.
 */
export function idempotentPdfJobName(tenant: string, key: string): string {
  const digest = createHash("sha256").update(`folio-idempotency\u0000${tenant}\u0000${key}`).digest();
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 32) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `idem-${out}`;
}

// --- names and ids -------------------------------------------------------------------------------

/**
 * The PdfJob name of a job id. Kubernetes names are DNS-1123 subdomains (lowercase, digits, `-`)
 * while job ids are `job_` + 24 base62 characters, so the name escapes: `job_` becomes `job-` and
 * an uppercase letter becomes `-` + its lowercase (`job_9aQm…` → `job-9a-qm…`); at most 52
 * characters. The mapping is one-to-one, so the API reads a job with a single GET.
 */
export function pdfJobName(jobId: string): string {
  if (!ID_PATTERN("job").test(jobId)) throw new Error(`not a job id: ${jobId}`);
  return "job-" + jobId.slice(4).replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());
}

/** The job id of a PdfJob name (the inverse of pdfJobName); null for a name it never produces. */
export function jobIdFromPdfJobName(name: string): string | null {
  if (!/^job-(?:[0-9a-z]|-[a-z])+$/.test(name)) return null;
  const id = "job_" + name.slice(4).replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
  return ID_PATTERN("job").test(id) ? id : null;
}

// --- spec ----------------------------------------------------------------------------------------

const Time = z.iso.datetime().meta({ description: "RFC 3339 UTC time." });
const Key = z.string().min(1).max(1024).meta({ description: "An object-store key." });
const Sha256 = z
  .string()
  .regex(/^[0-9a-f]{64}$/)
  .length(64);
const Size = z.int().min(0).meta({ description: "Bytes." });

export const PdfJobInput = z
  .strictObject({
    key: Key,
    fileId: z
      .string()
      .regex(/^file_[0-9A-Za-z]{24}$/)
      .max(29)
      .meta({ description: "The uploaded file's id (file_…)." }),
    filename: z.string().min(1).max(255),
    contentType: z.string().min(1).max(255),
    size: Size,
    sha256: Sha256,
    pageCount: z.int().min(0).optional().meta({ description: "Page count, for PDFs." }),
    pages: PageRangeSpec.optional().meta({ description: 'Pages to take from this input (merge), e.g. "1-3,7,10-".' }),
  })
  .meta({ description: "An input: an uploaded file in the object store." });
export type PdfJobInput = z.infer<typeof PdfJobInput>;

/** CEL: every input key is `{tenant}/…` with no empty, `.` or `..` segment. */
export const INPUT_KEYS_RULE =
  "self.inputs.all(i, i.key.startsWith(self.tenant + '/') && !i.key.endsWith('/') && !i.key.contains('//') && " +
  "!i.key.contains('/./') && !i.key.contains('/../') && !i.key.endsWith('/.') && !i.key.endsWith('/..'))";

/** CEL at the root (only there may a rule read metadata.name): the Secret is the PdfJob's own. */
export const SECRET_REF_RULE = "!has(self.spec.secretRef) || self.spec.secretRef.name == self.metadata.name";

export const PdfJobSpec = z
  .strictObject({
    tenant: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/)
      .meta({ description: "The tenant id (ten_…); also the folio.dev/tenant label." }),
    operation: Operation,
    inputs: z.array(PdfJobInput).max(1000).meta({ description: "The inputs; empty only for a convert of a `url`." }),
    options: z.record(z.string(), z.unknown()).meta({
      description:
        "The operation's options (API.md) without passwords; validated by the API and the controller with the operation's zod schema.",
      "x-kubernetes-preserve-unknown-fields": true,
      maxProperties: 64,
    }),
    secretRef: z
      .strictObject({ name: z.string().min(1).max(253) })
      .optional()
      .meta({
        description:
          "A Secret owned by this PdfJob: the protect passwords (keys user_password, owner_password) and the webhook signing secrets (key webhook_secrets).",
      }),
    webhook: z
      .strictObject({
        url: z
          .string()
          .min(1)
          .max(2048)
          .regex(/^https:\/\//),
      })
      .optional()
      .meta({ description: "Notified (Standard Webhooks) when the job ends." }),
    deadlineSeconds: z
      .int()
      .min(1)
      .max(86_400)
      .meta({ description: "The Job's activeDeadlineSeconds: the job fails with `timeout` beyond." }),
    retentionSeconds: z.int().min(1).max(86_400).meta({ description: "How long outputs and the PdfJob live after the job ends." }),
    outputFilename: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^/\\\u0000-\u001f\u007f]+$/)
      .optional()
      .meta({ description: "Base name for the outputs (the extension is added)." }),
    metadata: z
      .record(z.string().max(40), z.string().max(500))
      .optional()
      .meta({ description: "The client's metadata, echoed back on the job.", maxProperties: 20 }),
  })
  .meta({
    description: "What to run. Immutable after creation.",
    "x-kubernetes-validations": [
      { rule: "self == oldSelf", message: "spec is immutable" },
      // A PdfJob reads only its own tenant's files (issue #10 item 16; controller/validate.ts).
      { rule: INPUT_KEYS_RULE, message: "spec.inputs[].key must lie under the tenant's prefix (<tenant>/)" },
    ],
  });
export type PdfJobSpec = z.infer<typeof PdfJobSpec>;

// --- status --------------------------------------------------------------------------------------

export const PDFJOB_PHASES = ["Pending", "Running", "Succeeded", "Failed", "Canceled"] as const;
export const PdfJobPhase = z.enum(PDFJOB_PHASES);
export type PdfJobPhase = z.infer<typeof PdfJobPhase>;
export const TERMINAL_PHASES: readonly PdfJobPhase[] = ["Succeeded", "Failed", "Canceled"];

/** metav1.Condition, with the validation the Kubernetes API gives it. */
export const Condition = z.object({
  type: z
    .string()
    .max(316)
    .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/),
  status: z.enum(["True", "False", "Unknown"]),
  observedGeneration: z.int().min(0).optional(),
  lastTransitionTime: Time,
  reason: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/),
  message: z.string().max(32768),
});
export type Condition = z.infer<typeof Condition>;

export const PdfJobOutput = z.object({
  key: Key,
  filename: z.string(),
  contentType: z.string(),
  size: Size,
  sha256: z.string(),
  pages: z.int().min(0).optional().meta({ description: "Page count, for PDFs." }),
});
export type PdfJobOutput = z.infer<typeof PdfJobOutput>;

/** The most recent attempts the ledger keeps, for the dashboard's job page. */
export const RECENT_ATTEMPTS_MAX = 10;

export const WebhookAttemptEntry = z
  .object({
    time: Time,
    statusCode: z.int().min(100).max(599).optional().meta({ description: "The receiver's HTTP status, when it answered." }),
    latencyMs: z.int().min(0).optional().meta({ description: "From the request to the answer (or the failure)." }),
    error: z.string().max(1024).optional(),
    nextAttemptTime: Time.optional().meta({ description: "When the next attempt was due after this one; absent once settled." }),
  })
  .meta({ description: "One delivery attempt." });
export type WebhookAttemptEntry = z.infer<typeof WebhookAttemptEntry>;

export const WebhookLedger = z
  .object({
    eventType: z.enum(WEBHOOK_EVENT_TYPES),
    messageId: z.string().meta({ description: "The webhook-id header: the same on every attempt." }),
    status: z.enum(WEBHOOK_STATUSES),
    attempts: z.int().min(0),
    lastAttemptTime: Time.optional(),
    nextAttemptTime: Time.optional(),
    deliveredTime: Time.optional(),
    lastError: z.string().optional(),
    recentAttempts: z
      .array(WebhookAttemptEntry)
      .max(RECENT_ATTEMPTS_MAX)
      .optional()
      .meta({ description: `The last ${RECENT_ATTEMPTS_MAX} attempts, oldest first (the dashboard's attempt log).` }),
    redelivery: z
      .object({
        requestedTime: Time.meta({ description: "The folio.dev/redeliver-requested time this series answered (each is handled once)." }),
        attemptsBefore: z
          .int()
          .min(0)
          .meta({ description: "`attempts` when the series began: its retries follow the schedule from the start." }),
      })
      .optional()
      .meta({ description: "The last redelivery asked for on the dashboard: a new attempt series, the same webhook-id." }),
  })
  .meta({ description: "The delivery ledger of the job's webhook: retries are requeue-afters, so a restart or fail-over resumes them." });
export type WebhookLedger = z.infer<typeof WebhookLedger>;

export const PdfJobStatus = z
  .object({
    phase: PdfJobPhase.optional(),
    observedGeneration: z.int().min(0).optional(),
    conditions: z
      .array(Condition)
      .optional()
      .meta({
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
      }),
    jobName: z.string().optional().meta({ description: "The batch/v1 Job running the runner." }),
    queuePosition: z.int().min(1).optional().meta({
      description:
        "While the job waits for a runner (FOLIO_MAX_RUNNING_JOBS): its place in the fair queue, 1 = next; exact up to 10, then rounded up to 20, 50, 100, 200, 500, … (at most that many ahead; fewer status writes).",
    }),
    startTime: Time.optional(),
    completionTime: Time.optional(),
    outputs: z.array(PdfJobOutput).optional(),
    figures: z.record(z.string(), z.unknown()).optional().meta({
      description: "The operation's figures (compress: original_size, size, ratio, compressed).",
      "x-kubernetes-preserve-unknown-fields": true,
    }),
    error: z.object({ code: z.enum(JOB_ERROR_CODES), message: z.string() }).optional(),
    webhook: WebhookLedger.optional(),
    expireTime: Time.optional().meta({ description: "When the outputs and this PdfJob are deleted." }),
    inputsDeletedTime: Time.optional().meta({ description: "When the inputs were deleted from storage (the job had ended)." }),
    storageDeletedTime: Time.optional().meta({ description: "When every object of the job was deleted from storage." }),
    idempotencyHeldUntil: Time.optional().meta({
      description: "A deleted PdfJob made under an Idempotency-Key is kept until then (the key's 24 h), so that its name stays taken.",
    }),
  })
  .meta({ description: "What happened, written by the controller only." });
export type PdfJobStatus = z.infer<typeof PdfJobStatus>;

/** The part of ObjectMeta Folio reads (times as the API serializes them: RFC 3339 strings). */
export const PdfJobMetadata = z.looseObject({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.int().optional(),
  resourceVersion: z.string().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  finalizers: z.array(z.string()).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

export const PdfJob = z.object({
  apiVersion: z.literal(PDFJOB_API_VERSION),
  kind: z.literal(PDFJOB_KIND),
  metadata: PdfJobMetadata,
  spec: PdfJobSpec,
  status: PdfJobStatus.optional(),
});
export type PdfJob = z.infer<typeof PdfJob>;

// --- options without secrets --------------------------------------------------------------------

/** Options that are secrets: kept in the PdfJob's Secret, never in its spec. */
export const SECRET_OPTION_KEYS = ["user_password", "owner_password", "password"] as const;
export type SecretOptionKey = (typeof SECRET_OPTION_KEYS)[number];

const { user_password: _u, owner_password: _o, ...protectShape } = OPTIONS_SCHEMAS.protect.shape;

/**
 * Each operation's options schema as it applies to `spec.options`: the same schemas the API
 * validates with, the protect passwords left out (their rules only concern the passwords).
 */
export const SPEC_OPTIONS_SCHEMAS = {
  ...OPTIONS_SCHEMAS,
  protect: z.strictObject(protectShape),
  edit: OPTIONS_SCHEMAS.edit.omit({ password: true }),
} as const;

/** Checks a spec: its shape, its options against the operation's schema, and the Secret protect needs. */
export function validatePdfJobSpec(spec: unknown): { ok: true; spec: PdfJobSpec } | { ok: false; message: string } {
  const parsed = PdfJobSpec.safeParse(spec);
  if (!parsed.success) return { ok: false, message: issues(parsed.error, "spec") };
  const options = SPEC_OPTIONS_SCHEMAS[parsed.data.operation].safeParse(parsed.data.options);
  if (!options.success) return { ok: false, message: issues(options.error, "spec.options") };
  if (parsed.data.operation === "protect" && !parsed.data.secretRef) {
    return { ok: false, message: "spec.secretRef: protect needs the Secret with user_password" };
  }
  return { ok: true, spec: parsed.data };
}

function issues(error: z.ZodError, root: string): string {
  return error.issues.map((i) => `${[root, ...i.path.map(String)].join(".")}: ${i.message}`).join("; ");
}

// --- the PdfJob's Secret -----------------------------------------------------------------------

/**
 * The key of the PdfJob's Secret holding the tenant's Standard Webhooks signing secrets
 * (`whsec_…`, one per line; two during a rotation), snapshotted by the API when it creates the job.
 */
export const WEBHOOK_SECRETS_KEY = "webhook_secrets";
