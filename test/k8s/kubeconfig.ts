/**
 * Kubeconfig files for the local control plane: one per identity, each a complete file (cluster,
 * user, context) so that kubectl, kube-controller-manager and @kubernetes/client-node all read
 * them unchanged. Written as JSON, which every kubeconfig reader accepts (JSON is YAML).
 */
import { writeFileSync } from "node:fs";
import { KubeConfig } from "@kubernetes/client-node";
import type { Identity } from "./pki.ts";

/** Writes a kubeconfig for `identity` against `server`, trusting `caCertFile`, and returns its path. */
export function writeKubeconfig(file: string, server: string, caCertFile: string, identity: Identity): string {
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "folio-local", cluster: { server, "certificate-authority": caCertFile } }],
    users: [{ name: identity.user, user: { token: identity.token } }],
    contexts: [{ name: "folio-local", context: { cluster: "folio-local", user: identity.user } }],
    "current-context": "folio-local",
    preferences: {},
  };
  writeFileSync(file, JSON.stringify(config, null, 2) + "\n", { mode: 0o600 });
  return file;
}

/** A client configuration loaded from a kubeconfig file. */
export function loadKubeConfig(file: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  return kc;
}
