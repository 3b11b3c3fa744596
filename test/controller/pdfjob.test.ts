/**
 * The PdfJob contract in core/: names and derived ids, spec validation with the API's option
 * schemas minus passwords, and the API Job object derived from a PdfJob — the same object the
 * embedded store derives from its records.
 */
import { describe, expect, it } from "vitest";
import { jobObject, type JobRow } from "../../api/store/jobs.ts";
import type { FileRow } from "../../api/store/files.ts";
import { newId, ID_PATTERN } from "../../core/ids.ts";
import { pdfJobToApiJob } from "../../core/pdfjob-view.ts";
import { JobObject } from "../../core/schemas/api.ts";
import { OPTIONS_SCHEMAS, redactOptions, type Operation } from "../../core/schemas/options.ts";
import { jobIdFromPdfJobName, pdfJobName, validatePdfJobSpec, type PdfJobStatus } from "../../core/schemas/pdfjob.ts";
import { webhookMessageId } from "../../core/webhooks/events.ts";
import { fileIdFromKey, outputFileId, outputTag, outputTagOf } from "../../core/schemas/storage-keys.ts";
import { INPUT_KEY, iso, JOB_ID, pdfJob, PREFIX, spec, T0, TENANT } from "./fixtures.ts";

describe("PdfJob names", () => {
  it("should map every job id to a DNS-1123 name of at most 52 characters and back", () => {
    for (let i = 0; i < 200; i++) {
      const id = newId("job");
      const name = pdfJobName(id);
      expect(name.length).toBeLessThanOrEqual(52);
      expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
      expect(jobIdFromPdfJobName(name)).toBe(id);
    }
    expect(pdfJobName("job_9aQm2LkT7cXv1B4nZp0RsWd8")).toBe("job-9a-qm2-lk-t7c-xv1-b4n-zp0-rs-wd8");
  });

  it.each([
    ["a name of another shape", "my-job"],
    ["too short a suffix", "job-abc"],
    ["a dash before a digit", "job-9a-2m2-lk-t7c-xv1-b4n-zp0-rs-wd8"],
  ])("should read no job id from %s", (_what, name) => {
    expect(jobIdFromPdfJobName(name)).toBeNull();
  });

  it("should refuse to name something that is not a job id", () => {
    expect(() => pdfJobName("file_9aQm2LkT7cXv1B4nZp0RsWd8")).toThrow();
  });
});

describe("derived ids", () => {
  it("should derive output file ids shaped like random ones, stable per job and index", () => {
    const a = outputFileId(TENANT, JOB_ID, 0);
    expect(a).toMatch(ID_PATTERN("file"));
    expect(outputFileId(TENANT, JOB_ID, 0)).toBe(a);
    expect(outputFileId(TENANT, JOB_ID, 1)).not.toBe(a);
    expect(outputFileId("ten_other", JOB_ID, 0)).not.toBe(a);
    // Every output id of a job starts with its output tag (the PdfJob's folio.dev/output-tag label).
    expect(outputTagOf(a)).toBe(outputTag(JOB_ID));
    expect(outputTagOf(outputFileId(TENANT, JOB_ID, 7))).toBe(outputTag(JOB_ID));
    expect(outputTag("job_" + "x".repeat(24))).not.toBe(outputTag(JOB_ID));
  });

  it("should read an output's file id from its key, and derive one for a key of another shape", () => {
    const id = outputFileId(TENANT, JOB_ID, 3);
    expect(fileIdFromKey(`${PREFIX}${id}`)).toBe(id);
    expect(fileIdFromKey("elsewhere/result.pdf")).toMatch(ID_PATTERN("file"));
    expect(fileIdFromKey("elsewhere/result.pdf")).toBe(fileIdFromKey("elsewhere/result.pdf"));
  });

  it("should give each event of a job its own stable webhook-id", () => {
    expect(webhookMessageId(JOB_ID, "job.succeeded")).toMatch(ID_PATTERN("msg"));
    expect(webhookMessageId(JOB_ID, "job.succeeded")).toBe(webhookMessageId(JOB_ID, "job.succeeded"));
    expect(webhookMessageId(JOB_ID, "job.canceled")).not.toBe(webhookMessageId(JOB_ID, "job.succeeded"));
  });
});

