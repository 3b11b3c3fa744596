/**
 * The engines' sandbox in embedded mode (issue #11, core/sandbox.ts), proved from inside
 * conversions run through a real `folio serve`: while an engine runs, this test looks at it
 * through /proc — its environment, its own view of the file system (/proc/PID/root: what *it*
 * sees at each path), its network and PID namespaces, its limits — the way the engine itself
 * would find them. qpdf is a wrapper that waits a moment before running the real qpdf (so that
 * it can be caught running); LibreOffice is the warm pool's real soffice.bin; the runner worker
 * (pdfjs, pdf-lib and sharp run in its process) is the real `folio runner --worker`, and
 * Chromium the warm pool's real browser (docs/adr/0021).
 *
 * Each engine: the allow-listed environment only (none of the server's FOLIO_* or AWS_*
 * variables, whose secret values it was given); the data directory — the database, the seal
 * key, the TLS key, other tenants' files — not there; the system read-only; only its job's
 * directories writable; no network but loopback; a PID namespace of its own; RLIMIT_AS set.
 * And: without bubblewrap, `folio serve` refuses to start and names the package; with
 * FOLIO_SANDBOX=none it starts and says so as an error.
 */
import { execFile } from "node:child_process";
import { accessSync, constants, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENGINE_ENV_NAMES } from "../../core/sandbox.ts";
import { buildOfficeFixtures } from "../fixtures/office-fixtures.ts";
import { textPdf } from "../fixtures/pdf-fixtures.ts";
import { ROOT } from "../helpers/tools.ts";
import { blob, startServer, type Server } from "./harness.ts";

const run = promisify(execFile);
const SECRET = "sekrit-aws-value-for-the-sandbox-test";

let s: Server;
let dir: string;
let tmp: string;
let probe: string;

/** What /proc says about a process, as the engine itself would find it — read while it runs. */
interface View {
  pid: number;
  env: string[];
  envValues: string;
  /** Which of the paths asked about it sees (in its own mount namespace), and which it may write. */
  sees: Record<string, boolean>;
  writable: Record<string, boolean>;
  /** Every file it sees under the data directory's `files`. */
  storedFiles: string[];
  interfaces: string[];
  pidNamespaces: number;
  addressSpace: string;
  netns: string;
}

/** The paths whose visibility is checked, and the directories whose writability is. */
let asked: { see: string[]; write: string[]; files: string } = { see: [], write: [], files: "" };

const startTime = (pid: number): string => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[19]!;

function view(pid: number): View | undefined {
  try {
    const born = startTime(pid);
    const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const root = `/proc/${pid}/root`;
    const writable = (p: string): boolean => {
      try {
        accessSync(path.join(root, p), constants.W_OK);
        writeFileSync(path.join(root, p, `.probe-${pid}`), "x");
        return true;
      } catch {
        return false;
      }
    };
    let storedFiles: string[] = [];
    try {
      storedFiles = readdirSync(path.join(root, asked.files), { recursive: true, encoding: "utf8" });
    } catch {
      storedFiles = [];
    }
    const v: View = {
      pid,
      env: environ.map((kv) => kv.split("=")[0]!),
      envValues: environ.join("\n"),
      sees: Object.fromEntries(asked.see.map((p) => [p, existsSync(path.join(root, p))])),
      writable: Object.fromEntries(asked.write.map((p) => [p, writable(p)])),
      storedFiles,
      interfaces: readFileSync(`/proc/${pid}/net/dev`, "utf8")
        .split("\n")
        .slice(2)
        .map((l) => l.split(":")[0]!.trim())
        .filter(Boolean),
      pidNamespaces: (/^NSpid:\s+(.*)$/m.exec(status)?.[1] ?? "").trim().split(/\s+/).length,
      addressSpace: /^Max address space\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"))?.[1] ?? "",
      netns: readFileSync(`/proc/${pid}/net/dev`, "utf8") === readFileSync("/proc/self/net/dev", "utf8") ? "host" : "own",
    };
    // Still the same process, still alive: what /proc showed was its view.
    return startTime(pid) === born ? v : undefined;
  } catch {
    return undefined; // gone meanwhile
  }
}

