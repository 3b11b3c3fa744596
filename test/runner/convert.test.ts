/**
 * convert, Office → PDF, on real LibreOffice: every input format, the refusals, the hardening
 * (no macros, no network), and the warm pool's failure modes with named fixtures — an office
 * killed between jobs, an office that hangs, recycling, and a clean close().
 */
import { execFile } from "node:child_process";
import { readFile, readdir, writeFile, stat } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { PDFDocument } from "pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.ts";
import { JobError } from "../../core/errors.ts";
import { createLogger } from "../../core/logger.ts";
import { createSoffice, SofficePool } from "../../runner/engines/libreoffice.ts";
import { buildOfficeFixtures, linkedImageFodt, macroFodt, type OfficeFixtures, type OfficeKind } from "../fixtures/office-fixtures.ts";
import { errorCode, ok, runOp } from "../helpers/runner.ts";
import { pageCount, pdftotext, qpdfCheck, tmpDir, wordRecall } from "../helpers/tools.ts";

const log = createLogger({ level: "silent" });

function pool(size: number, extra: Partial<ConstructorParameters<typeof SofficePool>[0]> = {}): SofficePool {
  return new SofficePool({
    soffice: "soffice",
    size,
    tmpDir: os.tmpdir(),
    jobTimeoutMs: 60_000,
    maxJobs: 1000,
    maxRssMb: 4096,
    log,
    ...extra,
  });
}

/**
 * Live (non-zombie) LibreOffice processes whose command line mentions `root`, with the profile
 * directory (`slotN-genM`) they run with: the office instance they belong to.
 */
async function officeProcesses(root: string): Promise<{ pid: number; comm: string; profile: string }[]> {
  const found: { pid: number; comm: string; profile: string }[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    const statText = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const state = statText.slice(statText.lastIndexOf(")") + 2, statText.lastIndexOf(")") + 3);
    if (cmdline.includes(root) && state !== "Z") {
      const profile =
        cmdline
          .slice(cmdline.indexOf(root) + root.length)
          .split(/[/\0]/)
          .find(Boolean) ?? "";
      found.push({ pid: Number(entry), comm: statText.slice(statText.indexOf("(") + 1, statText.lastIndexOf(")")), profile });
    }
  }
  return found;
}

const alive = (pid: number): Promise<boolean> =>
  readFile(`/proc/${pid}/stat`, "utf8").then(
    (s) => s.slice(s.lastIndexOf(")") + 2, s.lastIndexOf(")") + 3) !== "Z",
    () => false,
  );

async function toPdfError(p: SofficePool, file: string, work: string): Promise<JobError> {
  try {
    await p.toPdf(file, { work, signal: AbortSignal.timeout(120_000) });
  } catch (err) {
    if (err instanceof JobError) return err;
    throw err;
  }
  throw new Error("expected the conversion to fail");
}

let fx: OfficeFixtures;
let dir: string;
let cleanup: () => Promise<void>;
let warm: SofficePool;
let n = 0;
const out = (): string => path.join(dir, `out-${++n}`);

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-convert-"));
  warm = pool(2);
  fx = await buildOfficeFixtures(path.join(dir, "fixtures"));
}, 300_000);

afterAll(async () => {
  await warm?.close();
  await cleanup?.();
});

describe("convert: every Office format becomes a PDF with its text", () => {
  const kinds: [OfficeKind, string][] = [
    ["docx", "a DOCX written by the docx library, with a heading and a table"],
    ["doc", "a Word 97 DOC"],
    ["odt", "an ODT"],
    ["rtf", "an RTF written by hand"],
    ["xlsx", "an XLSX with numbers"],
    ["xls", "an Excel 97 XLS"],
    ["ods", "an ODS"],
    ["pptx", "a two-slide PPTX"],
    ["ppt", "a PowerPoint 97 PPT"],
    ["odp", "an ODP"],
  ];
  it.each(kinds)("%s: %s converts on the warm pool", async (kind) => {
    const doc = fx.docs[kind];
    const res = ok(await runOp("convert", { to: "pdf" }, [doc.path], out(), { soffice: warm, output_filename: "report.whatever" }));
    expect(res.outputs).toHaveLength(1);
    const file = res.outputs[0]!;
    expect(file.filename).toBe("report.pdf");
    expect(file.content_type).toBe("application/pdf");
    expect(res.figures).toMatchObject({ source_format: kind, engine: "warm" });
    expect(await pageCount(file.path)).toBeGreaterThanOrEqual(1);
    expect(res.figures.pages).toBe(await pageCount(file.path));
    expect(await qpdfCheck(file.path)).toBe(true);
    expect(wordRecall(doc.words, await pdftotext(file.path))).toBeGreaterThanOrEqual(0.9);
  });

  it("the cold one-shot path (pool size 0) converts a DOCX and an XLSX the same way", async () => {
    for (const kind of ["docx", "xlsx"] as const) {
      const res = ok(await runOp("convert", { to: "pdf" }, [fx.docs[kind].path], out()));
      expect(res.figures).toMatchObject({ source_format: kind, engine: "cold" });
      expect(await qpdfCheck(res.outputs[0]!.path)).toBe(true);
      expect(wordRecall(fx.docs[kind].words, await pdftotext(res.outputs[0]!.path))).toBeGreaterThanOrEqual(0.9);
    }
  });
});

