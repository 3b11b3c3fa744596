/**
 * A real S3-compatible server on loopback for the tests: the MinIO binary test/s3/build.sh
 * builds from the Go module proxy, started on a free 127.0.0.1 port with a temporary data
 * directory and random root credentials, waited on until it is ready, with one bucket created.
 *
 *   const s3 = await startS3Server();   // throws S3ServerMissing when the binary is not built
 *   …new S3ObjectStore(s3.storeOptions)…
 *   await s3.stop();
 *
 * Run as a script (`node test/s3/server.ts`) it starts a server, prints its settings as JSON and
 * runs until interrupted (handy to poke at with a client).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, open, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { freePort } from "../helpers/ports.ts";

const HERE = import.meta.dirname;

/** The MinIO version test/s3/build.sh pins (read from the script: one place pins it). */
export function minioVersion(): string {
  const m = /^MINIO_VERSION=(\S+)$/m.exec(readFileSync(path.join(HERE, "build.sh"), "utf8"));
  if (!m?.[1]) throw new Error("test/s3/build.sh pins no MINIO_VERSION");
  return m[1];
}

/** Where test/s3/build.sh puts the binary (FOLIO_S3_CACHE or ~/.cache/folio-s3). */
export function minioPath(env: NodeJS.ProcessEnv = process.env): string {
  const root = env.FOLIO_S3_CACHE || path.join(os.homedir(), ".cache", "folio-s3");
  return path.join(root, minioVersion(), "minio");
}

export class S3ServerMissing extends Error {
  override readonly name = "S3ServerMissing";
}

export interface S3Server {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  dataDir: string;
  /** What S3ObjectStore's constructor takes. */
  storeOptions: {
    bucket: string;
    region: string;
    endpoint: string;
    forcePathStyle: true;
    credentials: { accessKeyId: string; secretAccessKey: string };
  };
  /** The environment a runner pod gets for this server (FOLIO_S3_* and AWS_* credentials). */
  env: Record<string, string>;
  /** The last lines the server logged (for failure messages). */
  logTail(): string;
  stop(): Promise<void>;
}

async function ready(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
}

/** Starts MinIO on a free loopback port and creates `bucket`. */
export async function startS3Server(opts: { bucket?: string; binary?: string; readyTimeoutMs?: number } = {}): Promise<S3Server> {
  const binary = opts.binary ?? minioPath();
  if (!existsSync(binary)) throw new S3ServerMissing(`the S3 test server is not built (${binary}); run test/s3/build.sh`);
  const bucket = opts.bucket ?? "folio-test";
  const region = "us-east-1";
  const accessKeyId = "folio" + randomBytes(8).toString("hex");
  const secretAccessKey = randomBytes(24).toString("base64url");
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "folio-s3-"));
  const port = await freePort();
  const consolePort = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;

  const logFile = path.join(dataDir, "..", `${path.basename(dataDir)}.log`);
  const log = await open(logFile, "w");
  const child = spawn(
    binary,
    ["server", "--quiet", "--address", `127.0.0.1:${port}`, "--console-address", `127.0.0.1:${consolePort}`, path.join(dataDir, "data")],
    {
      stdio: ["ignore", log.fd, log.fd],
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: dataDir,
        MINIO_ROOT_USER: accessKeyId,
        MINIO_ROOT_PASSWORD: secretAccessKey,
        MINIO_BROWSER: "off",
        MINIO_UPDATE: "off",
        MINIO_CONFIG_ENV_FILE: "/dev/null",
        MINIO_REGION: region,
      },
    },
  );
  await log.close();
  const logTail = (): string => {
    try {
      return readFileSync(logFile, "utf8").split("\n").slice(-20).join("\n");
    } catch {
      return "";
    }
  };

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited(child);
      clearTimeout(timer);
    }
    await rm(dataDir, { recursive: true, force: true });
    await rm(logFile, { force: true });
  };

  try {
    const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
    for (;;) {
      if (child.exitCode !== null) throw new Error(`MinIO exited with ${child.exitCode}:\n${logTail()}`);
      if (await ready(`${endpoint}/minio/health/ready`)) break;
      if (Date.now() > deadline) throw new Error(`MinIO was not ready within ${opts.readyTimeoutMs ?? 30_000} ms:\n${logTail()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const client = new S3Client({ region, endpoint, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } });
    try {
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
    } finally {
      client.destroy();
    }
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    endpoint,
    region,
    bucket,
    accessKeyId,
    secretAccessKey,
    dataDir,
    storeOptions: { bucket, region, endpoint, forcePathStyle: true, credentials: { accessKeyId, secretAccessKey } },
    env: {
      FOLIO_S3_BUCKET: bucket,
      FOLIO_S3_REGION: region,
      FOLIO_S3_ENDPOINT: endpoint,
      FOLIO_S3_FORCE_PATH_STYLE: "true",
      AWS_ACCESS_KEY_ID: accessKeyId,
      AWS_SECRET_ACCESS_KEY: secretAccessKey,
    },
    logTail,
    stop,
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const s3 = await startS3Server();
  process.stdout.write(JSON.stringify({ endpoint: s3.endpoint, bucket: s3.bucket, env: s3.env }, null, 2) + "\n");
  const quit = (): void => {
    void s3.stop().then(() => process.exit(0));
  };
  process.on("SIGINT", quit);
  process.on("SIGTERM", quit);
}
