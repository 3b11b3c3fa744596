/**
 * What the end-to-end suites share: polling, the CRD applied and established, and the runner Job
 * template that points runner pods (containers of the runner image on the local kubelet) at MinIO.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import https from "node:https";
import path from "node:path";
import { Readable } from "node:stream";
import { ApiextensionsV1Api, type KubeConfig } from "@kubernetes/client-node";
import { CRDS, pdfJobCrd } from "../../controller/crd.ts";
import type { JobTemplateOptions } from "../../controller/job-template.ts";
import { newId } from "../../core/ids.ts";
import { PDFJOB_GROUP, PDFJOB_PLURAL, type PdfJobInput } from "../../core/schemas/pdfjob.ts";
import type { ObjectStore } from "../../core/storage/store.ts";
import { runnerImage } from "../k8s/images.ts";
import type { S3Server } from "../s3/server.ts";

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

/** The controller's Job template: the runner image `make images` built, with MinIO's credentials. */
export function runnerTemplate(s3: S3Server): JobTemplateOptions {
  return {
    image: runnerImage(),
    imagePullPolicy: "Never",
    storage: { bucket: s3.bucket, region: s3.region, endpoint: s3.endpoint, forcePathStyle: true },
    env: [
      { name: "AWS_ACCESS_KEY_ID", value: s3.accessKeyId },
      { name: "AWS_SECRET_ACCESS_KEY", value: s3.secretAccessKey },
    ],
  };
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
