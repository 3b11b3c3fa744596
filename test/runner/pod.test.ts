/**
 * `folio runner --pod` — the process a Kubernetes runner pod runs — started as a real process
 * (`node bin/folio.ts runner --pod`) against a real S3 server on loopback (MinIO built by
 * test/s3/build.sh), with the environment controller/job-template.ts gives the pod.
 *
 * Skipped — with a message saying so — when the MinIO binary is not built, unless
 * FOLIO_S3_REQUIRED is set, in which case a missing binary fails the suite.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, readdir } from "node:fs/promises";
import { createWriteStream } from "node:fs";
import { createServer, type AddressInfo, type Socket } from "node:net";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunnerPodResult, RunnerPodResultRef, TERMINATION_MESSAGE_MAX_BYTES, type RunnerPodSpec } from "../../core/schemas/runner-pod.ts";
import { outputKey, resultKey } from "../../core/schemas/storage-keys.ts";
import { S3ObjectStore } from "../../core/storage/s3-store.ts";
import { literalEnvValue } from "../../controller/job-template.ts";
import { optionsWithSecrets, readPodSpec } from "../../runner/pod.ts";
import { UsageError } from "../../runner/cli.ts";
import { JobError } from "../../core/errors.ts";
import { notPdf, showEncryption, textPdf } from "../fixtures/pdf-fixtures.ts";
import { pageCount, pdfinfo, qpdfCheck, ROOT, tmpDir } from "../helpers/tools.ts";
import { minioPath, startS3Server, type S3Server } from "../s3/server.ts";
import { runnerAccess } from "../../controller/runner-access.ts";

const HAVE_SERVER = existsSync(minioPath()) || Boolean(process.env.FOLIO_S3_REQUIRED);
if (!HAVE_SERVER) {
  process.stderr.write(
    `[pod.test] SKIPPED: the S3 test server is not built (${minioPath()}); run test/s3/build.sh, or set FOLIO_S3_REQUIRED=1 to fail instead\n`,
  );
}

let s3: S3Server;
let store: S3ObjectStore;
let dir: string;
let cleanup: () => Promise<void>;
let podN = 0;

interface PodRun {
  code: number;
  stdout: string;
  stderr: string;
  /** The termination message file's content ("" when it was not written). */
  message: string;
  tmpLeft: string[];
}

/** Runs the pod the way the local kubelet does: the env of the Job template, a termination file. */
async function runPod(spec: unknown, env: Record<string, string> = {}): Promise<PodRun> {
  return runPodEnv(spec, { ...s3.env, ...env });
}

/** The same with exactly `env` besides the pod contract's own variables (no S3 settings). */
async function runPodEnv(spec: unknown, env: Record<string, string>): Promise<PodRun> {
  const n = ++podN;
  const messagePath = path.join(dir, `termination-${n}`);
  const tmp = path.join(dir, `tmp-${n}`);
  const child = spawn(process.execPath, [path.join(ROOT, "bin/folio.ts"), "runner", "--pod"], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: tmp,
      FOLIO_RUNNER_SPEC: typeof spec === "string" ? spec : JSON.stringify(spec),
      FOLIO_TERMINATION_MESSAGE_PATH: messagePath,
      FOLIO_TMP_DIR: tmp,
      FOLIO_LOG_LEVEL: "debug",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
  child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (c) => resolve(c ?? -1));
  });
  const message = existsSync(messagePath) ? await readFile(messagePath, "utf8") : "";
  const tmpLeft = existsSync(tmp) ? await readdir(tmp) : [];
  return { code, stdout, stderr, message, tmpLeft };
}

async function upload(key: string, file: string): Promise<void> {
  await store.putFile(key, file);
}

async function download(key: string, file: string): Promise<string> {
  await pipeline(await store.get(key), createWriteStream(file));
  return file;
}

function podSpec(
  n: string,
  operation: RunnerPodSpec["operation"],
  inputs: RunnerPodSpec["inputs"],
  options: Record<string, unknown> = {},
): RunnerPodSpec {
  return {
    job_id: `job_pod${n}`,
    tenant: "ten_pod",
    operation,
    inputs,
    options,
    output_prefix: `ten_pod/job_pod${n}/`,
    limits: { timeout_ms: 60_000 },
  };
}

