/**
 * Least privilege for the document engines (issue #11): every engine process — qpdf, LibreOffice,
 * anything Folio starts on a tenant's document — starts with an allow-listed environment, and in
 * embedded mode inside bubblewrap (`bwrap`, Debian package bubblewrap):
 *
 * - the system read-only (/usr, /etc), with the files that hold the machine's secrets masked
 *   (shadow passwords, SSH host keys, TLS private keys) and Folio's own (the data directory with
 *   the database, the stored files and the seal key; the TLS certificate and key) invisible
 *   wherever they are;
 * - writable: only the job's own directories (its work directory and output directory); its
 *   inputs readable one by one — no other tenant's file is even visible;
 * - no network (a network namespace with nothing in it), a new PID namespace (nothing else is
 *   visible to signal or to ptrace), no capabilities, a private /tmp, the process dying with us;
 * - a memory cap: RLIMIT_AS (`prlimit`), which needs no privilege and no cgroup.
 *
 * FOLIO_SANDBOX picks the mode: `bwrap` (the default), `container` (the process already runs in a
 * container that is its sandbox: the runner pods, whose securityContext, limits and network policy
 * do the same job; engines still get the allow-listed environment), `none` (an explicit opt-out,
 * logged loudly at every start). In `bwrap` mode Folio refuses to start without a working
 * bubblewrap and says which package to install.
 *
 * The job's paths come from a scope (AsyncLocalStorage) that runSpec opens for the duration of a
 * job; engine processes started outside any job (tests of an engine alone) are not sandboxed.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, statSync } from "node:fs";
import path from "node:path";
import { ConfigError, type Config } from "./config.ts";

export type SandboxMode = "bwrap" | "container" | "none";

/** What the engines of one job may see: the policy, and the job's own paths. */
export interface SandboxScope {
  readonly mode: SandboxMode;
  /** RLIMIT_AS of each engine process, in bytes. */
  readonly memoryBytes: number;
  /** Paths that must stay invisible even where a system directory is visible (data dir, TLS files). */
  readonly hidden: readonly string[];
  /** Files or directories the engine may read (the job's inputs). */
  readonly readable: readonly string[];
  /** Directories the engine may write (the job's work and output directories). */
  readonly writable: readonly string[];
  /** A host directory to be the sandbox's /tmp (a warm office's IPC socket lives there); else a private tmpfs. */
  readonly tmpDir?: string;
  /** Directories of engines installed outside the system (FOLIO_QPDF=/opt/qpdf/bin/qpdf), bound read-only. */
  readonly engineDirs?: readonly string[];
  /**
   * More read-only directories shown like the system, `hidden` masked inside them (a runner
   * worker's code: the checkout's bin, core, runner, node_modules — the data directory may sit in
   * the checkout, `.data`).
   */
  readonly system?: readonly string[];
  /** `none` (the default): a network namespace with loopback only; `host`: the host's (a runner worker's fetch proxy). */
  readonly network?: "none" | "host";
}

/** The environment every engine starts with: nothing else of ours (no FOLIO_*, AWS_*, secrets). */
export const ENGINE_ENV_NAMES: readonly string[] = ["PATH", "HOME", "TMPDIR", "LANG", "LANGUAGE", "TZ"];
const isAllowed = (name: string): boolean => ENGINE_ENV_NAMES.includes(name) || name.startsWith("LC_");

/**
 * The allow-listed part of `base` (PATH, HOME, TMPDIR, locale, TZ), then `extra` (an engine's own
 * settings; `undefined` removes a name).
 */
export function engineEnv(base: NodeJS.ProcessEnv = process.env, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined && isAllowed(k)) env[k] = v;
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** System files a sandboxed engine never needs and must never read, even as root. */
export const MASKED_SYSTEM_PATHS: readonly string[] = [
  "/etc/shadow",
  "/etc/gshadow",
  "/etc/shadow-",
  "/etc/gshadow-",
  "/etc/ssh",
  "/etc/ssl/private",
];

/** Directories bound read-only into every sandbox: the system (merged /usr: /bin, /lib… are links). */
const SYSTEM_RO = ["/usr", "/etc"];
/**
 * System data outside /usr that engines read, bound read-only where the host has it: Debian's
 * Ghostscript font maps (without them OCRmyPDF's PDF/A pass substitutes fonts and writes .notdef
 * glyphs that veraPDF refuses, ISO 19005-2 6.2.11.8) and fontconfig's cache.
 */
const SYSTEM_DATA_RO = ["/var/lib/ghostscript", "/var/cache/fontconfig"];
const USR_LINKS = ["bin", "sbin", "lib", "lib64", "lib32", "libx32"];

const within = (p: string, dir: string): boolean => p === dir || p.startsWith(dir.endsWith("/") ? dir : `${dir}/`);