describe("convert: refusals and failures", () => {
  let pdf: string;
  beforeAll(async () => {
    const doc = await PDFDocument.create();
    doc.addPage().drawText("Already a PDF");
    pdf = path.join(dir, "already.pdf");
    await writeFile(pdf, await doc.save());
  });

  it("a PDF with to=pdf is unsupported_input, saying why", async () => {
    const res = await runOp("convert", { to: "pdf" }, [pdf], out(), { soffice: warm });
    expect(errorCode(res)).toBe("unsupported_input");
    expect((res as JobError).message).toMatch(/already a PDF/);
  });

  it("an Office document with to=docx is unsupported_input (only Office → PDF exists)", async () => {
    const res = await runOp("convert", { to: "docx" }, [fx.docs.docx.path], out(), { soffice: warm });
    expect(errorCode(res)).toBe("unsupported_input");
  });

  it("a file that is no document at all is unsupported_input, decided by sniffing", async () => {
    expect(errorCode(await runOp("convert", { to: "pdf" }, [fx.garbage], out(), { soffice: warm }))).toBe("unsupported_input");
  });

  it("a corrupt DOCX (a zip of garbage parts) fails fast with conversion_failed, and the pool stays healthy", async () => {
    const started = Date.now();
    const code = errorCode(await runOp("convert", { to: "pdf" }, [fx.corruptDocx], out(), { soffice: warm }));
    expect(["conversion_failed", "unsupported_input"]).toContain(code);
    expect(Date.now() - started).toBeLessThan(20_000);
    ok(await runOp("convert", { to: "pdf" }, [fx.docs.docx.path], out(), { soffice: warm }));
  });

  it.each([
    ["an ODF-encrypted ODT", "encryptedOdt"],
    ["an encrypted OOXML compound file named .docx", "encryptedDocx"],
    ["a DOC with the FIB fEncrypted flag", "encryptedDoc"],
  ] as const)("%s is encrypted_input, before LibreOffice sees it", async (_label, key) => {
    const res = await runOp("convert", { to: "pdf" }, [fx[key]], out(), { soffice: warm });
    expect(errorCode(res)).toBe("encrypted_input");
  });

  it("LibreOffice itself never waits on a password prompt: the encrypted ODT fails fast with conversion_failed", async () => {
    const started = Date.now();
    const err = await toPdfError(warm, fx.encryptedOdt, dir);
    expect(err.code).toBe("conversion_failed");
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

describe("convert: hardening", () => {
  it("a document linking an image from a (local) web server converts without fetching it", async () => {
    let hits = 0;
    const server = http.createServer((_req, res) => {
      hits++;
      res.end("not an image");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const file = path.join(dir, "linked.fodt");
      await writeFile(file, linkedImageFodt(`http://127.0.0.1:${(server.address() as AddressInfo).port}/pixel.png`));
      const pdf = await warm.toPdf(file, { work: dir, signal: AbortSignal.timeout(60_000) });
      expect(await pageCount(pdf)).toBe(1);
      expect(hits).toBe(0);
    } finally {
      server.close();
    }
  });

  it("a document whose macro is bound to the load event converts without running it", async () => {
    const marker = path.join(dir, "macro-ran.txt");
    const file = path.join(dir, "macro.fodt");
    await writeFile(file, macroFodt(marker));
    await warm.toPdf(file, { work: dir, signal: AbortSignal.timeout(60_000) });
    expect(await stat(marker).catch(() => null)).toBeNull();
  });
});

describe("warm pool", () => {
  it("runs 8 conversions in parallel on 2 offices, all succeeding, never more than 2 offices alive", async () => {
    const root = warm.stats().root;
    let maxOffices = 0;
    let busiest: unknown[] = [];
    // Warm conversions take tens of milliseconds, less than one scan of /proc under load: sample
    // before, during and after the work, and wait for every sample before judging. An office is
    // an instance — a profile directory with a live soffice.bin — not a process: soffice.bin forks
    // helpers, and between fork and exec a child has the same name and command line.
    const samples: Promise<void>[] = [];
    const sample = (): void => {
      samples.push(
        officeProcesses(root).then((ps) => {
          const bins = ps.filter((p) => p.comm === "soffice.bin");
          const offices = new Set(bins.map((p) => p.profile)).size;
          if (offices > maxOffices) [maxOffices, busiest] = [offices, bins];
        }),
      );
    };
    sample();
    const sampler = setInterval(sample, 50);
    const kinds: OfficeKind[] = ["docx", "xlsx", "pptx", "rtf", "docx", "xlsx", "pptx", "rtf"];
    try {
      const results = await Promise.all(kinds.map((k) => runOp("convert", { to: "pdf" }, [fx.docs[k].path], out(), { soffice: warm })));
      for (const r of results) expect(await qpdfCheck(ok(r).outputs[0]!.path)).toBe(true);
    } finally {
      clearInterval(sampler);
    }
    sample();
    await Promise.all(samples);
    expect(maxOffices).toBeGreaterThanOrEqual(1);
    expect(maxOffices, JSON.stringify({ stats: warm.stats(), busiest })).toBeLessThanOrEqual(2);
    expect(warm.stats().queued).toBe(0);
  });

  it("crash fixture: an office killed with SIGKILL between jobs is restarted and the next job succeeds", async () => {
    ok(await runOp("convert", { to: "pdf" }, [fx.smallDocx], out(), { soffice: warm }));
    const before = warm.stats();
    const victims = before.instances.map((i) => i.binPid).filter((p): p is number => p !== null);
    expect(victims.length).toBeGreaterThan(0);
    for (const pid of victims) process.kill(pid, "SIGKILL");
    const res = ok(await runOp("convert", { to: "pdf" }, [fx.smallDocx], out(), { soffice: warm }));
    expect(wordRecall(fx.docs.docx.words, await pdftotext(res.outputs[0]!.path))).toBeGreaterThanOrEqual(0.9);
    const after = warm.stats();
    expect(after.restarts).toBeGreaterThan(before.restarts);
    expect(after.crashes).toBeGreaterThan(before.crashes);
    for (const pid of victims) expect(await alive(pid)).toBe(false);
  });

  it("hung fixture: an office that stops answering (SIGSTOP) is killed at the job timeout, the job fails with timeout, the next succeeds", async () => {
    const p = pool(1, { jobTimeoutMs: 4000 });
    try {
      ok(await runOp("convert", { to: "pdf" }, [fx.smallDocx], out(), { soffice: p }));
      const hung = p.stats().instances[0]!;
      process.kill(hung.binPid!, "SIGSTOP");
      const started = Date.now();
      const res = await runOp("convert", { to: "pdf" }, [fx.smallDocx], out(), { soffice: p });
      expect(errorCode(res)).toBe("timeout");
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(await alive(hung.binPid!)).toBe(false);
      ok(await runOp("convert", { to: "pdf" }, [fx.smallDocx], out(), { soffice: p }));
      const stats = p.stats();
      expect(stats.timeouts).toBe(1);
      expect(stats.instances[0]!.generation).toBe(hung.generation + 1);
    } finally {
      await p.close();
    }
  });

  it("a job whose own deadline fires while it converts fails with timeout and frees the slot", async () => {
    const p = pool(1);
    try {
      ok(await runOp("convert", { to: "pdf" }, [fx.smallDocx], out(), { soffice: p }));
      process.kill(p.stats().instances[0]!.binPid!, "SIGSTOP");
      const res = await runOp("convert", { to: "pdf" }, [fx.smallDocx], out(), { soffice: p, limits: { timeout_ms: 3000 } });
      expect(errorCode(res)).toBe("timeout");
      ok(await runOp("convert", { to: "pdf" }, [fx.smallDocx], out(), { soffice: p }));
    } finally {
      await p.close();
    }
  });

  it("recycles an office after FOLIO_SOFFICE_MAX_JOBS conversions", async () => {
    const p = createSoffice(loadConfig({ FOLIO_LOG_LEVEL: "silent", FOLIO_SOFFICE_MAX_JOBS: "2" }), log, 1);
    expect(p).toBeInstanceOf(SofficePool);
    const stats = (): ReturnType<SofficePool["stats"]> => (p as SofficePool).stats();
    try {
      for (let i = 0; i < 5; i++) ok(await runOp("convert", { to: "pdf" }, [fx.smallDocx], out(), { soffice: p }));
      expect(stats().recycles).toBe(2);
      expect(stats().completed).toBe(5);
      expect(stats().instances[0]!.generation).toBe(3);
    } finally {
      await p.close();
    }
  });

  it("recycles an office whose soffice.bin RSS passes FOLIO_SOFFICE_MAX_RSS_MB", async () => {
    const p = pool(1, { maxRssMb: 1 });
    try {
      ok(await runOp("convert", { to: "pdf" }, [fx.smallDocx], out(), { soffice: p }));
      ok(await runOp("convert", { to: "pdf" }, [fx.smallDocx], out(), { soffice: p }));
      expect(p.stats().recycles).toBe(2);
    } finally {
      await p.close();
    }
  });

  it("queues jobs when every office is busy and serves them all", async () => {
    const p = pool(1);
    try {
      // The most jobs seen waiting, sampled while they run (not after a fixed sleep: under load
      // the jobs reach the pool later).
      let queued = 0;
      const sampler = setInterval(() => (queued = Math.max(queued, p.stats().queued)), 5);
      const jobs = [0, 1, 2, 3].map(() => runOp("convert", { to: "pdf" }, [fx.smallDocx], out(), { soffice: p }));
      const results = await Promise.all(jobs).finally(() => clearInterval(sampler));
      expect(queued).toBeGreaterThan(0);
      for (const r of results) ok(r);
      expect(p.stats().completed).toBe(4);
    } finally {
      await p.close();
    }
  });

  it("crash fixture: a runner SIGKILLed without close() takes its offices with it", async () => {
    // A child Node process runs the pool straight from the TypeScript sources, converts one
    // document, reports its pool's root and kills itself with SIGKILL.
    const script = path.join(dir, "dying-runner.mjs");
    const root = path.resolve(import.meta.dirname, "../..");
    await writeFile(
      script,
      `const { SofficePool } = await import(${JSON.stringify(path.join(root, "runner/engines/soffice-pool.ts"))});
const { createLogger } = await import(${JSON.stringify(path.join(root, "core/logger.ts"))});
const pool = new SofficePool({ soffice: "soffice", size: 2, tmpDir: ${JSON.stringify(os.tmpdir())}, jobTimeoutMs: 60000, maxJobs: 100, maxRssMb: 4096, log: createLogger({ level: "silent" }) });
await pool.toPdf(${JSON.stringify(fx.smallDocx)}, { work: ${JSON.stringify(dir)}, signal: AbortSignal.timeout(60000) });
process.stdout.write(pool.stats().root + "\\n", () => process.kill(process.pid, "SIGKILL"));
`,
    );
    const poolRoot = await new Promise<string>((resolve) => {
      execFile(process.execPath, [script], { timeout: 120_000 }, (_err, stdout) => resolve(stdout.trim()));
    });
    expect(poolRoot).toContain("folio-soffice-");
    let left = await officeProcesses(poolRoot);
    for (let i = 0; i < 50 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = await officeProcesses(poolRoot);
    }
    expect(left).toEqual([]);
  });

  it("close() leaves no LibreOffice process and no profile behind", async () => {
    const p = pool(2);
    ok(await runOp("convert", { to: "pdf" }, [fx.smallDocx], out(), { soffice: p }));
    const { root, instances } = p.stats();
    expect((await officeProcesses(root)).length).toBeGreaterThan(0);
    await p.close();
    expect(await officeProcesses(root)).toEqual([]);
    for (const i of instances) if (i.binPid !== null) expect(await alive(i.binPid)).toBe(false);
    expect(await stat(root).catch(() => null)).toBeNull();
  });
});
