/**
 * A container's process from its image's config and the pod spec, as the kubelet and containerd
 * combine them (https://kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/):
 *
 *   command  args   runs
 *   -        -      ENTRYPOINT + CMD
 *   -        set    ENTRYPOINT + args
 *   set      -      command           (CMD ignored)
 *   set      set    command + args
 *
 * `$(VAR)` references in command and args expand against the container's environment (the API
 * does this, not a shell). The environment is the image's ENV, then HOSTNAME and the kubelet's
 * service variables, then the pod's env (later wins); the working directory is the container's
 * workingDir, else the image's WORKDIR, else "/". Pure.
 */
import type { ImageConfig } from "../runtime/image-store.ts";
import { expandReferences } from "./env.ts";

/** The container fields the process depends on (a subset of V1Container). */
export interface CommandSource {
  readonly image?: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
  readonly workingDir?: string;
}

/** The argv: ENTRYPOINT/CMD/command/args combined as the table above says, references expanded. */
export function resolveArgv(
  container: CommandSource,
  image: Pick<ImageConfig, "entrypoint" | "cmd">,
  env: Readonly<Record<string, string>>,
): string[] {
  const fromSpec = (list: readonly string[] | undefined): string[] | undefined =>
    list?.length ? list.map((s) => expandReferences(s, env)) : undefined;
  const command = fromSpec(container.command);
  const args = fromSpec(container.args);
  const argv = command ? [...command, ...(args ?? [])] : [...image.entrypoint, ...(args ?? image.cmd)];
  if (argv.length === 0)
    throw new Error(`image ${container.image ?? "?"}: no command specified (no ENTRYPOINT or CMD, and the container sets none)`);
  return argv;
}

/** KEY=VALUE list → record (the first `=` separates). */
export function envRecord(list: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of list) {
    const i = kv.indexOf("=");
    if (i > 0) out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

/** The container's environment: image ENV, then `kubelet` (HOSTNAME, service variables), then the pod's. */
export function containerEnv(
  image: Pick<ImageConfig, "env">,
  kubelet: Readonly<Record<string, string>>,
  pod: Readonly<Record<string, string>>,
): Record<string, string> {
  return { ...envRecord(image.env), ...kubelet, ...pod };
}

export function workingDir(container: CommandSource, image: Pick<ImageConfig, "workingDir">): string {
  return container.workingDir || image.workingDir || "/";
}
