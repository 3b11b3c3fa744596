/**
 * A container's environment, resolved the way the kubelet does (pkg/kubelet/kubelet_pods.go
 * makeEnvironmentVariables): `envFrom` sources first, then `env` entries in order, later names
 * overriding earlier ones; `$(VAR)` references expand against what is defined so far; values
 * come from literals, Secrets, ConfigMaps and the downward API (fieldRef).
 */
import type { V1ConfigMap, V1Container, V1EnvVar, V1Pod, V1Secret } from "@kubernetes/client-node";

/** Reads the objects a pod references (undefined means 404), and its service account's tokens. */
export interface ObjectSource {
  secret(namespace: string, name: string): Promise<V1Secret | undefined>;
  configMap(namespace: string, name: string): Promise<V1ConfigMap | undefined>;
  /** A token of the pod's ServiceAccount bound to the pod (TokenRequest), for a projected volume. */
  token(pod: V1Pod, audience: string | undefined, expirationSeconds: number): Promise<string>;
}

/**
 * A reference the kubelet cannot satisfy yet (a missing Secret or key). The real kubelet leaves
 * the container Waiting with reason CreateContainerConfigError and retries; so do we.
 */
export class ContainerConfigError extends Error {
  override readonly name = "ContainerConfigError";
}

/**
 * Expands `$(NAME)` from `env`, leaves unknown references as written and turns `$$` into `$`
 * (the API's rules for env values, command and args: third_party/forked/golang/expansion).
 */
export function expandReferences(input: string, env: Readonly<Record<string, string>>): string {
  return input.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) =>
    name === undefined ? "$" : (env[name] ?? match),
  );
}

/** Secret values are base64 in the API; ConfigMap data is plain text. */
const secretValue = (secret: V1Secret, key: string): string | undefined => {
  const b64 = secret.data?.[key];
  return b64 === undefined ? undefined : Buffer.from(b64, "base64").toString("utf8");
};

/** The downward API fields a fieldRef may name (the same set the API server validates). */
export function fieldValue(pod: V1Pod, path: string): string {
  const labelOrAnnotation = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (labelOrAnnotation) {
    const map = labelOrAnnotation[1] === "labels" ? pod.metadata?.labels : pod.metadata?.annotations;
    return map?.[labelOrAnnotation[2] ?? ""] ?? "";
  }
  const fields: Record<string, string | undefined> = {
    "metadata.name": pod.metadata?.name,
    "metadata.namespace": pod.metadata?.namespace,
    "metadata.uid": pod.metadata?.uid,
    "spec.nodeName": pod.spec?.nodeName,
    "spec.serviceAccountName": pod.spec?.serviceAccountName,
    "status.hostIP": "127.0.0.1",
    "status.hostIPs": "127.0.0.1",
    "status.podIP": "127.0.0.1",
    "status.podIPs": "127.0.0.1",
  };
  if (!(path in fields)) throw new ContainerConfigError(`fieldRef ${path} is not supported by the local kubelet`);
  return fields[path] ?? "";
}

type KeyRef = { name?: string; key: string; optional?: boolean };

/** A Secret key's value; a missing Secret or key fails the container unless the reference is optional. */
async function secretKeyValue(ns: string, ref: KeyRef, source: ObjectSource): Promise<string | undefined> {
  const name = ref.name ?? "";
  const secret = await source.secret(ns, name);
  const value = secret && secretValue(secret, ref.key);
  if (value === undefined && !ref.optional) {
    throw new ContainerConfigError(secret ? `couldn't find key ${ref.key} in Secret ${ns}/${name}` : `secret "${name}" not found`);
  }
  return value;
}

/** A ConfigMap key's value; a missing ConfigMap or key fails the container unless the reference is optional. */
async function configMapKeyValue(ns: string, ref: KeyRef, source: ObjectSource): Promise<string | undefined> {
  const name = ref.name ?? "";
  const cm = await source.configMap(ns, name);
  const value = cm?.data?.[ref.key];
  if (value === undefined && !ref.optional) {
    throw new ContainerConfigError(cm ? `couldn't find key ${ref.key} in ConfigMap ${ns}/${name}` : `configmap "${name}" not found`);
  }
  return value;
}

async function valueOf(pod: V1Pod, v: V1EnvVar, env: Record<string, string>, source: ObjectSource): Promise<string | undefined> {
  const ns = pod.metadata?.namespace ?? "default";
  const from = v.valueFrom;
  if (!from) return expandReferences(v.value ?? "", env);
  if (from.secretKeyRef) return secretKeyValue(ns, from.secretKeyRef, source);
  if (from.configMapKeyRef) return configMapKeyValue(ns, from.configMapKeyRef, source);
  if (from.fieldRef) return fieldValue(pod, from.fieldRef.fieldPath);
  throw new ContainerConfigError(`env ${v.name}: resourceFieldRef is not supported by the local kubelet`);
}

type EnvFromSource = NonNullable<V1Container["envFrom"]>[number];

/** The variables an envFrom source brings (without its prefix); a missing Secret or ConfigMap fails the container unless optional. */
async function envFromData(ns: string, from: EnvFromSource, source: ObjectSource): Promise<Record<string, string>> {
  if (from.secretRef) {
    const name = from.secretRef.name ?? "";
    const secret = await source.secret(ns, name);
    if (!secret && !from.secretRef.optional) throw new ContainerConfigError(`secret "${name}" not found`);
    return Object.fromEntries(Object.keys(secret?.data ?? {}).map((k) => [k, secretValue(secret!, k) ?? ""]));
  }
  if (from.configMapRef) {
    const name = from.configMapRef.name ?? "";
    const cm = await source.configMap(ns, name);
    if (!cm && !from.configMapRef.optional) throw new ContainerConfigError(`configmap "${name}" not found`);
    return cm?.data ?? {};
  }
  return {};
}

/**
 * The environment the API defines for `container` (without the process defaults the kubelet
 * adds, see pod-worker.ts). Throws ContainerConfigError for a missing non-optional reference.
 */
export async function resolveEnv(pod: V1Pod, container: V1Container, source: ObjectSource): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  const ns = pod.metadata?.namespace ?? "default";
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? "";
    for (const [k, v] of Object.entries(await envFromData(ns, from, source))) env[prefix + k] = v;
  }
  for (const v of container.env ?? []) {
    const value = await valueOf(pod, v, env, source);
    if (value !== undefined) env[v.name] = value;
  }
  return env;
}
