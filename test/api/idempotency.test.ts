/**
 * Idempotency-Key and the unfinished-jobs cap over real HTTPS against a real `folio serve`
 * (embedded mode). API.md "Operations": a key is kept 24 h and a retry with the same key and body
 * is the same job — whatever happened since: the job ended and consumed its inputs, the tenant
 * reached its cap, the job was deleted. API.md "Limits": at most N unfinished jobs per tenant,
 * exactly N under any concurrency.
 *
 * For the cap, jobs must stay unfinished while the burst is decided: the runner's qpdf is a
 * script that never returns (the API's own page count still runs the real qpdf), so the one
 * worker holds the first job and the rest wait queued. No timing is involved.
 */
import { chmod, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tmpDir } from "../helpers/tools.ts";
import { blob, startServer, waitForJob, type Server } from "./harness.ts";
import { textPdf } from "./fixtures.ts";

async function uploadPdf(s: Server, bytes: Uint8Array, name = "a.pdf"): Promise<string> {
  const form = new FormData();
  form.append("file", blob(bytes), name);
  const res = await s.request("POST", "/v1/files", { form });
  expect(res.status, res.text).toBe(201);
  return res.json.data[0].id as string;
}

describe("an Idempotency-Key replays for its 24 hours", () => {
  let s: Server;
  let pdf: Uint8Array;
  beforeAll(async () => {
    s = await startServer({ FOLIO_RETENTION_SECONDS: "3600" });
    pdf = await textPdf(2, "idem");
  }, 60_000);
  afterAll(() => s?.cleanup());

  it("answers the same job after the job has ended and consumed its input (not 422 no such file)", async () => {
    const body = { inputs: [{ file_id: await uploadPdf(s, pdf) }], level: "lossless" };
    const headers = { "Idempotency-Key": "ended-1" };
    const first = await s.request("POST", "/v1/pdf/compress", { json: body, headers });
    expect(first.status, first.text).toBe(202);
    const done = await waitForJob(s, first.json.id);
    expect(done.status).toBe("succeeded");
    // The input is gone (API.md "Retention"): only the key can answer the retry.
    expect((await s.request("GET", `/v1/files/${body.inputs[0]!.file_id}`)).status).toBe(404);
    const retry = await s.request("POST", "/v1/pdf/compress", { json: body, headers });
    expect(retry.status, retry.text).toBe(200);
    expect(retry.headers["idempotent-replayed"]).toBe("true");
    expect(retry.json).toMatchObject({ id: first.json.id, status: "succeeded" });
    const list = await s.request("GET", "/v1/jobs?operation=compress&limit=100");
    expect(list.json.data.filter((j: { id: string }) => j.id === first.json.id)).toHaveLength(1);
    expect(list.json.data).toHaveLength(1);
  });

  it("answers the same job for an inline (multipart) retry after the job has ended, keeping none of the retry's bytes", async () => {
    const send = (): Promise<Awaited<ReturnType<Server["request"]>>> => {
      const form = new FormData();
      form.append("file", blob(pdf), "inline.pdf");
      form.append("mode", "pages");
      return s.request("POST", "/v1/pdf/split", { form, headers: { "Idempotency-Key": "ended-inline-1" } });
    };
    const first = await send();
    expect(first.status, first.text).toBe(202);
    expect((await waitForJob(s, first.json.id)).status).toBe("succeeded");
    const retry = await send();
    expect(retry.status, retry.text).toBe(200);
    expect(retry.json.id).toBe(first.json.id);
    expect(retry.headers["idempotent-replayed"]).toBe("true");
  });

  it("still conflicts on another body after the job has ended", async () => {
    const body = { inputs: [{ file_id: await uploadPdf(s, pdf) }], level: "lossless" };
    const first = await s.request("POST", "/v1/pdf/compress", { json: body, headers: { "Idempotency-Key": "ended-2" } });
    await waitForJob(s, first.json.id);
    const other = await s.request("POST", "/v1/pdf/compress", {
      json: { ...body, level: "high" },
      headers: { "Idempotency-Key": "ended-2" },
    });
    expect(other.status).toBe(409);
    expect(other.json.code).toBe("idempotency_conflict");
  });

  it("answers 404 once the key's job was deleted, and never makes a second job with that key", async () => {
    const body = { inputs: [{ file_id: await uploadPdf(s, pdf) }], level: "lossless" };
    const headers = { "Idempotency-Key": "deleted-1" };
    const first = await s.request("POST", "/v1/pdf/compress", { json: body, headers });
    await waitForJob(s, first.json.id);
    expect((await s.request("DELETE", `/v1/jobs/${first.json.id}`)).status).toBe(204);
    const retry = await s.request("POST", "/v1/pdf/compress", { json: body, headers });
    expect(retry.status).toBe(404);
    expect(retry.json.code).toBe("not_found");
    expect(retry.json.detail).toMatch(/Idempotency-Key/);
    const list = await s.request("GET", "/v1/jobs?limit=100");
    expect(list.json.data.map((j: { id: string }) => j.id)).not.toContain(first.json.id);
  });
});

