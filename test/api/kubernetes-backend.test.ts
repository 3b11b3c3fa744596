/**
 * Kubernetes mode's stores (api/store/kubernetes/, api/jobs/kubernetes.ts) on a real
 * kube-apiserver and a real MinIO, with three "replicas" in this process — three sets of informer
 * caches over one cluster, as three API pods would have: the idempotency contract every mode
 * meets, the unfinished-jobs cap exact across replicas, replays after a job ended, read-your-
 * writes through another replica, Prefer: wait woken by the watch, upload records in S3
 * metadata, and keys revoked everywhere within 2 s. No controller runs here (jobs stay Pending
 * unless a test writes their status as the controller would); the whole path with runner pods is
 * in test/e2e/.
 *
 * Skipped — saying so — when the control plane or MinIO is not built, unless FOLIO_S3_REQUIRED
 * or FOLIO_K8S_REQUIRED is set (`make test` sets the first).
 */
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import {
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type V1Role,
} from "@kubernetes/client-node";
import { loadAll } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NewJob } from "../../api/jobs/backend.ts";
import { PdfJobClient } from "../../api/jobs/pdfjob-client.ts";
import { kubernetesStores, type KubernetesStores } from "../../api/store/kubernetes/index.ts";
import { KubernetesTenantAdmin } from "../../api/store/kubernetes/tenant-admin.ts";
import { loadConfig } from "../../core/config.ts";
import { createLogger } from "../../core/logger.ts";
import { LABELS, PDFJOB_ANNOTATIONS, PDFJOB_GROUP, PDFJOB_PLURAL, PDFJOB_VERSION, type PdfJob } from "../../core/schemas/pdfjob.ts";
import { outputFileId, outputTag } from "../../core/schemas/storage-keys.ts";
import { ACCESS_REQUEST_PLURAL, TENANT_PLURAL } from "../../core/schemas/tenant.ts";
import { S3ObjectStore } from "../../core/storage/s3-store.ts";
import { newId } from "../../core/ids.ts";
import { applyCrds, until } from "../e2e/support.ts";
import { ROOT, run, tmpDir } from "../helpers/tools.ts";
import { delta, requestCounts } from "../k8s/apiserver-requests.ts";
import { loadKubeConfig } from "../k8s/kubeconfig.ts";
import { startPlatform, type Platform } from "../k8s/platform.ts";
import { binDir, findBinaries } from "../k8s/versions.ts";
import { minioPath, startS3Server, type S3Server } from "../s3/server.ts";
import { idempotencyContract } from "./idempotency-contract.ts";

const REQUIRED = Boolean(process.env.FOLIO_S3_REQUIRED || process.env.FOLIO_K8S_REQUIRED);
const HAVE = (findBinaries(binDir()) !== undefined && existsSync(minioPath())) || REQUIRED;
if (!HAVE) process.stderr.write("[kubernetes-backend.test] SKIPPED: the local control plane or MinIO is not built (make test-platform)\n");
/** helm at the version test/chart/versions.env pins, where test/chart/tools.sh puts it (make test-platform). */
const HELM = path.join(
  process.env.FOLIO_TOOLS_CACHE ?? path.join(os.homedir(), ".cache/folio-tools"),
  `helm-${/^HELM_VERSION=(\S+)$/m.exec(readFileSync(path.join(ROOT, "test/chart/versions.env"), "utf8"))?.[1] ?? "?"}`,
  "helm",
);
if (HAVE && !existsSync(HELM)) process.stderr.write(`[kubernetes-backend.test] admin Role test SKIPPED: no ${HELM} (make chart-tools)\n`);

const NS = "default";
const CRD = { group: PDFJOB_GROUP, version: PDFJOB_VERSION, plural: PDFJOB_PLURAL, namespace: NS };
const log = createLogger({ level: "silent" });

let platform: Platform;
let s3: S3Server;
let kc: KubeConfig;
let replicas: KubernetesStores[] = [];
let admin: KubernetesTenantAdmin;
const keys: Record<string, string> = {};

