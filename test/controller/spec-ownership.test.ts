/**
 * The controller does not trust a PdfJob's spec (issue #10 item 16): input keys outside the
 * tenant's prefix and a Secret that is not the PdfJob's own end the PdfJob Failed before any Job
 * exists, and such keys are never deleted either. The same rules as CEL in the CRD are checked
 * against the real apiserver in test/e2e/spec-ownership.e2e.ts.
 */
import { describe, expect, it } from "vitest";
import { decide, type Action } from "../../controller/decide.ts";
import { isOwnResultKey, isTenantKey, specOwnershipProblem } from "../../controller/validate.ts";
import type { PdfJob, PdfJobStatus } from "../../core/schemas/pdfjob.ts";
import { at, INPUT_KEY, JOB_ID, pdfJob, PREFIX, TEMPLATE, TENANT } from "./fixtures.ts";

const OTHER = "ten_OtherTenantXXXXXXXXXXXXX";
const statusOf = (a: Action[]): PdfJobStatus => (a.find((x) => x.action === "updateStatus") as { status: PdfJobStatus }).status;

describe("isTenantKey", () => {
  it.each([
    ["an upload of the tenant", `${TENANT}/file_x`, true],
    ["an output under the tenant's job prefix", `${PREFIX}file_y`, true],
    ["another tenant's file", `${OTHER}/file_x`, false],
    ["a tenant whose id extends this one's", `${TENANT}2/file_x`, false],
    ["a climb out of the prefix", `${TENANT}/../${OTHER}/file_x`, false],
    ["an empty segment", `${TENANT}//file_x`, false],
    ["a dot segment", `${TENANT}/./file_x`, false],
    ["the bare prefix", `${TENANT}/`, false],
  ])("%s", (_s, key, ok) => {
    expect(isTenantKey(TENANT, key)).toBe(ok);
  });
});

describe("decide with a foreign spec", () => {
  const cases: [string, Partial<PdfJob["spec"]>, RegExp][] = [
    [
      "an input key of another tenant",
      { inputs: [{ ...pdfJob().spec.inputs[0]!, key: `${OTHER}/file_Aa0Bb1Cc2Dd3Ee4Ff5Gg6Hh7` }] },
      /inputs\[0\]\.key is not under the tenant's prefix/,
    ],
    ["a key climbing out of the prefix", { inputs: [{ ...pdfJob().spec.inputs[0]!, key: `${TENANT}/../${OTHER}/f` }] }, /inputs\[0\]\.key/],
    [
      "another PdfJob's Secret",
      { operation: "protect", options: { encryption: "aes-256" }, secretRef: { name: "pdfjob-someone-else" } },
      /own Secret/,
    ],
  ];
  it.each(cases)("%s: Failed with validation_failed, no Job, nothing of the other tenant deleted", (_s, over, message) => {
    const pj = pdfJob({ spec: over });
    const actions = decide(pj, null, at(1), { template: TEMPLATE });
    expect(actions.map((a) => a.action)).not.toContain("createJob");
    expect(statusOf(actions)).toMatchObject({
      phase: "Failed",
      error: { code: "validation_failed", message: expect.stringMatching(message) },
    });
    for (const a of actions) if (a.action === "deleteStorage") for (const k of a.keys) expect(isTenantKey(TENANT, k)).toBe(true);
  });

  it("the PdfJob's own Secret and the tenant's keys pass", () => {
    const pj = pdfJob();
    expect(specOwnershipProblem(pj, pj.spec)).toBeNull();
    const withSecret = pdfJob({ spec: { operation: "protect", options: { encryption: "aes-256" } } });
    const own = { ...withSecret, spec: { ...withSecret.spec, secretRef: { name: withSecret.metadata.name } } };
    expect(specOwnershipProblem(own, own.spec)).toBeNull();
    expect(decide(pj, null, at(1), { template: TEMPLATE }).map((a) => a.action)).toContain("createJob");
    expect(INPUT_KEY.startsWith(`${TENANT}/`)).toBe(true);
  });
});

describe("the runner's stored result", () => {
  it("is read only from the job's own prefix", () => {
    const pj = pdfJob();
    expect(isOwnResultKey(pj, `${PREFIX}result.json`)).toBe(true);
    expect(isOwnResultKey(pj, `${OTHER}/${JOB_ID}/result.json`)).toBe(false);
    expect(isOwnResultKey(pj, `${PREFIX}../../${OTHER}/x/result.json`)).toBe(false);
  });
});
