/**
 * Idempotency keys are kept 24 h (API.md "Operations"): within a day a reused key with another
 * body is a conflict; after it, the key is free again, and the sweep forgets it. Drives the
 * embedded backend directly with a clock we control (no workers: jobs stay queued).
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IDEMPOTENCY_TTL_MS, LocalBackend } from "../../api/jobs/local.ts";
import { WorkerPool } from "../../api/jobs/worker-pool.ts";
import { Metrics } from "../../api/metrics.ts";
import { openDb, type Db } from "../../api/store/db.ts";
import { TenantStore } from "../../api/store/tenants.ts";
import { loadConfig } from "../../core/config.ts";
import { createLogger } from "../../core/logger.ts";
import { FsObjectStore } from "../../core/storage/fs-store.ts";

let dir: string;
let db: Db;
let backend: LocalBackend;
let clock = Date.parse("2026-01-01T00:00:00Z");
let tenantId: string;
let fileId: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "folio-idem-"));
  db = openDb(dir);
  tenantId = new TenantStore(db).create("t", "business").id;
  const store = new FsObjectStore(path.join(dir, "files"));
  const log = createLogger({ level: "silent" });
  backend = new LocalBackend({
    db,
    store,
    pool: new WorkerPool({ size: 0, env: {}, log }),
    config: loadConfig({ FOLIO_LOG_LEVEL: "silent" }),
    log,
    metrics: new Metrics({ defaultMetrics: false }),
    webhooks: { enqueue: () => undefined, stateForJob: () => null },
    sealKey: Buffer.alloc(32, 1),
    workDir: path.join(dir, "work"),
    now: () => clock,
  });
  const key = backend.newUploadKey(tenantId);
  await store.put(key, Readable.from([Buffer.from("%PDF-1.7\n")]));
  const [file] = await backend.addUploads(tenantId, [
    { storageKey: key, filename: "a.pdf", kind: "pdf", contentType: "application/pdf", size: 9, sha256: "0".repeat(64), pages: 1 },
  ]);
  fileId = file!.id;
});
afterAll(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

const job = (level: string) => ({
  tenantId: "",
  operation: "compress" as const,
  inputs: [{ file_id: "" }],
  options: { level },
  outputFilename: null,
  webhookUrl: null,
  metadata: {},
  retentionMs: 3_600_000,
  maxUnfinished: 100,
});

describe("idempotency keys are kept 24 hours", () => {
  it("replays within the day, conflicts on another body, and frees the key after it", async () => {
    const submit = (level: string, hash: string) =>
      backend.submit({ ...job(level), tenantId, inputs: [{ file_id: fileId }] }, { key: "k1", hash });
    const first = await submit("low", "A");
    expect(first.kind).toBe("created");
    clock += IDEMPOTENCY_TTL_MS - 60_000;
    expect(await submit("low", "A")).toMatchObject({ kind: "replayed", job: { id: (first as { job: { id: string } }).job.id } });
    expect((await submit("high", "B")).kind).toBe("idempotency_conflict");
    clock += 120_000;
    const later = await submit("high", "B");
    expect(later.kind).toBe("created");
    expect((later as { job: { id: string } }).job.id).not.toBe((first as { job: { id: string } }).job.id);
    clock += IDEMPOTENCY_TTL_MS + 1;
    await backend.sweep();
    expect((db.prepare("SELECT COUNT(*) AS n FROM idempotency").get() as { n: number }).n).toBe(0);
  });
});
