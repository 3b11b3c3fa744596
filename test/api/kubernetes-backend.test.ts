/**
 * The Kubernetes backend's own logic (api/jobs/kubernetes.ts) against an in-memory stand-in for
 * the apiserver: idempotency under concurrent identical requests, what a failure at each step
 * leaves behind, the Secret owned from its creation, deleted outputs, ordering, and the sweep of
 * uploads whose job has ended. The real apiserver, controller and S3 are in
 * test/e2e/api-kubernetes.e2e.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { NewJob } from "../../api/jobs/backend.ts";
import { DELETED_OUTPUTS_ANNOTATION, KubernetesBackend } from "../../api/jobs/kubernetes.ts";
import type { PdfJobApi } from "../../api/jobs/pdfjob-client.ts";
import { openDb, type Db } from "../../api/store/db.ts";
import { TenantStore } from "../../api/store/tenants.ts";
import { createLogger } from "../../core/logger.ts";
import { outputFileId, pdfJobName, WEBHOOK_SECRETS_KEY, type PdfJob } from "../../core/schemas/pdfjob.ts";
import { FsObjectStore } from "../../core/storage/fs-store.ts";

/** An apiserver in memory: PdfJobs by name with resourceVersions, Secrets, and injectable failures. */
class FakeCluster implements PdfJobApi {
  readonly namespace = "default";
  readonly jobs = new Map<string, PdfJob>();
  readonly secrets = new Map<string, { ownerUid: string; data: Record<string, string> }>();
  failSecret = false;
  createDelayMs = 0;
  creates = 0;
  #rv = 0;

