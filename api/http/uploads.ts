/**
 * Streamed multipart uploads (API.md "Files"). Each `file` part goes straight to storage while
 * its SHA-256 and size are computed on the way; nothing is buffered whole. Caps per file and per
 * request end the upload with 413; the content type is sniffed from the first bytes, and a part
 * Folio does not accept is 415. On any failure every object already stored is deleted.
 */
import { createHash } from "node:crypto";
import { Transform, type TransformCallback } from "node:stream";
import type { Request } from "express";
import busboy from "busboy";
import { CONTENT_TYPES, SNIFF_BYTES, SNIFF_TAIL_BYTES, sniff, type DocKind, type Tail } from "../../core/sniff.ts";
import type { ObjectStore } from "../../core/storage/store.ts";
import { decodeMultipartFilename, safeFilename } from "./filenames.ts";
import { ApiError } from "./problem.ts";

export interface UploadedPart {
  storageKey: string;
  filename: string;
  kind: DocKind;
  contentType: string;
  size: number;
  sha256: string;
  /** Page count for PDFs, when it could be read. */
  pages?: number | null;
}

export interface MultipartResult {
  files: UploadedPart[];
  fields: Map<string, string>;
}

export interface UploadLimits {
  maxFileBytes: number;
  maxRequestBytes: number;
  maxFiles: number;
  /** What is left of the tenant's storage quota (storage_quota_exceeded beyond). */
  quotaBytes?: number;
}

/**
 * Hashes, counts and keeps the first SNIFF_BYTES and the last SNIFF_TAIL_BYTES of what flows
 * through (a zip's central directory is at its end: an Office file whose [Content_Types].xml comes
 * after 64 KiB of other parts is told by it); enforces the caps.
 */
class Meter extends Transform {
  readonly hash = createHash("sha256");
  size = 0;
  head: Buffer[] = [];
  private headLen = 0;
  /** The last chunks, dropped from the front while the rest still cover SNIFF_TAIL_BYTES. */
  private tailChunks: Buffer[] = [];
  private tailLen = 0;
  private readonly maxFile: number;
  private readonly budget: { left: number };
  private readonly quota: { left: number };

  constructor(maxFile: number, budget: { left: number }, quota: { left: number }) {
    super();
    this.maxFile = maxFile;
    this.budget = budget;
    this.quota = quota;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.size += chunk.length;
    this.budget.left -= chunk.length;
    if (this.size > this.maxFile) return cb(new ApiError("payload_too_large", `A file is larger than ${this.maxFile} bytes.`));
    if (this.budget.left < 0) return cb(new ApiError("payload_too_large", "The request is larger than the request size limit."));
    this.quota.left -= chunk.length;
    if (this.quota.left < 0) {
      return cb(new ApiError("storage_quota_exceeded", "These files would take your stored bytes past your plan's storage quota."));
    }
    if (this.headLen < SNIFF_BYTES) {
      this.head.push(chunk.subarray(0, SNIFF_BYTES - this.headLen));
      this.headLen += Math.min(chunk.length, SNIFF_BYTES - this.headLen);
    }
    this.tailChunks.push(chunk);
    this.tailLen += chunk.length;
    while (this.tailLen - this.tailChunks[0]!.length >= SNIFF_TAIL_BYTES) this.tailLen -= this.tailChunks.shift()!.length;
    this.hash.update(chunk);
    cb(null, chunk);
  }

  /** The last SNIFF_TAIL_BYTES (or fewer) bytes, with the whole size, as sniff() takes them. */
  tail(): Tail {
    const bytes = Buffer.concat(this.tailChunks);
    return { bytes: bytes.subarray(Math.max(0, bytes.length - SNIFF_TAIL_BYTES)), size: this.size };
  }
}

/**
 * Reads a multipart request: `file` parts are stored under keys from `newKey`, other fields are
 * collected as text (bounded). Rejects with ApiError; stored objects are deleted on failure.
 */