/** A kubeconfig for a new ServiceAccount `name` (a TokenRequest token): an identity with no rights of its own. */
async function serviceAccount(name: string): Promise<KubeConfig> {
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespacedServiceAccount({ namespace: NS, body: { metadata: { name } } });
  const token = await core.createNamespacedServiceAccountToken({ namespace: NS, name, body: { spec: { audiences: [] } } });
  const cfg = new KubeConfig();
  cfg.loadFromOptions({
    clusters: [{ name: "c", server: kc.getCurrentCluster()!.server, caFile: kc.getCurrentCluster()!.caFile }],
    users: [{ name, token: token.status!.token }],
    contexts: [{ name, cluster: "c", user: name }],
    currentContext: name,
  });
  return cfg;
}

async function replica(): Promise<KubernetesStores> {
  const config = loadConfig({
    FOLIO_BACKEND: "kubernetes",
    FOLIO_JOBS_NAMESPACE: NS,
    FOLIO_UPLOAD_TTL_SECONDS: "3600",
    FOLIO_LOG_LEVEL: "silent",
  });
  const r = kubernetesStores(config, loadKubeConfig(platform.kubeconfig), log, { store: new S3ObjectStore(s3.storeOptions) });
  await r.start();
  return r;
}

async function upload(r: KubernetesStores, tenant: string, name = "a.pdf"): Promise<string> {
  const key = r.backend.newUploadKey(tenant);
  const bytes = Buffer.from("%PDF-1.7\n%%EOF\n");
  await r.store.put(key, Readable.from([bytes]));
  const [file] = await r.backend.addUploads(tenant, [
    { storageKey: key, filename: name, kind: "pdf", contentType: "application/pdf", size: bytes.length, sha256: "a".repeat(64), pages: 1 },
  ]);
  return file!.id;
}

const newJob = (tenantId: string, fileId: string, extra: Partial<NewJob> = {}): NewJob => ({
  tenantId,
  operation: "compress",
  inputs: [{ file_id: fileId }],
  options: { level: "medium" },
  outputFilename: null,
  webhookUrl: null,
  metadata: {},
  retentionMs: 3_600_000,
  maxUnfinished: 1000,
  ...extra,
});

const custom = (): CustomObjectsApi => kc.makeApiClient(CustomObjectsApi);
const pdfJobsOf = async (tenant: string): Promise<PdfJob[]> =>
  ((await custom().listNamespacedCustomObject({ ...CRD, labelSelector: `${LABELS.tenant}=${tenant}` })) as { items: PdfJob[] }).items;

/** Writes a terminal status as the controller does (status subresource). */
async function finish(
  name: string,
  phase: "Succeeded" | "Failed",
  outputs: PdfJob["status"] extends infer S ? (S extends { outputs?: infer O } ? O : never) : never = [],
): Promise<void> {
  const now = new Date().toISOString();
  await custom().patchNamespacedCustomObjectStatus(
    { ...CRD, name, body: { status: { phase, completionTime: now, expireTime: new Date(Date.now() + 3_600_000).toISOString(), outputs } } },
    setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
  );
}

