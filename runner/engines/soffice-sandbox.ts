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
 * the slot's `ipc` directory is the sandbox's /tmp, and the socket is found there from outside.
 * Unix sockets are files: reachable across the network namespace.
 */
import { copyFile, mkdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { existsSync, lstatSync, statSync } from "node:fs";
import { bwrapArgv, type SandboxMode } from "../../core/sandbox.ts";

/** The sandbox policy of an office (the job-independent part of core/sandbox.ts's scope). */
export interface OfficeSandbox {
  readonly mode: SandboxMode;
  readonly memoryBytes: number;
  readonly hidden: readonly string[];
}

const hostFs = {
  exists: (p: string): boolean => existsSync(p),
  isDir: (p: string): boolean => statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false,
  isLink: (p: string): boolean => lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink() ?? false,
};

/** Where a sandboxed office's IPC socket lives, seen from outside: `<slot>/ipc` (its /tmp). */
export const ipcDirOf = (slotDir: string): string => path.join(slotDir, "ipc");
export const exchangeDirOf = (slotDir: string): string => path.join(slotDir, "exchange");

/** The command line of a sandboxed office: bwrap with only `slotDir` writable and `<slot>/ipc` as /tmp. */
export async function officeCommand(
  sandbox: OfficeSandbox,
  soffice: string,
  args: readonly string[],
  slotDir: string,
  cwd: string,
): Promise<string[]> {
  await mkdir(ipcDirOf(slotDir), { recursive: true, mode: 0o700 });
  await mkdir(exchangeDirOf(slotDir), { recursive: true, mode: 0o700 });
  return bwrapArgv({ ...sandbox, readable: [], writable: [slotDir], tmpDir: ipcDirOf(slotDir) }, soffice, args, cwd, hostFs);
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
