/**
 * One warm LibreOffice: a headless soffice in its own process group with its own profile, kept
 * alive by one hidden document, taking conversions over OfficeIPC (soffice-ipc.ts). It knows how
 * to start, convert, report its memory and die; the pool decides when.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdir, readFile, rm, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../../core/logger.ts";
import { engineEnv } from "../../core/sandbox.ts";
import { findPipeOfProcess, ipcPing, ipcRequest, IpcUnavailable, pipePathFor } from "./soffice-ipc.ts";
import { verifyPdfOutput } from "./soffice-job.ts";
import { prepareSofficeDirs, SOFFICE_FLAGS, sofficeEnv } from "./soffice-profile.ts";
import { makeIpcDir, officeCommand, throughExchange, type OfficeSandbox } from "./soffice-sandbox.ts";

/**
 * A killed office's last children can still be writing its profile while it is removed (ENOTEMPTY
 * seen on a loaded CI): rm retries such errors with a linear backoff.
 */
export const RM_RETRYING = { recursive: true, force: true, maxRetries: 5, retryDelay: 100 } as const;

export interface SofficeInstanceOptions {
  /** The soffice executable. */
  soffice: string;
  /** A directory of its own (created by start(), removed by kill()). */
  dir: string;
  log: Logger;
  /** How long start() may take, profile creation and warm-up included. */
  startTimeoutMs: number;
  /** In a bwrap sandbox that sees only `dir` (soffice-sandbox.ts); unsandboxed otherwise. */
  sandbox?: OfficeSandbox;
}

/** The processes of a process group, from /proc (pid and command name). */
export async function processGroupMembers(pgid: number): Promise<{ pid: number; comm: string }[]> {
  const out: { pid: number; comm: string }[] = [];
  for (const entry of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const text = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // "pid (comm) state ppid pgrp …"; comm may contain spaces and parentheses, so split at the last ")".
    const close = text.lastIndexOf(")");
    const fields = text.slice(close + 2).split(" ");
    // A zombie (state Z) has exited already; only its parent (or init) still has to reap it.
    if (close > 0 && Number(fields[2]) === pgid && fields[0] !== "Z")
      out.push({ pid: Number(entry), comm: text.slice(text.indexOf("(") + 1, close) });
  }
  return out;
}

/**
 * The office runs under a small sh in its own process group, so that it dies with us. soffice is
 * detached (a hung office must be killable as a group without touching the runner), which also
 * means nothing kills it when the runner itself dies — a crashed or OOM-killed worker would leave
 * its warm offices running for ever. The sh keeps our stdin pipe open on fd 3 and a watcher reads
 * it: when the runner dies, the pipe reaches EOF and the watcher SIGKILLs the whole group. The sh
 * itself waits for soffice and exits with its status, so the exit event still means "office gone".
 * (fd 3 is duplicated because POSIX sh gives background jobs /dev/null as stdin.)
 */
const WATCHDOG =
  'exec 3<&0; { read -r _ <&3; kill -KILL 0; } & watcher=$!; "$@" 3<&- </dev/null & office=$!; exec 3<&-; ' +
  // Reap the watcher before leaving: an orphan would become a zombie where PID 1 does not reap.
  'wait "$office"; rc=$?; kill -KILL "$watcher" 2>/dev/null; wait "$watcher"; exit $rc';

export class SofficeInstance {
  readonly dir: string;
  /** Conversions done by this instance (warm-ups excluded). */
  jobs = 0;
  /** pid of the process we spawned: the process group leader (oosplash). */
  pid: number | null = null;
  /** pid of soffice.bin, the office itself (what crashes and what holds the memory). */
  binPid: number | null = null;
  socketPath: string | null = null;
  /** Called once when the office exits without kill() having been asked for it. */
  onUnexpectedExit: (() => void) | null = null;

  private readonly opts: SofficeInstanceOptions;
  private readonly killed = new AbortController();
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private alive = false;
  private recent: string[] = [];
  /** A sandboxed office's /tmp, where its IPC socket is (soffice-sandbox.ts). */
  private ipcDir: string | null = null;

  constructor(opts: SofficeInstanceOptions) {
    this.opts = opts;
    this.dir = opts.dir;
  }

  get isAlive(): boolean {
    return this.alive;
  }

  /** In a bwrap sandbox: jobs then pass through the slot's exchange directory. */
  get sandboxed(): boolean {
    return this.opts.sandbox?.mode === "bwrap";
  }

  /** The last lines soffice printed (it names failed loads there); for logs only. */
  get lastOutput(): string[] {
    return [...this.recent];
  }

