/**
 * Headless Chromium (Debian's `chromium` package), one browser process tree driven over its
 * DevTools pipe (cdp.ts). Flags, and why:
 *  - --headless --no-sandbox --disable-gpu: a server without a display or GPU. Chromium's own
 *    sandbox needs user namespaces it is not given in a container (nor inside bubblewrap, whose
 *    user namespace has no capabilities to nest it); the browser's sandbox is the runner's pod in
 *    Kubernetes, and its own bubblewrap in embedded mode (below). Each job gets a fresh context.
 *  - --disable-background-networking --disable-component-update --disable-sync --no-first-run
 *    --disable-quic: no traffic of the browser's own (on this network it is refused outright).
 *  - --proxy-server to a port nothing serves, bypass list "<-loopback>": a context without the
 *    job's fetch proxy (fetch-proxy.ts) reaches nothing, loopback included.
 *  - --force-webrtc-ip-handling-policy=disable_non_proxied_udp: WebRTC's UDP would not go through
 *    the proxy, so a page cannot use it to reach an address.
 *  - --js-flags=--max-old-space-size: a script that allocates without bound crashes its renderer
 *    instead of the machine; the pool also watches the tree's memory.
 *
 * In embedded mode (FOLIO_SANDBOX=bwrap, docs/adr/0021) the whole browser runs in bubblewrap
 * (core/sandbox.ts): the system read-only, its profile directory its only writable place, a
 * private /tmp, its own PID, user and network namespaces, the allow-listed environment; the data
 * directory, the database, the keys, the checkout and every job's files are not there — it gets
 * a job's pages only through the fetch proxy. Its network namespace holds only loopback, where
 * a small relay (RELAY) listens on RELAY_PORT and hands each connection to the slot's fetch proxy
 * over a Unix socket bound into the sandbox: the proxy is the browser's only way out. No RLIMIT_AS
 * (V8 reserves far more address space than it uses); the pool's memory watch is the cap.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readFile, readdir, rm } from "node:fs/promises";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import { CdpConnection } from "./cdp.ts";
import { bwrapArgv, engineEnv, type SandboxScope } from "../../core/sandbox.ts";

/** What a sandboxed browser gets: the policy (core/sandbox.ts sandboxPolicy) and its fetch proxy's socket. */
export interface ChromiumSandbox {
  policy: Pick<SandboxScope, "mode" | "memoryBytes" | "hidden" | "engineDirs">;
  /** The Unix socket of the slot's fetch proxy (fetch-proxy.ts). */
  proxySocket: string;
}

export interface ChromiumOptions {
  chromium: string;
  /** Parent of the profile directory (FOLIO_TMP_DIR). */
  tmpDir: string;
  /** V8 heap limit of a renderer, in MB. */
  heapMb: number;
  startTimeoutMs?: number;
  /** Run the browser in bubblewrap (embedded mode); else as a plain child. */
  sandbox?: ChromiumSandbox;
}

/** The port the relay listens on inside a sandboxed browser's network namespace (its own loopback). */
export const RELAY_PORT = 3128;

/**
 * The relay, run by Node as the sandbox's first process: listens on the sandbox's loopback, pipes
 * each connection to the fetch proxy's Unix socket, then starts the browser with the DevTools pipe
 * (fds 3 and 4) handed down, and ends with it. Without noDelay, Nagle's algorithm holds small
 * writes back for the peer's delayed ACK: ~40 ms per request and answer (measured: 130 ms a page).
 */
const RELAY = `const net = require("node:net");
const { spawn } = require("node:child_process");
const [sock, port, cmd, ...args] = process.argv.slice(1);
const server = net.createServer({ noDelay: true }, (c) => {
  const u = net.connect(sock);
  c.pipe(u).pipe(c);
  c.on("error", () => u.destroy());
  u.on("error", () => c.destroy());
});
server.listen(Number(port), "127.0.0.1", () => {
  const b = spawn(cmd, args, { stdio: ["ignore", "ignore", "inherit", 3, 4] });
  b.on("exit", (code) => process.exit(code ?? 1));
});`;

/** The command that starts the browser: bare, or in bubblewrap behind the relay. */
function browserCommand(opts: ChromiumOptions, profile: string, args: string[]): { file: string; args: string[] } {
  if (!opts.sandbox) return { file: opts.chromium, args };
  const { policy, proxySocket } = opts.sandbox;
  const scope: SandboxScope = {
    ...policy,
    engineDirs: [...(policy.engineDirs ?? []), ...(path.isAbsolute(opts.chromium) ? [path.dirname(opts.chromium)] : [])],
    readable: [path.dirname(proxySocket)],
    writable: [profile],
  };
  const relayArgs = ["--max-old-space-size=16", "-e", RELAY, proxySocket, String(RELAY_PORT), opts.chromium, ...args];
  // No memory cap: V8 reserves address space by the gigabyte (the pool watches real memory).
  const [file, ...rest] = bwrapArgv(scope, process.execPath, relayArgs, undefined);
  return { file: file!, args: rest };
}

const BASE_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
  "--no-default-browser-check",
  "--disable-extensions",
  "--disable-default-apps",
  "--disable-dev-shm-usage",
  "--mute-audio",
  "--hide-scrollbars",
  "--font-render-hinting=none",
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
  // Port 9 (discard) on loopback: a context without the job's proxy gets connection refused.
  "--proxy-server=http://127.0.0.1:9",
  "--proxy-bypass-list=<-loopback>",
  "--remote-debugging-pipe",
];

/**
 * Memory of a process and all its descendants, in MB (Linux /proc): the proportional set size
 * (smaps_rollup's Pss), so that pages the browser's processes share are counted once, not once
 * per process as VmRSS would; VmRSS where Pss cannot be read.
 */