describe("the unfinished-jobs cap under concurrency", () => {
  let s: Server;
  let dir: string;
  let cleanup: () => Promise<void>;
  let fileId: string;
  beforeAll(async () => {
    ({ dir, cleanup } = await tmpDir("folio-cap-"));
    // The API counts pages with `qpdf --show-npages` (the real one); the runner's qpdf never
    // returns (it notes its pid, so that the test can end it).
    const qpdf = path.join(dir, "qpdf-that-hangs");
    await writeFile(qpdf, `#!/bin/sh\ncase "$*" in *--show-npages*) exec qpdf "$@" ;; esac\necho $$ >> ${dir}/pids\nexec sleep 600\n`);
    await chmod(qpdf, 0o755);
    // Unsandboxed: the wrapper writes its pid beside itself, a host pid (core/sandbox.ts forbids both).
    s = await startServer({
      FOLIO_QPDF: qpdf,
      FOLIO_WORKERS: "1",
      FOLIO_MAX_UNFINISHED_JOBS: "20",
      FOLIO_RATE_LIMIT_BURST: "1000",
      FOLIO_SANDBOX: "none",
    });
    fileId = await uploadPdf(s, await textPdf(1, "cap"));
  }, 60_000);
  afterAll(async () => {
    // Cancel the jobs (the worker stops the hung one), then stop; then whatever still hangs.
    const jobs = (await s?.request("GET", "/v1/jobs?limit=100"))?.json?.data ?? [];
    await Promise.all(jobs.map((j: { id: string }) => s.request("DELETE", `/v1/jobs/${j.id}`)));
    await s?.cleanup();
    const pids = await readFile(path.join(dir, "pids"), "utf8").catch(() => "");
    for (const pid of pids.split("\n").filter(Boolean)) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // already gone
      }
    }
    await cleanup?.();
  });

  it("accepts exactly 20 of 100 parallel submissions and answers 429 too_many_jobs to the other 80", async () => {
    const body = { inputs: [{ file_id: fileId }], level: "lossless" };
    const answers = await Promise.all(Array.from({ length: 100 }, () => s.request("POST", "/v1/pdf/compress", { json: body })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((c) => c === 202)).toHaveLength(20);
    expect(statuses.filter((c) => c === 429)).toHaveLength(80);
    expect(answers.filter((r) => r.status === 429).every((r) => r.json.code === "too_many_jobs")).toBe(true);
    const unfinished = (await s.request("GET", "/v1/jobs?limit=100")).json.data.filter((j: { status: string }) =>
      ["queued", "running"].includes(j.status),
    );
    expect(unfinished).toHaveLength(20);
  });

  it("replays a key whose job is unfinished while the tenant is at its cap (not 429)", async () => {
    // The tenant holds its 20 unfinished jobs from the test above; one of them gets a key now.
    const jobs = (await s.request("GET", "/v1/jobs?limit=100")).json.data as { id: string }[];
    expect(jobs).toHaveLength(20);
    const body = { inputs: [{ file_id: fileId }], level: "low" };
    const refused = await s.request("POST", "/v1/pdf/compress", { json: body, headers: { "Idempotency-Key": "at-cap" } });
    expect(refused.status).toBe(429);
    // Free one place, take it with a key, then retry that key at the cap.
    expect((await s.request("DELETE", `/v1/jobs/${jobs[0]!.id}`)).status).toBe(204);
    const first = await s.request("POST", "/v1/pdf/compress", { json: body, headers: { "Idempotency-Key": "at-cap" } });
    expect(first.status, first.text).toBe(202);
    const retry = await s.request("POST", "/v1/pdf/compress", { json: body, headers: { "Idempotency-Key": "at-cap" } });
    expect(retry.status, retry.text).toBe(202);
    expect(retry.json.id).toBe(first.json.id);
    expect(retry.headers["idempotent-replayed"]).toBe("true");
  });
});