export function readMultipart(req: Request, store: ObjectStore, newKey: () => string, limits: UploadLimits): Promise<MultipartResult> {
  const declared = Number(req.get("content-length") ?? "0");
  if (declared > limits.maxRequestBytes) {
    return Promise.reject(new ApiError("payload_too_large", `The request is larger than ${limits.maxRequestBytes} bytes.`));
  }
  // Parts are written concurrently and may finish in any order; `index` keeps the client's order.
  const files: (UploadedPart & { index: number })[] = [];
  let nextIndex = 0;
  const fields = new Map<string, string>();
  const budget = { left: limits.maxRequestBytes };
  const quota = { left: limits.quotaBytes ?? Number.POSITIVE_INFINITY };
  const pending: Promise<void>[] = [];
  let failure: ApiError | Error | null = null;
  let settled = false;
  const active = new Set<Meter>();

  return new Promise<MultipartResult>((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({ headers: req.headers, limits: { fields: 100, fieldSize: 64 * 1024, parts: 200, files: limits.maxFiles + 1 } });
    } catch {
      return reject(new ApiError("unsupported_media_type", "The multipart body has no boundary."));
    }
    const finish = (): void => {
      if (settled) return;
      settled = true;
      void Promise.allSettled(pending).then(async () => {
        if (failure) {
          await Promise.all(files.map((f) => store.delete(f.storageKey)));
          return reject(failure);
        }
        resolve({ files: files.sort((x, y) => x.index - y.index).map(({ index: _i, ...part }) => part), fields });
      });
    };
    // On the first failure: stop reading, end the parts in flight (their objects get deleted),
    // drain what the client still sends, and answer once every part has settled.
    const fail = (err: Error): void => {
      if (failure) return;
      failure = err;
      req.unpipe(bb);
      req.resume();
      for (const m of active) m.destroy(err);
      finish();
    };
    const malformed = (err: Error): ApiError =>
      new ApiError("validation_failed", `The multipart body is malformed: ${err.message}`, {
        errors: [{ path: "(body)", message: "malformed multipart" }],
      });
    const unnamed = (): ApiError =>
      new ApiError("validation_failed", 'A multipart part has no name; send files as parts named "file" and options as named fields.', {
        errors: [{ path: "(body)", message: "part without a name" }],
      });
    bb.on("file", (name, stream, info) => {
      // busboy ends a part that the body cuts short ("Unexpected end of form") by destroying its
      // stream with an error: without this listener that error is uncaught and ends the process.
      stream.on("error", (err: Error) => fail(malformed(err)));
      if (!name) {
        stream.resume();
        return fail(unnamed());
      }
      if (name !== "file") {
        stream.resume();
        return fail(
          new ApiError("validation_failed", `Unexpected file part "${name}"; send files as parts named "file".`, {
            errors: [{ path: name, message: "unexpected file part" }],
          }),
        );
      }
      if (files.length + pending.length >= limits.maxFiles) {
        stream.resume();
        return fail(new ApiError("payload_too_large", `At most ${limits.maxFiles} files per request.`));
      }
      const key = newKey();
      const index = nextIndex++;
      const meter = new Meter(limits.maxFileBytes, budget, quota);
      active.add(meter);
      // The meter can fail (a cap, or fail() destroying it) before the store attaches its own
      // listeners (S3 starts the upload first, the disk store makes a directory): report it here
      // so that it is never an uncaught 'error' event.
      meter.on("error", (err: Error) => fail(err));
      const task = store
        .put(key, stream.pipe(meter))
        .then(async () => {
          active.delete(meter);
          const head = Buffer.concat(meter.head);
          // The cleaned name: a bidi override must not steer the sniffer's extension hint either.
          const name = safeFilename(decodeMultipartFilename(info.filename) ?? "");
          const kind = sniff(head, name, meter.tail());
          const part = {
            index,
            storageKey: key,
            filename: name || `upload.${kind ?? "pdf"}`,
            kind: kind ?? "pdf",
            contentType: kind ? CONTENT_TYPES[kind] : "",
            size: meter.size,
            sha256: meter.hash.digest("hex"),
          };
          files.push(part);
          if (!kind) {
            await store.delete(key);
            throw new ApiError(
              "unsupported_media_type",
              `"${part.filename}" is not a PDF or a supported Office document (judged by its content).`,
            );
          }
        })
        .catch(async (err: unknown) => {
          active.delete(meter);
          await store.delete(key);
          meter.destroy();
          stream.resume();
          fail(err instanceof Error ? err : new Error(String(err)));
        });
      stream.on("limit", () => fail(new ApiError("payload_too_large", `A file is larger than ${limits.maxFileBytes} bytes.`)));
      pending.push(task);
    });
    bb.on("field", (name, value, info) => {
      if (!name) return fail(unnamed());
      if (info.valueTruncated) return fail(new ApiError("payload_too_large", `Field "${name}" is too long.`));
      fields.set(name, value);
    });
    bb.on("filesLimit", () => fail(new ApiError("payload_too_large", `At most ${limits.maxFiles} files per request.`)));
    bb.on("fieldsLimit", () => fail(new ApiError("payload_too_large", "Too many form fields.")));
    bb.on("error", (err: Error) => fail(malformed(err)));
    bb.on("close", finish);
    req.on("aborted", () => fail(new Error("client aborted the upload")));
    req.pipe(bb);
  });
}