describe("the runner pod's contract (no S3 needed)", () => {
  it("should read the spec as the container sees it: the kubelet has turned the Job's $$ back into $", () => {
    const spec = podSpec("dollar", "merge", [{ key: "ten_pod/file_alpha", filename: "a $(HOME) $$ b.pdf" }]);
    const inJob = literalEnvValue(JSON.stringify(spec));
    const seenByContainer = inJob.replace(/\$\$/g, "$"); // the kubelet's expansion, no $(VAR) left
    expect(readPodSpec({ FOLIO_RUNNER_SPEC: seenByContainer })).toEqual(spec);
  });

  it("should refuse a missing, non-JSON or invalid spec", () => {
    expect(() => readPodSpec({})).toThrow(UsageError);
    expect(() => readPodSpec({ FOLIO_RUNNER_SPEC: "{" })).toThrow(UsageError);
    expect(() => readPodSpec({ FOLIO_RUNNER_SPEC: JSON.stringify({ job_id: "x" }) })).toThrow(JobError);
  });

  it("should merge the secret options from the environment, which win over the spec", () => {
    const spec = podSpec("pw", "protect", [{ key: "k", filename: "f.pdf" }], { encryption: "aes-128", user_password: "from-spec" });
    expect(optionsWithSecrets(spec, { FOLIO_OPTION_USER_PASSWORD: "u", FOLIO_OPTION_OWNER_PASSWORD: "" })).toEqual({
      encryption: "aes-128",
      user_password: "u",
    });
    expect(optionsWithSecrets(spec, { FOLIO_OPTION_OWNER_PASSWORD: "o" })).toEqual({
      encryption: "aes-128",
      user_password: "from-spec",
      owner_password: "o",
    });
  });
});

