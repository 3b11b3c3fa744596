/**
 * Runner workers in bubblewrap (issue #11, docs/adr/0021). A worker runs the Node-side document
 * engines in its own process — pdfjs, pdf-lib, sharp (libvips) — and Folio's own parsers, on every
 * tenant's documents; so in embedded mode (FOLIO_SANDBOX=bwrap) each worker process starts in a
 * sandbox (core/sandbox.ts bwrapArgv) that shows it:
 *
 * - the system read-only, and Folio's code read-only (bin, core, runner — of the checkout or of
 *   the compiled tree — and the checkout's node_modules, package.json, .tools/node, .tools/verapdf; the data directory masked if it lies
 *   in the checkout, and so are the TLS files);
 * - its own staging directory (`Stage`), nothing else of ours: `in/` read-only (the running job's
 *   inputs, hard links — or copies — of the stored files, put there by the API), `out/` (the job's
 *   outputs, taken by the API when the job ends) and `tmp/` (its FOLIO_TMP_DIR, HOME and TMPDIR:
 *   job work directories, the warm LibreOffice and Chromium slots);
 * - its own PID, user, IPC, UTS and cgroup namespaces, no capabilities; the host's network (its
 *   fetch proxy fetches the web pages a conversion asks for, through the SSRF guard).
 *
 * The engines it starts run in sandboxes of their own inside it (one per job, per warm office, per
 * browser), with their own /proc. The kernel lets a user namespace mount a new /proc only where an
 * existing one is fully visible, and bubblewrap covers /proc/sys and a few others read-only when
 * it can write them — which it can as root. So a root Folio starts its workers as `nobody`
 * (WORKER_UID): their sandboxes then have an uncovered /proc, and the nested ones work. An
 * unprivileged Folio runs them as itself.
 *
 * A worker outlives its jobs and takes any tenant's next job: what one job could do to its worker
 * (an exploit in libvips or pdfjs) it keeps for the jobs after — within this sandbox, which never
 * holds more than the job at hand. The API wipes `in/` and `out/` after every job, and trusts
 * nothing the worker reports: an output must be a regular file inside `out/`.
 */
import { chownSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { chown, copyFile, link, lstat, mkdir, readdir, realpath, rename, rm } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../../core/config.ts";
import type { RunnerResult, RunnerSpec } from "../../core/schemas/job.ts";
import { bwrapArgv, sandboxPolicy, SandboxUnavailable, type SandboxScope } from "../../core/sandbox.ts";

/** The user a root Folio runs its workers as (nobody): see above. */
export const WORKER_UID = 65534;

/** Folio's code: two levels above this module — the checkout, or the compiled tree (dist/) in it. */
const CODE_ROOT = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
/**
 * The package around that code: the nearest directory at or above it with a package.json (the
 * checkout for both). Node finds node_modules, and `"type": "module"`, by walking up from the
 * module: a compiled tree's worker needs the checkout's, not a dist/node_modules that does not exist.
 */
const PACKAGE_ROOT = packageRoot(CODE_ROOT);
/** What a worker runs: Folio's code and the tools it uses, never the rest of the checkout. */
const CODE = [
  ...["bin", "core", "runner"].map((c) => path.join(CODE_ROOT, c)),
  ...["node_modules", "package.json", ".tools/node", ".tools/verapdf"].map((c) => path.join(PACKAGE_ROOT, c)),
];

function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (dir === path.dirname(dir)) return from;
  }
}

/** How the pool sandboxes its workers: one per pool, from the workers' environment. */
export interface WorkerSandbox {
  readonly policy: ReturnType<typeof sandboxPolicy>;
  /** The parent of every worker's staging directory. */
  readonly root: string;
  /** The worker's user and group when Folio runs as root. */
  readonly user: { uid: number; gid: number } | null;
}

/**
 * The pool's worker sandbox, or null when the engines are not sandboxed by bubblewrap (FOLIO_SANDBOX
 * none or container) or no data directory is known (a pool in a test).
 */
export function workerSandbox(env: NodeJS.ProcessEnv): WorkerSandbox | null {
  const config = loadConfig(env);
  if (config.FOLIO_SANDBOX !== "bwrap" || !env.FOLIO_DATA_DIR) return null;
  const user = process.getuid?.() === 0 ? { uid: WORKER_UID, gid: WORKER_UID } : null;
  // Staged inputs are hard links where they can be: beside the stored files, in the data
  // directory. A worker started as nobody could not reach that (0700, root's): it stages in
  // FOLIO_TMP_DIR instead, by copy.
  const tmp = path.resolve(config.FOLIO_TMP_DIR);
  if (user) checkReachable([tmp, ...CODE, process.execPath]);
  const root = user ? path.join(tmp, `folio-workers-${process.pid}`) : path.join(path.resolve(env.FOLIO_DATA_DIR), "work", "workers");
  rmSync(root, { recursive: true, force: true }); // a previous run's
  mkdirSync(root, { recursive: true, mode: user ? 0o711 : 0o700 });
  if (user) removeOrphans(tmp);
  return { policy: sandboxPolicy(config), root, user };
}

/**
 * Under root the workers run as nobody: every directory above their code, Node and FOLIO_TMP_DIR
 * must let others through (o+x), or each worker would die at start (a checkout in /root, 0700).
 * Refuses to start with the path to fix instead.
 */
