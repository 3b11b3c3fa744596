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

async function valueOf(pod: V1Pod, v: V1EnvVar, env: Record<string, string>, source: ObjectSource): Promise<string | undefined> {
  const ns = pod.metadata?.namespace ?? "default";
  const from = v.valueFrom;
  if (!from) return expandReferences(v.value ?? "", env);
  if (from.secretKeyRef) {
    const { name, key, optional } = from.secretKeyRef;
    const secret = await source.secret(ns, name ?? "");
    const value = secret && secretValue(secret, key);
    if (value === undefined && !optional) {
      throw new ContainerConfigError(
        secret ? `couldn't find key ${key} in Secret ${ns}/${name ?? ""}` : `secret "${name ?? ""}" not found`,
      );
    }
    return value;
  }
  if (from.configMapKeyRef) {
    const { name, key, optional } = from.configMapKeyRef;
    const cm = await source.configMap(ns, name ?? "");
    const value = cm?.data?.[key];
    if (value === undefined && !optional) {
      throw new ContainerConfigError(
        cm ? `couldn't find key ${key} in ConfigMap ${ns}/${name ?? ""}` : `configmap "${name ?? ""}" not found`,
      );
    }
    return value;
  }
  if (from.fieldRef) return fieldValue(pod, from.fieldRef.fieldPath);
  throw new ContainerConfigError(`env ${v.name}: resourceFieldRef is not supported by the local kubelet`);
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
    let data: Record<string, string> | undefined;
    if (from.secretRef) {
      const secret = await source.secret(ns, from.secretRef.name ?? "");
      if (!secret && !from.secretRef.optional) throw new ContainerConfigError(`secret "${from.secretRef.name ?? ""}" not found`);
      data = Object.fromEntries(Object.keys(secret?.data ?? {}).map((k) => [k, secretValue(secret!, k) ?? ""]));
    } else if (from.configMapRef) {
      const cm = await source.configMap(ns, from.configMapRef.name ?? "");
      if (!cm && !from.configMapRef.optional) throw new ContainerConfigError(`configmap "${from.configMapRef.name ?? ""}" not found`);
      data = cm?.data ?? {};
    }
    for (const [k, v] of Object.entries(data ?? {})) env[prefix + k] = v;
  }
  for (const v of container.env ?? []) {
    const value = await valueOf(pod, v, env, source);
    if (value !== undefined) env[v.name] = value;
  }
  return env;
}
