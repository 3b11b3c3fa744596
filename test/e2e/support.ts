/**
 * What the end-to-end suites share: the world they run in (startE2eWorld: a real control plane with
 * the local kubelet, MinIO, the CRDs), polling, and the runner Job template that points runner pods
 * (containers of the runner image on the local kubelet) at MinIO.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import https from "node:https";
import path from "node:path";
import { Readable } from "node:stream";
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1Job } from "@kubernetes/client-node";
import { CRDS, pdfJobCrd } from "../../controller/crd.ts";
import { accessPreparer } from "../../controller/runner-access.ts";
import type { JobTemplateOptions } from "../../controller/job-template.ts";
import { newId } from "../../core/ids.ts";
import { PDFJOB_GROUP, PDFJOB_PLURAL, type PdfJobInput } from "../../core/schemas/pdfjob.ts";
import { S3ObjectStore } from "../../core/storage/s3-store.ts";
import type { ObjectStore } from "../../core/storage/store.ts";
import { tmpDir } from "../helpers/tools.ts";
import { runnerImage } from "../k8s/images.ts";
import { loadKubeConfig } from "../k8s/kubeconfig.ts";
import { startPlatform, type Platform, type PlatformOptions } from "../k8s/platform.ts";
import { startS3Server, type S3Server } from "../s3/server.ts";

/** What an end-to-end suite runs against. */
export interface E2eWorld {
  /** A scratch directory, removed by stop(). */
  readonly dir: string;
  readonly platform: Platform;
  readonly s3: S3Server;
  /** The bucket, as the API and the controller see it. */
  readonly store: S3ObjectStore;
  /** The admin identity. */
  readonly kc: KubeConfig;
  readonly custom: CustomObjectsApi;
  /** Stops what startE2eWorld started, last first. The suite stops its own processes before. */
  stop(): Promise<void>;
}

/**
 * A real control plane with the local kubelet (its runner pods may reach MinIO and nothing else),
 * MinIO with an empty bucket, and every Folio CRD established. If any step fails, what was started
 * is stopped before the error is thrown.
 */
export async function startE2eWorld(prefix: string, opts: { platform?: PlatformOptions } = {}): Promise<E2eWorld> {
  const { dir, cleanup } = await tmpDir(prefix);
  const started = await Promise.allSettled([startPlatform(opts.platform), startS3Server()]);
  const [p, m] = started;
  const platform = p.status === "fulfilled" ? p.value : undefined;
  const s3 = m.status === "fulfilled" ? m.value : undefined;
  let store: S3ObjectStore | undefined;
  const stop = async (): Promise<void> => {
    store?.close();
    await s3?.stop();
    await platform?.stop();
    await cleanup();
  };
  try {
    if (!platform || !s3) throw started.find((r) => r.status === "rejected")?.reason;
    platform.allowObjectStore(s3.endpoint);
    store = new S3ObjectStore(s3.storeOptions);
    const kc = loadKubeConfig(platform.kubeconfig);
    await applyCrds(kc);
    return { dir, platform, s3, store, kc, custom: kc.makeApiClient(CustomObjectsApi), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` every 250 ms until it answers something other than undefined. */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 180_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/**
 * POSTs a manifest as it is written. The typed clients cannot be used for objects whose schema has
 * `x-kubernetes-*` keys: their serializer knows those fields only by their camelCase model names
 * and silently drops the wire names (a CRD would lose its CEL rules and preserve-unknown-fields).
 */
export async function createRaw(kc: KubeConfig, urlPath: string, body: unknown): Promise<void> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error("kubeconfig has no current cluster");
  const opts: https.RequestOptions = { method: "POST", headers: { "Content-Type": "application/json" } };
  await kc.applyToHTTPSOptions(opts);
  const url = new URL(urlPath, cluster.server);
  await new Promise<void>((resolve, reject) => {
    const req = https.request(url, opts, (res) => {
      let text = "";
      res.on("data", (b: Buffer) => (text += b.toString()));
      res.on("end", () => ((res.statusCode ?? 0) < 300 ? resolve() : reject(new Error(`POST ${urlPath}: ${res.statusCode} ${text}`))));
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

/** Creates the PdfJob CRD (controller/crd.ts, as `make crds` writes it) and waits until it is served. */
export async function applyCrd(kc: KubeConfig): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  await createRaw(kc, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", pdfJobCrd());
  await until("the CRD to be established", async () => {
    const crd = await api.readCustomResourceDefinition({ name: `${PDFJOB_PLURAL}.${PDFJOB_GROUP}` });
    return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") ? true : undefined;
  });
}

/** Creates every Folio CRD (PdfJob, Tenant, AccessRequest) and waits until each is served. */
export async function applyCrds(kc: KubeConfig): Promise<void> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  for (const c of CRDS) await createRaw(kc, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", c.object());
  for (const c of CRDS) {
    await until(`the CRD ${c.name} to be established`, async () => {
      const crd = await api.readCustomResourceDefinition({ name: c.name });
      return crd.status?.conditions?.some((x) => x.type === "Established" && x.status === "True") ? true : undefined;
    });
  }
}

/**
 * The controller's Job template: the runner image `make images` built, whose pods get no storage
 * credentials — only presigned URLs for their own objects, in a Secret the controller creates
 * with each Job (`runnerAccess`; controller/runner-access.ts).
 */
export function runnerTemplate(_s3: S3Server): JobTemplateOptions {
  return { image: runnerImage(), imagePullPolicy: "Never", access: "presigned" };
}

/**
 * The controller's hook that creates each runner's access Secret (what `folio controller` wires
 * itself): presigned with MinIO's credentials, for runners that reach the store at `endpoint`.
 */
export function runnerAccess(kc: KubeConfig, s3: S3Server, endpoint = s3.endpoint): (namespace: string, job: V1Job) => Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  return accessPreparer({
    target: { bucket: s3.bucket, region: s3.region, endpoint, forcePathStyle: true },
    credentials: () => Promise.resolve({ accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }),
    maxBytes: 512 * 1024 * 1024,
    createSecret: async (namespace, body) => {
      await core.createNamespacedSecret({ namespace, body });
    },
  });
}

/** Puts a local PDF into the store under `{tenant}/{new file id}`, as the API's upload does. */
export async function uploadPdf(store: ObjectStore, tenant: string, file: string): Promise<PdfJobInput> {
  const bytes = await readFile(file);
  const fileId = newId("file");
  const key = `${tenant}/${fileId}`;
  await store.put(key, Readable.from([bytes]));
  return {
    key,
    fileId,
    filename: path.basename(file),
    contentType: "application/pdf",
    size: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  };
}
