/**
 * Jobs survive a restart of `folio serve` (issue #3): queued jobs run after it, jobs that were
 * running are retried, and none is lost or completed twice.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blob, startServer, waitForJob, type Server } from "./harness.ts";
import { textPdf } from "./fixtures.ts";

let s: Server;
beforeAll(async () => {
  s = await startServer({ FOLIO_WORKERS: "1" });
}, 60_000);
afterAll(() => s.cleanup());

describe("restart", () => {
  it.each([
    ["a graceful stop (SIGTERM)", "stop"],
    ["a crash (SIGKILL)", "kill"],
  ] as const)("after %s every submitted job completes exactly once", { timeout: 180_000 }, async (_why, how) => {
    const pdf = await textPdf(400, "p");
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const form = new FormData();
      form.append("file", blob(pdf), `doc${i}.pdf`);
      form.append("mode", "every");
      form.append("every", "50");
      const res = await s.request("POST", "/v1/pdf/split", { form });
      expect(res.status, res.text).toBe(202);
      ids.push(res.json.id);
    }
    await (how === "stop" ? s.stop() : s.kill());
    await s.restart();
    const jobs = [];
    for (const id of ids) jobs.push(await waitForJob(s, id, 120_000));
    for (const job of jobs) {
      expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
      expect(job.result.files).toHaveLength(9); // 8 parts of 50 pages and the zip
    }
    const listed = (await s.request("GET", "/v1/jobs?limit=100")).json.data.filter((j: any) => ids.includes(j.id));
    expect(listed).toHaveLength(5);
  });

  it("purges on start the inputs of a job that ended just before a crash, and keeps other uploads", { timeout: 120_000 }, async () => {
    const form = new FormData();
    form.append("file", blob(await textPdf(2, "q")), "input.pdf");
    const job = (await s.request("POST", "/v1/pdf/compress", { form })).json;
    expect((await waitForJob(s, job.id)).status).toBe("succeeded");
    const kept = new FormData();
    kept.append("file", blob(await textPdf(1, "k")), "kept.pdf");
    const upload = (await s.request("POST", "/v1/files", { form: kept })).json.data[0];
    await s.kill();
    // The state a SIGKILL leaves between "job ended" and "its inputs purged": the input's record
    // (attached to the job, so without expiry) and its bytes.
    const db = new DatabaseSync(path.join(s.dataDir, "folio.db"));
    const tenant = (db.prepare("SELECT tenant_id FROM jobs WHERE id = ?").get(job.id) as { tenant_id: string }).tenant_id;
    const key = `${tenant}/file_leftoverinput0000`;
    db.prepare(
      "INSERT INTO files (id, tenant_id, role, job_id, filename, content_type, size, sha256, pages, storage_key, created_at, expires_at) VALUES (?, ?, 'upload', ?, 'x.pdf', 'application/pdf', 3, '00', 1, ?, ?, NULL)",
    ).run("file_leftoverinput0000", tenant, job.id, key, Date.now());
    db.close();
    const bytes = path.join(s.dataDir, "files", key);
    await mkdir(path.dirname(bytes), { recursive: true });
    await writeFile(bytes, "pdf");
    await s.restart();
    await expect.poll(() => existsSync(bytes), { timeout: 10_000 }).toBe(false);
    expect((await s.request("GET", "/v1/files/file_leftoverinput0000")).status).toBe(404);
    expect((await s.request("GET", `/v1/files/${upload.id}`)).status).toBe(200);
  });
});