  /** True once kill() was called: a start that fails after this was cancelled, not broken. */
  get stopped(): boolean {
    return this.killed.signal.aborted;
  }

  /** Starts the office and resolves once it has converted its warm-up documents over IPC. */
  async start(): Promise<void> {
    const deadline = AbortSignal.any([AbortSignal.timeout(this.opts.startTimeoutMs), this.killed.signal]);
    const dirs = await prepareSofficeDirs(this.dir, { seedDocs: true });
    if (deadline.aborted) throw new Error("LibreOffice start was cancelled");
    const args = [...SOFFICE_FLAGS, `-env:UserInstallation=${dirs.profileUrl}`, dirs.keepalive];
    if (this.sandboxed) this.ipcDir = await makeIpcDir();
    const command = this.ipcDir
      ? await officeCommand(this.opts.sandbox!, this.opts.soffice, args, this.dir, this.ipcDir, dirs.tmp)
      : [this.opts.soffice, ...args];
    const child = spawn("/bin/sh", ["-c", WATCHDOG, "folio-soffice", ...command], {
      cwd: dirs.tmp,
      env: engineEnv(process.env, sofficeEnv(dirs)),
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    this.pid = child.pid ?? null;
    this.alive = this.pid !== null;
    this.exited = new Promise<void>((resolve) => {
      child.on("error", (err) => {
        this.opts.log.error({ err }, "Could not start LibreOffice");
        this.alive = false;
        resolve();
      });
      child.on("exit", (code, sig) => {
        this.alive = false;
        if (!this.killed.signal.aborted) {
          this.opts.log.warn({ code, signal: sig, soffice_pid: this.binPid, output: this.lastOutput }, "LibreOffice exited unexpectedly");
          this.onUnexpectedExit?.();
        }
        resolve();
      });
    });
    for (const stream of [child.stdout, child.stderr]) stream.on("data", (b: Buffer) => this.remember(b.toString("utf8")));
    this.socketPath = await this.waitForPipe(dirs.profileUrl, deadline);
    // The warm-ups prove the whole path (IPC, load, PDF export) and load Writer, Calc and Impress.
    for (const doc of dirs.warmups) await this.warmUp(this.socketPath, doc, dirs.tmp, deadline);
    // The soffice.bin seen early may have been replaced since (oosplash restarts it on exit code 81).
    if (this.pid !== null) this.binPid = (await processGroupMembers(this.pid)).find((p) => p.comm === "soffice.bin")?.pid ?? this.binPid;
  }

  /**
   * Converts a seed document, retrying while it fails. The office answers IPC as soon as it is
   * "ready", which is *before* it has finished opening the keepalive document given on its
   * command line; a request handled meanwhile runs nested in that load and fails with "source
   * file could not be loaded" (seen on 7.4). Converting the keepalive document itself succeeds
   * only once its load is over, so the first warm-up doubles as the "fully started" signal.
   */
  private async warmUp(socketPath: string, doc: string, outDir: string, deadline: AbortSignal): Promise<void> {
    const pdf = path.join(outDir, path.basename(doc).replace(/\.[^.]+$/, ".pdf"));
    for (let attempt = 1; ; attempt++) {
      await ipcRequest(socketPath, ["--convert-to", "pdf", "--outdir", outDir, doc], {
        cwdUrl: pathToFileURL(outDir).href,
        signal: deadline,
      });
      try {
        await verifyPdfOutput(pdf);
        return;
      } catch (err) {
        if (attempt >= 50 || !this.alive)
          throw new Error(`LibreOffice could not convert its warm-up document: ${this.lastOutput.join(" | ")}`, { cause: err });
      }
      await sleep(100);
    }
  }

  private remember(text: string): void {
    for (const line of text.split("\n")) if (line.trim()) this.recent.push(line.trim().slice(0, 300));
    if (this.recent.length > 20) this.recent = this.recent.slice(-20);
  }

  /** Polls until the office greets on its IPC socket (created early, answered once it is ready). */
  private async waitForPipe(profileUrl: string, deadline: AbortSignal): Promise<string> {
    const pipe = pipePathFor(profileUrl, process.getuid?.() ?? 0);
    // Sandboxed, the office's /tmp is its own IPC directory.
    const expected = this.ipcDir ? path.join(this.ipcDir, path.basename(pipe)) : pipe;
    const started = Date.now();
    for (;;) {
      if (this.stopped) throw new Error("LibreOffice start was cancelled: the office was stopped");
      if (deadline.aborted) throw new Error(`LibreOffice did not become ready within ${this.opts.startTimeoutMs} ms`);
      if (!this.alive) throw new Error(`LibreOffice exited during start: ${this.lastOutput.join(" | ")}`);
      if (this.binPid === null && this.pid !== null) this.binPid = await officeBinPid(this.pid);
      const candidate = await this.pipeCandidate(expected, Date.now() - started);
      if (candidate && (await answers(candidate, deadline))) return candidate;
      await sleep(50);
    }
  }

  /** The socket where we expect it, else (after 3 s) the one soffice.bin has open, when LibreOffice spelled the profile URL differently from us. */
  private async pipeCandidate(expected: string, elapsedMs: number): Promise<string | null> {
    if ((await stat(expected).catch(() => null))?.isSocket()) return expected;
    return this.binPid !== null && elapsedMs > 3000 ? findPipeOfProcess(this.binPid) : null;
  }

  /**
   * Converts `input` to PDF in `outDir` and resolves when the office reports it is done (which it
   * also does when loading failed: the caller verifies the output). Rejects with the IPC errors.
   */
  async convert(input: string, outDir: string, signal: AbortSignal): Promise<void> {
    const socket = this.socketPath;
    if (!socket || !this.alive) throw new IpcUnavailable("LibreOffice is not running");
    this.recent = [];
    const request = (inFile: string, out: string): Promise<void> =>
      ipcRequest(socket, ["--convert-to", "pdf", "--outdir", out, inFile], { cwdUrl: pathToFileURL(out).href, signal });
    if (this.sandboxed) await throughExchange(this.dir, input, outDir, request);
    else await request(input, outDir);
    this.jobs++;
  }

  /** Resident memory of soffice.bin in MiB (VmRSS in /proc/PID/status), or null when unknown. */
  async rssMb(): Promise<number | null> {
    let status = this.binPid === null ? "" : await readFile(`/proc/${this.binPid}/status`, "utf8").catch(() => "");
    if (!/^Name:\s+soffice\.bin$/m.test(status) && this.pid !== null) {
      // oosplash restarts soffice.bin when it asks for it (exit code 81, e.g. after first-start
      // profile migration): look the office up again in our process group.
      this.binPid = await officeBinPid(this.pid);
      status = this.binPid === null ? "" : await readFile(`/proc/${this.binPid}/status`, "utf8").catch(() => "");
    }
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? null : Number(kb) / 1024;
  }

  /**
   * Kills the whole process group (oosplash, soffice.bin and anything they started) with SIGKILL,
   * waits until no member is left, and removes the instance's directory and IPC socket. SIGKILL
   * rather than a polite shutdown: the profile is thrown away anyway and a hung office would
   * ignore anything else. Safe to call at any time, more than once.
   */
  async kill(): Promise<void> {
    this.killed.abort();
    const pgid = this.pid;
    if (pgid !== null && this.alive) {
      // soffice.bin first, so that each process is reaped by its own parent (oosplash, then our
      // sh, then Node); killing the group at once orphans them, and orphans turn into zombies
      // where PID 1 does not reap (a container whose PID 1 is the runner itself).
      for (const p of await processGroupMembers(pgid)) {
        if (p.comm !== "soffice.bin") continue;
        try {
          process.kill(p.pid, "SIGKILL");
        } catch {
          /* already gone */
        }
      }
      await Promise.race([this.exited, sleep(3000)]);
    }
    if (pgid !== null) {
      for (let i = 0; i < 100; i++) {
        try {
          process.kill(-pgid, "SIGKILL");
        } catch {
          /* the group is gone */
        }
        if ((await processGroupMembers(pgid)).length === 0) break;
        await sleep(20);
      }
    }
    await Promise.race([this.exited, sleep(2000)]);
    this.alive = false;
    if (this.socketPath) await unlink(this.socketPath).catch(() => undefined);
    if (this.ipcDir) await rm(this.ipcDir, RM_RETRYING);
    await rm(this.dir, RM_RETRYING);
  }
}

/** soffice.bin's pid in the process group oosplash leads, or null while it has not started. */
async function officeBinPid(groupLeader: number): Promise<number | null> {
  return (await processGroupMembers(groupLeader)).find((p) => p.comm === "soffice.bin")?.pid ?? null;
}

/** Whether the office answers on `socket`; false while it is not listening yet or a first-start restart (exit code 81) is under way. */
async function answers(socket: string, deadline: AbortSignal): Promise<boolean> {
  try {
    await ipcPing(socket, deadline);
    return true;
  } catch (err) {
    if (!(err instanceof IpcUnavailable)) throw err;
    return false;
  }
}
