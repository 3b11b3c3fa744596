/**
 * The controller end to end: a real kube-apiserver and kube-controller-manager with the local
 * kubelet (test/k8s/platform.ts), a real MinIO (test/s3/server.ts), the PdfJob CRD applied, and
 * the controller (controller/main.ts's startController) running in-process. Runner pods run
 * `node bin/folio.ts runner --pod` against the MinIO.
 */
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { createWriteStream } from "node:fs";
import { BatchV1Api, CoordinationV1Api, CustomObjectsApi, type KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childJobName } from "../../controller/job-template.ts";
import { startController, type Controller } from "../../controller/main.ts";
import { newId } from "../../core/ids.ts";
import {
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
import type { S3Server } from "../s3/server.ts";
import { type E2eWorld, startE2eWorld, runnerAccess, runnerTemplate, sleep, until, uploadPdf } from "./support.ts";
import { createLogger } from "../../core/logger.ts";

const NS = "default";
const TENANT = "ten_e2e";
const CRD = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL, namespace: NS };

let s3: S3Server;
let store: S3ObjectStore;
let kc: KubeConfig;
let custom: CustomObjectsApi;
let controller: Controller;
let dir: string;
let world: E2eWorld;

const upload = (file: string): Promise<PdfJobInput> => uploadPdf(store, TENANT, file);

async function createPdfJob(inputs: PdfJobInput[]): Promise<string> {
  const name = pdfJobName(newId("job"));
  const body = {
    apiVersion: PDFJOB_API_VERSION,
    kind: PDFJOB_KIND,
    metadata: { name, namespace: NS, finalizers: [PDFJOB_FINALIZER] },
    spec: { tenant: TENANT, operation: "merge", inputs, options: { outline: "keep" }, deadlineSeconds: 120, retentionSeconds: 3600 },
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

describe("the PdfJob controller on a real control plane", () => {
  beforeAll(async () => {
    world = await startE2eWorld("folio-e2e-");
    ({ dir, s3, store, kc, custom } = world);
    controller = startController({
      kubeConfig: kc,
      store,
      namespace: NS,
      workers: 2,
      leaderElection: { namespace: NS, name: "folio-controller", identity: "e2e-leader" },
      template: runnerTemplate(s3),
      prepareJob: runnerAccess(kc, s3),
      logger: createLogger({ level: "info" }, { component: "controller" }),
    });
    await controller.synced();
    await until("the controller to lead", () => Promise.resolve(controller.elector?.isLeader ? true : undefined), 60_000);
  });

  afterAll(async () => {
    await controller?.stop();
    await world?.stop();
  });

  it("should hold the leader Lease, and a second replica should wait as a follower", async () => {
    const lease = await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: NS, name: "folio-controller" });
    expect(lease.spec?.holderIdentity).toBe("e2e-leader");
    const follower = startController({
      kubeConfig: kc,
      store,
      namespace: NS,
      leaderElection: { namespace: NS, name: "folio-controller", identity: "e2e-follower", retryPeriodMs: 200 },
      template: runnerTemplate(s3),
      prepareJob: runnerAccess(kc, s3),
    });
    try {
      await follower.synced();
      await sleep(1500);
      expect(follower.elector?.isLeader).toBe(false);
      expect(controller.elector?.isLeader).toBe(true);
    } finally {
      await follower.stop();
    }
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

  it("should change nothing when an ended PdfJob is reconciled again", async () => {
    const a = await upload(await textPdf(path.join(dir, "c1.pdf"), 1, "gamma"));
    const b = await upload(await textPdf(path.join(dir, "c2.pdf"), 1, "gamma"));
    const name = await createPdfJob([a, b]);
    const ended = await terminal(name);
    expect(ended.status?.phase).toBe("Succeeded");
    const rv = ended.metadata.resourceVersion;
    // Let the cache catch up with the last write, then reconcile by hand, twice.
    await until(
      "the cache to catch up",
      () => Promise.resolve(controller.caches.pdfJob(`${NS}/${name}`)?.metadata.resourceVersion === rv ? true : undefined),
      30_000,
    );
    const first = await controller.reconciler.reconcile(`${NS}/${name}`);
    const second = await controller.reconciler.reconcile(`${NS}/${name}`);
    expect(first?.result.error).toBeUndefined();
    expect(first?.actions.filter((x) => x.action !== "requeueAfter")).toEqual([]);
    // At most the wake-up for the retention's end, whose delay shrinks with the clock.
    expect(second?.actions.filter((x) => x.action !== "requeueAfter")).toEqual([]);
    expect(second?.actions.map((x) => x.action)).toEqual(first?.actions.map((x) => x.action));
    expect((await getPdfJob(name)).metadata.resourceVersion).toBe(rv);
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
