/**
 * Process plumbing for the control plane: free loopback ports, daemons with their logs in files,
 * readiness probes, and a stop that always ends with the process gone.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { request } from "node:https";
import { request as httpRequest } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

export { freePort } from "../helpers/ports.ts";

/** A daemon we started: its process and the file its stdout and stderr go to. */
export interface Daemon {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logFile: string;
  /** Set once the process has exited (code, or 128 + signal number like a shell). */
  exitCode?: number;
}

/**
 * util-linux `setpriv --pdeathsig KILL` execs the daemon with a parent-death signal: if this Node
 * process dies without stop() (SIGKILL, a crashed test runner), the kernel kills the daemons
 * instead of leaving an orphaned apiserver behind. Without setpriv, only a normal exit cleans up.
 */
const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"].find((p) => existsSync(p));

/** Starts `binary args…` with stdout and stderr appended to `logFile`. */
export function startDaemon(name: string, binary: string, args: readonly string[], logFile: string): Daemon {
  const fd = openSync(logFile, "a", 0o600);
  const child = SETPRIV
    ? spawn(SETPRIV, ["--pdeathsig", "KILL", "--", binary, ...args], { stdio: ["ignore", fd, fd] })
    : spawn(binary, args, { stdio: ["ignore", fd, fd] });
  closeSync(fd);
  const daemon: Daemon = { name, child, logFile };
  child.once("exit", (code, signal) => {
    daemon.exitCode = code ?? 128 + (signal === "SIGKILL" ? 9 : 15);
  });
  return daemon;
}

/** The last `lines` lines of a daemon's log, for error messages. */
export function logTail(daemon: Daemon, lines = 20): string {
  try {
    return readFileSync(daemon.logFile, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** HTTP(S) GET returning the status code (0 on a connection error). TLS is verified against `ca`. */
export async function probe(url: string, opts: { ca?: string; token?: string; insecure?: boolean } = {}): Promise<number> {
  return new Promise((resolve) => {
    const headers = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
    const done = (res: { statusCode?: number; resume: () => void }): void => {
      res.resume();
      resolve(res.statusCode ?? 0);
    };
    const req = url.startsWith("https:")
      ? request(url, { headers, ca: opts.ca, rejectUnauthorized: !opts.insecure, timeout: 2000 }, done)
      : httpRequest(url, { headers, timeout: 2000 }, done);
    req.once("error", () => {
      resolve(0);
    });
    req.once("timeout", () => {
      req.destroy();
    });
    req.end();
  });
}

/** Polls `ready` until it returns true; fails early with the log tail if the daemon exits. */
export async function waitUntil(daemon: Daemon, what: string, ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (daemon.exitCode !== undefined) {
      throw new Error(`${daemon.name} exited with ${daemon.exitCode} before ${what}:\n${logTail(daemon)}`);
    }
    if (await ready()) return;
    if (Date.now() > deadline) throw new Error(`${daemon.name}: no ${what} after ${timeoutMs} ms:\n${logTail(daemon)}`);
    await sleep(200);
  }
}

/**
 * Stops a daemon the way a process supervisor does: SIGTERM, then SIGKILL after `graceMs`.
 * Resolves once the process is gone, so the temp dir can be removed under no live writer.
 */
export async function stopDaemon(daemon: Daemon, graceMs = 5000): Promise<void> {
  if (daemon.exitCode !== undefined || daemon.child.exitCode !== null || daemon.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) =>
    daemon.child.once("exit", () => {
      resolve();
    }),
  );
  daemon.child.kill("SIGTERM");
  const timer = setTimeout(() => daemon.child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}