describe.runIf(HAVE)("Kubernetes mode's stores on a real apiserver, three replicas", () => {
  beforeAll(async () => {
    [platform, s3] = await Promise.all([startPlatform({ withoutKubelet: true }), startS3Server()]);
    kc = loadKubeConfig(platform.kubeconfig);
    await applyCrds(kc);
    // A new CRD's storage answers 429 "(re)initializing" for a moment after it is Established.
    for (const plural of [PDFJOB_PLURAL, TENANT_PLURAL, ACCESS_REQUEST_PLURAL])
      await until(`${plural} to be listable`, () =>
        custom()
          .listNamespacedCustomObject({ ...CRD, plural })
          .then(
            () => true,
            () => undefined,
          ),
      );
    admin = new KubernetesTenantAdmin(kc, NS);
    for (const t of ["acme", "globex", "initech", "hooli"]) {
      await admin.createTenant(t, "business");
      keys[t] = (await admin.createKey(t)).key;
    }
    replicas = await Promise.all([replica(), replica(), replica()]);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await s3?.stop();
    await platform?.stop();
  });

  it("authenticates a key created through the admin on every replica, and keeps tenants apart", async () => {
    for (const r of replicas) {
      await until("the key in this replica's cache", () => Promise.resolve(r.tenants.authenticate(keys.acme!) ? true : undefined), 5000);
      expect(r.tenants.authenticate(keys.acme!)?.tenant).toEqual({ id: "acme", name: "acme", plan: "business", suspended: false });
      expect(r.tenants.authenticate(keys.acme!.slice(0, -1) + (keys.acme!.endsWith("a") ? "b" : "a"))).toBeNull();
    }
  });

  it("stops a revoked key on all three replicas within 2 s, and shows a suspension at once", async () => {
    const { key_id, key } = await admin.createKey("globex");
    for (const r of replicas)
      await until("the new key everywhere", () => Promise.resolve(r.tenants.authenticate(key) ? true : undefined), 5000);
    const started = Date.now();
    expect(await admin.revokeKey(key_id)).toBe(true);
    await Promise.all(
      replicas.map((r) => until("the revocation everywhere", () => Promise.resolve(r.tenants.authenticate(key) ? undefined : true), 2000)),
    );
    const took = Date.now() - started;
    console.log(`key revoked → refused by all 3 replicas in ${took} ms`);
    expect(took).toBeLessThan(2000);
    await admin.setSuspended("globex", true);
    await Promise.all(
      replicas.map((r) =>
        until("the suspension", () => Promise.resolve(r.tenants.authenticate(keys.globex!)?.tenant.suspended ? true : undefined), 2000),
      ),
    );
    await admin.setSuspended("globex", false);
  });

  it("rotates a key: the new one works on every replica at once, the old one until its grace ends", async () => {
    const old = await admin.createKey("globex");
    for (const r of replicas)
      await until("the key everywhere", () => Promise.resolve(r.tenants.authenticate(old.key) ? true : undefined), 5000);
    const rotated = await admin.rotateKey(old.key_id, 60_000);
    await Promise.all(
      replicas.map((r) =>
        until("the new key everywhere", () => Promise.resolve(r.tenants.authenticate(rotated.key) ? true : undefined), 2000),
      ),
    );
    // The old key's expiry reached every replica with the watch: valid before it, refused after.
    const until_ = (await admin.key(old.key_id))!.expires_at!;
    expect(until_).toBeGreaterThan(rotated.previous_expires_at - 1000);
    expect(until_).toBeLessThanOrEqual(rotated.previous_expires_at);
    for (const r of replicas) {
      await until(
        "the expiry everywhere",
        () => Promise.resolve(r.tenants.authenticate(old.key, until_ + 1) === null ? true : undefined),
        2000,
      );
      expect(r.tenants.authenticate(old.key, until_ - 1000)?.keyId).toBe(old.key_id);
    }
  });

  it("lets the apiserver's RBAC decide: an identity without rights gets a clear 'forbidden' from the admin commands", async () => {
    const denied = new KubernetesTenantAdmin(await serviceAccount("nobody"), NS);
    await expect(denied.createTenant("sneaky", "business")).rejects.toThrow(
      /forbidden: create tenant sneaky: .*cannot create resource "tenants"/,
    );
    await expect(denied.revokeKey("AbCdEfGhIjKlMnOp")).rejects.toThrow(/forbidden/);
  });

  it.runIf(existsSync(HELM))(
    "runs the admin CLI from an operator's own kubeconfig bound to the chart's admin Role; without the binding it is refused",
    async () => {
      const rendered = await run(HELM, [
        "template",
        "rel",
        path.join(ROOT, "helm/folio"),
        "--namespace",
        NS,
        "--show-only",
        "templates/rbac.yaml",
      ]);
      expect(rendered.code, rendered.stderr).toBe(0);
      const role = (loadAll(rendered.stdout) as V1Role[]).find((d) => d?.kind === "Role" && d.metadata?.name === "rel-folio-admin")!;
      expect(role).toBeDefined();
      const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
      await rbac.createNamespacedRole({ namespace: NS, body: role });
      const operator = await serviceAccount("operator");
      const bare = await serviceAccount("bare");
      await rbac.createNamespacedRoleBinding({
        namespace: NS,
        body: {
          metadata: { name: "operator-admin" },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "rel-folio-admin" },
          subjects: [{ kind: "ServiceAccount", name: "operator", namespace: NS }],
        },
      });
      const { dir, cleanup } = await tmpDir("folio-admin-cli-");
      try {
        const [mine, theirs] = [path.join(dir, "operator"), path.join(dir, "bare")];
        await writeFile(mine, operator.exportConfig());
        await writeFile(theirs, bare.exportConfig());
        // As an operator runs it from their machine: the flags name the kubeconfig and the namespace.
        const cli = async (file: string, ...args: string[]): Promise<{ code: number; stderr: string; json: any }> => {
          const r = await run(process.execPath, [
            path.join(ROOT, "bin/folio.ts"),
            ...args,
            "--kubernetes",
            "--kubeconfig",
            file,
            "--namespace",
            NS,
            "--json",
          ]);
          return { code: r.code, stderr: `folio ${args.join(" ")}: ${r.stderr}`, json: r.code === 0 ? JSON.parse(r.stdout) : undefined };
        };
        const made = await cli(mine, "tenants", "create", "opsco", "--plan", "business");
        expect(made.code, made.stderr).toBe(0);
        const key = await cli(mine, "keys", "create", "--tenant", "opsco");
        expect(key.code, key.stderr).toBe(0);
        for (const r of replicas)
          await until(
            "the CLI's key on every replica",
            () => Promise.resolve(r.tenants.authenticate(key.json.key) ? true : undefined),
            2000,
          );
        expect((await cli(mine, "tenants", "suspend", "opsco")).code).toBe(0);
        for (const r of replicas)
          await until(
            "the suspension",
            () => Promise.resolve(r.tenants.authenticate(key.json.key)?.tenant.suspended ? true : undefined),
            2000,
          );
        expect((await cli(mine, "keys", "revoke", key.json.key_id)).code).toBe(0);
        for (const r of replicas)
          await until("the revocation", () => Promise.resolve(r.tenants.authenticate(key.json.key) ? undefined : true), 2000);
        const listed = await cli(mine, "access-requests", "list");
        expect(listed.code, listed.stderr).toBe(0);
        expect(Array.isArray(listed.json)).toBe(true);
        // The same commands with an identity the Role is not bound to: the apiserver says no.
        const refused = await cli(theirs, "tenants", "create", "sneaky", "--plan", "business");
        expect(refused.code).not.toBe(0);
        expect(refused.stderr).toMatch(/forbidden/);
        expect(await admin.tenant("sneaky")).toBeNull();
      } finally {
        await cleanup();
      }
    },
  );

  it("records uploads in S3 metadata only: any replica reads them, another tenant never", async () => {
    const id = await upload(replicas[0]!, "acme", "résumé.pdf");
    const file = await replicas[2]!.backend.getFile("acme", id);
    expect(file).toMatchObject({ id, filename: "résumé.pdf", content_type: "application/pdf", pages: 1, sha256: "a".repeat(64) });
    expect(await replicas[1]!.backend.getFile("globex", id)).toBeNull();
    const head = await replicas[0]!.store.head(`acme/${id}`);
    expect(head?.metadata["folio-tenant"]).toBe("acme");
  });

  it("admits exactly 20 of 100 concurrent submissions through three replicas (cap 20), and takes the others back", async () => {
    const fileId = await upload(replicas[0]!, "initech");
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => replicas[i % 3]!.backend.submit(newJob("initech", fileId, { maxUnfinished: 20 }), null)),
    );
    expect(results.filter((r) => r.kind === "created")).toHaveLength(20);
    expect(results.filter((r) => r.kind === "too_many_jobs")).toHaveLength(80);
    // Taken back: marked rejected and deleted (no controller runs here to lift the finalizer).
    const all = await pdfJobsOf("initech");
    const rejected = all.filter((p) => p.metadata.annotations?.[PDFJOB_ANNOTATIONS.rejected] === "too_many_jobs");
    expect(all.length - rejected.length).toBe(20);
    expect(rejected.every((p) => p.metadata.deletionTimestamp)).toBe(true);
    for (const r of replicas)
      await until("every cache to agree", () => Promise.resolve(r.pdfJobs.unfinished("initech") === 20 ? true : undefined), 5000);
    expect((await replicas[1]!.backend.listJobs("initech", { limit: 100 })).data).toHaveLength(20);
  });

  it("makes one job of concurrent identical keyed submissions through three replicas, and replays it after it ended", async () => {
    const fileId = await upload(replicas[0]!, "hooli");
    const idem = { key: "order-77", hash: "h77" };
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => replicas[i % 3]!.backend.submit(newJob("hooli", fileId), idem)));
    const created = results.filter((r) => r.kind === "created");
    expect(created).toHaveLength(1);
    const jobId = (created[0] as { job: { id: string } }).job.id;
    expect(results.every((r) => "job" in r && r.job.id === jobId)).toBe(true);
    const [pj] = (await pdfJobsOf("hooli")).filter((p) => p.metadata.labels?.[LABELS.jobId] === jobId);
    expect(pj!.metadata.name).toMatch(/^idem-[a-z2-7]{32}$/);
    expect(pj!.metadata.annotations?.[PDFJOB_ANNOTATIONS.idempotencyHash]).toBe("h77");
    // The job ends and its input goes, as the controller does it.
    await finish(pj!.metadata.name, "Succeeded");
    await replicas[0]!.store.delete(`hooli/${fileId}`);
    for (const r of replicas) {
      await until(
        "the end in every cache",
        async () => ((await r.backend.getJob("hooli", jobId))?.status === "succeeded" ? true : undefined),
        5000,
      );
      expect(await r.backend.replay({ tenantId: "hooli", ...idem })).toMatchObject({
        kind: "replayed",
        job: { id: jobId, status: "succeeded" },
      });
      expect(await r.backend.replay({ tenantId: "hooli", key: idem.key, hash: "other" })).toEqual({ kind: "idempotency_conflict" });
    }
  });

  it("answers a retry whose keyed job was deleted with 'gone' on every replica, never a second job", async () => {
    const fileId = await upload(replicas[0]!, "hooli");
    const idem = { key: "order-78", hash: "h78" };
    const made = await replicas[0]!.backend.submit(newJob("hooli", fileId), idem);
    expect(made.kind).toBe("created");
    const jobId = (made as { job: { id: string } }).job.id;
    // The client deletes it; the controller keeps its name (finalizer) until the key is 24 h old
    // (controller/decide.ts, test/controller/decide.test.ts): here no controller lifts it at all.
    expect(await replicas[1]!.backend.deleteJob("hooli", jobId)).toBe(true);
    for (const r of replicas) {
      await until("the deletion in every cache", async () => ((await r.backend.getJob("hooli", jobId)) === null ? true : undefined), 5000);
      expect(await r.backend.replay({ tenantId: "hooli", ...idem })).toEqual({ kind: "replayed_gone", jobId });
      const retried = await r.backend.submit(newJob("hooli", fileId), idem);
      expect(retried).toEqual({ kind: "replayed_gone", jobId });
    }
    const named = (await pdfJobsOf("hooli")).filter((p) => p.metadata.annotations?.[PDFJOB_ANNOTATIONS.idempotencyHash] === "h78");
    expect(named.map((p) => p.metadata.labels?.[LABELS.jobId])).toEqual([jobId]);
  });

  it("lets a client read its own write through another replica at once", async () => {
    const fileId = await upload(replicas[0]!, "acme");
    for (let i = 0; i < 10; i++) {
      const made = await replicas[i % 3]!.backend.submit(newJob("acme", fileId), null);
      expect(made.kind).toBe("created");
      const id = (made as { job: { id: string } }).job.id;
      const other = replicas[(i + 1) % 3]!;
      expect((await other.backend.getJob("acme", id))?.id).toBe(id);
      expect(await other.backend.getJob("globex", id)).toBeNull();
    }
  });

  it("wakes Prefer: wait with the watch event that ends the job", async () => {
    const fileId = await upload(replicas[0]!, "acme");
    const made = (await replicas[0]!.backend.submit(newJob("acme", fileId), null)) as { job: { id: string } };
    const waiting = replicas[1]!.backend.waitFor("acme", made.job.id, 30_000);
    const [pj] = (await pdfJobsOf("acme")).filter((p) => p.metadata.labels?.[LABELS.jobId] === made.job.id);
    const ended = Date.now();
    await finish(pj!.metadata.name, "Failed");
    const job = await waiting;
    const woke = Date.now() - ended;
    console.log(`Prefer: wait woken ${woke} ms after the status write`);
    expect(job?.status).toBe("failed");
    expect(woke).toBeLessThan(5000);
  });

  it("keeps the job's Secret owned by its PdfJob, with the tenant's signing secret", async () => {
    const fileId = await upload(replicas[0]!, "acme");
    const made = (await replicas[2]!.backend.submit(newJob("acme", fileId, { webhookUrl: "https://hooks.example.com/x" }), null)) as {
      job: { id: string };
    };
    const [pj] = (await pdfJobsOf("acme")).filter((p) => p.metadata.labels?.[LABELS.jobId] === made.job.id);
    const secret = await kc.makeApiClient(CoreV1Api).readNamespacedSecret({ namespace: NS, name: pj!.spec.secretRef!.name });
    expect(secret.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "PdfJob", uid: pj!.metadata.uid, controller: true });
    const signing = Buffer.from(secret.data!.webhook_secrets!, "base64").toString("utf8");
    expect(signing).toBe(await admin.webhookSecret("acme"));
    expect(JSON.stringify(pj)).not.toContain(signing);
  });

  it("writes the Secret of a keyed job whose first replica stopped before writing it, when the client retries", async () => {
    const fileId = await upload(replicas[0]!, "acme");
    const idem = { key: "order-secret-1", hash: "hs1" };
    const nj = newJob("acme", fileId, { webhookUrl: "https://hooks.example.com/x" });
    const made = (await replicas[0]!.backend.submit(nj, idem)) as { kind: string; job: { id: string } };
    expect(made.kind).toBe("created");
    const [pj] = (await pdfJobsOf("acme")).filter((p) => p.metadata.labels?.[LABELS.jobId] === made.job.id);
    const core = kc.makeApiClient(CoreV1Api);
    const name = pj!.spec.secretRef!.name;
    // What a SIGKILL between the PdfJob's creation and its Secret's leaves behind.
    await core.deleteNamespacedSecret({ namespace: NS, name });
    const exists = (): Promise<boolean> =>
      core.readNamespacedSecret({ namespace: NS, name }).then(
        () => true,
        () => false,
      );
    await until("the Secret to be gone", async () => ((await exists()) ? undefined : true), 5000);
    for (const r of replicas)
      await until("the job in every cache", async () => ((await r.backend.getJob("acme", made.job.id)) ? true : undefined), 5000);
    // The retry is not answered before its request is read (it has no passwords to write then)...
    expect(await replicas[1]!.backend.replay({ tenantId: "acme", ...idem })).toBeNull();
    // ...but once it is: the same job, and its Secret written as the first replica would have.
    const retried = await replicas[1]!.backend.submit(nj, idem);
    expect(retried).toMatchObject({ kind: "replayed", job: { id: made.job.id } });
    const secret = await core.readNamespacedSecret({ namespace: NS, name });
    expect(secret.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "PdfJob", uid: pj!.metadata.uid, controller: true });
    expect(Buffer.from(secret.data!.webhook_secrets!, "base64").toString("utf8")).toBe(await admin.webhookSecret("acme"));
    // A job with its Secret is answered at once again, and a second retry writes nothing.
    expect(await replicas[2]!.backend.replay({ tenantId: "acme", ...idem })).toMatchObject({ kind: "replayed", job: { id: made.job.id } });
    expect(await replicas[2]!.backend.submit(nj, idem)).toMatchObject({ kind: "replayed", job: { id: made.job.id } });
  });

  it("serves job lists, counts and outputs from the cache", async () => {
    const r = replicas[1]!;
    const listed = await r.backend.listJobs("acme", { limit: 3 });
    expect(listed.data).toHaveLength(3);
    expect(listed.has_more).toBe(true);
    const next = await r.backend.listJobs("acme", { limit: 100, startingAfter: listed.data[2]!.id });
    expect(next.data.map((j) => j.id)).not.toContain(listed.data[0]!.id);
    expect(await r.backend.countUnfinished("acme")).toBeGreaterThan(0);
  });

  it("costs the apiserver no request for reads its caches know (counted by the apiserver), one list for an id they do not", async () => {
    const fileId = await upload(replicas[0]!, "acme");
    const made = (await replicas[0]!.backend.submit(newJob("acme", fileId), null)) as { job: { id: string } };
    const jobId = made.job.id;
    expect((await replicas[1]!.backend.submit(newJob("acme", fileId), null)).kind).toBe("created"); // one unfinished, at least
    const pj = replicas[0]!.pdfJobs.byJobId(jobId)!;
    const output = outputFileId("acme", jobId, 0);
    const key = `acme/${jobId}/${output}`;
    await replicas[0]!.store.put(key, Readable.from([Buffer.from("pdf")]));
    await finish(pj.metadata.name, "Succeeded", [
      { key, filename: "o.pdf", contentType: "application/pdf", size: 3, sha256: "c".repeat(64) },
    ]);
    for (const r of replicas)
      await until("the output in every cache", () => Promise.resolve(r.pdfJobs.byOutput(output) ? true : undefined), 5000);

    // The control plane's own clients touch these resources too (the garbage collector lists them
    // once it discovers them, and looks owners up): measure once they are quiet.
    await until("the apiserver quiet for Folio's resources", async () => {
      const a = await requestCounts(kc);
      await new Promise((r) => setTimeout(r, 1000));
      return delta(a, await requestCounts(kc)).total === 0 ? true : undefined;
    });
    // The control plane's own clients may still touch these resources now and then (the garbage
    // collector looking an owner up): they can only add requests, so the quietest of three tries
    // is Folio's own count.
    const quietest = async (reads: () => Promise<void>): Promise<{ total: number; byKind: string }> => {
      let fewest: { total: number; byKind: string } | undefined;
      for (let attempt = 0; attempt < 3; attempt++) {
        const before = await requestCounts(kc);
        await reads();
        const d = delta(before, await requestCounts(kc));
        if (!fewest || d.total < fewest.total) fewest = d;
      }
      return fewest!;
    };
    const reads = await quietest(async () => {
      for (const r of replicas) {
        for (let i = 0; i < 20; i++) {
          expect((await r.backend.getJob("acme", jobId))?.status).toBe("succeeded");
          expect(await r.backend.getJob("globex", jobId)).toBeNull();
          expect((await r.backend.getFile("acme", output))?.filename).toBe("o.pdf");
          expect((await r.backend.listJobs("acme", { limit: 100 })).data.length).toBeGreaterThan(0);
          expect(await r.backend.countUnfinished("acme")).toBeGreaterThan(0);
          expect((await r.backend.waitFor("acme", jobId, 1000))?.status).toBe("succeeded");
        }
      }
    });
    console.log(`360 cached reads through 3 replicas: ${reads.total} apiserver requests${reads.byKind ? ` (${reads.byKind})` : ""}`);
    expect(reads).toEqual({ total: 0, byKind: "" });

    // An id no cache knows (it may have been made through another replica a moment ago): one list.
    const unknown = await quietest(async () => {
      for (let i = 0; i < 5; i++) expect(await replicas[i % 3]!.backend.getJob("acme", newId("job"))).toBeNull();
    });
    expect(unknown).toEqual({ total: 5, byKind: "LIST pdfjobs 5" });
  });
  it("serves outputs from the cache and, on a replica that has not seen them yet, reads them through; keeps them per tenant", async () => {
    const fileId = await upload(replicas[0]!, "acme");
    const made = (await replicas[0]!.backend.submit(newJob("acme", fileId), null)) as { job: { id: string } };
    const [pj] = (await pdfJobsOf("acme")).filter((p) => p.metadata.labels?.[LABELS.jobId] === made.job.id);
    expect(pj!.metadata.labels?.[LABELS.outputTag]).toBe(outputTag(made.job.id));
    const ids = [0, 1, 2].map((i) => outputFileId("acme", made.job.id, i));
    const keys = ids.map((id) => `acme/${made.job.id}/${id}`);
    for (const k of keys) await replicas[0]!.store.put(k, Readable.from([Buffer.from("pdf")]));
    await finish(
      pj!.metadata.name,
      "Succeeded",
      keys.map((key, i) => ({ key, filename: `p${i}.pdf`, contentType: "application/pdf", size: 3, sha256: "c".repeat(64) })),
    );
    // At once, through every replica, whether its watch has delivered the status or not.
    const seen = await Promise.all(replicas.map((r) => r.backend.getFile("acme", ids[1]!)));
    expect(seen.map((f) => f?.filename)).toEqual(["p1.pdf", "p1.pdf", "p1.pdf"]);
    expect(await replicas[1]!.backend.getFile("globex", ids[1]!)).toBeNull();
    expect(await replicas[1]!.backend.deleteFile("globex", ids[1]!)).toBe(false);
    expect(await replicas[1]!.backend.deleteJob("globex", made.job.id)).toBe(false);
    // Concurrent deletes of its outputs through three replicas all land (resourceVersion-guarded).
    expect(await Promise.all(ids.map((id, i) => replicas[i]!.backend.deleteFile("acme", id)))).toEqual([true, true, true]);
    const after = (await pdfJobsOf("acme")).find((p) => p.metadata.name === pj!.metadata.name)!;
    expect(after.metadata.annotations?.[PDFJOB_ANNOTATIONS.deletedOutputs]?.split(",").sort()).toEqual([...ids].sort());
    for (const k of keys) expect(await replicas[0]!.store.exists(k)).toBe(false);
  });

  it("measures a tenant's stored bytes for the quota: unexpired uploads, live outputs, not other tenants'", async () => {
    const r = replicas[2]!;
    const before = await r.backend.storedBytes("hooli");
    const a = await upload(r, "hooli");
    await upload(r, "globex");
    const one = (await r.store.head(`hooli/${a}`))!.size;
    expect(await r.backend.storedBytes("hooli")).toBe(before + one);
  });

  describe("the idempotency contract", () => {
    // The same suite the embedded store runs (test/api/idempotency-store.test.ts), on PdfJob names.
    idempotencyContract("kubernetes (PdfJob names, 409 AlreadyExists as the lock)", () => {
      let made = 0;
      const r = replicas[made % 3]!;
      const client = new PdfJobClient(loadKubeConfig(platform.kubeconfig), NS);
      return {
        store: r.idempotency,
        tenants: ["acme", "globex"],
        create: async (claim, tenant) => {
          await client.create(
            { name: claim.name, labels: { [LABELS.tenant]: tenant, [LABELS.jobId]: claim.jobId }, annotations: claim.annotations },
            {
              tenant,
              operation: "compress",
              inputs: [
                {
                  key: `${tenant}/x`,
                  fileId: "file_000000000000000000000000",
                  filename: "a.pdf",
                  contentType: "application/pdf",
                  size: 1,
                  sha256: "a".repeat(64),
                },
              ],
              options: {},
              deadlineSeconds: 60,
              retentionSeconds: 60,
            },
          );
          made++;
          // A take answers from this replica's cache: let it show the job, as the backend's creation does.
          await until("the claim in the cache", () => Promise.resolve(r.pdfJobs.byName(claim.name, NS) ? true : undefined), 5000);
          return claim.jobId;
        },
        made: () => made,
      };
    });
  });
});
