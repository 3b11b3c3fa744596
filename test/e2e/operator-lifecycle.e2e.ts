/**
 * The PdfJob lifecycle at its edges, on the real control plane (test/k8s/platform.ts), the local
 * kubelet and a real MinIO (test/s3/server.ts), with `folio controller` in containers of the API
 * image (test/e2e/containers.ts), configured through their environment as the chart does:
 *
 * - a hung runner: the real runner, pointed at a storage endpoint that accepts connections and
 *   never answers, is stopped by the Job's activeDeadlineSeconds and the PdfJob fails `timeout`;
 * - deleting a PdfJob whose runner is running removes the PdfJob, its Job, its pod, its local
 *   process and every storage object of the job (inputs and the outputs prefix);
 * - the "restricted" Pod Security level admits the runner pods (and rejects a pod that is not
 *   hardened, so the check can fail);
 * - the CEL rule rejects a `spec` edit (422) while metadata and status edits go through.
 *
 * Two controllers run, each watching one namespace: `folio-restricted` (enforce=restricted) with
 * the ordinary settings, and `folio-hung` whose runners get the silent storage endpoint
 * (FOLIO_RUNNER_S3_ENDPOINT, which the presigned URLs name) and a runner timeout of an hour
 * (FOLIO_RUNNER_TIMEOUT_MS: only the Job's deadline can end them).
 */
import { createServer, type Server, type Socket } from "node:net";
import path from "node:path";
import { Readable } from "node:stream";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import {
  ApiException,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
import { jobStoragePrefix } from "../../core/schemas/storage-keys.ts";
import { S3ObjectStore } from "../../core/storage/s3-store.ts";
import { textPdf } from "../fixtures/pdf-fixtures.ts";
import { runnerImage } from "../k8s/images.ts";
import type { S3Server } from "../s3/server.ts";
import { startReadyController, type ReadyController } from "./containers.ts";
import { type E2eWorld, startE2eWorld, until, uploadPdf } from "./support.ts";

const RESTRICTED = "folio-restricted";
const HUNG = "folio-hung";
const TENANT = "ten_lifecycle";
const CRD = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL };
const mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

let s3: S3Server;
let store: S3ObjectStore;
let kc: KubeConfig;
let custom: CustomObjectsApi;
let core: CoreV1Api;
let batch: BatchV1Api;
let controllers: ReadyController[] = [];
let dir: string;
let world: E2eWorld;

/** A TCP server that accepts connections and never answers: storage that hangs. */
let silent: { server: Server; sockets: Set<Socket>; endpoint: string };
/** Connections the silent server has accepted: runners that tried to fetch their inputs. */
let silentConnections = 0;

/** The HTTP status of a call and, for an API error, its Status message; rethrows other errors. */
async function statusOf(call: () => Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call();
    return { code: 200, message: "" };
  } catch (err) {
    if (!(err instanceof ApiException)) throw err;
    const body: unknown = typeof err.body === "string" ? JSON.parse(err.body) : err.body;
    const message = (body as { message?: unknown } | null)?.message;
    return { code: err.code, message: typeof message === "string" ? message : "" };
  }
}

const gone = async (read: () => Promise<unknown>): Promise<true | undefined> => ((await statusOf(read)).code === 404 ? true : undefined);

async function startSilentServer(): Promise<typeof silent> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return { server, sockets, endpoint: `http://127.0.0.1:${port}` };
}

const upload = (file: string): Promise<PdfJobInput> => uploadPdf(store, TENANT, file);

async function twoInputs(tag: string): Promise<PdfJobInput[]> {
  return [
    await upload(await textPdf(path.join(dir, `${tag}-1.pdf`), 2, tag)),
    await upload(await textPdf(path.join(dir, `${tag}-2.pdf`), 1, tag)),
  ];
}

async function createPdfJob(namespace: string, inputs: PdfJobInput[], deadlineSeconds: number, jobId = newId("job")): Promise<string> {
  const name = pdfJobName(jobId);
  const body = {
    apiVersion: PDFJOB_API_VERSION,
    kind: PDFJOB_KIND,
    metadata: { name, namespace, finalizers: [PDFJOB_FINALIZER] },
    spec: { tenant: TENANT, operation: "merge", inputs, options: { outline: "keep" }, deadlineSeconds, retentionSeconds: 3600 },
  };
  await custom.createNamespacedCustomObject({ ...CRD, namespace, body });
  return name;
}

const getPdfJob = async (namespace: string, name: string): Promise<PdfJob> =>
  (await custom.getNamespacedCustomObject({ ...CRD, namespace, name })) as PdfJob;

async function terminal(namespace: string, name: string, timeoutMs = 120_000): Promise<PdfJob> {
  return until(
    `PdfJob ${namespace}/${name} to end`,
    async () => {
      const pj = await getPdfJob(namespace, name);
      return pj.status?.phase === "Succeeded" || pj.status?.phase === "Failed" ? pj : undefined;
    },
    timeoutMs,
  );
}

