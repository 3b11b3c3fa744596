/**
 * seccompProfile RuntimeDefault, as CRI-O and podman apply it: the containers/common default
 * profile (/usr/share/containers/seccomp.json, Debian package golang-github-containers-common,
 * which podman pulls in) turned into the OCI runtime spec's form for one container. The profile is
 * written in Docker's format: a rule may apply only on some architectures (`includes.arches`), only
 * when the container holds some capabilities (`includes.caps`, e.g. mount() only with
 * CAP_SYS_ADMIN) or only when it does not (`excludes.caps`), so the result depends on the
 * container's bounding set — with `drop: [ALL]` every capability-gated call is refused.
 * Conversion as containers/common/pkg/seccomp does it (LoadProfile → specconv). Pure.
 */
import { readFileSync } from "node:fs";

export const DEFAULT_PROFILE_PATH = "/usr/share/containers/seccomp.json";

interface Arg {
  index: number;
  value: number;
  valueTwo?: number;
  op: string;
}

interface DockerRule {
  names?: string[];
  name?: string;
  action: string;
  args?: Arg[] | null;
  errnoRet?: number;
  includes?: { arches?: string[]; caps?: string[]; minKernel?: string };
  excludes?: { arches?: string[]; caps?: string[]; minKernel?: string };
}

/** The profile as containers/common writes it. */
export interface DockerProfile {
  defaultAction: string;
  defaultErrnoRet?: number;
  archMap?: { architecture: string; subArchitectures?: string[] }[];
  syscalls: DockerRule[];
}

/** linux.seccomp of the OCI runtime spec (config-linux.md#seccomp). */
export interface OciSeccomp {
  defaultAction: string;
  defaultErrnoRet?: number;
  architectures: string[];
  syscalls: { names: string[]; action: string; args?: Arg[]; errnoRet?: number }[];
}

/** Node's process.arch → the Go names the profile's `arches` use, and libseccomp's. */
const ARCH: Record<string, { go: string; scmp: string }> = {
  x64: { go: "amd64", scmp: "SCMP_ARCH_X86_64" },
  arm64: { go: "arm64", scmp: "SCMP_ARCH_AARCH64" },
};

/** a.b.c ≥ min.b.c */
function kernelAtLeast(kernel: string, min: string): boolean {
  const parse = (v: string): number[] =>
    v
      .split(/[.-]/)
      .slice(0, 3)
      .map((x) => Number.parseInt(x, 10) || 0);
  const [a, b] = [parse(kernel), parse(min)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

/** Whether a rule applies on `arch` (Go name) to a container holding `caps`, on `kernel`. */
function applies(rule: DockerRule, arch: string, caps: ReadonlySet<string>, kernel: string): boolean {
  const inc = rule.includes ?? {};
  const exc = rule.excludes ?? {};
  if (inc.arches?.length && !inc.arches.includes(arch)) return false;
  if (exc.arches?.includes(arch)) return false;
  if (inc.caps?.length && !inc.caps.every((c) => caps.has(c))) return false;
  if (exc.caps?.some((c) => caps.has(c))) return false;
  return !inc.minKernel || kernelAtLeast(kernel, inc.minKernel);
}

/**
 * The OCI seccomp section for a container whose bounding capability set is `caps` (names like
 * CAP_SYS_ADMIN), on `arch` (process.arch) and `kernel` (os.release()).
 */
export function toOciSeccomp(profile: DockerProfile, caps: readonly string[], arch: string, kernel: string): OciSeccomp {
  const a = ARCH[arch];
  if (!a) throw new Error(`seccomp: no mapping for architecture ${arch}`);
  const main = profile.archMap?.find((m) => m.architecture === a.scmp);
  const has = new Set(caps);
  const syscalls: OciSeccomp["syscalls"] = [];
  for (const rule of profile.syscalls) {
    if (!applies(rule, a.go, has, kernel)) continue;
    const names = rule.names ?? (rule.name ? [rule.name] : []);
    if (names.length === 0) continue;
    syscalls.push({
      names,
      action: rule.action,
      ...(rule.args?.length
        ? { args: rule.args.map((x) => ({ index: x.index, value: x.value, valueTwo: x.valueTwo ?? 0, op: x.op })) }
        : {}),
      ...(rule.errnoRet !== undefined ? { errnoRet: rule.errnoRet } : {}),
    });
  }
  return {
    defaultAction: profile.defaultAction,
    ...(profile.defaultErrnoRet !== undefined ? { defaultErrnoRet: profile.defaultErrnoRet } : {}),
    architectures: [a.scmp, ...(main?.subArchitectures ?? [])],
    syscalls,
  };
}

let cached: DockerProfile | undefined;

/** The machine's default profile (read once). Throws with the package to install when missing. */
export function defaultProfile(path = DEFAULT_PROFILE_PATH): DockerProfile {
  if (cached) return cached;
  try {
    cached = JSON.parse(readFileSync(path, "utf8")) as DockerProfile;
  } catch (err) {
    throw new Error(`seccompProfile RuntimeDefault needs ${path} (Debian package golang-github-containers-common, installed with podman)`, {
      cause: err,
    });
  }
  return cached;
}
