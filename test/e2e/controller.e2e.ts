/**
 * The controller end to end: a real kube-apiserver and kube-controller-manager with the local
 * kubelet (test/k8s/platform.ts), a real MinIO (test/s3/server.ts), the PdfJob CRD applied, and
 * `folio controller` in a container of the API image, configured through its environment as the
 * chart configures it (test/e2e/containers.ts). Runner pods run the runner image against the
 * MinIO. The suite sees the controller as a cluster does: through the objects it writes and its
 * metrics endpoint. (Two replicas and the Lease's hand-over: test/e2e/operator-failover.e2e.ts.)
 */
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { createWriteStream } from "node:fs";
import {
  BatchV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childJobName } from "../../controller/job-template.ts";
import { newId } from "../../core/ids.ts";
import {
  LABELS,
  PDFJOB_API_VERSION,
  PDFJOB_FINALIZER,
  PDFJOB_GROUP,
  PDFJOB_KIND,
  PDFJOB_PLURAL,
  PDFJOB_VERSION,
  pdfJobName,
  type PdfJob,
  type PdfJobInput,
} from "../../core/schemas/pdfjob.ts";
import { S3ObjectStore } from "../../core/storage/s3-store.ts";
import { notPdf, textPdf } from "../fixtures/pdf-fixtures.ts";
import { pageCount } from "../helpers/tools.ts";
import { metricSum } from "../helpers/prometheus-text.ts";
import { startReadyController, type ReadyController } from "./containers.ts";
import { type E2eWorld, startE2eWorld, sleep, until, uploadPdf } from "./support.ts";

const NS = "default";
const TENANT = "ten_e2e";
const CRD = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL, namespace: NS };

let store: S3ObjectStore;
let kc: KubeConfig;
let custom: CustomObjectsApi;
let controller: ReadyController;
let dir: string;
let world: E2eWorld;

const upload = (file: string): Promise<PdfJobInput> => uploadPdf(store, TENANT, file);

async function createPdfJob(inputs: PdfJobInput[], opts: { withSecret?: boolean } = {}): Promise<string> {
  const name = pdfJobName(newId("job"));
  const body = {
    apiVersion: PDFJOB_API_VERSION,
    kind: PDFJOB_KIND,
    metadata: { name, namespace: NS, finalizers: [PDFJOB_FINALIZER] },
    spec: {
      tenant: TENANT,
      operation: "merge",
      inputs,
      options: { outline: "keep" },
      deadlineSeconds: 120,
      retentionSeconds: 3600,
      ...(opts.withSecret ? { secretRef: { name } } : {}),
    },
  };
  await custom.createNamespacedCustomObject({ ...CRD, body });
  return name;
}

const getPdfJob = async (name: string): Promise<PdfJob> => (await custom.getNamespacedCustomObject({ ...CRD, name })) as PdfJob;

async function terminal(name: string): Promise<PdfJob> {
  return until(`PdfJob ${name} to end`, async () => {
    const pj = await getPdfJob(name);
    return pj.status?.phase === "Succeeded" || pj.status?.phase === "Failed" ? pj : undefined;
  });
}

/** A metric of the controller container, summed over its label sets (undefined when absent). */
async function metric(name: string, labels = ""): Promise<number | undefined> {
  const res = await fetch(`http://127.0.0.1:${controller.metricsPort}/metrics`);
  return metricSum(await res.text(), name, labels);
}