/** What bwrapArgv asks about the host's file system: a path exists (following links), is a directory, is a link. */
export interface HostFs {
  exists(p: string): boolean;
  isDir(p: string): boolean;
  isLink(p: string): boolean;
}

/** The host's real file system (a dangling link does not exist: there is nothing to bind). */
export const hostFs: HostFs = {
  exists: (p) => existsSync(p),
  isDir: (p) => statSync(p, { throwIfNoEntry: false })?.isDirectory() ?? false,
  isLink: (p) => lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink() ?? false,
};

/** The system, read-only, and the scope's other read-only directories (a runner worker's code); /proc, /dev, /tmp. */
function systemBinds(scope: SandboxScope, fs: HostFs): string[] {
  const argv: string[] = [];
  for (const dir of SYSTEM_RO) argv.push("--ro-bind", dir, dir);
  for (const dir of SYSTEM_DATA_RO) if (fs.exists(dir)) argv.push("--ro-bind", dir, dir);
  for (const l of USR_LINKS) if (fs.isLink(`/${l}`)) argv.push("--symlink", `usr/${l}`, `/${l}`);
  for (const dir of scope.system ?? []) if (fs.exists(dir)) argv.push("--ro-bind", dir, dir);
  argv.push("--proc", "/proc", "--dev", "/dev", ...(scope.tmpDir ? ["--bind", scope.tmpDir, "/tmp"] : ["--tmpfs", "/tmp"]));
  return argv;
}

/** Masks over what the read-only directories would show: the machine's secrets, and Folio's (`hidden`). */
function masks(scope: SandboxScope, fs: HostFs): string[] {
  const argv: string[] = [];
  const shown = [...SYSTEM_RO, ...(scope.system ?? [])];
  for (const p of [...MASKED_SYSTEM_PATHS, ...scope.hidden]) {
    if (!fs.exists(p) || !shown.some((v) => within(p, v))) continue;
    if (fs.isDir(p)) argv.push("--tmpfs", p);
    else argv.push("--ro-bind", "/dev/null", p);
  }
  return argv;
}

/**
 * The scope's own paths, the outer ones first: a path inside another keeps its own mode whichever
 * of the two is writable (a job's read-only inputs inside a worker's writable stage, a browser's
 * writable profile below a read-only directory).
 */
function ownBinds(scope: SandboxScope, fs: HostFs): string[] {
  const depth = (p: string): number => p.split("/").filter(Boolean).length;
  const binds = [...scope.writable.map((p) => ["--bind", p] as const), ...scope.readable.map((p) => ["--ro-bind", p] as const)];
  return binds
    .filter(([, p]) => fs.exists(p))
    .sort((x, y) => depth(x[1]) - depth(y[1]))
    .flatMap(([how, p]) => [how, p, p]);
}

/**
 * The bwrap command line that runs `command args` under `scope` (pure but for `fs`). Every path
 * inside the sandbox is the same as outside, so arguments need no rewriting. `fs.exists` says
 * whether a host path exists (mount points for masks must), `fs.isDir` whether it is a directory.
 * It sets no memory cap: `withMemoryCap` adds one for the engines that take it.
 */
export function bwrapArgv(
  scope: SandboxScope,
  command: string,
  args: readonly string[],
  cwd: string | undefined,
  fs: HostFs = hostFs,
): string[] {
  // A later mount over an earlier one wins: the system, then the masks over it…
  const argv = ["bwrap", ...systemBinds(scope, fs), ...masks(scope, fs)];
  // …then an engine installed outside /usr (FOLIO_QPDF=/opt/qpdf/bin/qpdf: its directory,
  // read-only), and the job's own paths, which stay visible even inside a masked directory
  // (embedded inputs live in the data directory: each is bound on its own, the rest is not there).
  const exes = [...(path.isAbsolute(command) ? [path.dirname(command)] : []), ...(scope.engineDirs ?? [])];
  for (const exe of new Set(exes)) if (!SYSTEM_RO.some((d) => within(exe, d)) && fs.exists(exe)) argv.push("--ro-bind", exe, exe);
  argv.push(...ownBinds(scope, fs));
  argv.push(
    "--unshare-all", // user, ipc, pid, net, uts, cgroup namespaces: no network, nothing to signal
    ...(scope.network === "host" ? ["--share-net"] : []),
    "--die-with-parent",
    "--cap-drop",
    "ALL",
  );
  if (cwd) argv.push("--chdir", cwd);
  argv.push("--", command, ...args);
  return argv;
}

/**
 * `argv` with the scope's memory cap: RLIMIT_AS (prlimit), which needs no privilege and no cgroup.
 * For the native engines started one per command (qpdf's page count, LibreOffice); never for a
 * Node process or a browser, whose V8 reserves address space by the gigabyte (their pools watch
 * real memory instead). A job's shared sandbox sets the same limit itself (`ulimit -v`).
 */
