/**
 * The controller's upload sweep (controller/upload-sweep.ts) on a real MinIO: it deletes the
 * uploads whose record says they expired, and those without a record past the TTL, and leaves
 * young uploads, uploads an unfinished job uses, and job outputs alone.
 *
 * Skipped — saying so — when MinIO is not built, unless FOLIO_S3_REQUIRED is set.
 */
import { existsSync } from "node:fs";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepUploads } from "../../controller/upload-sweep.ts";
import { newId } from "../../core/ids.ts";
import { S3ObjectStore } from "../../core/storage/s3-store.ts";
import { uploadMetadata } from "../../core/storage/upload-record.ts";
import { minioPath, startS3Server, type S3Server } from "../s3/server.ts";

const HAVE = existsSync(minioPath()) || Boolean(process.env.FOLIO_S3_REQUIRED);
if (!HAVE) process.stderr.write("[upload-sweep.test] SKIPPED: the S3 test server is not built (test/s3/build.sh)\n");

let s3: S3Server;
let store: S3ObjectStore;

async function put(key: string, record?: { expiresAt: number }): Promise<string> {
  await store.put(key, Readable.from([Buffer.from("%PDF-1.7\n")]));
  if (record) {
    const meta = uploadMetadata({
      tenant: key.split("/")[0]!,
      filename: "a.pdf",
      sha256: "b".repeat(64),
      pages: 1,
      createdAt: Date.now(),
      ...record,
    });
    await store.setMetadata(key, meta, "application/pdf");
  }
  return key;
}

describe.runIf(HAVE)("the upload sweep", () => {
  beforeAll(async () => {
    s3 = await startS3Server();
    store = new S3ObjectStore(s3.storeOptions);
  }, 120_000);
  afterAll(async () => {
    store?.close();
    await s3?.stop();
  });

  it("deletes expired uploads no unfinished job uses, and nothing else", async () => {
    const now = Date.now();
    const expired = await put(`acme/${newId("file")}`, { expiresAt: now - 1000 });
    const fresh = await put(`acme/${newId("file")}`, { expiresAt: now + 3_600_000 });
    const used = await put(`globex/${newId("file")}`, { expiresAt: now - 1000 });
    const orphan = await put(`globex/${newId("file")}`); // bytes stored, record never written
    const output = await put(`acme/${newId("job")}/${newId("file")}`);
    const later = now + 5000;
    // TTL 1 s: every object is past it by its age; only the records (or their absence) decide.
    const r = await sweepUploads({ store, inUse: () => new Set([used]), ttlMs: 1000, now: () => later });
    expect(await store.exists(expired)).toBe(false);
    expect(await store.exists(orphan)).toBe(false);
    expect(await store.exists(fresh)).toBe(true);
    expect(await store.exists(used)).toBe(true);
    expect(await store.exists(output)).toBe(true);
    expect(r).toEqual({ deleted: 2, kept: 2 });
    // Young objects are not even looked at (no HEAD): their age is within the TTL.
    const young = await put(`acme/${newId("file")}`, { expiresAt: now - 1 });
    expect((await sweepUploads({ store, inUse: () => new Set(), ttlMs: 3_600_000 })).deleted).toBe(0);
    expect(await store.exists(young)).toBe(true);
  });
});
