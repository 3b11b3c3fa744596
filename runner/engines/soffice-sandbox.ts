/**
 * A warm LibreOffice in a sandbox (embedded mode, FOLIO_SANDBOX=bwrap; core/sandbox.ts).
 *
 * A warm office outlives its jobs, so it cannot be given each job's directories the way a one-shot
 * engine is (a mount namespace is fixed when the process starts). Instead each pool slot's office
 * runs in bubblewrap with exactly one writable place of its own — the slot's directory: its
 * profile, HOME, TMPDIR, warm-up documents, IPC socket and an **exchange** directory — and nothing
 * else of Folio's: no job directory, no data directory, no network. A job's input is *copied* into
 * the exchange, converted there, the PDF moved out to the job, and the exchange emptied before the
 * slot takes its next job. So an office only ever sees the document it is converting now: a
 * document that exploits it can read the profile (settings, no secrets) and the current document,
 * and can write only where the next job's input will be copied *after* the directory has been
 * emptied. (A copy, not a hard link: a link would let the office write into the job's own input.)
 *
 * The IPC socket: LibreOffice names it under /tmp (osl pipes use /tmp, whatever TMPDIR says), so
 * a directory of the slot's own is the sandbox's /tmp, and the socket is found there from outside
 * (a Unix socket is a file: reachable across the network namespace). That directory sits directly
 * in the system's temporary directory, not in the slot's: a socket's path may not be longer than
 * 107 bytes, and the slot's path plus LibreOffice's socket name would be.
 */
import { copyFile, mkdir, mkdtemp, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { existsSync } from "node:fs";
import path from "node:path";
import { bwrapArgv, withMemoryCap, type SandboxMode } from "../../core/sandbox.ts";

/** The sandbox policy of an office (the job-independent part of core/sandbox.ts's scope). */
export interface OfficeSandbox {
  readonly mode: SandboxMode;
  readonly memoryBytes: number;
  readonly hidden: readonly string[];
}

export const exchangeDirOf = (slotDir: string): string => path.join(slotDir, "exchange");

/** A fresh directory for a sandboxed office's IPC socket (its /tmp), with a short path. */
export function makeIpcDir(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), "folio-ipc-"));
}

/** The command line of a sandboxed office: bwrap with only `slotDir` writable and `ipcDir` as /tmp. */
export async function officeCommand(
  sandbox: OfficeSandbox,
  soffice: string,
  args: readonly string[],
  slotDir: string,
  ipcDir: string,
  cwd: string,
): Promise<string[]> {
  await mkdir(exchangeDirOf(slotDir), { recursive: true, mode: 0o700 });
  return withMemoryCap(
    sandbox.memoryBytes,
    bwrapArgv({ ...sandbox, readable: [], writable: [slotDir], tmpDir: ipcDir }, soffice, args, cwd),
  );
}

/**
 * Converts `input` into `outDir/<name>.pdf` through the slot's exchange directory: copy in,
 * `convert(stagedInput, exchangeOut)`, move the PDF out, empty the exchange (also on failure).
 */
export async function throughExchange(
  slotDir: string,
  input: string,
  outDir: string,
  convert: (input: string, outDir: string) => Promise<void>,
): Promise<void> {
  const exchange = exchangeDirOf(slotDir);
  const inDir = path.join(exchange, "in");
  const out = path.join(exchange, "out");
  try {
    await mkdir(inDir, { recursive: true, mode: 0o700 });
    await mkdir(out, { recursive: true, mode: 0o700 });
    const staged = path.join(inDir, path.basename(input));
    await copyFile(input, staged);
    await convert(staged, out);
    const pdf = path.basename(input).replace(/\.[^.]*$/, "") + ".pdf";
    if (existsSync(path.join(out, pdf))) {
      await rename(path.join(out, pdf), path.join(outDir, pdf)).catch(async () => {
        await copyFile(path.join(out, pdf), path.join(outDir, pdf));
      });
    }
  } finally {
    await rm(inDir, { recursive: true, force: true });
    await rm(out, { recursive: true, force: true });
  }
}
