/**
 * A pod's volumes, set up the way the kubelet's volume manager does and bind-mounted into the
 * container at their mountPaths:
 *
 * - emptyDir: an empty directory (mode 0777, as the kubelet makes it; with the pod's fsGroup as
 *   its group and the set-group-ID bit); `sizeLimit` is enforced as the kubelet's eviction manager
 *   does, by measuring (pod-worker.ts evicts the pod), not by a file system quota; medium Memory
 *   is a directory too (a tmpfs would charge the files to the container's memory limit here);
 * - secret, configMap, downwardAPI, projected (serviceAccountToken through the TokenRequest API,
 *   as the node — the Node authorizer allows only the pod's own ServiceAccount —, secret,
 *   configMap, downwardAPI): files written once, items, defaultMode and optional honoured, always
 *   mounted read-only (as the kubelet has done since 1.9.6);
 * - subPath: the subdirectory of the volume;
 * - the termination message file: an empty file of the pod, bind-mounted at
 *   terminationMessagePath;
 * - /etc/hosts, /etc/hostname and /etc/resolv.conf: files the kubelet manages.
 * Other volume types (hostPath, PVCs, …) are refused: the pod stays Waiting with a message.
 */
import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import type { V1Container, V1DownwardAPIVolumeFile, V1KeyToPath, V1Pod, V1Volume, V1VolumeProjection } from "@kubernetes/client-node";
import type { BindMount } from "../runtime/oci-spec.ts";
import { parseQuantity } from "../runtime/resources.ts";
import { ContainerConfigError, fieldValue, type ObjectSource } from "./env.ts";

/** The default terminationMessagePath of the API (core/v1 Container). */
export const DEFAULT_TERMINATION_MESSAGE_PATH = "/dev/termination-log";

/** An emptyDir whose size the kubelet watches. */
export interface LimitedDir {
  readonly name: string;
  readonly dir: string;
  readonly limitBytes: number;
  /** As written in the spec ("1Gi"), for the eviction message. */
  readonly limit: string;
}

export interface PreparedVolumes {
  readonly mounts: readonly BindMount[];
  /** The file bind-mounted at terminationMessagePath (read after the container exits). */
  readonly terminationMessageFile: string;
  readonly limited: readonly LimitedDir[];
}

/** Writes `files` (path → bytes) under `dir` with `mode`, like the kubelet's atomic writer would. */
function writeProjection(dir: string, files: Map<string, Buffer>, mode: number, fsGroup: number | undefined): void {
  for (const [path, bytes] of files) {
    const file = join(dir, normalize(path).replace(/^(\.\.(\/|$))+/, ""));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, bytes);
    chmodSync(file, mode);
    if (fsGroup !== undefined) chownSync(file, 0, fsGroup);
  }
}

/** Keys → relative paths: all keys by their own name, or only the listed items (API semantics). */
function project(
  data: Record<string, Buffer>,
  items: readonly V1KeyToPath[] | undefined,
  what: string,
  optional: boolean,
): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  if (!items?.length) {
    for (const [k, v] of Object.entries(data)) out.set(k, v);
    return out;
  }
  for (const item of items) {
    const bytes = data[item.key];
    if (bytes === undefined) {
      if (optional) continue;
      throw new ContainerConfigError(`${what}: key ${item.key} not found`);
    }
    out.set(item.path, bytes);
  }
  return out;
}

const b64 = (o: Record<string, string> | undefined): Record<string, Buffer> =>
  Object.fromEntries(Object.entries(o ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64")]));
const utf8 = (o: Record<string, string> | undefined): Record<string, Buffer> =>
  Object.fromEntries(Object.entries(o ?? {}).map(([k, v]) => [k, Buffer.from(v, "utf8")]));

async function secretFiles(
  pod: V1Pod,
  name: string,
  items: V1KeyToPath[] | undefined,
  optional: boolean,
  source: ObjectSource,
): Promise<Map<string, Buffer>> {
  const secret = await source.secret(pod.metadata?.namespace ?? "default", name);
  if (!secret && !optional) throw new ContainerConfigError(`secret "${name}" not found`);
  return project(b64(secret?.data), items, `secret ${name}`, optional);
}

async function configMapFiles(
  pod: V1Pod,
  name: string,
  items: V1KeyToPath[] | undefined,
  optional: boolean,
  source: ObjectSource,
): Promise<Map<string, Buffer>> {
  const cm = await source.configMap(pod.metadata?.namespace ?? "default", name);
  if (!cm && !optional) throw new ContainerConfigError(`configmap "${name}" not found`);
  return project({ ...utf8(cm?.data), ...b64(cm?.binaryData) }, items, `configmap ${name}`, optional);
}

function downwardFiles(pod: V1Pod, items: readonly V1DownwardAPIVolumeFile[]): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const item of items) {
    if (!item.fieldRef) throw new ContainerConfigError(`downwardAPI ${item.path}: only fieldRef is supported by the local kubelet`);
    out.set(item.path, Buffer.from(fieldValue(pod, item.fieldRef.fieldPath), "utf8"));
  }
  return out;
}

