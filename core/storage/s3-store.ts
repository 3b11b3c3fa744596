/**
 * ObjectStore on S3-compatible storage (Kubernetes mode), over @aws-sdk/client-s3.
 *
 * Uploads stream: the body is cut into parts of `partSize` bytes and sent as a multipart upload
 * with at most two parts in flight, so memory stays at a few parts whatever the file size; a
 * body smaller than one part is a single PutObject. (@aws-sdk/lib-storage is not a dependency:
 * this is the small part of it Folio needs.)
 *
 * Errors: a missing object is ObjectNotFound; anything else is a StorageError whose message names
 * the operation, the key, the service's error code and HTTP status, and never the credentials,
 * request signatures or the SDK's raw request/response (which is why the SDK error is not kept
 * as `cause`: loggers serialize causes).
 */
import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { Readable } from "node:stream";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from "@aws-sdk/client-s3";
import type { Config } from "../config.ts";
import { assertPrefix, ObjectNotFound, StorageError, type ObjectStore } from "./store.ts";

/** What a HEAD tells of an object. */
export interface ObjectHead {
  size: number;
  /** Epoch milliseconds. */
  lastModified: number;
  contentType: string;
  /** User metadata (x-amz-meta-*), keys in lower case. */
  metadata: Record<string, string>;
}

/** An object in a listing. */
export interface ListedObject {
  key: string;
  size: number;
  /** Epoch milliseconds. */
  lastModified: number;
}

export interface S3StoreOptions {
  bucket: string;
  region?: string;
  /** An S3-compatible server's URL (default: AWS for the region). */
  endpoint?: string;
  forcePathStyle?: boolean;
  /** Default: the AWS SDK's credential chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, web identity, …). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Bytes per uploaded part (≥ 5 MiB, S3's minimum); default 8 MiB. */
  partSize?: number;
  /** Parts uploaded at once; default 2. Memory per upload is about (queueSize + 1) × partSize. */
  queueSize?: number;
}

const MIN_PART_SIZE = 5 * 1024 * 1024;
const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
/** S3 allows at most 10,000 parts per upload. */
const MAX_PARTS = 10_000;
/** DeleteObjects takes at most 1000 keys. */
const DELETE_BATCH = 1000;