describe.skipIf(!HAVE_SERVER)("folio runner --pod on a real S3 server", () => {
  beforeAll(async () => {
    s3 = await startS3Server();
    store = new S3ObjectStore(s3.storeOptions);
    ({ dir, cleanup } = await tmpDir("folio-pod-"));
    await upload("ten_pod/file_alpha", await textPdf(path.join(dir, "alpha.pdf"), 3, "alpha"));
    await upload("ten_pod/file_beta", await textPdf(path.join(dir, "beta.pdf"), 5, "beta"));
    await upload("ten_pod/file_long", await textPdf(path.join(dir, "long.pdf"), 80, "long"));
    await upload("ten_pod/file_text", await notPdf(path.join(dir, "text.pdf")));
  });
  afterAll(async () => {
    store?.close();
    await s3?.stop();
    await cleanup?.();
  });

  it("should merge inputs from S3, store the output at outputKey and report it in the termination message", async () => {
    // A `$$` in the spec reaches the runner as is (the kubelet already un-doubled the Job's `$$$$`).
    const spec = {
      ...podSpec("merge", "merge", [
        { key: "ten_pod/file_alpha", filename: "alpha.pdf" },
        { key: "ten_pod/file_beta", filename: "beta.pdf", pages: "2-4" },
      ]),
      output_filename: "costs $$(HOME) Q1",
    };
    const run = await runPod(spec);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(run.message);
    const report = RunnerPodResult.parse(JSON.parse(run.message));
    expect(report.operation).toBe("merge");
    expect(report.outputs).toHaveLength(1);
    const out = report.outputs[0]!;
    expect(out.key).toBe(outputKey(spec, 0));
    expect(out.filename).toBe("costs $$(HOME) Q1.pdf");
    expect(out.pages).toBe(6);
    const file = await download(out.key, path.join(dir, "merged.pdf"));
    expect(await pageCount(file)).toBe(6);
    expect(await qpdfCheck(file)).toBe(true);
    const { createHash } = await import("node:crypto");
    expect(
      createHash("sha256")
        .update(await readFile(file))
        .digest("hex"),
    ).toBe(out.sha256);
    expect(run.tmpLeft).toEqual([]);
    expect(run.stderr).not.toContain(s3.secretAccessKey);
  });

  it("should fail a bad input with exit code 3 and the error in the termination message", async () => {
    const run = await runPod(podSpec("bad", "compress", [{ key: "ten_pod/file_text", filename: "text.pdf" }]));
    expect(run.code).toBe(3);
    const msg = JSON.parse(run.message) as { error: { code: string; message: string } };
    expect(msg.error.code).toBe("invalid_pdf");
    expect(msg.error.message).toContain("text.pdf");
    expect(run.stdout.trim()).toBe(run.message);
    expect(await store.exists(outputKey(podSpec("bad", "compress", []), 0))).toBe(false);
    expect(run.tmpLeft).toEqual([]);
  });

  it("should fail a missing input object with exit code 3", async () => {
    const run = await runPod(podSpec("gone", "compress", [{ key: "ten_pod/file_gone", filename: "gone.pdf" }]));
    expect(run.code).toBe(3);
    expect(JSON.parse(run.message)).toMatchObject({ error: { code: "invalid_pdf" } });
  });

  it("should fail an invalid spec with exit code 2 (validation_failed)", async () => {
    for (const spec of ["{not json", JSON.stringify({ ...podSpec("x", "merge", []), extra: 1 })]) {
      const run = await runPod(spec);
      expect(run.code, spec).toBe(2);
      expect(JSON.parse(run.message)).toMatchObject({ error: { code: "validation_failed" } });
    }
  });

  it("should report a job out of time with exit code 4", async () => {
    const spec = {
      ...podSpec("slow", "merge", [
        { key: "ten_pod/file_alpha", filename: "alpha.pdf" },
        { key: "ten_pod/file_beta", filename: "beta.pdf" },
      ]),
      limits: { timeout_ms: 1 },
    };
    const run = await runPod(spec);
    expect(run.code, run.stderr).toBe(4);
    expect(JSON.parse(run.message)).toMatchObject({ error: { code: "timeout" } });
    expect(run.tmpLeft).toEqual([]);
  });

  it("should stop at its deadline when the object store accepts the connection and never answers", async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const endpoint = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const spec = {
        ...podSpec("silent", "compress", [{ key: "ten_pod/file_alpha", filename: "alpha.pdf" }]),
        limits: { timeout_ms: 1500 },
      };
      const started = Date.now();
      const run = await runPod(spec, { FOLIO_S3_ENDPOINT: endpoint });
      expect(run.code, run.stderr).toBe(4);
      expect(JSON.parse(run.message)).toMatchObject({ error: { code: "timeout" } });
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });

  it("should report a storage failure as internal (exit code 1, retryable) without leaking credentials", async () => {
    const wrong = "wrong-secret-" + Math.random().toString(36).slice(2);
    const run = await runPod(podSpec("denied", "compress", [{ key: "ten_pod/file_alpha", filename: "alpha.pdf" }]), {
      AWS_SECRET_ACCESS_KEY: wrong,
    });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.message)).toMatchObject({ error: { code: "internal_error" } });
    expect(run.stderr).toMatch(/SignatureDoesNotMatch/);
    for (const text of [run.stdout, run.stderr, run.message]) {
      expect(text).not.toContain(wrong);
      expect(text).not.toContain(s3.secretAccessKey);
    }
  });

  it("should protect with the passwords from the environment, never from the spec, and never log them", async () => {
    const user = "user-$$(HOME)-" + Math.random().toString(36).slice(2);
    const owner = "owner-" + Math.random().toString(36).slice(2);
    const spec = podSpec("protect", "protect", [{ key: "ten_pod/file_alpha", filename: "alpha.pdf" }], { encryption: "aes-256" });
    const run = await runPod(spec, { FOLIO_OPTION_USER_PASSWORD: user, FOLIO_OPTION_OWNER_PASSWORD: owner });
    expect(run.code, run.stderr).toBe(0);
    for (const text of [run.stdout, run.stderr, run.message]) {
      expect(text).not.toContain(user);
      expect(text).not.toContain(owner);
    }
    const report = RunnerPodResult.parse(JSON.parse(run.message));
    const file = await download(report.outputs[0]!.key, path.join(dir, "protected.pdf"));
    expect((await pdfinfo(file)).ok).toBe(false);
    expect((await pdfinfo(file, user)).ok).toBe(true);
    expect((await pdfinfo(file, user)).Encrypted).toMatch(/^yes/);
    expect(await showEncryption(file, owner)).toMatch(/Supplied password is owner password/);
    expect(await showEncryption(file, user)).toMatch(/Supplied password is user password/);

    // Without the Secret's variable protect has no user password: a validation failure.
    const none = await runPod(podSpec("protect2", "protect", [{ key: "ten_pod/file_alpha", filename: "alpha.pdf" }]));
    expect(none.code).toBe(2);
    expect(JSON.parse(none.message)).toMatchObject({ error: { code: "validation_failed" } });
  });

  it("should store a report larger than 4 KiB at resultKey and point to it", async () => {
    const spec = podSpec("split", "split", [{ key: "ten_pod/file_long", filename: "long.pdf" }], { mode: "every", every: 1 });
    const run = await runPod(spec);
    expect(run.code, run.stderr).toBe(0);
    expect(Buffer.byteLength(run.message)).toBeLessThanOrEqual(TERMINATION_MESSAGE_MAX_BYTES);
    const ref = RunnerPodResultRef.parse(JSON.parse(run.message));
    expect(ref.result_key).toBe(resultKey(spec));
    const chunks: Buffer[] = [];
    for await (const c of await store.get(ref.result_key)) chunks.push(c as Buffer);
    const full = Buffer.concat(chunks).toString("utf8");
    expect(Buffer.byteLength(full)).toBeGreaterThan(TERMINATION_MESSAGE_MAX_BYTES);
    const report = RunnerPodResult.parse(JSON.parse(full));
    expect(report.outputs).toHaveLength(81); // 80 parts and the zip
    expect(report.outputs.map((o) => o.key)).toEqual(report.outputs.map((_, i) => outputKey(spec, i)));
    for (const i of [0, 40, 79]) expect(await pageCount(await download(report.outputs[i]!.key, path.join(dir, `part-${i}.pdf`)))).toBe(1);
    expect(await store.exists(outputKey(spec, 80))).toBe(true);
  });
});