  async create(metadata: PdfJob["metadata"], spec: PdfJob["spec"]): Promise<PdfJob> {
    this.creates++;
    await new Promise((r) => setTimeout(r, this.createDelayMs));
    if (this.jobs.has(metadata.name)) throw new Error("409 AlreadyExists");
    const pj: PdfJob = {
      apiVersion: "folio.dev/v1alpha1",
      kind: "PdfJob",
      metadata: {
        ...metadata,
        uid: `uid-${metadata.name}`,
        resourceVersion: String(++this.#rv),
        creationTimestamp: new Date().toISOString(),
      },
      spec,
    };
    this.jobs.set(metadata.name, pj);
    return structuredClone(pj);
  }
  get(name: string): Promise<PdfJob | null> {
    const pj = this.jobs.get(name);
    return Promise.resolve(pj ? structuredClone(pj) : null);
  }
  list(selector: string): Promise<PdfJob[]> {
    const [k, v] = selector.split("=");
    return Promise.resolve([...this.jobs.values()].filter((pj) => pj.metadata.labels?.[k!] === v).map((pj) => structuredClone(pj)));
  }
  delete(name: string): Promise<boolean> {
    const existed = this.jobs.delete(name);
    for (const [n, s] of this.secrets) if (s.ownerUid === `uid-${name}`) this.secrets.delete(n);
    return Promise.resolve(existed);
  }
  annotate(pj: PdfJob, annotations: Record<string, string>): Promise<boolean> {
    const cur = this.jobs.get(pj.metadata.name);
    if (!cur || cur.metadata.resourceVersion !== pj.metadata.resourceVersion) return Promise.resolve(false);
    cur.metadata.annotations = { ...cur.metadata.annotations, ...annotations };
    cur.metadata.resourceVersion = String(++this.#rv);
    return Promise.resolve(true);
  }
  createOwnedSecret(owner: PdfJob, _labels: Record<string, string>, data: Record<string, string>): Promise<void> {
    if (this.failSecret) return Promise.reject(new Error("500 etcd timeout"));
    this.secrets.set(owner.metadata.name, { ownerUid: owner.metadata.uid ?? "", data });
    return Promise.resolve();
  }
  ready(): Promise<boolean> {
    return Promise.resolve(true);
  }
  /** What the controller does when a job ends: phase and outputs in status. */
  succeed(name: string, outputs: { key: string; filename: string }[]): void {
    const pj = this.jobs.get(name)!;
    pj.status = {
      phase: "Succeeded",
      completionTime: new Date().toISOString(),
      outputs: outputs.map((o) => ({ ...o, contentType: "application/pdf", size: 3, sha256: "0".repeat(64) })),
    };
    pj.metadata.resourceVersion = String(++this.#rv);
  }
}

let dir: string;
let db: Db;
let store: FsObjectStore;
let cluster: FakeCluster;
let backend: KubernetesBackend;
let tenantId: string;
let otherTenant: string;

async function upload(tenant = tenantId): Promise<string> {
  const key = backend.newUploadKey(tenant);
  await store.put(key, Readable.from([Buffer.from("%PDF-1.7\n")]));
  const [file] = await backend.addUploads(tenant, [
    { storageKey: key, filename: "a.pdf", kind: "pdf", contentType: "application/pdf", size: 9, sha256: "0".repeat(64), pages: 1 },
  ]);
  return file!.id;
}

const newJob = (fileId: string, extra: Partial<NewJob> = {}): NewJob => ({
  tenantId,
  operation: "compress",
  inputs: [{ file_id: fileId }],
  options: { level: "medium" },
  outputFilename: null,
  webhookUrl: null,
  metadata: {},
  retentionMs: 3_600_000,
  maxUnfinished: 100,
  ...extra,
});

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "folio-k8s-backend-"));
  db = openDb(dir);
  const tenants = new TenantStore(db);
  tenantId = tenants.create("acme", "business").id;
  otherTenant = tenants.create("globex", "business").id;
  store = new FsObjectStore(path.join(dir, "files"));
  cluster = new FakeCluster();
  backend = new KubernetesBackend({
    db,
    store,
    kube: cluster,
    tenants,
    log: createLogger({ level: "silent" }),
    uploadTtlMs: 3_600_000,
    deadlineSeconds: 360,
    sweepIntervalMs: 60_000,
    pollMs: 10,
  });
});
afterEach(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

describe("KubernetesBackend", () => {
  it("makes one job of concurrent identical requests with one Idempotency-Key, and replays it to all", async () => {
    const fileId = await upload();
    cluster.createDelayMs = 50;
    const results = await Promise.all(Array.from({ length: 5 }, () => backend.submit(newJob(fileId), { key: "k1", hash: "h" })));
    expect(cluster.creates).toBe(1);
    expect(results.filter((r) => r.kind === "created")).toHaveLength(1);
    expect(results.filter((r) => r.kind === "replayed")).toHaveLength(4);
    const ids = new Set(results.map((r) => ("job" in r ? r.job.id : "")));
    expect(ids.size).toBe(1);
    expect(await backend.submit(newJob(fileId), { key: "k1", hash: "other" })).toEqual({ kind: "idempotency_conflict" });
  });

  it("frees the key when the job could not be made, so a retry creates it", async () => {
    const fileId = await upload();
    expect(await backend.submit(newJob("file_" + "x".repeat(24)), { key: "k2", hash: "h" })).toEqual({ kind: "unknown_file", index: 0 });
    const retry = await backend.submit(newJob(fileId), { key: "k2", hash: "h2" });
    expect(retry.kind).toBe("created");
  });

  it("creates the Secret after the PdfJob, owned by it, with the passwords and both signing secrets of a rotation", async () => {
    const tenants = new TenantStore(db);
    tenants.rotateWebhookSecret(tenantId, 60_000);
    const t = tenants.byId(tenantId)!;
    const res = await backend.submit(
      newJob(await upload(), { operation: "protect", options: { user_password: "pa55-word" }, webhookUrl: "https://hooks.example.com/x" }),
      null,
    );
    if (res.kind !== "created") throw new Error(res.kind);
    const name = pdfJobName(res.job.id);
    const pj = cluster.jobs.get(name)!;
    expect(pj.spec.secretRef).toEqual({ name });
    expect(JSON.stringify(pj)).not.toContain("pa55-word");
    expect(cluster.secrets.get(name)).toEqual({
      ownerUid: pj.metadata.uid,
      data: { user_password: "pa55-word", [WEBHOOK_SECRETS_KEY]: `${t.webhook_secret}\n${t.webhook_secret_prev}` },
    });
  });

  it("takes the PdfJob back when its Secret cannot be made, and frees the key", async () => {
    const fileId = await upload();
    cluster.failSecret = true;
    await expect(
      backend.submit(newJob(fileId, { operation: "protect", options: { user_password: "x" } }), { key: "k3", hash: "h" }),
    ).rejects.toThrow(/etcd/);
    expect(cluster.jobs.size).toBe(0);
    cluster.failSecret = false;
    expect(
      (await backend.submit(newJob(fileId, { operation: "protect", options: { user_password: "x" } }), { key: "k3", hash: "h" })).kind,
    ).toBe("created");
  });

  it("keeps tenants apart: another tenant's job and its outputs are not found, and cannot be deleted", async () => {
    const res = await backend.submit(newJob(await upload()), null);
    if (res.kind !== "created") throw new Error(res.kind);
    const name = pdfJobName(res.job.id);
    const outKey = `${tenantId}/${res.job.id}/${outputFileId(tenantId, res.job.id, 0)}`;
    cluster.succeed(name, [{ key: outKey, filename: "a.pdf" }]);
    const fileId = outputFileId(tenantId, res.job.id, 0);
    expect(await backend.getJob(otherTenant, res.job.id)).toBeNull();
    expect(await backend.getFile(otherTenant, fileId)).toBeNull();
    expect(await backend.deleteJob(otherTenant, res.job.id)).toBe(false);
    expect(await backend.deleteFile(otherTenant, fileId)).toBe(false);
    expect((await backend.getFile(tenantId, fileId))?.filename).toBe("a.pdf");
  });

  it("records every concurrent delete of one job's outputs, then deletes their bytes", async () => {
    const res = await backend.submit(newJob(await upload()), null);
    if (res.kind !== "created") throw new Error(res.kind);
    const ids = [0, 1, 2].map((i) => outputFileId(tenantId, res.job.id, i));
    const keys = ids.map((id) => `${tenantId}/${res.job.id}/${id}`);
    for (const k of keys) await store.put(k, Readable.from([Buffer.from("pdf")]));
    cluster.succeed(
      pdfJobName(res.job.id),
      keys.map((key, i) => ({ key, filename: `p${i}.pdf` })),
    );
    expect(await Promise.all(ids.map((id) => backend.deleteFile(tenantId, id)))).toEqual([true, true, true]);
    expect(cluster.jobs.get(pdfJobName(res.job.id))!.metadata.annotations?.[DELETED_OUTPUTS_ANNOTATION]?.split(",").sort()).toEqual(
      [...ids].sort(),
    );
    for (const k of keys) expect(await store.exists(k)).toBe(false);
    expect((await backend.getJob(tenantId, res.job.id))?.result?.files).toEqual([]);
  });

  it("lists newest first to the millisecond, and counts only unfinished jobs", async () => {
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await backend.submit(newJob(await upload()), null);
      if (r.kind === "created") made.push(r.job.id);
      await new Promise((r2) => setTimeout(r2, 5));
    }
    cluster.succeed(pdfJobName(made[0]!), []);
    const list = await backend.listJobs(tenantId, { limit: 2 });
    expect(list.data.map((j) => j.id)).toEqual([made[2], made[1]]);
    expect(list.has_more).toBe(true);
    expect((await backend.listJobs(tenantId, { limit: 5, startingAfter: made[1]! })).data.map((j) => j.id)).toEqual([made[0]]);
    expect(await backend.countUnfinished(tenantId)).toBe(2);
  });

  it("measures a tenant's stored bytes for the quota: unused uploads, inputs of unfinished jobs, live outputs", async () => {
    const used = await upload();
    await upload();
    await upload(otherTenant);
    expect(await backend.storedBytes(tenantId)).toBe(18);
    const res = await backend.submit(newJob(used), null);
    if (res.kind !== "created") throw new Error(res.kind);
    expect(await backend.storedBytes(tenantId)).toBe(18);
    const keys = [0, 1].map((i) => `${tenantId}/${res.job.id}/${outputFileId(tenantId, res.job.id, i)}`);
    cluster.succeed(
      pdfJobName(res.job.id),
      keys.map((key, i) => ({ key, filename: `p${i}.pdf` })),
    );
    // The input is gone with the job's end; two outputs of 3 bytes each are stored.
    expect(await backend.storedBytes(tenantId)).toBe(9 + 6);
    await store.put(keys[0]!, Readable.from([Buffer.from("pdf")]));
    expect(await backend.deleteFile(tenantId, outputFileId(tenantId, res.job.id, 0))).toBe(true);
    expect(await backend.storedBytes(tenantId)).toBe(9 + 3);
    expect(await backend.storedBytes(otherTenant)).toBe(9);
  });

  it("sweeps the records of uploads whose job has ended (the controller deleted their bytes)", async () => {
    const fileId = await upload();
    const res = await backend.submit(newJob(fileId), null);
    if (res.kind !== "created") throw new Error(res.kind);
    const rows = (): number => (db.prepare("SELECT COUNT(*) AS n FROM files WHERE id = ?").get(fileId) as { n: number }).n;
    // Claimed by a live job: kept, however old.
    db.prepare("UPDATE files SET created_at = created_at - 120000 WHERE id = ?").run(fileId);
    await backend.sweep();
    expect(rows()).toBe(1);
    cluster.succeed(pdfJobName(res.job.id), []);
    await backend.sweep();
    expect(rows()).toBe(0);
  });
});
