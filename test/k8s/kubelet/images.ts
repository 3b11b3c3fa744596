/**
 * Image → local command mapping: how the local kubelet "runs" a container image without a
 * container runtime. A mapping stands for an image's ENTRYPOINT and CMD; the container's
 * command/args then combine with them exactly as the Kubernetes API documents
 * (https://kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/):
 *
 *   command  args   runs
 *   -        -      ENTRYPOINT + CMD
 *   -        set    ENTRYPOINT + args
 *   set      -      command           (CMD ignored)
 *   set      set    command + args
 *
 * `commands` translates in-image executables (argv[0], e.g. `folio` or `/usr/local/bin/folio`)
 * to local argv prefixes, so a Job that sets `command: [folio, runner, ...]` still runs the
 * checkout's runner. Anything else in argv[0] (sh, sleep) is looked up on the kubelet's PATH.
 */
import { expandReferences } from "./env.ts";

/** One image (or image prefix) and the local process standing for it. */
export interface ImageMapping {
  /** An image reference; a trailing `*` matches any suffix (`folio/runner:*`). */
  readonly image: string;
  /** The image's ENTRYPOINT as a local argv (`[process.execPath, "<repo>/bin/folio.ts"]`). */
  readonly entrypoint: readonly string[];
  /** The image's CMD; replaced by the container's args. */
  readonly cmd?: readonly string[];
  /** The image's ENV, under the container's own env; container paths, translated like env. */
  readonly env?: Readonly<Record<string, string>>;
  /** The image's WORKDIR, a container path (translated); the container's workingDir overrides it. */
  readonly workingDir?: string;
}

/** Which mapping serves `image`: the first exact match, else the longest matching prefix. */
export function findMapping(mappings: readonly ImageMapping[], image: string): ImageMapping | undefined {
  const exact = mappings.find((m) => !m.image.endsWith("*") && m.image === image);
  if (exact) return exact;
  return mappings
    .filter((m) => m.image.endsWith("*") && image.startsWith(m.image.slice(0, -1)))
    .sort((a, b) => b.image.length - a.image.length)[0];
}

/** The container fields the argv depends on (a subset of V1Container). */
export interface CommandSource {
  readonly image?: string;
  readonly command?: readonly string[];
  readonly args?: readonly string[];
}

/**
 * The local argv for a container: ENTRYPOINT/CMD/command/args combined as the table above says,
 * `$(VAR)` references expanded against the container's environment (the API does this in
 * command and args, not a shell), container paths rewritten by `translate` (only in what the
 * pod spec supplied: the mapping is local already), then argv[0] translated through `commands`.
 */
export function resolveArgv(
  container: CommandSource,
  mapping: ImageMapping,
  env: Readonly<Record<string, string>>,
  commands: Readonly<Record<string, readonly string[]>> = {},
  translate: (s: string) => string = (s) => s,
): string[] {
  const fromSpec = (list: readonly string[] | undefined): string[] | undefined =>
    list?.length ? list.map((s) => translate(expandReferences(s, env))) : undefined;
  const command = fromSpec(container.command);
  const args = fromSpec(container.args);
  const argv = command ? [...command, ...(args ?? [])] : [...mapping.entrypoint, ...(args ?? mapping.cmd ?? [])];
  const [first, ...rest] = argv;
  if (first === undefined)
    throw new Error(`image ${container.image ?? "?"}: no command (the mapping has no entrypoint and the container sets none)`);
  const local = command ? commands[first] : undefined;
  return local ? [...local, ...rest] : argv;
}