describe("the PdfJob controller on a real control plane", () => {
  beforeAll(async () => {
    world = await startE2eWorld("folio-e2e-");
    ({ dir, store, kc, custom } = world);
    controller = await startReadyController(world.platform, { ...world.s3.env, FOLIO_CONTROLLER_WORKERS: "2" });
    await until("the controller to lead", async () => ((await metric("folio_controller_leader")) === 1 ? true : undefined), 60_000);
  }, 600_000);

  afterAll(async () => {
    await controller?.stop();
    await controller?.cleanup();
    await world?.stop();
  });

  it("should hold the leader Lease under its pod name", async () => {
    const lease = await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: NS, name: "folio-controller" });
    expect(lease.spec?.holderIdentity).toMatch(/^folio-controller_[0-9a-f]{8}$/);
    expect(new Date(lease.spec?.renewTime ?? 0).getTime()).toBeGreaterThan(Date.now() - 60_000);
  });

  it("should merge inputs from S3 into an output in S3 and reach Succeeded", async () => {
    const a = await upload(await textPdf(path.join(dir, "a.pdf"), 3, "alpha"));
    const b = await upload(await textPdf(path.join(dir, "b.pdf"), 2, "beta"));
    const name = await createPdfJob([a, b]);
    const pj = await terminal(name);
    expect(pj.status?.error).toBeUndefined();
    expect(pj.status?.phase).toBe("Succeeded");
    const outputs = pj.status?.outputs ?? [];
    expect(outputs).toHaveLength(1);
    const out = outputs[0]!;
    // Independently of the runner's report: fetch the object and count its pages.
    const file = path.join(dir, "merged.pdf");
    await pipeline(await store.get(out.key), createWriteStream(file));
    expect(await pageCount(file)).toBe(5);
    expect(out.pages).toBe(5);
    // The inputs are deleted once the job ended (API.md "Retention").
    expect(pj.status?.inputsDeletedTime).toBeDefined();
    expect(await store.exists(a.key)).toBe(false);
    expect(await store.exists(b.key)).toBe(false);
  });

  it("should start no runner for a PdfJob until the Secret it names exists", async () => {
    // An API replica stopped between writing the PdfJob and its Secret: the client's retry
    // writes the Secret later (test/api/kubernetes-backend.test.ts).
    const a = await upload(await textPdf(path.join(dir, "s1.pdf"), 1, "secret"));
    const b = await upload(await textPdf(path.join(dir, "s2.pdf"), 1, "kept"));
    const name = await createPdfJob([a, b], { withSecret: true });
    await sleep(4000);
    const jobs = await kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: NS });
    expect(jobs.items.map((j) => j.metadata?.name)).not.toContain(childJobName(await getPdfJob(name)));
    expect((await getPdfJob(name)).status?.jobName).toBeUndefined();
    await kc.makeApiClient(CoreV1Api).createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name }, stringData: { webhook_secrets: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" } },
    });
    const pj = await terminal(name);
    expect(pj.status?.error).toBeUndefined();
    expect(pj.status?.phase).toBe("Succeeded");
  });

  it("should change nothing when an ended PdfJob is reconciled again", async () => {
    const a = await upload(await textPdf(path.join(dir, "c1.pdf"), 1, "gamma"));
    const b = await upload(await textPdf(path.join(dir, "c2.pdf"), 1, "gamma"));
    const name = await createPdfJob([a, b]);
    const ended = await terminal(name);
    expect(ended.status?.phase).toBe("Succeeded");
    // The controller's own writes settle (inputs deleted, recorded in status)…
    const settled = await until("the ended PdfJob to settle", async () => {
      const before = await getPdfJob(name);
      await sleep(2_000);
      const after = await getPdfJob(name);
      return before.metadata.resourceVersion === after.metadata.resourceVersion ? after : undefined;
    });
    // …then two edits that are not the controller's wake it twice: each is a watch event, so a reconcile.
    const patch = (n: number): Promise<unknown> =>
      custom.patchNamespacedCustomObject(
        { ...CRD, name, body: { metadata: { annotations: { "e2e.folio.dev/touch": String(n) } } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    const reconciles = (await metric("folio_controller_reconcile_total")) ?? 0;
    const errorsBefore = (await metric("folio_controller_reconcile_total", 'result="error"')) ?? 0;
    await patch(1);
    await until("a reconcile of the touched PdfJob", async () =>
      ((await metric("folio_controller_reconcile_total")) ?? 0) > reconciles ? true : undefined,
    );
    await patch(2);
    await until("a second reconcile", async () =>
      ((await metric("folio_controller_reconcile_total")) ?? 0) > reconciles + 1 ? true : undefined,
    );
    await sleep(2_000); // anything the reconciles would write has been written by now
    const touched = await getPdfJob(name);
    // Only our two annotation writes changed it: the status is what it was, and no second Job was made.
    expect(touched.status).toEqual(settled.status);
    expect(Number(touched.metadata.generation)).toBe(Number(settled.metadata.generation));
    const jobs = await kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: NS, labelSelector: `${LABELS.pdfJob}=${name}` });
    // (The ended runner Job may already be collected: none, or the one it had.)
    for (const j of jobs.items) expect(j.metadata?.name).toBe(childJobName(ended));
    expect(jobs.items.length).toBeLessThanOrEqual(1);
    // No reconcile of the touched PdfJob failed (earlier tests' lost write races count before this).
    expect(((await metric("folio_controller_reconcile_total", 'result="error"')) ?? 0) - errorsBefore).toBe(0);
  });

  it("should delete the outputs and let the PdfJob go when it is deleted (finalizer)", async () => {
    const a = await upload(await textPdf(path.join(dir, "d1.pdf"), 2, "delta"));
    const b = await upload(await textPdf(path.join(dir, "d2.pdf"), 2, "delta"));
    const name = await createPdfJob([a, b]);
    const ended = await terminal(name);
    expect(ended.status?.error).toBeUndefined();
    const key = ended.status?.outputs?.[0]?.key;
    expect(key).toBeDefined();
    expect(await store.exists(key!)).toBe(true);
    await custom.deleteNamespacedCustomObject({ ...CRD, name });
    await until(
      `PdfJob ${name} to be gone`,
      async () => {
        try {
          await getPdfJob(name);
          return undefined;
        } catch (err) {
          if ((err as { code?: number }).code === 404) return true;
          throw err;
        }
      },
      60_000,
    );
    expect(await store.exists(key!)).toBe(false);
  });

  it("should fail a job with a bad input with the runner's error code, without retrying (podFailurePolicy)", async () => {
    const bad = await upload(await notPdf(path.join(dir, "bad.pdf")));
    const good = await upload(await textPdf(path.join(dir, "good.pdf"), 1, "good"));
    const name = await createPdfJob([good, bad]);
    const pj = await terminal(name);
    expect(pj.status?.phase).toBe("Failed");
    // A text file with a .pdf name among the inputs: the runner exits 3 (BAD_INPUT) with invalid_pdf.
    expect(pj.status?.error?.code).toBe("invalid_pdf");
    expect(pj.status?.conditions?.find((c) => c.type === "Succeeded")).toMatchObject({ status: "False", reason: "InvalidPdf" });
    const job = await kc.makeApiClient(BatchV1Api).readNamespacedJob({ namespace: NS, name: childJobName(pj) });
    const failed = job.status?.conditions?.find((c) => c.type === "Failed" && c.status === "True");
    expect(failed?.reason).toBe("PodFailurePolicy");
    expect(job.status?.failed).toBe(1);
  });
});
