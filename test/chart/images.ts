/**
 * The chart test's images, read from the Dockerfiles: what the local kubelet runs for
 * `folio.test/folio/api:*` and `folio.test/folio/runner:*` is the final stage's ENTRYPOINT, CMD,
 * WORKDIR and ENV of docker/api.Dockerfile and docker/runner.Dockerfile, with the in-image
 * `folio` (/usr/local/bin/folio) standing for the checkout's CLI. One source of truth: change a
 * Dockerfile's ENTRYPOINT or CMD and the chart test runs the new one.
 *
 * PATH is not taken from ENV: it names directories of the image (/opt/folio/.tools/node/bin);
 * the kubelet passes its own PATH, where the checkout's Node 24 comes first.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ImageMapping } from "../k8s/kubelet/images.ts";
import { DEFAULT_COMMANDS } from "../k8s/platform.ts";
import { REPO_ROOT } from "../k8s/versions.ts";

/** The registry the chart test installs from (images.registry): nothing else maps to it. */
export const TEST_REGISTRY = "folio.test";

/** The runtime parts of a Dockerfile's final stage. */
export interface ImageConfig {
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  readonly workingDir: string | undefined;
  readonly env: Readonly<Record<string, string>>;
}

/** Instructions of the last stage, continuation lines joined, comments dropped. */
function finalStage(text: string): { op: string; arg: string }[] {
  const lines = text
    .replace(/\\\r?\n/g, " ")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const instructions = lines.map((l) => {
    const [op = "", ...rest] = l.split(/\s+/);
    return { op: op.toUpperCase(), arg: rest.join(" ") };
  });
  const from = instructions.map((i) => i.op).lastIndexOf("FROM");
  return instructions.slice(from + 1);
}

/** ENV KEY=VALUE [KEY=VALUE …] (the form the Dockerfiles use; hadolint enforces it). */
function envPairs(arg: string): [string, string][] {
  return [...arg.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("([^"]*)"|\S*)/g)].map((m) => [m[1]!, m[3] ?? m[2]!]);
}

/** Reads ENTRYPOINT, CMD (exec form), WORKDIR and ENV of `file`'s final stage. */
export function readImageConfig(file: string): ImageConfig {
  let entrypoint: string[] = [];
  let cmd: string[] = [];
  let workingDir: string | undefined;
  const env: Record<string, string> = {};
  for (const { op, arg } of finalStage(readFileSync(file, "utf8"))) {
    if (op === "ENTRYPOINT") entrypoint = JSON.parse(arg) as string[];
    else if (op === "CMD") cmd = JSON.parse(arg) as string[];
    else if (op === "WORKDIR") workingDir = arg;
    else if (op === "ENV") for (const [k, v] of envPairs(arg)) if (k !== "PATH") env[k] = v;
  }
  if (entrypoint.length === 0) throw new Error(`${file}: no ENTRYPOINT in the final stage`);
  return { entrypoint, cmd, workingDir, env };
}

/** An image's ENTRYPOINT as a local argv: `folio` becomes the checkout's CLI. */
function localEntrypoint(c: ImageConfig, file: string): string[] {
  const [first, ...rest] = c.entrypoint;
  const local = first === undefined ? undefined : DEFAULT_COMMANDS[first];
  if (!local) throw new Error(`${file}: ENTRYPOINT ${JSON.stringify(c.entrypoint)} has no local stand-in`);
  return [...local, ...rest];
}

/** The mappings for the chart's two images under TEST_REGISTRY, by tag or digest. */
export function chartImages(): ImageMapping[] {
  const images: [string, string][] = [
    ["folio/api", "docker/api.Dockerfile"],
    ["folio/runner", "docker/runner.Dockerfile"],
  ];
  return images.flatMap(([repository, dockerfile]) => {
    const file = join(REPO_ROOT, dockerfile);
    const c = readImageConfig(file);
    const mapping = { entrypoint: localEntrypoint(c, file), cmd: c.cmd, env: c.env, ...(c.workingDir ? { workingDir: c.workingDir } : {}) };
    return [`${TEST_REGISTRY}/${repository}:*`, `${TEST_REGISTRY}/${repository}@*`].map((image) => ({ image, ...mapping }));
  });
}