describe("spec validation", () => {
  const requests: Record<Operation, Record<string, unknown>> = {
    compress: { level: "high" },
    merge: { outline: "per_file" },
    split: { mode: "ranges", ranges: "1-3,4-" },
    convert: { to: "pdf" },
    protect: { user_password: "open sesame", owner_password: "admin", encryption: "aes-128", permissions: { print: "low" } },
    edit: { steps: [{ type: "rotate", angle: 90 }, { type: "unlock" }], password: "opens the input" },
    ocr: { languages: ["eng", "deu"], deskew: true },
  };

  it.each(Object.keys(requests) as Operation[])("should accept the API's parsed %s options with the passwords removed", (op) => {
    const options = redactOptions(op, OPTIONS_SCHEMAS[op].parse(requests[op]));
    const r = validatePdfJobSpec(spec({ operation: op, options, ...(op === "protect" ? { secretRef: { name: "s" } } : {}) }));
    expect(r.ok, JSON.stringify(r)).toBe(true);
  });

  it.each([
    [
      "a password in the options",
      { operation: "protect" as const, options: { user_password: "x" }, secretRef: { name: "s" } },
      "spec.options",
    ],
    ["options of another operation", { options: { outline: "keep" } }, "spec.options"],
    ["an invalid page range", { inputs: [{ ...spec().inputs[0]!, pages: "3-1" }] }, "spec.inputs.0.pages"],
    ["a webhook over plain http", { webhook: { url: "http://example.com" } }, "spec.webhook.url"],
  ])("should refuse %s", (_what, over, where) => {
    const r = validatePdfJobSpec(spec(over));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.message).toContain(where);
  });
});

describe("pdfJobToApiJob", () => {
  const outputs = [0, 1].map((i) => ({
    key: `${PREFIX}${outputFileId(TENANT, JOB_ID, i)}`,
    filename: `part-0${i + 1}.pdf`,
    contentType: "application/pdf",
    size: 100 + i,
    sha256: "c".repeat(64),
    pages: 2,
  }));
  const status: PdfJobStatus = {
    phase: "Succeeded",
    startTime: iso(2),
    completionTime: iso(20),
    expireTime: iso(3620),
    outputs,
    figures: { parts: 2 },
    webhook: {
      eventType: "job.succeeded",
      messageId: "msg_x",
      status: "failing",
      attempts: 2,
      lastAttemptTime: iso(30),
      nextAttemptTime: iso(300),
      lastError: "HTTP 500",
    },
  };
  const pj = pdfJob({
    spec: { operation: "split", options: { mode: "pages" }, webhook: { url: "https://h.example/x" }, metadata: { order: "42" } },
    status,
  });

  it("should produce a valid Job object", () => {
    expect(() => JobObject.parse(pdfJobToApiJob(pj))).not.toThrow();
  });

  it("should produce exactly what the embedded store produces for the same job", () => {
    const ms = (s: number): number => T0 + s * 1000;
    const row: JobRow = {
      id: JOB_ID,
      tenant_id: TENANT,
      operation: "split",
      status: "succeeded",
      created_at: ms(0),
      started_at: ms(2),
      completed_at: ms(20),
      expires_at: ms(3620),
      inputs: [
        {
          file_id: "file_Aa0Bb1Cc2Dd3Ee4Ff5Gg6Hh7",
          filename: "report.pdf",
          content_type: "application/pdf",
          size: 1000,
          sha256: "a".repeat(64),
          pages: 3,
          storage_key: INPUT_KEY,
        },
      ],
      options: { mode: "pages" },
      output_filename: null,
      result: { figures: { parts: 2 } },
      error: null,
      webhook_url: "https://h.example/x",
      metadata: { order: "42" },
      attempts: 1,
      retention_ms: 3_600_000,
    };
    const files: FileRow[] = outputs.map((o) => ({
      id: fileIdFromKey(o.key),
      tenant_id: TENANT,
      role: "output",
      job_id: JOB_ID,
      filename: o.filename,
      content_type: o.contentType,
      size: o.size,
      sha256: o.sha256,
      pages: o.pages,
      storage_key: o.key,
      created_at: ms(20),
      expires_at: ms(3620),
    }));
    const embedded = jobObject(row, files, { status: "failing", attempts: 2, last_attempt_at: ms(30), last_error: "HTTP 500" });
    expect(pdfJobToApiJob(pj)).toEqual(embedded);
  });

  it.each([
    [undefined, "queued"],
    ["Pending", "queued"],
    ["Running", "running"],
    ["Failed", "failed"],
    ["Canceled", "canceled"],
  ] as const)("should show phase %s as status %s, with a result only on success", (phase, apiStatus) => {
    const view = pdfJobToApiJob(
      pdfJob({ status: phase ? { phase, ...(phase === "Failed" ? { error: { code: "invalid_pdf", message: "no" } } : {}) } : {} }),
    );
    expect(view.status).toBe(apiStatus);
    expect(view.result).toBeNull();
    expect(view.error).toEqual(phase === "Failed" ? { code: "invalid_pdf", message: "no" } : null);
  });

  it("should show a pending webhook before any attempt, and none without a URL", () => {
    expect(pdfJobToApiJob(pdfJob({ spec: { webhook: { url: "https://h.example/x" } } })).webhook).toEqual({
      url: "https://h.example/x",
      status: "pending",
      attempts: 0,
      last_attempt_at: null,
      last_error: null,
    });
    expect(pdfJobToApiJob(pdfJob()).webhook).toBeNull();
  });
});
