/**
 * S3ObjectStore against a real S3 server on loopback (MinIO built by test/s3/build.sh).
 *
 * Skipped — with a message saying so — when the MinIO binary is not built, unless
 * FOLIO_S3_REQUIRED is set, in which case a missing binary fails the suite.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redact, S3ObjectStore } from "../../core/storage/s3-store.ts";
import { ObjectNotFound, StorageError } from "../../core/storage/store.ts";
import { tmpDir } from "../helpers/tools.ts";
import { minioPath, startS3Server, type S3Server } from "../s3/server.ts";

const HAVE_SERVER = existsSync(minioPath()) || Boolean(process.env.FOLIO_S3_REQUIRED);
if (!HAVE_SERVER) {
  process.stderr.write(
    `[s3-store.test] SKIPPED: the S3 test server is not built (${minioPath()}); run test/s3/build.sh, or set FOLIO_S3_REQUIRED=1 to fail instead\n`,
  );
}

let s3: S3Server;
let store: S3ObjectStore;
let dir: string;
let cleanup: () => Promise<void>;

const text = async (body: Readable): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
};
const putText = (key: string, value: string): Promise<number> => store.put(key, Readable.from([Buffer.from(value)]));

/** `total` bytes of pseudo-random data in 64 KiB chunks, hashed as they are produced. */
function generated(total: number): { body: Readable; digest: () => string } {
  const hash = createHash("sha256");
  const seed = randomBytes(64 * 1024);
  let sent = 0;
  let n = 0;
  const body = new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      const chunk = Buffer.from(seed.subarray(0, Math.min(seed.length, total - sent)));
      chunk.writeUInt32BE(n++, 0);
      hash.update(chunk);
      sent += chunk.length;
      this.push(chunk);
    },
  });
  return { body, digest: () => hash.digest("hex") };
}

async function sha256Of(body: Readable): Promise<{ sha: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const c of body) {
    hash.update(c as Buffer);
    size += (c as Buffer).length;
  }
  return { sha: hash.digest("hex"), size };
}

describe("redact (no S3 needed)", () => {
  it("should remove signatures, credential scopes, access key ids and the given secrets", () => {
    const msg =
      "Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/s3/aws4_request, Signature=0123abcd " +
      "url?X-Amz-Credential=AKIAX%2F2026&X-Amz-Signature=beef secret=wJalrXUtnFEMI";
    const out = redact(msg, ["wJalrXUtnFEMI"]);
    for (const leak of ["AKIAIOSFODNN7EXAMPLE", "0123abcd", "AKIAX", "beef", "wJalrXUtnFEMI"]) expect(out).not.toContain(leak);
    expect(redact("x".repeat(1000)).length).toBeLessThanOrEqual(301);
  });
});

