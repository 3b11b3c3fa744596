/**
 * LibreOffice's own single-instance IPC ("OfficeIPC"), spoken from Node: how a second `soffice`
 * hands its command line to the office already running on the same user profile. We use it to
 * give a warm office `--convert-to pdf` jobs without Python or UNO.
 *
 * The wire format, from desktop/source/app/officeipcthread.cxx (PipeIpcThread, LibreOffice 7.x):
 *  - the office listens on a Unix socket /tmp/OSL_PIPE_<uid>_SingleOfficeIPC_<hash>, where <hash>
 *    is the MD5 of the profile URL (-env:UserInstallation) taken as UTF-16 code units, each byte
 *    printed in lower-case hex without zero padding (CreateMD5FromString);
 *  - once the office is ready it writes "InternalIPC::SendArguments\0" to every client;
 *  - the client answers "InternalIPC::Arguments" + ("1" + cwd URL | "0") + ("," + argument)* + "\0",
 *    each field UTF-8 with "\\", "," and NUL escaped as "\\\\", "\\," and "\\0" (addArgument);
 *  - the office runs the requests (conversions are loaded hidden, read-only and silent, see
 *    dispatchwatcher.cxx) and then writes "InternalIPC::ProcessingDone\0".
 * A client that closes the socket without sending arguments is ignored ("lookup message"), which
 * makes a cheap readiness probe. The office answers ProcessingDone even when a conversion failed,
 * so callers must verify the output themselves.
 */
import { createHash } from "node:crypto";
import { readdir, readFile, readlink } from "node:fs/promises";
import net from "node:net";

export const ARGUMENT_PREFIX = "InternalIPC::Arguments";
export const SEND_ARGUMENTS = "InternalIPC::SendArguments";
export const PROCESSING_DONE = "InternalIPC::ProcessingDone";

/** The office could not be reached: no socket, connection refused, or it closed before greeting. */
export class IpcUnavailable extends Error {
  override readonly name = "IpcUnavailable";
}

/** The office accepted the request but the connection ended before ProcessingDone (a crash). */
export class IpcInterrupted extends Error {
  override readonly name = "IpcInterrupted";
}

/** The caller's signal fired while the request was in flight. */
export class IpcAborted extends Error {
  override readonly name = "IpcAborted";
}

function escapeField(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/,/g, "\\,").replace(/\0/g, "\\0");
}

/** The "InternalIPC::Arguments…\0" message for a command line, as a second soffice would send it. */
export function encodeArguments(cwdUrl: string | null, args: readonly string[]): Buffer {
  const cwd = cwdUrl === null ? "0" : "1" + escapeField(cwdUrl);
  const text = ARGUMENT_PREFIX + cwd + args.map((a) => "," + escapeField(a)).join("") + "\0";
  return Buffer.from(text, "utf8");
}

/** Where LibreOffice puts the IPC socket of the office running on `profileUrl` (osl pipe naming). */
export function pipePathFor(profileUrl: string, uid: number): string {
  const digest = createHash("md5").update(Buffer.from(profileUrl, "utf16le")).digest();
  const hash = [...digest].map((b) => b.toString(16)).join("");
  return `/tmp/OSL_PIPE_${uid}_SingleOfficeIPC_${hash}`;
}

/**
 * The IPC socket a running soffice.bin listens on, found through /proc: the listening Unix sockets
 * named *SingleOfficeIPC_* whose inode is one of the process's open files. A fallback for when the
 * profile URL is normalised differently from what pipePathFor() assumes.
 */
export async function findPipeOfProcess(pid: number): Promise<string | null> {
  const inodes = new Set<string>();
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) inodes.add(m[1]!);
  }
  const table = await readFile("/proc/net/unix", "utf8").catch(() => "");
  for (const line of table.split("\n").slice(1)) {
    const cols = line.trim().split(/\s+/);
    // Num RefCount Protocol Flags Type St Inode Path; flags 00010000 = __SO_ACCEPTCON (listening).
    const inode = cols[6];
    const sockPath = cols[7];
    if (inode && sockPath?.includes("SingleOfficeIPC_") && cols[3] === "00010000" && inodes.has(inode)) return sockPath;
  }
  return null;
}

/**
 * One IPC exchange. With `args` it sends them and resolves on ProcessingDone; with null it only
 * waits for the greeting and hangs up (the readiness probe).
 */
function exchange(socketPath: string, args: readonly string[] | null, cwdUrl: string | null, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new IpcAborted("aborted before connecting"));
    const sock = net.createConnection(socketPath);
    let pending = Buffer.alloc(0);
    let greeted = false;
    let settled = false;
    const finish = (err?: Error): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      sock.destroy();
      if (err) reject(err);
      else resolve();
    };
    const onAbort = (): void => finish(new IpcAborted("aborted while waiting for LibreOffice"));
    signal?.addEventListener("abort", onAbort, { once: true });
    sock.on("data", (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (let nul = pending.indexOf(0); nul >= 0; nul = pending.indexOf(0)) {
        const message = pending.subarray(0, nul).toString("utf8");
        pending = pending.subarray(nul + 1);
        if (message === SEND_ARGUMENTS && !greeted) {
          greeted = true;
          if (args === null) return finish();
          sock.write(encodeArguments(cwdUrl, args));
        } else if (message === PROCESSING_DONE && greeted) {
          return finish();
        } else {
          return finish(new IpcInterrupted(`unexpected message from LibreOffice: ${JSON.stringify(message.slice(0, 64))}`));
        }
      }
    });
    sock.on("error", (e: NodeJS.ErrnoException) => {
      finish(
        greeted
          ? new IpcInterrupted(`IPC connection failed: ${e.code ?? e.message}`)
          : new IpcUnavailable(`cannot reach LibreOffice: ${e.code ?? e.message}`),
      );
    });
    sock.on("close", () => {
      finish(
        greeted
          ? new IpcInterrupted("LibreOffice closed the IPC connection before it finished")
          : new IpcUnavailable("LibreOffice closed the IPC connection before greeting"),
      );
    });
  });
}

/** Waits until the office greets on its socket (it does so only once fully started), then hangs up. */
export function ipcPing(socketPath: string, signal?: AbortSignal): Promise<void> {
  return exchange(socketPath, null, null, signal);
}

/** Hands a command line to the office and resolves once it reports ProcessingDone. */
export function ipcRequest(
  socketPath: string,
  args: readonly string[],
  opts: { cwdUrl?: string; signal?: AbortSignal } = {},
): Promise<void> {
  return exchange(socketPath, args, opts.cwdUrl ?? null, opts.signal);
}