/** The local processes the kubelet ran for a PdfJob's pods (by the pods' folio.dev/pdfjob name prefix). */
const localPods = (namespace: string, jobName: string): ReturnType<NonNullable<E2eWorld["platform"]["kubelet"]>["pods"]> =>
  (world.platform.kubelet?.pods() ?? []).filter((p) => p.namespace === namespace && p.name.startsWith(`${jobName}-`));

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
}

/** A namespace, and its default ServiceAccount (pod admission needs it; its controller makes it). */
async function createNamespace(name: string, labels: Record<string, string> = {}): Promise<void> {
  await core.createNamespace({ body: { metadata: { name, labels } } });
  await until(
    `the default ServiceAccount in ${name}`,
    async () =>
      (await statusOf(() => core.readNamespacedServiceAccount({ namespace: name, name: "default" }))).code === 200 ? true : undefined,
    60_000,
  );
}

/** `folio controller` watching `namespace` only (its Lease there too), with `env` on top of the store's settings. */
async function startNamespaceController(namespace: string, env: Record<string, string> = {}): Promise<ReadyController> {
  const c = await startReadyController(
    world.platform,
    { ...s3.env, FOLIO_CONTROLLER_NAMESPACE: namespace, ...env },
    [],
    `folio-controller-${namespace}`,
  );
  controllers.push(c);
  return c;
}

