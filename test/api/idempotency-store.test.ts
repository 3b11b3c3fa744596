/**
 * The embedded mode's IdempotencyStore (SQLite) against the contract every mode meets
 * (idempotency-contract.ts); the Kubernetes one runs it on a real apiserver in
 * test/e2e/idempotency-store.e2e.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { openDb, type Db } from "../../api/store/db.ts";
import { SqliteIdempotencyStore } from "../../api/store/idempotency.ts";
import { idempotencyContract } from "./idempotency-contract.ts";

let dir: string;
let db: Db;
let clock = Date.now();

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "folio-idem-store-"));
  db = openDb(dir);
});
afterAll(async () => {
  db.close();
  await rm(dir, { recursive: true, force: true });
});

idempotencyContract("embedded (SQLite)", () => {
  let made = 0;
  const store = new SqliteIdempotencyStore(db, () => clock);
  return {
    store,
    tenants: ["ten_a", "ten_b"],
    // A job row, as LocalBackend's take writes it: synchronously, inside the take's transaction.
    create: ({ jobId }, tenantId) => {
      db.prepare(
        "INSERT INTO jobs (id, tenant_id, operation, status, created_at, inputs, options, metadata, retention_ms) VALUES (?, ?, 'compress', 'queued', ?, '[]', '{}', '{}', 1000)",
      ).run(jobId, tenantId, clock);
      made++;
      return Promise.resolve(jobId);
    },
    made: () => made,
    advance: (ms) => (clock += ms),
  };
});
