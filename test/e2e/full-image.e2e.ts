/**
 * The operations of issue #15 in Kubernetes mode, end to end, on the full runner image (Chromium,
 * OCRmyPDF/Tesseract, veraPDF; `make images-full`, ADR 0015): the API and the controller run as
 * containers of the API image, the controller picks the runner image per job
 * (controller/runner-image.ts) and the local kubelet runs each runner pod from the image it names.
 * Every job goes in through the public API; its output comes back out of it and is read with
 * poppler, qpdf and veraPDF, and the pod that ran it is looked up to see which image it was.
 */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { CoreV1Api } from "@kubernetes/client-node";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verapdfJar } from "../../runner/engines/verapdf.ts";
import { testConfig } from "../helpers/runner.ts";
import type { FolioContainer } from "../k8s/folio-container.ts";
import { fullRunnerImage, runnerImage } from "../k8s/images.ts";
import { textPdf } from "../fixtures/pdf-fixtures.ts";
import { ENGLISH_WORDS, paragraph, scannedPdf } from "../fixtures/scan-fixtures.ts";
import { pdfinfo, pdftotext, qpdfCheck, wordRecall } from "../helpers/tools.ts";
import { blob, type Server } from "../api/harness.ts";
import { startApiContainer, startReadyController } from "./containers.ts";
import { startE2eWorld, until, type E2eWorld } from "./support.ts";

const execFileP = promisify(execFile);
const NS = "default";

let world: E2eWorld;
let controller: FolioContainer;
let api: Server;
let key: string;

/** Posts an operation (files and JSON options) and polls the job until it ends. */
async function run(operation: string, files: [Uint8Array | string, string][], options: Record<string, unknown>): Promise<any> {
  const form = new FormData();
  for (const [bytes, name] of files) form.append("file", blob(bytes), name);
  form.append("options", JSON.stringify(options));
  const res = await api.request("POST", `/v1/pdf/${operation}`, { key, form, headers: { Prefer: "wait=10" } });
  expect([200, 202], res.text).toContain(res.status);
  const id = (res.json as { id: string }).id;
  return until(
    `job ${id} to end`,
    async () => {
      const job = (await api.request("GET", `/v1/jobs/${id}`, { key, headers: { Prefer: "wait=10" } })).json;
      return job.status === "queued" || job.status === "running" ? undefined : job;
    },
    300_000,
  );
}

async function download(job: any, i = 0): Promise<string> {
  const res = await api.request("GET", job.result.files[i].download_url, { key });
  expect(res.status, res.text).toBe(200);
  const file = path.join(world.dir, `${job.id}-${i}-${job.result.files[i].filename}`);
  await writeFile(file, res.body);
  return file;
}

/** The image the runner pod of a job ran (its one container's). */
async function podImage(jobId: string): Promise<string | undefined> {
  const pods = await world.kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: NS, labelSelector: `folio.dev/job-id=${jobId}` });
  return pods.items[0]?.spec?.containers[0]?.image;
}

describe("the full runner image in Kubernetes mode (OCR, HTML, PDF/A)", () => {
  beforeAll(async () => {
    world = await startE2eWorld("folio-e2e-full-", { platform: { imageLists: ["images-full.txt"] } });
    controller = await startReadyController(world.platform, {
      ...world.s3.env,
      FOLIO_RUNNER_FULL_IMAGE: fullRunnerImage(),
      FOLIO_CONTROLLER_WORKERS: "2",
    });
    api = await startApiContainer(world.platform, {
      FOLIO_BACKEND: "kubernetes",
      KUBECONFIG: world.platform.kubeconfig,
      FOLIO_JOBS_NAMESPACE: NS,
      FOLIO_METRICS_PORT: "0",
      ...world.s3.env,
    });
    expect((await api.folio(["tenants", "create", "archive", "--plan", "business"])).code).toBe(0);
    key = ((await api.folio(["keys", "create", "--tenant", "archive", "--json"])).json as { key: string }).key;
  });

  afterAll(async () => {
    await api?.cleanup();
    await controller?.stop();
    await controller?.cleanup();
    await world?.stop();
  });

  it("OCRs a scanned, skewed, sideways page in a pod of the full image", async () => {
    const text = paragraph(ENGLISH_WORDS, 7, 60);
    const scan = await scannedPdf(path.join(world.dir, "scan.pdf"), [{ text, font: "TimesRoman", skew: 3, turn: 90 }]);
    const job = await run("ocr", [[await readFile(scan), "scan.pdf"]], { languages: ["eng"], deskew: true, rotate_pages: true });
    expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
    const out = await download(job);
    expect(await qpdfCheck(out)).toBe(true);
    expect(wordRecall(text, await pdftotext(out))).toBeGreaterThanOrEqual(0.95);
    expect(await podImage(job.id)).toBe(fullRunnerImage());
  });

  it("renders HTML with Chromium, with the page number in the footer", async () => {
    const html = "<!DOCTYPE html><h1>Quarterly statement</h1><p style='page-break-after:always'>one</p><p>two</p>";
    const job = await run("convert", [[html, "statement.html"]], {
      to: "pdf",
      footer_template: "<div style='font-size:10px'>Page <span class='pageNumber'></span> of <span class='totalPages'></span></div>",
    });
    expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
    const out = await download(job);
    expect((await pdfinfo(out)).Pages).toBe("2");
    const text = await pdftotext(out);
    expect(text).toContain("Quarterly statement");
    expect(text).toMatch(/Page 2 of 2/);
    expect(await podImage(job.id)).toBe(fullRunnerImage());
  });

  it("makes a PDF/A-2b that veraPDF, run by the test, finds compliant", async () => {
    const src = await textPdf(path.join(world.dir, "archive.pdf"), 2, "archive");
    const job = await run("convert", [[await readFile(src), "archive.pdf"]], { to: "pdf/a-2b" });
    expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
    expect(job.result.pdfa).toMatchObject({ compliant: true });
    const out = await download(job);
    const { stdout } = await execFileP(testConfig.FOLIO_JAVA, [
      "-cp",
      verapdfJar(testConfig),
      "org.verapdf.apps.GreenfieldCliWrapper",
      "--format",
      "json",
      out,
    ]);
    const report = JSON.parse(stdout) as { report: { jobs: { validationResult: { compliant: boolean; profileName: string }[] }[] } };
    const result = report.report.jobs[0]?.validationResult[0];
    expect(result?.compliant).toBe(true);
    expect(result?.profileName).toContain("PDF/A-2B");
    expect(await podImage(job.id)).toBe(fullRunnerImage());
  });

  it("keeps the lean runner image for an operation that needs none of the full image's engines", async () => {
    const png = await sharp({ create: { width: 96, height: 48, channels: 3, background: "#123456" } })
      .png()
      .toBuffer();
    const job = await run("convert", [[png, "a.png"]], { to: "pdf" });
    expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
    expect((await pdfinfo(await download(job))).Pages).toBe("1");
    expect(await podImage(job.id)).toBe(runnerImage());
  });
});
