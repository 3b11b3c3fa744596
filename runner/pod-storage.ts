/**
 * What a runner pod does with the object store — read its inputs, write its outputs — in one of two
 * ways:
 *
 * - presigned (the controller's runner pods, issue #11): FOLIO_RUNNER_ACCESS holds a presigned GET
 *   URL per input and a POST policy for the job's output prefix (controller/runner-access.ts); the
 *   pod has no credentials and can touch no other object (the store refuses a URL whose key or
 *   signature differs, and a POST outside the prefix);
 * - an ObjectStore (FOLIO_S3_* and the SDK's credentials), for a pod started otherwise.
 *
 * Uploads are POSTed as multipart/form-data (the policy's fields, the key, then the file) with a
 * Content-Length, streaming the file: S3 does not accept a chunked POST.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { RUNNER_ACCESS_ENV } from "../core/schemas/runner-pod.ts";
import { ObjectNotFound, StorageError, type ObjectStore } from "../core/storage/store.ts";

export { RUNNER_ACCESS_ENV };

export interface PodStorage {
  get(key: string, opts: { signal: AbortSignal }): Promise<Readable>;
  putFile(key: string, file: string): Promise<void>;
  putBytes(key: string, bytes: Buffer): Promise<void>;
  close(): void;
}

/** FOLIO_RUNNER_ACCESS: the controller's RunnerAccess (controller/runner-access.ts). */
export interface PresignedAccess {
  get: Record<string, string>;
  post: { url: string; fields: Record<string, string>; prefix: string; maxBytes: number };
}

export function storeStorage(store: ObjectStore & { close?: () => void }): PodStorage {
  return {
    get: (key, opts) => store.get(key, opts),
    putFile: async (key, file) => {
      await store.put(key, createReadStream(file));
    },
    putBytes: async (key, bytes) => {
      await store.put(key, Readable.from([bytes]));
    },
    close: () => store.close?.(),
  };
}

/** The service's error code from its XML answer (never the URL: it carries a signature). */
function errorCode(body: string): string | undefined {
  return /<Code>([^<]{1,64})<\/Code>/.exec(body)?.[1];
}

export function presignedStorage(access: PresignedAccess): PodStorage {
  const post = async (key: string, size: number, body: () => Readable): Promise<void> => {
    if (!key.startsWith(access.post.prefix)) throw new StorageError(`upload of ${key}: outside the job's prefix`);
    const boundary = `----folio${randomBytes(12).toString("hex")}`;
    const field = (name: string, value: string): string =>
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const head = Buffer.from(
      Object.entries({ key, ...access.post.fields })
        .map(([k, v]) => field(k, v))
        .join("") +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="upload"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const url = new URL(access.post.url);
    await new Promise<void>((resolve, reject) => {
      const req = (url.protocol === "https:" ? https : http).request(
        url,
        {
          method: "POST",
          headers: { "Content-Type": `multipart/form-data; boundary=${boundary}`, "Content-Length": head.length + size + tail.length },
        },
        (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString("utf8").slice(0, 4096)));
          res.on("end", () => {
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) resolve();
            else reject(new StorageError(`upload of ${key}: HTTP ${status} ${errorCode(text) ?? ""}`.trim(), errorCode(text)));
          });
          res.on("error", reject);
        },
      );
      req.on("error", (e) => reject(new StorageError(`upload of ${key}: ${e.message}`)));
      req.write(head);
      const file = body();
      file.on("error", (e) => req.destroy(e));
      file.on("end", () => req.end(tail));
      file.pipe(req, { end: false });
    });
  };
  return {
    async get(key, opts) {
      const url = access.get[key];
      if (!url) throw new StorageError(`${key}: no access to this object`, "AccessDenied");
      const res = await fetch(url, { signal: opts.signal });
      if (res.status === 404) throw new ObjectNotFound(key);
      if (!res.ok || !res.body) {
        const code = errorCode(await res.text().catch(() => ""));
        throw new StorageError(`download of ${key}: HTTP ${res.status} ${code ?? ""}`.trim(), code);
      }
      return Readable.fromWeb(res.body as import("node:stream/web").ReadableStream<Uint8Array>);
    },
    async putFile(key, file) {
      const { size } = await stat(file);
      await post(key, size, () => createReadStream(file));
    },
    putBytes: (key, bytes) => post(key, bytes.length, () => Readable.from([bytes])),
    close: () => undefined,
  };
}
