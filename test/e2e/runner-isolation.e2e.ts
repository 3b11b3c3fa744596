/**
 * Isolation of a runner pod, proved from inside one (issue #11). The pod is the controller's own:
 * the Job of controller/job-template.ts for a PdfJob, with its access Secret
 * (controller/runner-access.ts), run by the local kubelet from the runner image with runc — only
 * its command is replaced by a probe (Node, which the image has) that reports what it can do in
 * its termination message:
 *
 * - it cannot write its root file system, runs as 10001 with no capabilities, no_new_privs and a
 *   seccomp filter, and sees no service-account token;
 * - it has no storage credentials, and reaches the object store — its own input through its
 *   presigned URL — but not another job's object (no URL; its own URL edited: refused;
 *   anonymous: refused), not the API server, not another service on the node, not the internet.
 *
 * Then a real job: a document that makes the runner exceed its memory limit (a conversion in a
 * runner limited to 200 MiB) ends its PdfJob Failed with `limit_exceeded`, neither hanging nor
 * `internal_error`.
 */
import { createServer, type Server } from "node:net";
import path from "node:path";
import { BatchV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1Job } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildJob, RUNNER_CONTAINER } from "../../controller/job-template.ts";
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
  type PdfJobSpec,
} from "../../core/schemas/pdfjob.ts";
import { S3ObjectStore } from "../../core/storage/s3-store.ts";
import { buildOfficeFixtures } from "../fixtures/office-fixtures.ts";
import { textPdf } from "../fixtures/pdf-fixtures.ts";
import type { FolioContainer } from "../k8s/folio-container.ts";
import { startReadyController } from "./containers.ts";
import { endpointOf, type Platform } from "../k8s/platform.ts";
import type { S3Server } from "../s3/server.ts";
import { type E2eWorld, startE2eWorld, runnerAccess, runnerTemplate, until, uploadPdf } from "./support.ts";

const NS = "default";
const TENANT = "ten_isolated";
const CRD = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL, namespace: NS };

let platform: Platform;
let s3: S3Server;
let store: S3ObjectStore;
let kc: KubeConfig;
let dir: string;
let world: E2eWorld;
let other: Server;
let controller: FolioContainer | undefined;

/**
 * What the probe finds, as JSON in its termination message. PROBE_TARGETS (JSON) names what to
 * try: its own input key, another job's key, and the addresses it must not reach.
 */
const PROBE = `
const fs = require("node:fs"), net = require("node:net");
const t = JSON.parse(process.env.PROBE_TARGETS);
const access = JSON.parse(process.env.FOLIO_RUNNER_ACCESS);
const connects = (host, port) => new Promise((resolve) => {
  const s = net.connect({ host, port, timeout: 3000 });
  s.once("connect", () => { s.destroy(); resolve("connected"); });
  s.once("timeout", () => { s.destroy(); resolve("timeout"); });
  s.once("error", (e) => resolve(e.code));
});
const status = (url) => fetch(url, { signal: AbortSignal.timeout(5000) }).then((r) => r.status, (e) => String(e.cause?.code ?? e.name));
(async () => {
  const r = {};
  try { fs.writeFileSync("/probe", "x"); r.rootWrite = "written"; } catch (e) { r.rootWrite = e.code; }
  try { fs.writeFileSync("/tmp/probe", "x"); r.tmpWrite = "written"; } catch (e) { r.tmpWrite = e.code; }
  const st = fs.readFileSync("/proc/self/status", "utf8");
  const field = (k) => (new RegExp("^" + k + ":\\\\s+(\\\\S+)", "m").exec(st) || [])[1];
  r.uid = process.getuid(); r.gid = process.getgid();
  r.capEff = field("CapEff"); r.capBnd = field("CapBnd"); r.noNewPrivs = field("NoNewPrivs"); r.seccomp = field("Seccomp");
  r.token = fs.existsSync("/var/run/secrets/kubernetes.io/serviceaccount");
  r.credentials = Object.keys(process.env).filter((k) => k.startsWith("AWS_") || k.startsWith("FOLIO_S3_"));
  r.ownInput = await status(access.get[t.own]);
  r.otherNoUrl = access.get[t.other] === undefined;
  r.otherForged = await status(access.get[t.own].replace("/" + t.own + "?", "/" + t.other + "?"));
  r.otherAnonymous = await status(t.anonymous);
  r.apiServer = await connects(t.apiHost, t.apiPort);
  r.otherService = await connects("127.0.0.1", t.otherPort);
  r.internet = await connects("1.1.1.1", 443);
  fs.writeFileSync("/dev/termination-log", JSON.stringify(r));
})();
`;

/** A PdfJob object as the API creates it (not submitted: the probe's Job is made from it). */
function pdfJob(inputs: PdfJobInput[], operation: PdfJobSpec["operation"] = "compress"): PdfJob {
  const jobId = newId("job");
  return {
    apiVersion: PDFJOB_API_VERSION,
    kind: PDFJOB_KIND,
    metadata: { name: pdfJobName(jobId), namespace: NS, uid: `uid-${jobId}`, labels: {} },
    spec: { tenant: TENANT, operation, inputs, options: {}, deadlineSeconds: 120, retentionSeconds: 3600 },
  } as unknown as PdfJob;
}