/**
 * Live processes whose command line contains one of `needles` (the engine: not bwrap or prlimit
 * around it). The worker's FOLIO_TMP_DIR — where the warm offices live — is below the server's
 * FOLIO_TMP_DIR when the server runs as root (its workers then run as nobody), else below its
 * data directory (api/jobs/worker-sandbox.ts).
 */
function processes(needles: string | string[], comm?: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, "utf8");
      const name = readFileSync(`/proc/${e}/comm`, "utf8").trim();
      const hit = [needles].flat().some((n) => cmd.includes(n));
      if (hit && !cmd.startsWith("bwrap") && !cmd.startsWith("prlimit") && (!comm || name === comm)) out.push(Number(e));
    } catch {
      // gone
    }
  }
  return out;
}

/** Samples views of matching processes until `done` settles. */
async function sample(needle: string | string[], done: Promise<unknown>, comm?: string): Promise<View[]> {
  const seen = new Map<number, View>();
  let finished = false;
  void done.finally(() => (finished = true));
  while (!finished) {
    for (const pid of processes(needle, comm))
      if (!seen.has(pid)) {
        const v = view(pid);
        if (v) seen.set(pid, v);
      }
    await new Promise((r) => setTimeout(r, 50));
  }
  return [...seen.values()];
}

/** File ids the engines must not see (uploads that are not their job's inputs). */
const unseen: string[] = [];

function expectSandboxed(v: View, dataDir: string): void {
  const extra = ["PWD", "OLDPWD", "SHLVL", "_", "SAL_USE_VCLPLUGIN", "DBUS_SESSION_BUS_ADDRESS", "no_proxy", "NO_PROXY"];
  const allowed = (n: string): boolean =>
    ENGINE_ENV_NAMES.includes(n) ||
    n.startsWith("LC_") ||
    extra.includes(n) ||
    /^(http|https|ftp|all)_proxy$/i.test(n) ||
    /^(SAL|OOO|URE|UNO|JFW|LO|LIBO)_/.test(n);
  expect(
    v.env.filter((n) => !allowed(n)),
    `environment of ${v.pid}`,
  ).toEqual([]);
  expect(v.envValues).not.toContain(SECRET);
  for (const secret of ["folio.db", "seal.key", "tls-key.pem", "tls-cert.pem"])
    expect(v.sees[path.join(dataDir, secret)], secret).toBe(false);
  // Of the stored files, at most the job's own inputs (each bound on its own): never another one.
  for (const hidden of unseen)
    expect(
      v.storedFiles.some((f) => f.includes(hidden)),
      hidden,
    ).toBe(false);
  expect(v.sees[ROOT]).toBe(false); // the checkout (Folio's code and configuration)
  expect(v.sees["/usr/bin"]).toBe(true); // the system is there…
  expect(v.writable["/usr"]).toBe(false); // …read-only
  expect(v.writable["/etc"]).toBe(false);
  expect(v.interfaces).toEqual(["lo"]);
  expect(v.netns).toBe("own");
  // Its own PID namespace: inside its worker's, which is inside the host's (when the worker is sandboxed).
  expect(v.pidNamespaces).toBeGreaterThanOrEqual(2);
  expect(v.addressSpace).toBe(String(1536 * 1024 * 1024));
}

/** What /proc says about a runner worker while it runs a job. */
interface WorkerView {
  pid: number;
  env: string[];
  envValues: string;
  /** Its staging directory (its FOLIO_TMP_DIR's parent), and what it sees of its `in/` now. */
  stage: string;
  staged: string[];
  /** Which of the data directory's entries it sees. */
  sees: Record<string, boolean>;
  storedFiles: string[];
  checkout: { git: boolean; api: boolean; code: boolean };
  usrWritable: boolean;
  inWritable: boolean;
  pidNamespaces: number;
  /** The process ids its /proc shows (its PID namespace's, as numbered in there). */
  processes: number[];
}

/** The server's runner workers: `folio runner --worker` processes (Node, not the bwrap around them) given its data directory. */
function workers(dataDir: string): number[] {
  return processes("--worker").filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`FOLIO_DATA_DIR=${dataDir}`);
    } catch {
      return false;
    }
  });
}

function canWrite(p: string): boolean {
  try {
    accessSync(p, constants.W_OK);
    writeFileSync(path.join(p, ".probe"), "x");
    return true;
  } catch {
    return false;
  }
}