describe("the PdfJob lifecycle on a real control plane", () => {
  beforeAll(async () => {
    [world, silent] = await Promise.all([startE2eWorld("folio-e2e-lifecycle-"), startSilentServer()]);
    ({ dir, s3, store, kc, custom } = world);
    silent.server.on("connection", () => silentConnections++);
    // The runner pods' network reaches the object store and, for the hung namespace, the silent one.
    world.platform.allowObjectStore(silent.endpoint);
    core = kc.makeApiClient(CoreV1Api);
    batch = kc.makeApiClient(BatchV1Api);
    await createNamespace(RESTRICTED, {
      "pod-security.kubernetes.io/enforce": "restricted",
      "pod-security.kubernetes.io/enforce-version": "latest",
    });
    await createNamespace(HUNG);
    await Promise.all([
      startNamespaceController(RESTRICTED),
      // The runner would wait an hour for its storage: only the Job's deadline ends it.
      startNamespaceController(HUNG, { FOLIO_RUNNER_S3_ENDPOINT: silent.endpoint, FOLIO_RUNNER_TIMEOUT_MS: "3600000" }),
    ]);
  }, 600_000);

  afterAll(async () => {
    await Promise.all(
      controllers.map(async (c) => {
        await c.stop();
        await c.cleanup();
      }),
    );
    controllers = [];
    for (const socket of silent?.sockets ?? []) socket.destroy();
    silent?.server.close();
    await world?.stop();
  });

  it("should fail a hung runner with `timeout` when the Job's deadline passes", async () => {
    const before = silentConnections;
    // Deadline 15 s: time for a runner container to start and reach its storage on a loaded machine.
    const name = await createPdfJob(HUNG, await twoInputs("hung"), 15);
    const pj = await terminal(HUNG, name, 90_000);
    expect(pj.status?.phase).toBe("Failed");
    expect(pj.status?.error?.code).toBe("timeout");
    expect(pj.status?.conditions?.find((c) => c.type === "Succeeded")).toMatchObject({ status: "False", reason: "Timeout" });
    // The Job controller ended it (activeDeadlineSeconds), not the runner reporting on its own.
    const job = await batch.readNamespacedJob({ namespace: HUNG, name: pj.status!.jobName! });
    expect(job.status?.conditions?.find((c) => c.type === "Failed" && c.status === "True")?.reason).toBe("DeadlineExceeded");
    // The runner really ran, hung on its storage, and was killed by a signal.
    expect(silentConnections).toBeGreaterThan(before);
    const ran = localPods(HUNG, pj.status!.jobName!);
    expect(ran).toHaveLength(1);
    const exit = await until(
      "the runner process to have exited",
      () => Promise.resolve(localPods(HUNG, pj.status!.jobName!)[0]?.exit),
      60_000,
    );
    expect(String(exit.exitCode)).toMatch(/^(143|137)$/);
  });

  it("should remove the PdfJob, its Job, its pod, its process and its storage objects when it is deleted while running", async () => {
    const jobId = newId("job");
    const inputs = await twoInputs("cancel");
    // What a runner would have written under the job's prefix before it was stopped.
    const partial = `${jobStoragePrefix(TENANT, jobId)}partial-output`;
    await store.put(partial, Readable.from([Buffer.from("%PDF-1.7 partial")]));
    const name = await createPdfJob(HUNG, inputs, 600, jobId);
    const running = await until("the PdfJob to run", async () => {
      const pj = await getPdfJob(HUNG, name);
      return pj.status?.phase === "Running" ? pj : undefined;
    });
    const jobName = running.status!.jobName!;
    const local = await until("the runner process to start", () =>
      Promise.resolve(localPods(HUNG, jobName).find((p) => p.pid !== undefined)),
    );
    expect(processAlive(local.pid!)).toBe(true);
    expect(local.exit).toBeUndefined();

    await custom.deleteNamespacedCustomObject({ ...CRD, namespace: HUNG, name });
    await until(`PdfJob ${name} to be gone`, () => gone(() => getPdfJob(HUNG, name)), 90_000);

    expect(await gone(() => batch.readNamespacedJob({ namespace: HUNG, name: jobName }))).toBe(true);
    const pods = await core.listNamespacedPod({ namespace: HUNG, labelSelector: `${LABELS.pdfJob}=${name}` });
    expect(pods.items.map((p) => p.metadata?.name)).toEqual([]);
    expect(localPods(HUNG, jobName)[0]?.exit).toBeDefined();
    expect(processAlive(local.pid!)).toBe(false);
    for (const input of inputs) expect(await store.exists(input.key)).toBe(false);
    const left = await store.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: jobStoragePrefix(TENANT, jobId) }));
    expect(left.KeyCount ?? 0).toBe(0);
    // It was canceled on the way out, and said so.
    const events = await core.listNamespacedEvent({ namespace: HUNG, fieldSelector: `involvedObject.name=${name}` });
    expect(events.items.map((e) => e.reason)).toContain("Canceled");
  });

  it("should run the runner pods in a namespace that enforces the restricted Pod Security level", async () => {
    const ns = await core.readNamespace({ name: RESTRICTED });
    expect(ns.metadata?.labels?.["pod-security.kubernetes.io/enforce"]).toBe("restricted");
    const name = await createPdfJob(RESTRICTED, await twoInputs("restricted"), 120);
    const pj = await terminal(RESTRICTED, name);
    expect(pj.status?.error).toBeUndefined();
    expect(pj.status?.phase).toBe("Succeeded");
    expect(pj.status?.outputs?.[0]?.pages).toBe(3);
    // Its pod was admitted there and ran on the node.
    const job = await batch.readNamespacedJob({ namespace: RESTRICTED, name: pj.status!.jobName! });
    expect(job.status?.succeeded).toBe(1);
    expect(localPods(RESTRICTED, pj.status!.jobName!).map((p) => p.exit?.exitCode)).toEqual([0]);

    // The control: a pod that is not hardened is refused there, and admitted where nothing is enforced.
    const plain = { metadata: { name: "not-hardened" }, spec: { containers: [{ name: "c", image: runnerImage() }] } };
    const refused = await statusOf(() => core.createNamespacedPod({ namespace: RESTRICTED, body: plain }));
    expect(refused.code).toBe(403);
    expect(refused.message).toContain('violates PodSecurity "restricted:latest"');
    const admitted = await statusOf(() => core.createNamespacedPod({ namespace: HUNG, body: plain, dryRun: "All" }));
    expect(admitted.code).toBe(200);
  });

  it("should reject a spec edit with the CEL rule and accept metadata and status edits", async () => {
    const name = await createPdfJob(RESTRICTED, await twoInputs("cel"), 120);
    const ended = await terminal(RESTRICTED, name);
    expect(ended.status?.phase).toBe("Succeeded");
    const target = { ...CRD, namespace: RESTRICTED, name };

    const patched = await statusOf(() =>
      custom.patchNamespacedCustomObject({ ...target, body: { spec: { deadlineSeconds: 999 } } }, mergePatch),
    );
    expect(patched.code).toBe(422);
    expect(patched.message).toContain("spec is immutable");
    const current = await getPdfJob(RESTRICTED, name);
    const replaced = await statusOf(() =>
      custom.replaceNamespacedCustomObject({ ...target, body: { ...current, spec: { ...current.spec, options: { outline: "none" } } } }),
    );
    expect(replaced.code).toBe(422);
    expect(replaced.message).toContain("spec is immutable");
    const unchanged = await getPdfJob(RESTRICTED, name);
    expect(unchanged.spec).toEqual(ended.spec);
    expect(unchanged.metadata.generation).toBe(ended.metadata.generation);

    await custom.patchNamespacedCustomObject({ ...target, body: { metadata: { labels: { "example.com/reviewed": "yes" } } } }, mergePatch);
    await custom.patchNamespacedCustomObjectStatus(
      { ...target, body: { status: { figures: { ...ended.status?.figures, reviewed: true } } } },
      mergePatch,
    );
    const edited = await getPdfJob(RESTRICTED, name);
    expect(edited.metadata.labels?.["example.com/reviewed"]).toBe("yes");
    expect(edited.status?.figures?.reviewed).toBe(true);
    expect(edited.spec).toEqual(ended.spec);
  });
});
