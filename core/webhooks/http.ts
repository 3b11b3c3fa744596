/**
 * One webhook POST over HTTPS, connected to an address the SSRF guard has already checked
 * (core/net/ssrf.ts). The host name is never resolved again here: the socket's `lookup` answers
 * with the pinned address, while TLS still uses the name for SNI and certificate verification
 * (RFC 6066 §3, RFC 6125). Redirects are never followed: a 3xx is a failed attempt, since following
 * one would reach a URL that was never checked. The whole exchange is bounded by one timeout
 * (15 s, API.md "Webhooks"), and at most a few KiB of the response body are read, then discarded.
 */
import https from "node:https";
import type { LookupFunction } from "node:net";
import { isIP } from "node:net";
import type { ResolvedAddress } from "../net/ssrf.ts";

/** Bytes of response body read before the connection is closed; the body itself is ignored. */
const MAX_BODY_BYTES = 4096;

/** TLS trust for receivers with a private CA: tests only; production verifies against system roots. */
export interface TlsTrust {
  ca?: string | Buffer;
  rejectUnauthorized?: boolean;
}

export interface PostRequest {
  url: URL;
  /** The address to connect to; one of those the guard returned for `url`'s host. */
  address: ResolvedAddress;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  tls?: TlsTrust;
  /** Aborts the request (the worker is stopping); the outcome then has `aborted: true`. */
  signal?: AbortSignal;
}

/** What happened: the receiver's status code, or why there is none. Never throws. */
export type PostOutcome = { kind: "response"; status: number } | { kind: "error"; error: string; aborted: boolean };

class Timeout extends Error {}
class Aborted extends Error {}

/** A short, bounded description of a network error, safe for a job's `last_error`. */
function describeError(err: unknown, timeoutMs: number): string {
  if (err instanceof Timeout) return `timed out after ${timeoutMs % 1000 === 0 ? `${timeoutMs / 1000} s` : `${timeoutMs} ms`}`;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ECONNRESET":
    case "EPIPE":
      return "connection reset";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "host unreachable";
    case "HPE_HEADER_OVERFLOW":
    case "HPE_INVALID_CONSTANT":
      return "invalid HTTP response";
    default:
      // TLS verification failures carry codes like CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT.
      return code ? `request failed (${code})` : "request failed";
  }
}

/** POSTs `body` to `url`, pinned to `address`; see the module comment. */
export function postWebhook(req: PostRequest): Promise<PostOutcome> {
  const host = req.url.hostname.replace(/^\[(.*)\]$/, "$1");
  // The pinned answer, in both shapes net.connect may ask for (`all` with autoSelectFamily).
  const lookup: LookupFunction = (_name, options, callback) => {
    const a = { address: req.address.address, family: req.address.family };
    if (options.all) (callback as unknown as (e: null, all: (typeof a)[]) => void)(null, [a]);
    else callback(null, a.address, a.family);
  };
  return new Promise<PostOutcome>((resolve) => {
    let status: number | null = null;
    let settled = false;
    const finish = (outcome: PostOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", onAbort);
      request.destroy();
      resolve(outcome);
    };
    const fail = (err: unknown): void => {
      // Once the status line has arrived, the attempt's outcome is known: a late error while
      // draining the body (or the timeout) does not change it.
      if (status !== null) finish({ kind: "response", status });
      else finish({ kind: "error", error: describeError(err, req.timeoutMs), aborted: err instanceof Aborted });
    };
    const request = https.request({
      method: "POST",
      protocol: "https:",
      host,
      port: req.url.port || 443,
      path: `${req.url.pathname}${req.url.search}`,
      headers: { ...req.headers, "content-length": String(Buffer.byteLength(req.body)) },
      lookup,
      // SNI carries names only (RFC 6066 §3); for an IP-literal URL the certificate is checked against the IP.
      ...(isIP(host) ? {} : { servername: host }),
      agent: false,
      maxHeaderSize: 16 * 1024,
      ...(req.tls?.ca !== undefined ? { ca: req.tls.ca } : {}),
      ...(req.tls?.rejectUnauthorized !== undefined ? { rejectUnauthorized: req.tls.rejectUnauthorized } : {}),
    });
    const timer = setTimeout(() => request.destroy(new Timeout()), req.timeoutMs);
    const onAbort = (): void => {
      request.destroy(new Aborted());
    };
    req.signal?.addEventListener("abort", onAbort, { once: true });
    if (req.signal?.aborted) onAbort();
    request.on("error", fail);
    request.on("response", (res) => {
      status = res.statusCode ?? 0;
      let read = 0;
      res.on("data", (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_BODY_BYTES) finish({ kind: "response", status: status! });
      });
      res.on("end", () => finish({ kind: "response", status: status! }));
      res.on("error", fail);
      res.on("close", () => finish({ kind: "response", status: status! }));
    });
    request.end(req.body);
  });
}