describe("a runner pod, from inside", () => {
  beforeAll(async () => {
    world = await startE2eWorld("folio-e2e-isolation-");
    ({ dir, platform, s3, store, kc } = world);
    // Another service on the node (as the API's or a database's port would be).
    other = createServer((s) => s.end());
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
  });

  afterAll(async () => {
    await controller?.stop();
    await controller?.cleanup();
    other?.close();
    await world?.stop();
  });

  it("cannot write its root, runs as 10001 without capabilities, has no token and no credentials, and reaches only its own objects", async () => {
    const own = await uploadPdf(store, TENANT, await textPdf(path.join(dir, "own.pdf"), 1, "own"));
    const theirs = await uploadPdf(store, "ten_other", await textPdf(path.join(dir, "theirs.pdf"), 1, "theirs"));
    const pj = pdfJob([own]);
    const job: V1Job = buildJob(pj, pj.spec, runnerTemplate(s3));
    const api = endpointOf(platform.controlPlane.server);
    const container = job.spec!.template.spec!.containers[0]!;
    container.command = ["node", "-e", PROBE];
    container.env!.push({
      name: "PROBE_TARGETS",
      value: JSON.stringify({
        own: own.key,
        other: theirs.key,
        anonymous: `${s3.endpoint}/${s3.bucket}/${theirs.key}`,
        apiHost: api.host,
        apiPort: api.port,
        otherPort: (other.address() as { port: number }).port,
      }),
    });
    // The job's access Secret, as the controller creates it before the Job.
    await runnerAccess(kc, s3)(NS, job);
    // Owner references name a PdfJob that was never created: without them the objects stand alone.
    delete job.metadata!.ownerReferences;
    await kc.makeApiClient(BatchV1Api).createNamespacedJob({ namespace: NS, body: job });
    const core = kc.makeApiClient(CoreV1Api);
    const report = await until(
      "the probe's report",
      async () => {
        const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: `batch.kubernetes.io/job-name=${job.metadata!.name!}` });
        const term = pods.items[0]?.status?.containerStatuses?.find((c) => c.name === RUNNER_CONTAINER)?.state?.terminated;
        return term ? (JSON.parse(term.message ?? "{}") as Record<string, unknown>) : undefined;
      },
      180_000,
    );
    expect(report).toEqual({
      rootWrite: "EROFS",
      tmpWrite: "written",
      uid: 10001,
      gid: 10001,
      capEff: "0000000000000000",
      capBnd: "0000000000000000",
      noNewPrivs: "1",
      seccomp: "2",
      token: false,
      credentials: [],
      ownInput: 200,
      otherNoUrl: true,
      otherForged: 403,
      otherAnonymous: 403,
      // Loopback of its own network namespace: nothing listens there but the object store's relay.
      apiServer: "ECONNREFUSED",
      otherService: "ECONNREFUSED",
      internet: "ENETUNREACH",
    });
  });

  it("ends a job whose document exceeds the runner's memory limit with limit_exceeded, not a hang or internal_error", async () => {
    const fx = await buildOfficeFixtures(path.join(dir, "office"));
    const input = { ...(await uploadPdf(store, TENANT, fx.smallDocx)), filename: "report.docx", contentType: "application/octet-stream" };
    // `folio controller` in a container of the API image, its runners limited to 200 MiB.
    controller = await startReadyController(world.platform, {
      ...s3.env,
      FOLIO_CONTROLLER_WORKERS: "1",
      // LibreOffice alone needs more than this to start.
      FOLIO_RUNNER_RESOURCES: JSON.stringify({ requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "1", memory: "200Mi" } }),
    });
    const name = pdfJobName(newId("job"));
    const custom = kc.makeApiClient(CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      ...CRD,
      body: {
        apiVersion: PDFJOB_API_VERSION,
        kind: PDFJOB_KIND,
        metadata: { name, namespace: NS, finalizers: [PDFJOB_FINALIZER] },
        spec: {
          tenant: TENANT,
          operation: "convert",
          inputs: [input],
          options: { to: "pdf" },
          deadlineSeconds: 240,
          retentionSeconds: 3600,
        },
      },
    });
    const ended = await until(
      `PdfJob ${name} to end`,
      async () => {
        const pj = (await custom.getNamespacedCustomObject({ ...CRD, name })) as PdfJob;
        return pj.status?.phase === "Succeeded" || pj.status?.phase === "Failed" ? pj : undefined;
      },
      280_000,
    );
    expect(ended.status?.phase).toBe("Failed");
    expect(ended.status?.error).toEqual({ code: "limit_exceeded", message: "The document needs more memory than the runner may use." });
  });
});