function workerView(pid: number, dataDir: string): WorkerView | undefined {
  try {
    const born = startTime(pid);
    const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
    const root = `/proc/${pid}/root`;
    const stage = path.dirname(environ.find((kv) => kv.startsWith("FOLIO_TMP_DIR="))!.slice("FOLIO_TMP_DIR=".length));
    const at = (p: string): string => path.join(root, p);
    let storedFiles: string[] = [];
    try {
      storedFiles = readdirSync(at(path.join(dataDir, "files")), { recursive: true, encoding: "utf8" });
    } catch {
      storedFiles = [];
    }
    const v: WorkerView = {
      pid,
      env: environ.map((kv) => kv.split("=")[0]!),
      envValues: environ.join("\n"),
      stage,
      staged: readdirSync(at(path.join(stage, "in"))),
      sees: Object.fromEntries(
        ["folio.db", "seal.key", "tls-key.pem", "tls-cert.pem", "files"].map((f) => [f, existsSync(at(path.join(dataDir, f)))]),
      ),
      storedFiles,
      checkout: {
        git: existsSync(at(path.join(ROOT, ".git"))),
        api: existsSync(at(path.join(ROOT, "api"))),
        code: existsSync(at(path.join(ROOT, "runner/run.ts"))),
      },
      usrWritable: canWrite(at("/usr")),
      inWritable: canWrite(at(path.join(stage, "in"))),
      pidNamespaces: (/^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "").trim().split(/\s+/).length,
      processes: readdirSync(at("/proc"))
        .filter((e) => /^\d+$/.test(e))
        .map(Number),
    };
    return startTime(pid) === born ? v : undefined;
  } catch {
    return undefined; // gone meanwhile, or between jobs
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "folio-sandbox-test-"));
  // Under root the workers run as nobody (api/jobs/worker-sandbox.ts): they must reach the
  // engine (qpdf-probe) and FOLIO_TMP_DIR below this directory.
  await chmod(dir, 0o711);
  tmp = path.join(dir, "tmp");
  await run("mkdir", ["-p", tmp]);
  // qpdf that lingers a little, so that the test can look at it while it runs.
  probe = path.join(dir, "bin", "qpdf-probe");
  await run("mkdir", ["-p", path.dirname(probe)]);
  await writeFile(probe, '#!/bin/sh\nsleep 1\nexec /usr/bin/qpdf "$@"\n');
  await chmod(probe, 0o755);
  s = await startServer({
    FOLIO_QPDF: probe,
    FOLIO_TMP_DIR: tmp,
    FOLIO_WORKERS: "1",
    FOLIO_SOFFICE_POOL_SIZE: "1",
    FOLIO_SANDBOX_MEMORY_MB: "1536",
    AWS_SECRET_ACCESS_KEY: SECRET,
    FOLIO_S3_BUCKET: SECRET,
  });
  asked = {
    see: [
      ...["folio.db", "seal.key", "tls-key.pem", "tls-cert.pem", "work", "files"].map((f) => path.join(s.dataDir, f)),
      ROOT,
      path.join(ROOT, "package.json"),
      path.join(ROOT, "core"),
      "/usr/bin",
    ],
    write: ["/usr", "/etc"],
    files: path.join(s.dataDir, "files"),
  };
});

afterAll(async () => {
  await s?.cleanup();
  await rm(dir, { recursive: true, force: true });
});