export function checkReachable(paths: readonly string[]): void {
  for (const p of paths) {
    for (let dir = path.dirname(p); ; dir = path.dirname(dir)) {
      const st = statSync(dir, { throwIfNoEntry: false });
      if (st && (st.mode & 0o001) === 0) {
        throw new SandboxUnavailable(
          `Folio runs as root, so its runner workers run as nobody (uid ${WORKER_UID}) in their sandbox, and nobody cannot reach ${p}: ` +
            `${dir} is not searchable by others. Run Folio as an unprivileged user (recommended), or chmod o+x ${dir}.`,
        );
      }
      if (dir === path.dirname(dir)) break;
    }
  }
}

/** Stages left in `tmp` by Folio processes that are gone (killed: they could not clean up). */
function removeOrphans(tmp: string): void {
  for (const name of readdirSync(tmp, { withFileTypes: true })) {
    const pid = /^folio-workers-(\d+)$/.exec(name.name)?.[1];
    if (!name.isDirectory() || pid === undefined || existsSync(`/proc/${pid}`)) continue;
    rmSync(path.join(tmp, name.name), { recursive: true, force: true });
  }
}

/** One worker's staging directory: `in/` (read-only to it), `out/`, `tmp/`. */
export class Stage {
  readonly dir: string;
  readonly in: string;
  readonly out: string;
  readonly tmp: string;
  readonly #box: WorkerSandbox;

  constructor(box: WorkerSandbox) {
    this.#box = box;
    this.dir = path.join(box.root, `w-${randomBytes(4).toString("hex")}`);
    this.in = path.join(this.dir, "in");
    this.out = path.join(this.dir, "out");
    this.tmp = path.join(this.dir, "tmp");
    for (const d of [this.dir, this.in, this.out, this.tmp]) {
      mkdirSync(d, { mode: 0o700 });
      if (box.user) chownSync(d, box.user.uid, box.user.gid);
    }
  }

  /** The worker's command line: `command` in bubblewrap with this stage. */
  argv(command: readonly string[]): string[] {
    const [cmd, ...args] = command;
    const scope: SandboxScope = {
      ...this.#box.policy,
      system: [...new Set([path.dirname(process.execPath), ...CODE])],
      writable: [this.dir],
      readable: [this.in],
      network: "host",
    };
    // No memory cap on a Node process (V8 reserves far more address space than it uses); its
    // engines have theirs.
    return bwrapArgv(scope, cmd!, args, undefined);
  }

  /**
   * The worker's environment: its scratch space and home are its `tmp/`; its TMPDIR is the
   * sandbox's private /tmp, short enough for the Unix sockets made there (107 bytes at most: the
   * warm offices' IPC, the browsers' fetch proxies).
   */
  env(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
    return { ...base, FOLIO_TMP_DIR: this.tmp, TMPDIR: "/tmp", HOME: this.tmp };
  }

  /** `spec` with its inputs staged in `in/` and its outputs going to `out/`. */
  async stageSpec(spec: RunnerSpec): Promise<RunnerSpec> {
    const inputs = await Promise.all(
      spec.inputs.map(async (input, i) => {
        const staged = path.join(this.in, String(i));
        await this.#put(input.path, staged);
        return { ...input, path: staged };
      }),
    );
    return { ...spec, inputs, output_dir: this.out };
  }

  async #put(from: string, to: string): Promise<void> {
    if (!this.#box.user) {
      try {
        await link(from, to);
        return;
      } catch (err) {
        if (!["EXDEV", "EPERM", "EMLINK"].includes((err as NodeJS.ErrnoException).code ?? "")) throw err;
      }
    }
    await copyFile(from, to);
    if (this.#box.user) await chown(to, this.#box.user.uid, this.#box.user.gid);
  }

  /**
   * Moves the outputs the worker reported from `out/` into `outDir` and returns the result with
   * their new paths. An output that is not a regular file inside `out/` (a symbolic link to a
   * file of ours, a path elsewhere) fails the job: the worker is not trusted.
   */
  async collect(result: RunnerResult, outDir: string): Promise<RunnerResult> {
    const out = await realpath(this.out);
    const outputs = [];
    for (const o of result.outputs) {
      const rel = await insideOut(out, o.path);
      const target = path.join(outDir, rel);
      await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
      await move(path.join(out, rel), target);
      outputs.push({ ...o, path: target });
    }
    return { ...result, outputs };
  }

  /** Empties `in/` and `out/` (the directories stay: the worker's sandbox has them bound). */
  async wipe(): Promise<void> {
    for (const d of [this.in, this.out]) {
      for (const e of await readdir(d).catch(() => [])) await rm(path.join(d, e), { recursive: true, force: true });
    }
  }

  /** Removes the whole stage (its worker has exited). */
  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}

/** `file`'s path relative to `out` when it is a regular file under it (no link on the way); else throws. */
async function insideOut(out: string, file: string): Promise<string> {
  const rel = path.relative(out, path.resolve(file));
  const full = path.join(out, rel);
  const inside = rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
  const regular = inside && (await lstat(full).catch(() => null))?.isFile() === true;
  if (!regular || (await realpath(path.dirname(full))) !== path.dirname(full)) {
    throw new Error(`the worker reported an output that is not a file in its out directory: ${JSON.stringify(file)}`);
  }
  return rel;
}

async function move(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
    await copyFile(from, to);
    await rm(from, { force: true });
  }
}
