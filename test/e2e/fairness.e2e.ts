/**
 * Fair queueing across tenants (issue #12), end to end: the controller runs at most
 * FOLIO_MAX_RUNNING_JOBS runner Jobs at once (2 here); tenant "big" has a backlog of
 * FOLIO_E2E_FAIRNESS_BACKLOG PdfJobs (default 30; `make bench-k8s` runs 1,000) queued behind
 * them, showing their place in status.queuePosition; tenant "small" then submits one job. It must
 * start when the next place frees — within one big job's run time — instead of after the backlog.
 * Never more than FOLIO_MAX_RUNNING_JOBS runner Jobs at once (sampled every 0.5 s throughout).
 * The controller is `folio controller` in a container of the API image; the runners are pods of
 * the runner image. The figures are printed.
 */
import type { CustomObjectsApi } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../core/ids.ts";
import {
  LABELS,
  MANAGED_BY,
  PDFJOB_ANNOTATIONS,
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
import { textPdf } from "../fixtures/pdf-fixtures.ts";
import type { FolioContainer } from "../k8s/folio-container.ts";
import { startReadyController } from "./containers.ts";
import type { S3Server } from "../s3/server.ts";
import { type E2eWorld, startE2eWorld, sleep, until, uploadPdf } from "./support.ts";
import path from "node:path";

const NS = "default";
const MAX_RUNNING = 2;
const BACKLOG = Number(process.env.FOLIO_E2E_FAIRNESS_BACKLOG ?? 30);
const CRD = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL, namespace: NS };

let s3: S3Server;
let store: S3ObjectStore;
let custom: CustomObjectsApi;
let controller: FolioContainer;
let world: E2eWorld;
let dir: string;

async function create(tenant: string, input: PdfJobInput, createdMs: number): Promise<string> {
  const jobId = newId("job");
  const name = pdfJobName(jobId);
  await custom.createNamespacedCustomObject({
    ...CRD,
    body: {
      apiVersion: PDFJOB_API_VERSION,
      kind: PDFJOB_KIND,
      metadata: {
        name,
        labels: { [LABELS.tenant]: tenant, [LABELS.jobId]: jobId, [LABELS.managedBy]: MANAGED_BY },
        annotations: { [PDFJOB_ANNOTATIONS.createdMs]: String(createdMs) },
        finalizers: [PDFJOB_FINALIZER],
      },
      spec: {
        tenant,
        operation: "compress",
        inputs: [input],
        options: { level: "lossless" },
        deadlineSeconds: 300,
        retentionSeconds: 3600,
      },
    },
  });
  return name;
}

const all = async (): Promise<PdfJob[]> => ((await custom.listNamespacedCustomObject(CRD)) as { items: PdfJob[] }).items;
const get = async (name: string): Promise<PdfJob> => (await custom.getNamespacedCustomObject({ ...CRD, name })) as PdfJob;

describe("fair queueing between tenants on a real control plane", () => {
  beforeAll(async () => {
    world = await startE2eWorld("folio-e2e-fair-");
    ({ dir, s3, store, custom } = world);
    // `folio controller` in a container of the API image, configured as the chart configures it.
    controller = await startReadyController(world.platform, {
      ...s3.env,
      FOLIO_CONTROLLER_WORKERS: "4",
      FOLIO_MAX_RUNNING_JOBS: String(MAX_RUNNING),
    });
  }, 600_000);

  afterAll(async () => {
    await controller?.stop();
    await controller?.cleanup();
    await world?.stop();
  });

  it(`starts another tenant's single job within one job's run time, behind a backlog of ${BACKLOG}`, { timeout: 1_200_000 }, async () => {
    const pdf = await textPdf(path.join(dir, "a.pdf"), 2, "fair");
    // The global bound, sampled all along: PdfJobs holding a runner Job that has not ended.
    const holding = (pjs: PdfJob[]): number =>
      pjs.filter((pj) => pj.status?.jobName && !["Succeeded", "Failed", "Canceled"].includes(pj.status.phase ?? "")).length;
    let maxRunning = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxRunning = Math.max(maxRunning, holding(await all()));
        await sleep(500);
      }
    })();
    const t0 = Date.now();
    const big: string[] = [];
    for (let i = 0; i < BACKLOG; i++) big.push(await create("big", await uploadPdf(store, "big", pdf), t0 + i));
    // Two run, the rest wait, each showing its place.
    await until("the backlog queued with positions", async () => {
      const jobs = (await all()).filter((pj) => pj.spec.tenant === "big");
      const running = jobs.filter((pj) => pj.status?.jobName);
      const placed = jobs.filter((pj) => !pj.status?.jobName && pj.status?.queuePosition);
      return running.length >= 1 && placed.length >= Math.min(BACKLOG - MAX_RUNNING, 10) ? true : undefined;
    });
    const snapshot = await all();
    const positions = snapshot.flatMap((pj) => (pj.status?.queuePosition ? [pj.status.queuePosition] : [])).sort((a, b) => a - b);
    expect(positions[0]).toBe(1);

    // The newcomer.
    const submitted = Date.now();
    const small = await create("small", await uploadPdf(store, "small", pdf), submitted);
    let shown: number | undefined;
    const startedAt = await until(
      "the small tenant's job to get its Job",
      async () => {
        const pj = await get(small);
        shown ??= pj.status?.queuePosition;
        return pj.status?.jobName ? Date.now() : undefined;
      },
      600_000,
    );
    const waited = (startedAt - submitted) / 1000;
    const smallDone = await until(
      "the small job to succeed",
      async () => {
        const pj = await get(small);
        return pj.status?.phase === "Succeeded" ? pj : undefined;
      },
      300_000,
    );
    // Run times of the big jobs that finished meanwhile (Job created → completion, from their status).
    const finished = (await all()).filter((pj) => pj.spec.tenant === "big" && pj.status?.phase === "Succeeded" && pj.status.startTime);
    const runs = finished
      .map((pj) => (Date.parse(pj.status!.completionTime!) - Date.parse(pj.status!.startTime!)) / 1000)
      .sort((a, b) => a - b);
    const maxRun = Math.max(...runs, (Date.parse(smallDone.status!.completionTime!) - Date.parse(smallDone.status!.startTime!)) / 1000);
    const bigLeft = (await all()).filter(
      (pj) => pj.spec.tenant === "big" && !["Succeeded", "Failed"].includes(pj.status?.phase ?? ""),
    ).length;
    sampling = false;
    await sampler;
    console.log(
      `fairness: FOLIO_MAX_RUNNING_JOBS=${MAX_RUNNING} (at most ${maxRunning} runner Jobs seen at once), tenant "big" ${BACKLOG} queued (${bigLeft} still unfinished when "small" ended); ` +
        `"small" shown at place ${shown ?? "—"}, started ${waited.toFixed(2)} s after submission; a big job runs ${runs[Math.floor(runs.length / 2)]?.toFixed(2) ?? "?"} s (median), ${maxRun.toFixed(2)} s (max)`,
    );
    expect(maxRunning).toBeGreaterThan(0);
    expect(maxRunning).toBeLessThanOrEqual(MAX_RUNNING);
    expect(bigLeft).toBeGreaterThan(0);
    // Within one job's run time (the place frees when a running big job ends), plus a second for the reconciles.
    expect(waited).toBeLessThanOrEqual(maxRun + 1.5);
    // The rest is not needed: deleting the PdfJobs lets the controller clean up.
    await Promise.all(big.map((name) => custom.deleteNamespacedCustomObject({ ...CRD, name }).catch(() => undefined)));
    await sleep(100);
  });
});
