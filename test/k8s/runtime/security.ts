/**
 * A container's securityContext as the kubelet and containerd apply it (pkg/kubelet/kuberuntime
 * security_context.go, containerd's CRI plugin): container fields override the pod's; the user is
 * runAsUser, else the image's USER (a name resolved in the image's /etc/passwd); runAsNonRoot
 * refuses uid 0 and a non-numeric image user it cannot verify; capabilities start from the
 * runtime's default set, then `drop` (ALL included) and `add`; allowPrivilegeEscalation: false is
 * no_new_privs; seccompProfile RuntimeDefault is the runtime's default profile (seccomp.ts),
 * Unconfined or unset none; privileged is refused (PodSecurity forbids it where Folio runs, and
 * this kubelet gives no device access). Pure, except that it is handed the image's passwd/group.
 */
import type { V1Container, V1PodSecurityContext, V1SecurityContext } from "@kubernetes/client-node";

/** containerd's default capability set (oci.DefaultCapabilities). */
export const DEFAULT_CAPABILITIES: readonly string[] = [
  "CAP_CHOWN",
  "CAP_DAC_OVERRIDE",
  "CAP_FSETID",
  "CAP_FOWNER",
  "CAP_MKNOD",
  "CAP_NET_RAW",
  "CAP_SETGID",
  "CAP_SETUID",
  "CAP_SETFCAP",
  "CAP_SETPCAP",
  "CAP_NET_BIND_SERVICE",
  "CAP_SYS_CHROOT",
  "CAP_KILL",
  "CAP_AUDIT_WRITE",
];

/** A reason to leave the container Waiting with CreateContainerConfigError (as the kubelet does). */
export class SecurityContextError extends Error {
  override readonly name = "SecurityContextError";
}

export interface ImageFiles {
  /** /etc/passwd and /etc/group of the image ("" when absent). */
  readonly passwd: string;
  readonly group: string;
}

export interface EffectiveSecurity {
  readonly uid: number;
  readonly gid: number;
  readonly additionalGids: number[];
  readonly capabilities: string[];
  readonly noNewPrivileges: boolean;
  readonly readonlyRootfs: boolean;
  readonly seccomp: "runtime-default" | "unconfined";
  /** The pod's fsGroup: volumes are given to this group. */
  readonly fsGroup?: number;
}

const capName = (c: string): string => (c.toUpperCase().startsWith("CAP_") ? c.toUpperCase() : `CAP_${c.toUpperCase()}`);

/** Looks `name` up in a passwd/group file: the numeric fields of its line. */
function lookup(file: string, name: string): string[] | undefined {
  return file
    .split("\n")
    .map((l) => l.split(":"))
    .find((f) => f[0] === name);
}

/** The primary group of `uid` in the image's /etc/passwd, else 0. */
function primaryGroup(files: ImageFiles, uid: number): number {
  const entry = files.passwd.split("\n").find((l) => l.split(":")[2] === String(uid));
  return entry ? Number(entry.split(":")[3]) || 0 : 0;
}

/** The image's USER ("", "10001", "10001:10001", "folio", "folio:folio") → uid/gid, or a name it cannot resolve. */
function imageUser(user: string, files: ImageFiles): { uid?: number; gid?: number; name?: string } {
  if (!user) return { uid: 0, gid: 0 };
  const [u = "", g] = user.split(":");
  let uid: number | undefined;
  let gid: number | undefined;
  if (/^\d+$/.test(u)) uid = Number(u);
  else {
    const entry = lookup(files.passwd, u);
    if (!entry) return { name: u };
    uid = Number(entry[2]);
    gid = Number(entry[3]);
  }
  if (g !== undefined) gid = /^\d+$/.test(g) ? Number(g) : Number(lookup(files.group, g)?.[2] ?? Number.NaN);
  gid ??= primaryGroup(files, uid);
  return { uid, gid: Number.isNaN(gid) ? 0 : gid };
}