export async function treeRssMb(pid: number): Promise<number> {
  let kb = 0;
  const queue = [pid];
  const seen = new Set<number>();
  while (queue.length) {
    const p = queue.shift()!;
    if (seen.has(p)) continue;
    seen.add(p);
    try {
      const rollup = await readFile(`/proc/${p}/smaps_rollup`, "utf8").catch(() => "");
      const pss = /^Pss:\s+(\d+)/m.exec(rollup)?.[1];
      kb += Number(pss ?? /VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${p}/status`, "utf8"))?.[1] ?? 0);
      for (const task of await readdir(`/proc/${p}/task`)) {
        const kids = await readFile(`/proc/${p}/task/${task}/children`, "utf8").catch(() => "");
        for (const k of kids.split(" ").filter(Boolean)) queue.push(Number(k));
      }
    } catch {
      /* the process ended meanwhile */
    }
  }
  return kb / 1024;
}

/** The first process named chromium at or below `pid` (breadth first), or undefined. */
async function browserProcess(pid: number): Promise<number | undefined> {
  const queue = [pid];
  for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
    const comm = await readFile(`/proc/${p}/comm`, "utf8").catch(() => "");
    if (comm.startsWith("chromium")) return p;
    for (const task of await readdir(`/proc/${p}/task`).catch(() => [] as string[])) {
      const kids = await readFile(`/proc/${p}/task/${task}/children`, "utf8").catch(() => "");
      queue.push(...kids.split(" ").filter(Boolean).map(Number));
    }
  }
  return undefined;
}

export class ChromiumInstance {
  readonly cdp: CdpConnection;
  readonly pid: number;
  /** The loopback port the browser reaches its fetch proxy on when sandboxed (RELAY_PORT), else null. */
  readonly proxyPort: number | null;
  /** The browser's first process, when it runs below bubblewrap and the relay (found on first use). */
  private memoryRoot: number | undefined;
  jobs = 0;
  private readonly child: ChildProcess;
  private readonly profile: string;
  private exited = false;
  /** The last lines Chromium printed on stderr, for logs when it fails. */
  readonly stderrTail: string[] = [];

  private constructor(child: ChildProcess, profile: string, sandboxed: boolean) {
    this.child = child;
    this.profile = profile;
    this.pid = child.pid!;
    this.proxyPort = sandboxed ? RELAY_PORT : null;
    this.cdp = new CdpConnection(child.stdio[4] as Readable, child.stdio[3] as Writable);
    child.on("exit", () => {
      this.exited = true;
    });
    (child.stderr as Readable).on("data", (b: Buffer) => {
      this.stderrTail.push(...b.toString("utf8").split("\n").filter(Boolean));
      this.stderrTail.splice(0, Math.max(0, this.stderrTail.length - 20));
    });
  }

  /** Starts a browser and waits until it answers on its pipe. */
  static async launch(opts: ChromiumOptions): Promise<ChromiumInstance> {
    const profile = path.join(opts.tmpDir, `folio-chromium-${process.pid}-${randomBytes(4).toString("hex")}`);
    await mkdir(profile, { recursive: true, mode: 0o700 });
    const args = [...BASE_FLAGS, `--user-data-dir=${profile}`, `--js-flags=--max-old-space-size=${opts.heapMb}`, "about:blank"];
    // Its own process group, so that a kill reaches the renderers and the GPU/utility processes too.
    // The engines' allow-listed environment (core/sandbox.ts): nothing of the runner's own.
    const env = opts.sandbox ? engineEnv(process.env, { HOME: profile, TMPDIR: "/tmp" }) : engineEnv();
    const cmd = browserCommand(opts, profile, args);
    const child = spawn(cmd.file, cmd.args, { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"], detached: true, env });
    const instance = new ChromiumInstance(child, profile, opts.sandbox !== undefined);
    const failed = new Promise<never>((_, reject) => {
      child.once("error", (e) => reject(e));
      child.once("exit", (code) =>
        reject(new Error(`chromium exited (${code}) while starting: ${instance.stderrTail.slice(-3).join(" | ")}`)),
      );
    });
    const timeout = AbortSignal.timeout(opts.startTimeoutMs ?? 30_000);
    try {
      await Promise.race([
        instance.cdp.send("Browser.getVersion"),
        failed,
        new Promise<never>((_, reject) => timeout.addEventListener("abort", () => reject(new Error("chromium did not start in time")))),
      ]);
    } catch (err) {
      instance.kill();
      await rm(profile, { recursive: true, force: true });
      throw err;
    }
    return instance;
  }

  get alive(): boolean {
    return !this.exited && !this.cdp.closed;
  }

  /**
   * The memory of the browser's process tree. Sandboxed, the tree is measured from the browser's
   * own first process, below bubblewrap and the relay: the same processes as a bare browser's, so
   * the same caps apply and the walk costs the same (smaps_rollup of a Node relay is not cheap).
   */
  async rssMb(): Promise<number> {
    if (this.proxyPort !== null) this.memoryRoot ??= await browserProcess(this.pid);
    return treeRssMb(this.memoryRoot ?? this.pid);
  }

  /** Kills the whole process group at once. */
  kill(): void {
    try {
      process.kill(-this.pid, "SIGKILL");
    } catch {
      /* already gone */
    }
  }

  /** Asks the browser to close, kills it if it does not within 2 s, and removes its profile. */
  async close(): Promise<void> {
    if (this.alive) {
      const gone = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
      void this.cdp.send("Browser.close").catch(() => undefined);
      await Promise.race([gone, new Promise((r) => setTimeout(r, 2000).unref())]);
    }
    this.kill();
    await rm(this.profile, { recursive: true, force: true });
  }
}
