/**
 * Jobs survive a restart of `folio serve` (issue #3): queued jobs run after it, jobs that were
 * running are retried, and none is lost or completed twice.
 */
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
});