describe("engines in embedded mode run in a sandbox", () => {
  it("qpdf, during a merge, sees only its job: allow-listed environment, no data directory, read-only system, loopback only, own PID namespace, memory cap", async () => {
    const other = await s.request("POST", "/v1/files", {
      form: formOf(await readFile(await textPdf(path.join(dir, "other.pdf"), 1, "other"))),
    });
    expect(other.status).toBe(201);
    unseen.push(other.json.data[0].id as string);
    const a = await readFile(await textPdf(path.join(dir, "a.pdf"), 2, "alpha"));
    const form = formOf(a, a);
    const submitted = s.request("POST", "/v1/pdf/merge", { form, headers: { Prefer: "wait=60" } });
    const views = await sample(probe, submitted, "qpdf-probe");
    const res = await submitted;
    expect(res.status, res.text).toBe(200);
    expect(res.json.status, JSON.stringify(res.json.error)).toBe("succeeded");
    expect(views.length).toBeGreaterThan(0);
    for (const v of views) expectSandboxed(v, s.dataDir);
  });

  it("the warm LibreOffice, during a conversion, has the same environment, view and limits; its exchange is emptied after the job", async () => {
    const fx = await buildOfficeFixtures(path.join(dir, "office"));
    const up = await s.request("POST", "/v1/files", { form: formOf(await readFile(fx.smallDocx), undefined, "report.docx") });
    expect(up.status, up.text).toBe(201);
    const submitted = s.request("POST", "/v1/pdf/convert", {
      json: { inputs: [{ file_id: up.json.data[0].id }], to: "pdf" },
      headers: { Prefer: "wait=90" },
    });
    const views = await sample([tmp, s.dataDir], submitted, "soffice.bin");
    const res = await submitted;
    expect(res.json.status, JSON.stringify(res.json.error)).toBe("succeeded");
    expect(views.length).toBeGreaterThan(0);
    for (const v of views) {
      expectSandboxed(v, s.dataDir);
      // Its slot is its one writable place; no job's work directory is visible to it.
      expect(v.sees[path.join(s.dataDir, "work")]).toBe(false);
    }
    const exchanges = [tmp, s.dataDir].flatMap((top) =>
      readdirSync(top, { recursive: true, encoding: "utf8" })
        .filter((d) => /folio-soffice-[^/]+\/[^/]+\/exchange$/.test(d))
        .map((d) => path.join(top, d)),
    );
    expect(exchanges.length).toBeGreaterThan(0);
    for (const e of exchanges) expect(readdirSync(e)).toEqual([]);
  });

  it("the runner worker (pdfjs, pdf-lib, sharp in its process), during a PDF → Word conversion, sees only its stage: no data directory, no checkout but its code, the job's inputs read-only; its stage is emptied after the job", async () => {
    const other = await s.request("POST", "/v1/files", {
      form: formOf(await readFile(await textPdf(path.join(dir, "other2.pdf"), 1, "other2"))),
    });
    unseen.push(other.json.data[0].id as string);
    const a = await readFile(await textPdf(path.join(dir, "w.pdf"), 2, "worker"));
    const up = await s.request("POST", "/v1/files", { form: formOf(a) });
    const input = up.json.data[0].id as string;
    const submitted = s.request("POST", "/v1/pdf/convert", {
      json: { inputs: [{ file_id: input }], to: "docx" },
      headers: { Prefer: "wait=90" },
    });
    const views: WorkerView[] = [];
    let finished = false;
    void submitted.finally(() => (finished = true));
    while (!finished) {
      for (const pid of workers(s.dataDir)) {
        const v = workerView(pid, s.dataDir);
        if (v) views.push(v);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const res = await submitted;
    expect(res.json.status, JSON.stringify(res.json.error)).toBe("succeeded");
    expect(views.length).toBeGreaterThan(0);
    for (const v of views) {
      expect(v.envValues).not.toContain(SECRET);
      expect(v.env.filter((n) => /^(AWS_|FOLIO_S3)/.test(n))).toEqual([]);
      for (const f of ["folio.db", "seal.key", "tls-key.pem", "tls-cert.pem", "files"]) expect(v.sees[f], f).toBe(false);
      expect(v.storedFiles).toEqual([]); // no stored file of any tenant, its own job's included: its inputs are staged
      expect(v.checkout).toEqual({ git: false, api: false, code: true });
      expect(v.usrWritable).toBe(false);
      expect(v.inWritable).toBe(false); // its job's inputs are read-only to it
      expect(v.pidNamespaces).toBe(2);
      expect(v.processes).not.toContain(process.pid); // nothing of the host to signal or trace
    }
    // While the job ran, its input was staged for the worker (and nothing else was).
    expect(Math.max(...views.map((v) => v.staged.length))).toBe(1);
    // After it, the stage is empty again.
    const stage = views[0]!.stage;
    expect(readdirSync(path.join(stage, "in"))).toEqual([]);
    expect(readdirSync(path.join(stage, "out"))).toEqual([]);
  });

  it("Chromium, during an HTML conversion, runs in bubblewrap: allow-listed environment, no data directory, no checkout, no job's files, loopback only (its fetch proxy), own PID namespace", async () => {
    const form = new FormData();
    form.append(
      "file",
      blob("<!DOCTYPE html><h1>Sandboxed page</h1><script>let t=Date.now();while(Date.now()-t<1500){}</script>"),
      "page.html",
    );
    form.append("to", "pdf");
    const submitted = s.request("POST", "/v1/pdf/convert", { form, headers: { Prefer: "wait=90" } });
    // This server's browsers (their profiles are in its workers' stages), not another test's.
    const views = await sample([`--user-data-dir=${tmp}`, `--user-data-dir=${s.dataDir}`], submitted, "chromium");
    const res = await submitted;
    expect(res.json.status, JSON.stringify(res.json.error)).toBe("succeeded");
    expect(views.length).toBeGreaterThan(0);
    for (const v of views) {
      // What Debian's /usr/bin/chromium wrapper and Chromium itself add (CHROMIUM_FLAGS, CHROME_*,
      // the public GOOGLE_* keys Debian ships in /etc/chromium.d/apikeys, a disabled D-Bus
      // address, fontconfig's switch): none of it is Folio's.
      const debian = (n: string): boolean =>
        /^(CHROME_|CHROMIUM_FLAGS$|DBUS_SESSION_BUS_ADDRESS$|FC_FONTATIONS$|GOOGLE_(API_KEY|DEFAULT_CLIENT_ID|DEFAULT_CLIENT_SECRET)$)/.test(
          n,
        );
      const extra = ["PWD", "OLDPWD", "SHLVL", "_"];
      // Renderers write their process title over their environment's memory: only names count.
      const names = v.env.filter((n) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
      expect(names.filter((n) => !ENGINE_ENV_NAMES.includes(n) && !n.startsWith("LC_") && !extra.includes(n) && !debian(n))).toEqual([]);
      expect(v.envValues).not.toContain(SECRET);
      for (const secret of ["folio.db", "seal.key", "tls-key.pem", "tls-cert.pem", "files", "work"])
        expect(v.sees[path.join(s.dataDir, secret)], secret).toBe(false);
      expect(v.sees[path.join(ROOT, "package.json")]).toBe(false); // of the checkout, only Node's binary (the relay)
      expect(v.sees[path.join(ROOT, "core")]).toBe(false);
      expect(v.writable["/usr"]).toBe(false);
      expect(v.interfaces).toEqual(["lo"]);
      expect(v.netns).toBe("own");
      expect(v.pidNamespaces).toBeGreaterThanOrEqual(2);
    }
  });

  it("refuses to start without bubblewrap, naming the package; FOLIO_SANDBOX=none starts and says so as an error", async () => {
    const empty = path.join(dir, "empty-path");
    await run("mkdir", ["-p", empty]);
    const serve = (env: Record<string, string>): Promise<{ code: number; out: string }> =>
      new Promise((resolve) => {
        execFile(
          process.execPath,
          [path.join(ROOT, "bin/folio.ts"), "serve", "--port", "0", "--data-dir", path.join(dir, `data-${Object.keys(env).join("")}`)],
          { env: { ...process.env, ...env }, timeout: 20_000 },
          (err, stdout, stderr) => resolve({ code: (err as { code?: number } | null)?.code ?? 0, out: stdout + stderr }),
        );
      });
    const refused = await serve({ PATH: empty });
    expect(refused.code).toBe(2);
    expect(refused.out).toMatch(/bwrap is missing.*Debian package bubblewrap/s);
    // With the opt-out it gets past the sandbox check (and then fails for want of openssl on this
    // PATH-less run, after having said it is unsandboxed).
    const unsafe = await serve({ PATH: empty, FOLIO_SANDBOX: "none" });
    expect(unsafe.out).toContain("UNSANDBOXED");
    expect(unsafe.out).toMatch(/"level":(50|"error")/);
  });
});

function formOf(a: Buffer, b?: Buffer, name = "a.pdf"): FormData {
  const form = new FormData();
  form.append("file", blob(a), name);
  if (b) form.append("file", blob(b), "b.pdf");
  return form;
}
