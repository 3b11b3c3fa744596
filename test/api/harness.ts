/**
 * API test harness: starts the real `folio serve` (a child process, embedded mode) on a free
 * loopback port with its own data directory, and talks to it over real HTTPS with node:https,
 * trusting the certificate the server generated on first start.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { freePort } from "../helpers/ports.ts";
import { ROOT } from "../helpers/tools.ts";

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  text: string;
  json: any;
}

export interface Server {
  port: number;
  base: string;
  dataDir: string;
  /** The dev tenant's API key and webhook secret printed on first start. */
  key: string;
  webhookSecret: string;
  ca: Buffer;
  /** Everything the server printed (stdout and stderr), for the secret-leak check. */
  logs: () => string;
  /** The server process id (for memory measurements). */
  pid: () => number;
  /** Stops the server abruptly, as a crash or an OOM kill would. */
  kill: () => Promise<void>;
  request(method: string, urlPath: string, opts?: RequestOptions): Promise<HttpResponse>;
  folio(args: string[]): Promise<{ code: number; stdout: string; stderr: string; json: any }>;
  stop(): Promise<void>;
  restart(): Promise<void>;
  cleanup(): Promise<void>;
}

export interface RequestOptions {
  key?: string | null;
  headers?: Record<string, string>;
  json?: unknown;
  body?: Buffer | string | Iterable<Buffer> | AsyncIterable<Buffer>;
  form?: FormData;
}

export { freePort };

/** Serialises FormData the way fetch would (boundary included). */
export async function encodeForm(form: FormData): Promise<{ body: Buffer; contentType: string }> {
  const req = new Request("https://localhost/", { method: "POST", body: form });
  return { body: Buffer.from(await req.arrayBuffer()), contentType: req.headers.get("content-type")! };
}

/** How a request connects: the TLS name to verify (when `base` is an address) and an idle timeout. */
export interface RequestTransport {
  servername?: string;
  timeoutMs?: number;
}

/**
 * One HTTPS request on a fresh connection (so a round-robin proxy spreads requests, not
 * connections), verifying the server against `ca`; the body may be streamed.
 */
export function httpsRequest(
  base: string,
  ca: Buffer,
  method: string,
  urlPath: string,
  headers: Record<string, string>,
  body?: Buffer | string | Iterable<Buffer> | AsyncIterable<Buffer>,
  transport: RequestTransport = {},
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const tls = transport.servername ? { servername: transport.servername } : {};
    const req = https.request(new URL(urlPath, base), { method, headers, ca, agent: false, ...tls }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const buf = Buffer.concat(chunks);
        const text = buf.toString("utf8");
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: buf, text, json });
      });
      res.on("error", reject);
    });
    const timeoutMs = transport.timeoutMs;
    if (timeoutMs) req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    if (body === undefined || typeof body === "string" || Buffer.isBuffer(body)) req.end(body);
    else
      void (async () => {
        try {
          for await (const chunk of body) if (!req.write(chunk)) await new Promise((r) => req.once("drain", r));
          req.end();
        } catch (e) {
          req.destroy(e as Error);
        }
      })();
  });
}

/**
 * `folio serve` on a free port with a fresh data directory. `compiled`: the compiled tree through
 * the `bin/folio` script, as `make run` starts it (`make build` first); otherwise bin/folio.ts.
 */