interface SdkError {
  name?: string;
  Code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

function statusOf(err: unknown): number | undefined {
  return (err as SdkError | null)?.$metadata?.httpStatusCode;
}

function isNotFound(err: unknown): boolean {
  const name = (err as SdkError | null)?.name;
  return name === "NoSuchKey" || name === "NotFound" || (statusOf(err) === 404 && name !== "NoSuchBucket");
}

/** Removes anything that could identify or prove a credential from a service message. */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text
    .replace(/Credential=[^,\s"]+/g, "Credential=[redacted]")
    .replace(/Signature=[0-9a-fA-F]+/g, "Signature=[redacted]")
    .replace(/X-Amz-(Credential|Signature|Security-Token)=[^&\s"]+/gi, "X-Amz-$1=[redacted]")
    .replace(/\b(AKIA|ASIA)[0-9A-Z]{12,}\b/g, "[redacted]");
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join("[redacted]");
  return out.length > 300 ? out.slice(0, 300) + "…" : out;
}

export class S3ObjectStore implements ObjectStore {
  readonly bucket: string;
  readonly client: S3Client;
  readonly partSize: number;
  readonly queueSize: number;
  readonly #secrets: string[];

  constructor(o: S3StoreOptions) {
    this.bucket = o.bucket;
    this.partSize = Math.max(MIN_PART_SIZE, o.partSize ?? DEFAULT_PART_SIZE);
    this.queueSize = Math.max(1, o.queueSize ?? 2);
    this.#secrets = o.credentials ? [o.credentials.accessKeyId, o.credentials.secretAccessKey] : [];
    this.client = new S3Client({
      region: o.region ?? "us-east-1",
      ...(o.endpoint ? { endpoint: o.endpoint } : {}),
      forcePathStyle: o.forcePathStyle ?? false,
      ...(o.credentials ? { credentials: o.credentials } : {}),
      // Checksums only where S3 requires them (DeleteObjects): S3-compatible servers differ in
      // their support of the newer flexible checksums.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      maxAttempts: 3,
    });
  }

  /** The store Folio's configuration describes; throws when FOLIO_S3_BUCKET is not set. */
  static fromConfig(config: Config): S3ObjectStore {
    if (!config.FOLIO_S3_BUCKET) throw new Error("FOLIO_S3_BUCKET is not set");
    return new S3ObjectStore({
      bucket: config.FOLIO_S3_BUCKET,
      region: config.FOLIO_S3_REGION,
      ...(config.FOLIO_S3_ENDPOINT ? { endpoint: config.FOLIO_S3_ENDPOINT } : {}),
      forcePathStyle: config.FOLIO_S3_FORCE_PATH_STYLE,
    });
  }

  #error(op: string, key: string, err: unknown): Error {
    if (err instanceof StorageError || err instanceof ObjectNotFound) return err;
    const e = (err ?? {}) as SdkError;
    const code = e.Code ?? e.name ?? "Error";
    const status = statusOf(err);
    const detail = redact(e.message ?? String(err), this.#secrets);
    return new StorageError(`S3 ${op} ${JSON.stringify(key)} failed: ${code}${status ? ` (HTTP ${status})` : ""}: ${detail}`, code);
  }

  async put(key: string, body: Readable): Promise<number> {
    const Bucket = this.bucket;
    let uploadId: string | undefined;
    const parts: CompletedPart[] = [];
    const inFlight = new Set<Promise<void>>();
    // Set by a failed part (in a callback, hence an object: TypeScript would narrow a `let`).
    const state: { failed: Error | null } = { failed: null };
    let total = 0;

    const sendPart = (data: Buffer): Promise<void> => {
      const PartNumber = parts.length + 1;
      if (PartNumber > MAX_PARTS) throw new StorageError(`S3 put ${JSON.stringify(key)} failed: more than ${MAX_PARTS} parts`);
      const slot: CompletedPart = { PartNumber };
      parts.push(slot);
      const p = this.client
        .send(new UploadPartCommand({ Bucket, Key: key, UploadId: uploadId, PartNumber, Body: data, ContentLength: data.length }))
        .then((res) => {
          slot.ETag = res.ETag;
        })
        .catch((err: unknown) => {
          state.failed ??= err instanceof Error ? err : new Error(String(err));
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
      return p;
    };

    try {
      let chunks: Buffer[] = [];
      let buffered = 0;
      for await (const raw of body) {
        const chunk = typeof raw === "string" ? Buffer.from(raw) : (raw as Buffer);
        chunks.push(chunk);
        buffered += chunk.length;
        total += chunk.length;
        while (buffered >= this.partSize) {
          const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, buffered);
          const part = all.subarray(0, this.partSize);
          const rest = all.subarray(this.partSize);
          chunks = rest.length ? [rest] : [];
          buffered = rest.length;
          uploadId ??= (await this.client.send(new CreateMultipartUploadCommand({ Bucket, Key: key }))).UploadId;
          if (!uploadId) throw new StorageError(`S3 put ${JSON.stringify(key)} failed: no upload id`);
          void sendPart(part);
          // Backpressure: stop reading while the queue is full.
          while (inFlight.size >= this.queueSize) await Promise.race(inFlight);
          if (state.failed) throw state.failed;
        }
      }
      const last = Buffer.concat(chunks, buffered);
      if (uploadId === undefined) {
        await this.client.send(new PutObjectCommand({ Bucket, Key: key, Body: last, ContentLength: last.length }));
        return total;
      }
      if (last.length > 0) void sendPart(last);
      await Promise.all(inFlight);
      if (state.failed) throw state.failed;
      await this.client.send(
        new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
      );
      return total;
    } catch (err) {
      body.destroy();
      if (uploadId !== undefined) {
        await Promise.allSettled(inFlight);
        await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId: uploadId })).catch(() => undefined);
      }
      throw this.#error("put", key, err);
    }
  }

  /** Uploads a local file and removes it (a move, as on the local disk). */
  async putFile(key: string, localPath: string): Promise<void> {
    await this.put(key, createReadStream(localPath));
    await rm(localPath, { force: true });
  }

  async get(key: string, opts: { signal?: AbortSignal } = {}): Promise<Readable> {
    try {
      // The signal ends a request to a server that never answers (the runner's deadline).
      const res = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key }),
        opts.signal ? { abortSignal: opts.signal } : {},
      );
      if (!(res.Body instanceof Readable)) throw new StorageError(`S3 get ${JSON.stringify(key)} failed: no body stream`);
      return res.Body;
    } catch (err) {
      if (isNotFound(err)) throw new ObjectNotFound(key);
      throw this.#error("get", key, err);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      if (isNotFound(err)) return;
      throw this.#error("delete", key, err);
    }
  }

  async deletePrefix(prefix: string): Promise<void> {
    assertPrefix(prefix);
    try {
      // Listing from the start each round: the deleted keys are gone, so no continuation token
      // is needed and a listing that races with a writer still converges.
      for (;;) {
        const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, MaxKeys: DELETE_BATCH }));
        const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [{ Key: o.Key }] : []));
        if (keys.length === 0) return;
        const res = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys, Quiet: true } }));
        const errors = (res.Errors ?? []).filter((e) => e.Code !== "NoSuchKey");
        if (errors.length > 0) {
          const first = errors[0]!;
          throw new StorageError(
            `S3 deletePrefix ${JSON.stringify(prefix)} failed for ${errors.length} keys: ${first.Code ?? "Error"}: ${redact(first.Message ?? "")}`,
            first.Code,
          );
        }
        if (!page.IsTruncated) return;
      }
    } catch (err) {
      throw this.#error("deletePrefix", prefix, err);
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw this.#error("exists", key, err);
    }
  }

  /** The object's size, time, content type and user metadata (x-amz-meta-*); null when absent. */
  async head(key: string): Promise<ObjectHead | null> {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return {
        size: res.ContentLength ?? 0,
        lastModified: res.LastModified?.getTime() ?? 0,
        contentType: res.ContentType ?? "",
        metadata: res.Metadata ?? {},
      };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw this.#error("head", key, err);
    }
  }

  /**
   * Replaces the object's user metadata and content type: a copy onto itself with the
   * REPLACE directive (server-side; no bytes travel). Values must be ASCII (HTTP headers). False
   * when the object is absent.
   */
  async setMetadata(key: string, metadata: Record<string, string>, contentType?: string): Promise<boolean> {
    try {
      await this.client.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          Key: key,
          CopySource: `${this.bucket}/${key.split("/").map(encodeURIComponent).join("/")}`,
          MetadataDirective: "REPLACE",
          Metadata: metadata,
          ...(contentType ? { ContentType: contentType } : {}),
        }),
      );
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw this.#error("setMetadata", key, err);
    }
  }

  /**
   * The objects under `prefix`, a page at a time: with `delimiter` "/", only the direct children
   * (and the common prefixes below, as `prefixes`).
   */
  async *list(prefix: string, delimiter?: string): AsyncGenerator<{ objects: ListedObject[]; prefixes: string[] }> {
    let token: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: prefix,
            ...(delimiter ? { Delimiter: delimiter } : {}),
            ...(token ? { ContinuationToken: token } : {}),
          }),
        );
      } catch (err) {
        throw this.#error("list", prefix, err);
      }
      yield {
        objects: (page.Contents ?? []).flatMap((o) =>
          o.Key ? [{ key: o.Key, size: o.Size ?? 0, lastModified: o.LastModified?.getTime() ?? 0 }] : [],
        ),
        prefixes: (page.CommonPrefixes ?? []).flatMap((c) => (c.Prefix ? [c.Prefix] : [])),
      };
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  async ready(): Promise<boolean> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
      return true;
    } catch {
      return false;
    }
  }

  /** Closes the client's sockets. */
  close(): void {
    this.client.destroy();
  }
}