export function withMemoryCap(memoryBytes: number, argv: readonly string[]): string[] {
  return ["prlimit", `--as=${memoryBytes}`, "--", ...argv];
}

/**
 * The job-independent part of the sandbox, from the configuration: the mode, the memory cap, and
 * Folio's own secrets to hide (the data directory with the database, the files and the seal key;
 * the TLS certificate and key).
 */
export function sandboxPolicy(
  config: Pick<
    Config,
    "FOLIO_SANDBOX" | "FOLIO_SANDBOX_MEMORY_MB" | "FOLIO_DATA_DIR" | "FOLIO_TLS_CERT" | "FOLIO_TLS_KEY" | "FOLIO_QPDF" | "FOLIO_SOFFICE"
  >,
): Pick<SandboxScope, "mode" | "memoryBytes" | "hidden" | "engineDirs"> {
  return {
    mode: config.FOLIO_SANDBOX,
    memoryBytes: config.FOLIO_SANDBOX_MEMORY_MB * 1024 * 1024,
    hidden: [config.FOLIO_DATA_DIR, config.FOLIO_TLS_CERT, config.FOLIO_TLS_KEY]
      .filter((p): p is string => Boolean(p))
      .map((p) => path.resolve(p)),
    // The engines' own directories, when they are installed outside the system's (read-only).
    engineDirs: [config.FOLIO_QPDF, config.FOLIO_SOFFICE].filter((p) => path.isAbsolute(p)).map((p) => path.dirname(p)),
  };
}

/** Something that lives as long as a job's scope (its engines' sandbox session). */
export interface ScopeSession {
  close(): Promise<void>;
}

interface ScopeState {
  readonly scope: SandboxScope;
  session?: ScopeSession;
}

const scopes = new AsyncLocalStorage<ScopeState>();

/** Runs `fn` with `scope` as the sandbox of every engine it starts; closes the scope's session after. */
export async function withSandbox<T>(scope: SandboxScope, fn: () => Promise<T>): Promise<T> {
  const state: ScopeState = { scope };
  try {
    return await scopes.run(state, fn);
  } finally {
    await state.session?.close();
  }
}

/** The sandbox of the job being run here, if any. */
export function currentSandbox(): SandboxScope | undefined {
  return scopes.getStore()?.scope;
}

/**
 * The current scope's session, made by `make` on first use (one per job: its engines share one
 * sandbox, so the namespaces are set up once per job, not per process); undefined outside a scope.
 */
export function scopeSession<S extends ScopeSession>(make: (scope: SandboxScope) => S): S | undefined {
  const state = scopes.getStore();
  if (!state) return undefined;
  state.session ??= make(state.scope);
  return state.session as S;
}

/** Thrown at start when the configured sandbox cannot work here (a configuration error: exit 2). */
export class SandboxUnavailable extends ConfigError {}

/**
 * Checks once that bubblewrap (and prlimit) can start a sandbox here: installed, and allowed to
 * create namespaces (user namespaces may be disabled, or a container's seccomp may forbid them).
 */
export function checkBwrap(): void {
  const hint =
    "Folio runs every document engine in a bubblewrap sandbox in embedded mode. Install the Debian package bubblewrap " +
    "(apt-get install bubblewrap; `make setup` does), or set FOLIO_SANDBOX=none to run the engines unsandboxed (not recommended)";
  try {
    execFileSync("bwrap", ["--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--", "true"], { stdio: "pipe" });
  } catch (err) {
    const e = err as { code?: string; stderr?: Buffer };
    if (e.code === "ENOENT") throw new SandboxUnavailable(`bwrap is missing. ${hint}.`);
    throw new SandboxUnavailable(`bwrap cannot create a sandbox here (${String(e.stderr ?? err).trim()}). ${hint}.`);
  }
  try {
    execFileSync("prlimit", ["--version"], { stdio: "ignore" });
  } catch {
    throw new SandboxUnavailable(`prlimit is missing (Debian package util-linux). ${hint}.`);
  }
}

/**
 * What a process that runs engines does at start: in `bwrap` mode, refuse to start without a
 * working bubblewrap (SandboxUnavailable, naming the package); in `none` mode, say loudly that the
 * engines are not sandboxed — at every start, at error level.
 */
export function guardSandbox(config: Pick<Config, "FOLIO_SANDBOX">, log: { error: (obj: object, msg: string) => void }): void {
  if (config.FOLIO_SANDBOX === "bwrap") checkBwrap();
  else if (config.FOLIO_SANDBOX === "none") {
    log.error(
      { FOLIO_SANDBOX: "none" },
      "UNSANDBOXED: document engines run without a sandbox (FOLIO_SANDBOX=none): a document that exploits LibreOffice or qpdf " +
        "runs with this process's user, environment, network and files — every tenant's. Unset FOLIO_SANDBOX to use bubblewrap.",
    );
  }
}