async function projectedFiles(pod: V1Pod, sources: readonly V1VolumeProjection[], source: ObjectSource): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  const add = (m: Map<string, Buffer>): void => m.forEach((v, k) => out.set(k, v));
  for (const s of sources) {
    if (s.secret) add(await secretFiles(pod, s.secret.name ?? "", s.secret.items, s.secret.optional ?? false, source));
    else if (s.configMap) add(await configMapFiles(pod, s.configMap.name ?? "", s.configMap.items, s.configMap.optional ?? false, source));
    else if (s.downwardAPI) add(downwardFiles(pod, s.downwardAPI.items ?? []));
    else if (s.serviceAccountToken) {
      const t = s.serviceAccountToken;
      const token = await source.token(pod, t.audience, t.expirationSeconds ?? 3607);
      out.set(t.path, Buffer.from(token, "utf8"));
    } else throw new ContainerConfigError("projected volume: a source the local kubelet does not support");
  }
  return out;
}

/** The files of an API-backed volume (Secret, ConfigMap, downward API, projected) and their mode. */
async function volumeFiles(pod: V1Pod, volume: V1Volume, source: ObjectSource): Promise<{ files: Map<string, Buffer>; mode: number }> {
  const mode = 0o644;
  if (volume.secret) {
    const s = volume.secret;
    return { files: await secretFiles(pod, s.secretName ?? "", s.items, s.optional ?? false, source), mode: s.defaultMode ?? mode };
  }
  if (volume.configMap) {
    const c = volume.configMap;
    return { files: await configMapFiles(pod, c.name ?? "", c.items, c.optional ?? false, source), mode: c.defaultMode ?? mode };
  }
  if (volume.downwardAPI) {
    return { files: downwardFiles(pod, volume.downwardAPI.items ?? []), mode: volume.downwardAPI.defaultMode ?? mode };
  }
  if (volume.projected) {
    return { files: await projectedFiles(pod, volume.projected.sources ?? [], source), mode: volume.projected.defaultMode ?? mode };
  }
  throw new ContainerConfigError(`volume "${volume.name}": this type is not supported by the local kubelet`);
}

/** Sets up one volume in `dir`; returns whether it is read-only by nature (API-backed files). */
async function materialize(pod: V1Pod, volume: V1Volume, dir: string, source: ObjectSource): Promise<boolean> {
  const fsGroup = pod.spec?.securityContext?.fsGroup;
  mkdirSync(dir, { recursive: true });
  if (volume.emptyDir) {
    chmodSync(dir, fsGroup === undefined ? 0o777 : 0o2777);
    if (fsGroup !== undefined) chownSync(dir, 0, fsGroup);
    return false;
  }
  const { files, mode } = await volumeFiles(pod, volume, source);
  writeProjection(dir, files, mode, fsGroup);
  return true;
}

/** The files the kubelet manages in every container: /etc/hosts, /etc/hostname, /etc/resolv.conf. */
function etcFiles(pod: V1Pod, podDir: string): BindMount[] {
  const name = pod.spec?.hostname ?? pod.metadata?.name ?? "pod";
  const dir = join(podDir, "etc");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "hosts"),
    `# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.0.1\t${name}\n`,
  );
  writeFileSync(join(dir, "hostname"), `${name}\n`);
  let resolv = "";
  try {
    resolv = readFileSync("/etc/resolv.conf", "utf8");
  } catch {
    // none on the host: none in the pod
  }
  writeFileSync(join(dir, "resolv.conf"), resolv);
  return ["hosts", "hostname", "resolv.conf"].map((f) => ({ destination: `/etc/${f}`, source: join(dir, f), readOnly: false }));
}

/** Creates the pod's volumes under `<podDir>/volumes/` and returns the container's mounts. */
export async function prepareVolumes(pod: V1Pod, container: V1Container, podDir: string, source: ObjectSource): Promise<PreparedVolumes> {
  const dirs = new Map<string, { dir: string; readOnly: boolean }>();
  const limited: LimitedDir[] = [];
  for (const volume of pod.spec?.volumes ?? []) {
    const dir = join(podDir, "volumes", volume.name);
    const readOnly = await materialize(pod, volume, dir, source);
    dirs.set(volume.name, { dir, readOnly });
    const limit = volume.emptyDir?.sizeLimit;
    if (limit !== undefined) limited.push({ name: volume.name, dir, limitBytes: parseQuantity(limit), limit: String(limit) });
  }
  const mounts: BindMount[] = etcFiles(pod, podDir);
  for (const vm of container.volumeMounts ?? []) {
    const v = dirs.get(vm.name);
    if (!v) throw new ContainerConfigError(`volumeMount ${vm.name}: no such volume`);
    const sourceDir = vm.subPath ? join(v.dir, normalize(vm.subPath).replace(/^(\.\.(\/|$))+/, "")) : v.dir;
    mkdirSync(sourceDir, { recursive: true });
    mounts.push({ destination: vm.mountPath, source: sourceDir, readOnly: v.readOnly || vm.readOnly === true });
  }
  const terminationMessageFile = join(podDir, "termination-log");
  writeFileSync(terminationMessageFile, "", { mode: 0o666 });
  chmodSync(terminationMessageFile, 0o666);
  mounts.push({
    destination: container.terminationMessagePath ?? DEFAULT_TERMINATION_MESSAGE_PATH,
    source: terminationMessageFile,
    readOnly: false,
  });
  return { mounts, terminationMessageFile, limited };
}
