/**
 * The pinned versions of the local control plane (versions.env) and where their binaries are
 * cached. build.sh is the one builder; this module only reads the pins and, when asked, runs it.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** This directory (test/k8s). */
export const K8S_TEST_DIR = dirname(fileURLToPath(import.meta.url));

/** The repository root (two levels above test/k8s). */
export const REPO_ROOT = join(K8S_TEST_DIR, "..", "..");

/** The versions pinned in versions.env. */
export interface PinnedVersions {
  readonly kubernetes: string;
  readonly etcd: string;
}

/** Reads versions.env: plain KEY=value lines, `#` comments, no shell expansions. */
export function readVersions(file = join(K8S_TEST_DIR, "versions.env")): PinnedVersions {
  const values = new Map<string, string>();
  for (const raw of readFileSync(file, "utf8").split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq > 0) values.set(line.slice(0, eq), line.slice(eq + 1));
  }
  const get = (key: string): string => {
    const value = values.get(key);
    if (!value) throw new Error(`${file}: ${key} is not set`);
    return value;
  };
  return { kubernetes: get("K8S_VERSION"), etcd: get("ETCD_VERSION") };
}

/** The directory build.sh fills: `${FOLIO_K8S_CACHE:-$HOME/.cache/folio-k8s}/<k8s>-<etcd>/bin`. */
export function binDir(versions: PinnedVersions = readVersions()): string {
  // The test platform is outside the product's config surface (core/config.ts), like CI's own
  // variables: it reads its one cache knob here, where build.sh reads the same one.
  const root = process.env.FOLIO_K8S_CACHE ?? join(homedir(), ".cache", "folio-k8s");
  return join(root, `${versions.kubernetes}-${versions.etcd}`, "bin");
}

/** Paths of the three control-plane binaries. */
export interface Binaries {
  readonly etcd: string;
  readonly kubeApiserver: string;
  readonly kubeControllerManager: string;
}

/** The binaries in `dir`, or undefined when one is missing (build.sh has not run). */
export function findBinaries(dir: string = binDir()): Binaries | undefined {
  const bins = {
    etcd: join(dir, "etcd"),
    kubeApiserver: join(dir, "kube-apiserver"),
    kubeControllerManager: join(dir, "kube-controller-manager"),
  };
  return Object.values(bins).every((p) => existsSync(p)) ? bins : undefined;
}

/**
 * Returns the cached binaries, running build.sh first when any is missing. A cold build takes
 * tens of minutes (see docs/k8s-test-platform.md), so its progress goes to our stderr.
 */
export async function ensureBinaries(): Promise<Binaries> {
  const found = findBinaries();
  if (found) return found;
  await new Promise<void>((resolve, reject) => {
    const child = spawn("bash", [join(K8S_TEST_DIR, "build.sh")], { stdio: ["ignore", "ignore", "inherit"] });
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code === 0) resolve();
      else reject(new Error(`test/k8s/build.sh exited with ${String(code)}`));
    });
  });
  const built = findBinaries();
  if (!built) throw new Error(`test/k8s/build.sh succeeded but ${binDir()} lacks a binary`);
  return built;
}
