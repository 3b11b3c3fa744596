/**
 * Access to exactly some objects of a bucket, without credentials (issue #11: runner pods get no
 * bucket-wide credentials): AWS Signature Version 4, signed by whoever holds the credentials (the
 * controller), used by whoever holds the result (a runner pod).
 *
 * - a presigned GET URL for one key (query-string authentication,
 *   https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html): anyone with the
 *   URL may read that one object until it expires, and nothing else;
 * - a POST policy for one key prefix (browser-based uploads,
 *   https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-HTTPPOSTConstructPolicy.html): anyone
 *   with the fields may upload objects whose keys start with the prefix, each within a size range,
 *   until it expires, and nothing else — a split may write any number of parts, all under its job's
 *   prefix.
 * Both work with AWS S3 and the S3-compatible servers that implement SigV4 (MinIO, Ceph RGW, R2…).
 * Pure functions of the credentials, the target and the clock: no SDK, no request made.
 */
import { createHash, createHmac } from "node:crypto";

export interface SigningCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** Where the bucket is, as the runner reaches it. */
export interface BucketTarget {
  readonly bucket: string;
  readonly region: string;
  /** An S3-compatible server's URL; default AWS for the region. */
  readonly endpoint?: string;
  /** `endpoint/bucket/key` (MinIO and most S3-compatible servers) instead of `bucket.host/key`. */
  readonly forcePathStyle?: boolean;
}

/** The form an upload is POSTed with: `url`, then `fields` (with `key`), then the file. */
export interface PostPolicy {
  readonly url: string;
  readonly fields: Readonly<Record<string, string>>;
  /** Every key uploaded with it must start with this. */
  readonly prefix: string;
  readonly maxBytes: number;
}

const ALGORITHM = "AWS4-HMAC-SHA256";

/** RFC 3986 unreserved characters stay; everything else is %XX (SigV4's UriEncode). */
export function uriEncode(s: string, keepSlash = false): string {
  return [...Buffer.from(s, "utf8")]
    .map((b) => {
      const c = String.fromCharCode(b);
      if (/[A-Za-z0-9\-._~]/.test(c) || (keepSlash && c === "/")) return c;
      return `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");
}

const hmac = (key: Buffer | string, data: string): Buffer => createHmac("sha256", key).update(data, "utf8").digest();
const sha256 = (data: string): string => createHash("sha256").update(data, "utf8").digest("hex");

/** 20130524T000000Z and 20130524 */
function stamps(now: Date): { amzDate: string; day: string } {
  const amzDate = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
  return { amzDate, day: amzDate.slice(0, 8) };
}

function signingKey(secret: string, day: string, region: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), "s3"), "aws4_request");
}

/** The bucket's base URL and the path of `key` under it. */
function locate(t: BucketTarget, key: string): { origin: string; path: string } {
  const base = new URL(t.endpoint ?? `https://s3.${t.region}.amazonaws.com`);
  const encodedKey = uriEncode(key, true);
  if (t.forcePathStyle) return { origin: base.origin, path: `/${uriEncode(t.bucket)}/${encodedKey}` };
  return { origin: `${base.protocol}//${t.bucket}.${base.host}`, path: `/${encodedKey}` };
}

/** A URL that lets its holder GET `key` (and only it) for `expiresSeconds` (at most 7 days) from `now`. */
export function presignGet(t: BucketTarget, creds: SigningCredentials, key: string, expiresSeconds: number, now: Date): string {
  const { origin, path } = locate(t, key);
  const host = new URL(origin).host;
  const { amzDate, day } = stamps(now);
  const scope = `${day}/${t.region}/s3/aws4_request`;
  const params: [string, string][] = [
    ["X-Amz-Algorithm", ALGORITHM],
    ["X-Amz-Credential", `${creds.accessKeyId}/${scope}`],
    ["X-Amz-Date", amzDate],
    ["X-Amz-Expires", String(Math.min(604_800, Math.max(1, Math.floor(expiresSeconds))))],
    ...(creds.sessionToken ? ([["X-Amz-Security-Token", creds.sessionToken]] as [string, string][]) : []),
    ["X-Amz-SignedHeaders", "host"],
  ];
  const query = params
    .map(([k, v]) => [uriEncode(k), uriEncode(v)])
    .sort(([a], [b]) => (a! < b! ? -1 : a! > b! ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  const canonical = ["GET", path, query, `host:${host}`, "", "host", "UNSIGNED-PAYLOAD"].join("\n");
  const toSign = [ALGORITHM, amzDate, scope, sha256(canonical)].join("\n");
  const signature = hmac(signingKey(creds.secretAccessKey, day, t.region), toSign).toString("hex");
  return `${origin}${path}?${query}&X-Amz-Signature=${signature}`;
}

/**
 * A POST policy that lets its holder upload objects under `prefix`, each at most `maxBytes`, for
 * `expiresSeconds` from `now`.
 */
export function presignPost(
  t: BucketTarget,
  creds: SigningCredentials,
  prefix: string,
  maxBytes: number,
  expiresSeconds: number,
  now: Date,
): PostPolicy {
  const { amzDate, day } = stamps(now);
  const credential = `${creds.accessKeyId}/${day}/${t.region}/s3/aws4_request`;
  const expiration = new Date(now.getTime() + Math.max(1, expiresSeconds) * 1000).toISOString();
  const policy = {
    expiration,
    conditions: [
      { bucket: t.bucket },
      ["starts-with", "$key", prefix],
      ["content-length-range", 0, maxBytes],
      { "x-amz-algorithm": ALGORITHM },
      { "x-amz-credential": credential },
      { "x-amz-date": amzDate },
      ...(creds.sessionToken ? [{ "x-amz-security-token": creds.sessionToken }] : []),
    ],
  };
  const encoded = Buffer.from(JSON.stringify(policy), "utf8").toString("base64");
  const signature = hmac(signingKey(creds.secretAccessKey, day, t.region), encoded).toString("hex");
  const { origin, path } = locate(t, "");
  return {
    url: `${origin}${path.replace(/\/$/, "") || ""}${t.forcePathStyle ? "" : "/"}`,
    fields: {
      policy: encoded,
      "x-amz-algorithm": ALGORITHM,
      "x-amz-credential": credential,
      "x-amz-date": amzDate,
      ...(creds.sessionToken ? { "x-amz-security-token": creds.sessionToken } : {}),
      "x-amz-signature": signature,
    },
    prefix,
    maxBytes,
  };
}
