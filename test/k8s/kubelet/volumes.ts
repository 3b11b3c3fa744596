/**
 * Volumes without mounts: each mounted volume becomes a directory at `<podDir>/rootfs/<mountPath>`,
 * and every container path the process is told about (args, env values, workingDir, the
 * termination message path) is rewritten from the mountPath to that directory. A process that
 * reaches its volumes through paths it was given, or through paths relative to its workingDir,
 * sees the same files it would see in a container. Absolute paths written inside files (a spec
 * file on a Secret volume) are not rewritten: such files should use paths relative to workingDir.
 *
 * Supported: emptyDir, secret, configMap (with items, defaultMode, optional) and subPath mounts.
 * Other volume types become an empty directory and a warning.
 */
import { chmodSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { V1Container, V1KeyToPath, V1Pod, V1Volume } from "@kubernetes/client-node";
import { ContainerConfigError, type ObjectSource } from "./env.ts";

/** A container path and the local directory or file standing in for it. */
export interface Mount {
  readonly containerPath: string;
  readonly hostPath: string;
}

/** The default terminationMessagePath of the API (core/v1 Container). */
export const DEFAULT_TERMINATION_MESSAGE_PATH = "/dev/termination-log";

/** Writes `files` (path → bytes) under `dir` with `mode`, like the kubelet's atomic writer would. */
function writeProjection(dir: string, files: Map<string, Buffer>, mode: number): void {
  for (const [path, bytes] of files) {
    const file = join(dir, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, bytes);
    chmodSync(file, mode);
  }
}

/** Keys → relative paths: all keys by their own name, or only the listed items (API semantics). */
function project(data: Record<string, Buffer>, items: readonly V1KeyToPath[] | undefined, what: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (!items?.length) {
    for (const [k, v] of Object.entries(data)) out.set(k, v);
    return out;
  }
  for (const item of items) {
    const bytes = data[item.key];
    if (bytes === undefined) throw new ContainerConfigError(`${what}: key ${item.key} not found`);
    out.set(item.path, bytes);
  }
  return out;
}

async function materialize(pod: V1Pod, volume: V1Volume, dir: string, source: ObjectSource, warn: (m: string) => void): Promise<void> {
  const ns = pod.metadata?.namespace ?? "default";
  mkdirSync(dir, { recursive: true });
  if (volume.emptyDir) return;
  if (volume.secret) {
    const name = volume.secret.secretName ?? "";
    const secret = await source.secret(ns, name);
    if (!secret && !volume.secret.optional)
      throw new ContainerConfigError(`MountVolume.SetUp failed for volume "${volume.name}": secret "${name}" not found`);
    const data = Object.fromEntries(Object.entries(secret?.data ?? {}).map(([k, b64]) => [k, Buffer.from(b64, "base64")]));
    writeProjection(dir, project(data, volume.secret.items, `secret ${name}`), volume.secret.defaultMode ?? 0o644);
    return;
  }
  if (volume.configMap) {
    const name = volume.configMap.name ?? "";
    const cm = await source.configMap(ns, name);
    if (!cm && !volume.configMap.optional)
      throw new ContainerConfigError(`MountVolume.SetUp failed for volume "${volume.name}": configmap "${name}" not found`);
    const data = Object.fromEntries([
      ...Object.entries(cm?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "utf8")] as const),
      ...Object.entries(cm?.binaryData ?? {}).map(([k, b64]) => [k, Buffer.from(b64, "base64")] as const),
    ]);
    writeProjection(dir, project(data, volume.configMap.items, `configmap ${name}`), volume.configMap.defaultMode ?? 0o644);
    return;
  }
  warn(`volume ${volume.name}: this type is not supported by the local kubelet; it is an empty directory`);
}

/** The container's mounts, and the local file standing for its terminationMessagePath. */
export interface PreparedVolumes {
  readonly mounts: readonly Mount[];
  readonly terminationMessageFile: string;
  /** `<podDir>/rootfs`: the container's "/" for every mounted path. */
  readonly rootfs: string;
}

/** `rootfs` + an absolute container path. */
const under = (rootfs: string, containerPath: string): string => join(rootfs, ...containerPath.split("/").filter(Boolean));

/**
 * Creates the pod's volumes and returns the container's mounts. Each mounted volume lives at
 * `<podDir>/rootfs/<mountPath>` (a real directory), so relative paths between mounts resolve as
 * they do in the container (`/work/../spec` from a cwd of /work). A volume mounted a second time,
 * or through subPath, is a symlink there; a volume no container mounts stays in
 * `<podDir>/volumes/<name>` (the kubelet sets up every volume, mounted or not). The termination
 * message file is a fresh empty file at `rootfs/<terminationMessagePath>`, as the kubelet
 * bind-mounts one.
 */
export async function prepareVolumes(
  pod: V1Pod,
  container: V1Container,
  podDir: string,
  source: ObjectSource,
  warn: (m: string) => void,
): Promise<PreparedVolumes> {
  const rootfs = join(podDir, "rootfs");
  const volumeMounts = [...(container.volumeMounts ?? [])].sort((a, b) => a.mountPath.length - b.mountPath.length);
  const volumeDirs = new Map<string, string>();
  for (const volume of pod.spec?.volumes ?? []) {
    const home = volumeMounts.find((vm) => vm.name === volume.name && !vm.subPath && vm.mountPath !== "/");
    const dir = home ? under(rootfs, home.mountPath) : join(podDir, "volumes", volume.name);
    await materialize(pod, volume, dir, source, warn);
    volumeDirs.set(volume.name, dir);
  }
  const mounts: Mount[] = [];
  for (const vm of volumeMounts) {
    const dir = volumeDirs.get(vm.name);
    if (!dir) throw new ContainerConfigError(`volumeMount ${vm.name}: no such volume`);
    const target = under(rootfs, vm.mountPath);
    const origin = vm.subPath ? join(dir, vm.subPath) : dir;
    if (origin !== target) {
      mkdirSync(origin, { recursive: true });
      mkdirSync(dirname(target), { recursive: true });
      if (!existsSync(target)) symlinkSync(origin, target);
    }
    mounts.push({ containerPath: vm.mountPath, hostPath: target });
  }
  const messagePath = container.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH;
  const terminationMessageFile = under(rootfs, messagePath);
  mkdirSync(dirname(terminationMessageFile), { recursive: true });
  writeFileSync(terminationMessageFile, "", { mode: 0o666 });
  mounts.push({ containerPath: messagePath, hostPath: terminationMessageFile });
  return { mounts, terminationMessageFile, rootfs };
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Rewrites container paths in `value` to their local stand-ins. A mountPath matches only as a
 * whole path prefix: `/tmp` rewrites `/tmp`, `/tmp/x` and `--dir=/tmp/x`, never `/tmpfoo` or
 * `/var/tmp`. The longest mountPath wins, so `/data/in` beats `/data` for `/data/in/a.pdf`.
 */
export function translatePaths(value: string, mounts: readonly Mount[]): string {
  const ordered = mounts
    .filter((m) => m.containerPath.replace(/\/+$/, "") !== "")
    .sort((a, b) => b.containerPath.length - a.containerPath.length);
  if (ordered.length === 0) return value;
  const pattern = new RegExp(`(?<![\\w./-])(${ordered.map((m) => escape(m.containerPath.replace(/\/+$/, ""))).join("|")})(?![\\w.-])`, "g");
  return value.replace(pattern, (match: string) => ordered.find((m) => m.containerPath.replace(/\/+$/, "") === match)?.hostPath ?? match);
}
