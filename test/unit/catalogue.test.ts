import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { API_ERROR_EXTENSIONS, API_ERRORS, EXIT, JOB_ERRORS, JobError, toJobError } from "../../core/errors.ts";
import { ROOT } from "../helpers/tools.ts";

const apiMd = readFileSync(`${ROOT}/../shared/design/API.md`, "utf8");
const readme = readFileSync(`${ROOT}/README.md`, "utf8");

describe("error catalogue", () => {
  it("has every problem code API.md lists, and no other but the declared extensions", () => {
    const section = apiMd.slice(apiMd.indexOf("## Errors"), apiMd.indexOf("## Limits"));
    const codes = [...section.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]).filter((c) => c !== "errors");
    expect(new Set(Object.keys(API_ERRORS))).toEqual(new Set([...codes, ...API_ERROR_EXTENSIONS]));
    for (const c of API_ERROR_EXTENSIONS) expect(codes).not.toContain(c);
  });

  it("has every job error code API.md lists", () => {
    const start = apiMd.indexOf("Job error codes");
    const paragraph = apiMd.slice(start, apiMd.indexOf("\n\n", start));
    const codes = [...paragraph.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
    expect(codes.length).toBeGreaterThanOrEqual(8);
    for (const c of codes) expect(Object.keys(JOB_ERRORS)).toContain(c);
  });

  it("is documented in the README (extensions: or in docs/) with the runner's exit codes", () => {
    const docs = readdirSync(`${ROOT}/docs`)
      .filter((f) => f.endsWith(".md"))
      .map((f) => readFileSync(`${ROOT}/docs/${f}`, "utf8"))
      .join("\n");
    for (const code of [...Object.keys(API_ERRORS), ...Object.keys(JOB_ERRORS)]) {
      const where = (API_ERROR_EXTENSIONS as readonly string[]).includes(code) ? readme + docs : readme;
      expect(where, code).toContain(`\`${code}\``);
    }
    for (const [name, value] of Object.entries(EXIT)) expect(readme, name).toMatch(new RegExp(`\\| ${value} \\|`));
  });

  it("maps bad input to the exit code podFailurePolicy fails fast on", () => {
    expect(new JobError("invalid_pdf", "x").exitCode).toBe(EXIT.BAD_INPUT);
    expect(new JobError("timeout", "x").exitCode).toBe(EXIT.TIMEOUT);
    expect(new JobError("internal_error", "x").exitCode).toBe(EXIT.INTERNAL);
  });

  it("turns unknown errors into internal_error without leaking their message", () => {
    const err = toJobError(new Error("ENOENT: /var/lib/folio/secret/path"));
    expect(err.code).toBe("internal_error");
    expect(err.message).not.toContain("/var/lib");
  });
});

describe("catalogue, OpenAPI document and README agree", () => {
  it("describes every problem code and job error code in the OpenAPI document, with the catalogue's status", async () => {
    const { buildOpenApi } = await import("../../api/openapi.ts");
    const doc = buildOpenApi("test") as any;
    expect(Object.keys(doc["x-problem-codes"]).sort()).toEqual(Object.keys(API_ERRORS).sort());
    for (const [code, v] of Object.entries(API_ERRORS)) expect(doc["x-problem-codes"][code].status, code).toBe(v.status);
    const jobCodes = Object.keys(JOB_ERRORS).filter((c) => c !== "validation_failed");
    expect(Object.keys(doc["x-job-error-codes"]).sort()).toEqual(jobCodes.sort());
    expect(doc.components.schemas.Job.properties.error.anyOf[0].properties.code.enum).toEqual(expect.arrayContaining(jobCodes));
    // Every problem response an operation documents points at the Problem schema.
    const merge = doc.paths["/v1/pdf/merge"].post.responses;
    for (const status of ["401", "403", "409", "413", "415", "422", "429", "500"]) {
      expect(merge[status].content["application/problem+json"].schema.$ref, status).toBe("#/components/schemas/Problem");
    }
  });
});