/**
 * Issue #11: a runner pod of the controller gets no bucket credentials, only presigned URLs for its
 * own inputs and a POST policy for its own output prefix (controller/runner-access.ts). Run here
 * with none of the S3 settings in its environment, against the real S3 server.
 */
describe.skipIf(!HAVE_SERVER)("folio runner --pod with presigned access only", () => {
  const access = (spec: RunnerPodSpec, now = new Date()): string =>
    JSON.stringify(
      runnerAccess(
        spec,
        { bucket: s3.bucket, region: s3.region, endpoint: s3.endpoint, forcePathStyle: true },
        { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
        { maxBytes: 50 * 1024 * 1024, expiresSeconds: 300, now },
      ),
    );
  /** The pod's environment without any S3 setting or credential: only FOLIO_RUNNER_ACCESS. */
  const withoutCredentials = (spec: RunnerPodSpec, accessJson: string): Promise<PodRun> =>
    runPodEnv(spec, { FOLIO_RUNNER_ACCESS: accessJson });

  beforeAll(async () => {
    s3 = await startS3Server();
    store = new S3ObjectStore(s3.storeOptions);
    ({ dir, cleanup } = await tmpDir("folio-pod-presigned-"));
    await upload("ten_pod/file_gamma", await textPdf(path.join(dir, "gamma.pdf"), 2, "gamma"));
    await upload("ten_other/file_secret", await textPdf(path.join(dir, "secret.pdf"), 1, "another tenant"));
  });
  afterAll(async () => {
    store?.close();
    await s3?.stop();
    await cleanup?.();
  });

  it("should read its input and write its output under its prefix with presigned URLs alone", async () => {
    const spec = podSpec("presigned", "compress", [{ key: "ten_pod/file_gamma", filename: "gamma.pdf" }]);
    const run = await withoutCredentials(spec, access(spec));
    expect(run.code, run.stderr).toBe(0);
    const out = RunnerPodResult.parse(JSON.parse(run.message)).outputs[0]!;
    expect(out.key.startsWith(spec.output_prefix)).toBe(true);
    expect(await pageCount(await download(out.key, path.join(dir, "gamma-out.pdf")))).toBe(2);
  });

  it("should not read another job's object: it has no URL for it, and a URL of its own edited to name it is refused", async () => {
    const mine = podSpec("mine", "compress", [{ key: "ten_pod/file_gamma", filename: "gamma.pdf" }]);
    const theirs = podSpec("theirs", "compress", [{ key: "ten_other/file_secret", filename: "secret.pdf" }]);
    // The spec names the other object, the access is the job's own: no URL, AccessDenied.
    const noUrl = await withoutCredentials(theirs, access(mine));
    expect(noUrl.code).toBe(1);
    expect(JSON.parse(noUrl.message)).toMatchObject({ error: { code: "internal_error" } });
    // Its own URL with the other key swapped in: the signature no longer matches (HTTP 403).
    const forged = JSON.parse(access(mine)) as { get: Record<string, string>; post: unknown };
    const url = forged.get["ten_pod/file_gamma"]!.replace("/ten_pod/file_gamma?", "/ten_other/file_secret?");
    const res = await fetch(url);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("SignatureDoesNotMatch");
    // Anonymous: nothing without a signature.
    expect((await fetch(`${s3.endpoint}/${s3.bucket}/ten_other/file_secret`)).status).toBe(403);
  });

  it("should not upload outside its prefix, nor after its policy expired", async () => {
    const spec = podSpec("upload", "compress", [{ key: "ten_pod/file_gamma", filename: "gamma.pdf" }]);
    const a = JSON.parse(access(spec)) as { post: { url: string; fields: Record<string, string> } };
    const post = async (key: string, fields: Record<string, string>): Promise<number> => {
      const form = new FormData();
      form.append("key", key);
      for (const [k, v] of Object.entries(fields)) form.append(k, v);
      form.append("file", new Blob(["%PDF-1.7 forged"]));
      return (await fetch(a.post.url, { method: "POST", body: form })).status;
    };
    expect(await post(`${spec.output_prefix}ok.pdf`, a.post.fields)).toBe(204);
    expect(await post("ten_other/file_secret", a.post.fields)).toBe(403);
    const expired = JSON.parse(access(spec, new Date(Date.now() - 3_600_000))) as { post: { fields: Record<string, string> } };
    expect(await post(`${spec.output_prefix}late.pdf`, expired.post.fields)).toBe(403);
    expect(await store.exists("ten_other/file_secret")).toBe(true);
  });
});
