/**
 * The PdfJob CRD's CEL rules on the real kube-apiserver (issue #10 item 16): a PdfJob whose input
 * keys lie outside its tenant's prefix, or whose secretRef names another object than its own
 * Secret, is refused at creation with the rule's message; a well-formed one is accepted. The
 * controller's own check of the same rules (for clusters with an older CRD) is unit-tested in
 * test/controller/spec-ownership.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pdfJobName, PDFJOB_GROUP, PDFJOB_KIND, PDFJOB_PLURAL, PDFJOB_VERSION } from "../../core/schemas/pdfjob.ts";
import { startControlPlane, type ControlPlane } from "../k8s/control-plane.ts";
import { loadKubeConfig } from "../k8s/kubeconfig.ts";
import { pdfJob, TENANT } from "../controller/fixtures.ts";
import { applyCrd, createRaw } from "./support.ts";

let cp: ControlPlane;
let kc: ReturnType<typeof loadKubeConfig>;
const OTHER = "ten_OtherTenantXXXXXXXXXXXXX";

beforeAll(async () => {
  cp = await startControlPlane();
  kc = loadKubeConfig(cp.kubeconfigs.admin);
  await applyCrd(kc);
}, 600_000);
afterAll(async () => {
  await cp?.stop();
});

let n = 0;
async function create(spec: Record<string, unknown>, secretRefOwn = false): Promise<string | null> {
  const base = pdfJob();
  const name = pdfJobName(`job_CelTest${String(++n).padStart(17, "0")}`);
  const body = {
    apiVersion: `${PDFJOB_GROUP}/${PDFJOB_VERSION}`,
    kind: PDFJOB_KIND,
    metadata: { name, namespace: "default" },
    spec: { ...base.spec, ...spec, ...(secretRefOwn ? { secretRef: { name } } : {}) },
  };
  try {
    await createRaw(kc, `/apis/${PDFJOB_GROUP}/${PDFJOB_VERSION}/namespaces/default/${PDFJOB_PLURAL}`, body);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

describe("PdfJob CEL rules on the apiserver", () => {
  const input = pdfJob().spec.inputs[0]!;

  it("accepts a PdfJob reading its own tenant's file with its own Secret", async () => {
    expect(await create({ operation: "protect", options: { encryption: "aes-256" } }, true)).toBeNull();
  });

  it.each([
    ["another tenant's file", `${OTHER}/file_Aa0Bb1Cc2Dd3Ee4Ff5Gg6Hh7`],
    ["a tenant id that merely starts like this one", `${TENANT}x/file_Aa0Bb1Cc2Dd3Ee4Ff5Gg6Hh7`],
    ["a climb out of the prefix", `${TENANT}/../${OTHER}/file_Aa0Bb1Cc2Dd3Ee4Ff5Gg6Hh7`],
    ["an empty segment", `${TENANT}//file_Aa0Bb1Cc2Dd3Ee4Ff5Gg6Hh7`],
  ])("refuses an input key that is %s", async (_s, key) => {
    const refused = await create({ inputs: [{ ...input, key }] });
    expect(refused).toMatch(/422/);
    expect(refused).toMatch(/tenant's prefix/);
  });

  it("refuses a secretRef to another object than the PdfJob's own Secret", async () => {
    const refused = await create({ operation: "protect", options: { encryption: "aes-256" }, secretRef: { name: "someone-elses-secret" } });
    expect(refused).toMatch(/422/);
    expect(refused).toMatch(/own Secret/);
  });
});