describe.skipIf(!HAVE_SERVER)("S3ObjectStore on a real S3 server", () => {
  beforeAll(async () => {
    s3 = await startS3Server();
    store = new S3ObjectStore({ ...s3.storeOptions, partSize: 5 * 1024 * 1024 });
    ({ dir, cleanup } = await tmpDir("folio-s3-store-"));
  });
  afterAll(async () => {
    store?.close();
    await s3?.stop();
    await cleanup?.();
  });

  it("should be ready, and not ready for a missing bucket", async () => {
    expect(await store.ready()).toBe(true);
    const other = new S3ObjectStore({ ...s3.storeOptions, bucket: "no-such-bucket" });
    expect(await other.ready()).toBe(false);
    other.close();
  });

  it("should put, get, check and delete an object", async () => {
    expect(await putText("ten_a/file_1", "hello S3")).toBe(8);
    expect(await store.exists("ten_a/file_1")).toBe(true);
    expect(await text(await store.get("ten_a/file_1"))).toBe("hello S3");
    await store.delete("ten_a/file_1");
    expect(await store.exists("ten_a/file_1")).toBe(false);
  });

  it("should store an empty object", async () => {
    expect(await store.put("ten_a/empty", Readable.from([]))).toBe(0);
    expect(await text(await store.get("ten_a/empty"))).toBe("");
  });

  it("should reject get of a missing object with ObjectNotFound, and delete it quietly", async () => {
    await expect(store.get("ten_a/missing")).rejects.toBeInstanceOf(ObjectNotFound);
    expect(await store.exists("ten_a/missing")).toBe(false);
    await expect(store.delete("ten_a/missing")).resolves.toBeUndefined();
  });

  it("should upload a body of several parts as a multipart upload, byte for byte", async () => {
    const size = 3 * 5 * 1024 * 1024 + 12_345; // three full parts and a short one
    const { body, digest } = generated(size);
    expect(await store.put("ten_a/multi", body)).toBe(size);
    const got = await sha256Of(await store.get("ten_a/multi"));
    expect(got).toEqual({ sha: digest(), size });
  });

  it("should move a local file into the store with putFile", async () => {
    const file = path.join(dir, "local.bin");
    await writeFile(file, "from disk");
    await store.putFile("ten_a/from-disk", file);
    expect(existsSync(file)).toBe(false);
    expect(await text(await store.get("ten_a/from-disk"))).toBe("from disk");
  });

  it("should delete every object under a prefix in batches, and nothing else", async () => {
    const keys = Array.from({ length: 1234 }, (_, i) => `ten_b/job_1/obj-${i}`);
    for (let i = 0; i < keys.length; i += 32) await Promise.all(keys.slice(i, i + 32).map((k) => putText(k, k)));
    await putText("ten_b/job_12/keep", "sibling with a longer name");
    await putText("ten_b/job_1x", "sibling without the slash");
    await store.deletePrefix("ten_b/job_1/");
    for (const k of [keys[0]!, keys[999]!, keys[1000]!, keys[1233]!]) expect(await store.exists(k), k).toBe(false);
    expect(await store.exists("ten_b/job_12/keep")).toBe(true);
    expect(await store.exists("ten_b/job_1x")).toBe(true);
    await expect(store.deletePrefix("ten_b/nothing/")).resolves.toBeUndefined();
    await expect(store.deletePrefix("")).rejects.toThrow(/unsafe storage prefix/);
    await expect(store.deletePrefix("ten_b/job_1")).rejects.toThrow(/unsafe storage prefix/);
  });

  it("should never put credentials in an error", async () => {
    const wrongSecret = "wrong-" + randomBytes(16).toString("hex");
    const bad = new S3ObjectStore({ ...s3.storeOptions, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: wrongSecret } });
    const errors: unknown[] = [];
    for (const attempt of [
      () => bad.get("ten_a/x"),
      () => bad.put("ten_a/x", Readable.from([Buffer.from("x")])),
      () => bad.deletePrefix("ten_a/"),
    ]) {
      errors.push(
        await attempt().then(
          () => null,
          (e: unknown) => e,
        ),
      );
    }
    expect(await bad.ready()).toBe(false);
    bad.close();
    for (const err of errors) {
      expect(err).toBeInstanceOf(StorageError);
      const e = err as StorageError;
      const everything = `${e.message} ${e.stack ?? ""} ${JSON.stringify(e)} ${String(e.cause)}`;
      expect(everything).not.toContain(wrongSecret);
      expect(everything).not.toContain(s3.secretAccessKey);
      expect(everything).not.toContain(s3.accessKeyId);
      expect(e.cause).toBeUndefined();
      expect(e.message).toMatch(/SignatureDoesNotMatch|AccessDenied|InvalidAccessKeyId/);
    }
  });

  it("should stream a 200 MB upload and download with bounded memory", async () => {
    const size = 200 * 1024 * 1024;
    const rss = (): number => process.memoryUsage().rss;
    let peak = rss();
    const sampler = setInterval(() => {
      peak = Math.max(peak, rss());
    }, 20);
    const growthSince = (base: number): number => (peak - base) / 1024 / 1024;
    try {
      const { body, digest } = generated(size);
      const t0 = performance.now();
      let base = (peak = rss());
      expect(await store.put("ten_c/big", body)).toBe(size);
      const putMs = performance.now() - t0;
      const putGrowth = growthSince(base);
      base = peak = rss();
      const got = await sha256Of(await store.get("ten_c/big"));
      const getGrowth = growthSince(base);
      expect(got).toEqual({ sha: digest(), size });
      process.stderr.write(
        `[s3-store.test] 200 MB: put ${Math.round(putMs)} ms, peak RSS growth put ${putGrowth.toFixed(1)} MiB, get ${getGrowth.toFixed(1)} MiB\n`,
      );
      // Parts of 5 MiB, two in flight: tens of MiB (garbage included); buffering would be ≥ 200.
      expect(putGrowth).toBeLessThan(110);
      expect(getGrowth).toBeLessThan(140);
    } finally {
      clearInterval(sampler);
      await store.delete("ten_c/big");
    }
  });
});
