/**
 * The compiled tree, as `make run` starts it (`bin/folio serve` → dist/bin/folio.js): every other
 * API suite runs the TypeScript sources, so this one checks that what ships runs a job end to
 * end — its runner workers, each in its bubblewrap sandbox, find their packages (node_modules and
 * package.json are the checkout's, not the compiled tree's) and do the work.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildOfficeFixtures } from "../fixtures/office-fixtures.ts";
import { pageCount, ROOT, tmpDir } from "../helpers/tools.ts";
import { textPdf } from "./fixtures.ts";
import { blob, startServer, waitForJob, type Server } from "./harness.ts";

const BUILT = existsSync(path.join(ROOT, "dist/bin/folio.js"));
if (!BUILT) process.stderr.write("[compiled.test] SKIPPED: dist/ is not built (make build)\n");

let s: Server;

describe.runIf(BUILT || process.env.CI)("the compiled folio serve (make run)", () => {
  beforeAll(async () => {
    s = await startServer({ FOLIO_SANDBOX: "bwrap" }, { compiled: true });
  }, 60_000);

  afterAll(async () => {
    await s?.cleanup();
  });

  it("runs a compress job in its sandboxed runner workers, which start and stay up", async () => {
    const form = new FormData();
    form.append("file", blob(await textPdf(3, "compiled")), "compiled.pdf");
    const res = await s.request("POST", "/v1/pdf/compress", { form });
    expect(res.status, res.text).toBe(202);
    const job = await waitForJob(s, res.json.id as string, 60_000);
    expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
    expect(job.result.files[0].pages).toBe(3);
    expect(s.logs()).not.toMatch(/ERR_MODULE_NOT_FOUND|Runner worker exited/);
  });

  it("converts a Word document with the warm LibreOffice, and serves the dashboard's assets and the reference", async () => {
    const { dir, cleanup } = await tmpDir("folio-compiled-");
    try {
      const fx = await buildOfficeFixtures(dir);
      const form = new FormData();
      form.append("file", blob(await readFile(fx.smallDocx)), "report.docx");
      form.append("to", "pdf");
      const res = await s.request("POST", "/v1/pdf/convert", { form, headers: { Prefer: "wait=90" } });
      expect([200, 202], res.text).toContain(res.status);
      const job = await waitForJob(s, res.json.id as string, 120_000);
      expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
      const pdf = await s.request("GET", `/v1/files/${job.result.files[0].id as string}/content`);
      expect(pdf.status).toBe(200);
      await writeFile(path.join(dir, "out.pdf"), pdf.body);
      expect(await pageCount(path.join(dir, "out.pdf"))).toBeGreaterThan(0);
    } finally {
      await cleanup();
    }
    expect((await s.request("GET", "/docs", { key: null })).status).toBe(200);
    // Copied into the compiled tree by `make build`, not compiled: read from beside the code.
    for (const asset of ["app.css", "app.js"])
      expect((await s.request("GET", `/dashboard/assets/${asset}`, { key: null })).status, asset).toBe(200);
  });
});