/** A user the image names but its /etc/passwd lacks: refused, in the kubelet's wording (pkg/kubelet/kuberuntime/security_context_others.go verifyRunAsNonRoot). */
function unresolvedUser(name: string | undefined, nonRoot: boolean): SecurityContextError {
  if (nonRoot) {
    return new SecurityContextError(
      `container has runAsNonRoot and image has non-numeric user (${name ?? ""}), cannot verify user is non-root`,
    );
  }
  return new SecurityContextError(`unable to find user ${name ?? ""}: no matching entries in passwd file`);
}

/** uid and gid: runAsUser/runAsGroup (container over pod), else the image's USER; runAsNonRoot checked. */
function identity(
  pod: V1PodSecurityContext | undefined,
  c: V1SecurityContext,
  imageUserSpec: string,
  files: ImageFiles,
): { uid: number; gid: number } {
  const fromImage = imageUser(imageUserSpec, files);
  const runAsUser = c.runAsUser ?? pod?.runAsUser;
  const uid = runAsUser ?? fromImage.uid;
  const nonRoot = c.runAsNonRoot ?? pod?.runAsNonRoot ?? false;
  if (uid === undefined) throw unresolvedUser(fromImage.name, nonRoot);
  if (nonRoot && uid === 0) throw new SecurityContextError("container has runAsNonRoot and image will run as root");
  // Without runAsGroup: the image user's group, or — for a runAsUser — that uid's primary group
  // in the image's /etc/passwd, else 0 (containerd's WithUserID).
  const gid = c.runAsGroup ?? pod?.runAsGroup ?? (runAsUser !== undefined ? primaryGroup(files, runAsUser) : (fromImage.gid ?? 0));
  return { uid, gid };
}

/** The runtime's default set, minus `drop` (ALL: everything), plus `add`. */
function capabilities(c: V1SecurityContext): string[] {
  const drop = (c.capabilities?.drop ?? []).map(capName);
  const add = (c.capabilities?.add ?? []).map(capName).filter((x) => x !== "CAP_ALL");
  const kept = drop.includes("CAP_ALL") ? [] : DEFAULT_CAPABILITIES.filter((x) => !drop.includes(x));
  return [...new Set([...kept, ...add])];
}

/** What the local kubelet refuses before anything else: privileged containers and Windows options. */
function checkSupported(pod: V1PodSecurityContext | undefined, c: V1SecurityContext): void {
  if (c.privileged) throw new SecurityContextError("privileged containers are not supported by the local kubelet");
  if (c.windowsOptions || pod?.windowsOptions) throw new SecurityContextError("windowsOptions are not supported");
}

/** supplementalGroups and fsGroup, each once, without the primary group. */
function additionalGids(pod: V1PodSecurityContext | undefined, gid: number): number[] {
  return [...(pod?.supplementalGroups ?? []), ...(pod?.fsGroup !== undefined ? [pod.fsGroup] : [])].filter(
    (g, i, all) => all.indexOf(g) === i && g !== gid,
  );
}

/** The effective security settings, or SecurityContextError. */
export function effectiveSecurity(
  pod: V1PodSecurityContext | undefined,
  container: V1Container,
  imageUserSpec: string,
  files: ImageFiles,
): EffectiveSecurity {
  const c: V1SecurityContext = container.securityContext ?? {};
  checkSupported(pod, c);
  const { uid, gid } = identity(pod, c, imageUserSpec, files);
  const profile = c.seccompProfile ?? pod?.seccompProfile;
  if (profile?.type === "Localhost") throw new SecurityContextError("seccompProfile Localhost is not supported by the local kubelet");
  return {
    uid,
    gid,
    additionalGids: additionalGids(pod, gid),
    capabilities: capabilities(c),
    // Kubernetes: allowPrivilegeEscalation defaults to true; false sets no_new_privs.
    noNewPrivileges: c.allowPrivilegeEscalation === false,
    readonlyRootfs: c.readOnlyRootFilesystem === true,
    seccomp: profile?.type === "RuntimeDefault" ? "runtime-default" : "unconfined",
    ...(pod?.fsGroup !== undefined ? { fsGroup: pod.fsGroup } : {}),
  };
}