export async function startServer(env: Record<string, string> = {}, opts: { compiled?: boolean } = {}): Promise<Server> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "folio-api-"));
  const port = await freePort();
  let output = "";
  let child: ChildProcess | null = null;
  let key = "";
  let webhookSecret = "";

  const exited = (c: ChildProcess): boolean => c.exitCode !== null || c.signalCode !== null;
  const launch = async (): Promise<void> => {
    const from = output.length;
    const serve = ["serve", "--port", String(port), "--data-dir", dataDir];
    // The same Node flags bin/folio gives `folio serve`.
    const [command, ...args] = opts.compiled
      ? [path.join(ROOT, "bin/folio"), ...serve]
      : [process.execPath, "--max-semi-space-size=4", path.join(ROOT, "bin/folio.ts"), ...serve];
    child = spawn(command, args, {
      env: { ...process.env, FOLIO_LOG_LEVEL: "info", FOLIO_WORKERS: "2", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const ready = new Promise<void>((resolve, reject) => {
      const onData = (b: Buffer): void => {
        output += b.toString();
        const fresh = output.slice(from);
        if (/listening on/.test(fresh)) resolve();
      };
      child!.stdout!.on("data", onData);
      child!.stderr!.on("data", onData);
      child!.once("exit", (code) => reject(new Error(`folio serve exited with ${code}:\n${output}`)));
      setTimeout(() => reject(new Error(`folio serve did not start:\n${output}`)), 30_000).unref();
    });
    await ready;
    key ||= /API key:\s+(\S+)/.exec(output)?.[1] ?? "";
    webhookSecret ||= /webhook secret:\s+(\S+)/.exec(output)?.[1] ?? "";
  };
  await launch();
  const ca = await readFile(path.join(dataDir, "tls-cert.pem"));
  const base = `https://127.0.0.1:${port}`;

  const stop = async (): Promise<void> => {
    const c = child;
    if (!c || exited(c)) return;
    await new Promise<void>((resolve) => {
      c.once("exit", () => resolve());
      c.kill("SIGTERM");
      setTimeout(() => c.kill("SIGKILL"), 10_000).unref();
    });
  };

  const server: Server = {
    port,
    base,
    dataDir,
    get key() {
      return key;
    },
    get webhookSecret() {
      return webhookSecret;
    },
    ca,
    logs: () => output,
    pid: () => child?.pid ?? 0,
    async kill() {
      const c = child;
      if (!c || exited(c)) return;
      await new Promise<void>((resolve) => {
        c.once("exit", () => resolve());
        c.kill("SIGKILL");
      });
    },
    async request(method, urlPath, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      const k = opts.key === undefined ? key : opts.key;
      if (k !== null) headers.Authorization ??= `Bearer ${k}`;
      let body = opts.body;
      if (opts.json !== undefined) {
        body = JSON.stringify(opts.json);
        headers["Content-Type"] ??= "application/json";
      }
      if (opts.form) {
        const enc = await encodeForm(opts.form);
        body = enc.body;
        headers["Content-Type"] = enc.contentType;
      }
      return httpsRequest(base, ca, method, urlPath, headers, body);
    },
    async folio(args) {
      return new Promise((resolve) => {
        // The server's own environment: in Kubernetes mode the CLI then works on the same cluster.
        const c = spawn(process.execPath, [path.join(ROOT, "bin/folio.ts"), ...args, "--data-dir", dataDir], {
          env: { ...process.env, ...env },
        });
        let stdout = "";
        let stderr = "";
        c.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
        c.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
        c.on("close", (code) => {
          let json: unknown;
          try {
            json = JSON.parse(stdout);
          } catch {
            json = undefined;
          }
          resolve({ code: code ?? -1, stdout, stderr, json });
        });
      });
    },
    stop,
    async restart() {
      await stop();
      await launch();
    },
    async cleanup() {
      await stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** A File/Blob for FormData from bytes. */
export function blob(bytes: Uint8Array | string, type = "application/octet-stream"): Blob {
  return new Blob([typeof bytes === "string" ? bytes : Buffer.from(bytes)], { type });
}

/** Polls GET /v1/jobs/{id} until the job has ended. */
export async function waitForJob(server: Server, id: string, timeoutMs = 60_000, key?: string): Promise<any> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const res = await server.request("GET", `/v1/jobs/${id}`, key ? { key } : {});
    if (res.status !== 200) throw new Error(`GET job ${id}: ${res.status} ${res.text}`);
    if (!["queued", "running"].includes(res.json.status)) return res.json;
    if (Date.now() > end) throw new Error(`job ${id} still ${res.json.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
