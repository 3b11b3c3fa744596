/**
 * A Folio process as a container of its built image, outside any pod — `docker run` on the local
 * node: what the e2e suites and bench-k8s use for the API (`folio serve`) and the controller
 * (`folio controller`) when they need a process they can signal (the fail-over test SIGKILLs its
 * leader) rather than a Deployment. Same runtime as the kubelet's pods (runc, the image's root file
 * system) and the chart's security context: uid 10001, no capabilities, no_new_privs, seccomp
 * RuntimeDefault, a read-only root file system with an emptyDir-like /tmp. The host's network, as
 * the pods of this one-host node have it (the API server, MinIO and the test's receivers are on
 * loopback).
 *
 * The API server's kubeconfig is rewritten for the container (its CA inlined) and mounted read-only
 * at /etc/folio/kube/config; any other file a test names is mounted read-only too.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { containerEnv, resolveArgv, workingDir } from "./kubelet/images.ts";
import type { Platform } from "./platform.ts";
import type { BindMount } from "./runtime/oci-spec.ts";
import type { ContainerExit } from "./runtime/runc.ts";
import type { StartedContainer } from "./runtime/runtime.ts";
import { effectiveSecurity } from "./runtime/security.ts";

const run = promisify(execFile);

export const CONTAINER_KUBECONFIG = "/etc/folio/kube/config";

export interface FolioContainerOptions {
  /** A name for logs and the container id. */
  readonly name: string;
  /** The image reference (runnerImage(), apiImage()). */
  readonly image: string;
  /** The image's CMD replaced (ENTRYPOINT `folio` stays): ["serve"], ["controller"]. */
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /** A host kubeconfig to give the process (KUBECONFIG is set to its container path). */
  readonly kubeconfig?: string;
  /** Host files mounted read-only at the same path (CA files the env names). */
  readonly files?: readonly string[];
  /** Give it a data directory (FOLIO_DATA_DIR=/var/lib/folio, as the image sets) kept on the host here. */
  readonly dataDir?: string;
  readonly memoryBytes?: number;
}

export interface FolioContainer {
  readonly id: string;
  /** The host directory of its volumes and log. */
  readonly dir: string;
  readonly exited: Promise<ContainerExit>;
  readonly container: StartedContainer;
  logs(): string;
  /** SIGTERM to its PID 1 (tini forwards it to Node), or SIGKILL to the whole container. */
  kill(signal: "SIGTERM" | "SIGKILL"): void;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it is gone. */
  stop(graceMs?: number): Promise<ContainerExit>;
  /** `kubectl exec`: runs argv in the container with its own user, environment and namespaces. */
  exec(argv: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Removes its directory (after it has exited). */
  cleanup(): Promise<void>;
}

/** The kubeconfig with its certificate authority inlined, so that it is complete inside a container. */
function containerKubeconfig(file: string, out: string): void {
  const config = JSON.parse(readFileSync(file, "utf8")) as { clusters: { cluster: Record<string, string> }[] };
  for (const c of config.clusters) {
    const ca = c.cluster["certificate-authority"];
    if (ca) {
      c.cluster["certificate-authority-data"] = readFileSync(ca).toString("base64");
      delete c.cluster["certificate-authority"];
    }
  }
  writeFileSync(out, JSON.stringify(config, null, 2), { mode: 0o644 });
}

export async function startFolioContainer(platform: Platform, o: FolioContainerOptions): Promise<FolioContainer> {
  const kubelet = platform.kubelet;
  if (!kubelet) throw new Error("the platform has no kubelet (and so no container runtime)");
  const runtime = kubelet.runtime;
  const loaded = runtime.images.find(o.image);
  if (!loaded) throw new Error(`image ${o.image} is not on the node`);
  const image = await runtime.images.unpack(loaded);
  const id = `${o.name}-${randomBytes(4).toString("hex")}`;
  const dir = path.join(kubelet.rootDir, "containers", id);
  const tmp = path.join(dir, "tmp");
  mkdirSync(tmp, { recursive: true });
  chmodSync(tmp, 0o1777);
  const mounts: BindMount[] = [{ destination: "/tmp", source: tmp, readOnly: false }];
  const env: Record<string, string> = { ...o.env };
  if (o.kubeconfig) {
    const kc = path.join(dir, "kubeconfig");
    containerKubeconfig(o.kubeconfig, kc);
    mounts.push({ destination: CONTAINER_KUBECONFIG, source: kc, readOnly: true });
    env.KUBECONFIG = CONTAINER_KUBECONFIG;
  }
  for (const f of o.files ?? []) mounts.push({ destination: f, source: f, readOnly: true });
  if (o.dataDir) {
    mkdirSync(o.dataDir, { recursive: true });
    chmodSync(o.dataDir, 0o777);
    mounts.push({ destination: "/var/lib/folio", source: o.dataDir, readOnly: false });
  }
  const security = effectiveSecurity(
    { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: "RuntimeDefault" } },
    { name: o.name, securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } } },
    image.config.user,
    { passwd: "", group: "" },
  );
  const fullEnv = containerEnv(image.config, { HOSTNAME: o.name }, env);
  const logFile = path.join(dir, "log");
  const container = await runtime.start({
    id,
    bundle: path.join(dir, "bundle"),
    image,
    argv: resolveArgv({ args: [...o.args] }, image.config, fullEnv),
    env: fullEnv,
    cwd: workingDir({}, image.config),
    hostname: o.name,
    security,
    mounts,
    resources: o.memoryBytes === undefined ? {} : { memoryBytes: o.memoryBytes },
    logFile,
  });
  const readLog = (): string => {
    try {
      return readFileSync(logFile, "utf8");
    } catch {
      return "";
    }
  };
  return {
    id,
    dir,
    container,
    exited: container.exited,
    logs: readLog,
    kill: (signal) => container.kill(signal),
    async stop(graceMs = 10_000) {
      container.kill("SIGTERM");
      const timer = setTimeout(() => container.kill("SIGKILL"), graceMs);
      const exit = await container.exited;
      clearTimeout(timer);
      return exit;
    },
    async exec(argv) {
      try {
        const { stdout, stderr } = await run("runc", ["--root", path.join(kubelet.rootDir, "runc"), "exec", id, ...argv], {
          maxBuffer: 16 * 1024 * 1024,
        });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code?: number; stdout?: string; stderr?: string };
        return { code: typeof e.code === "number" ? e.code : 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
      }
    },
    async cleanup() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}
