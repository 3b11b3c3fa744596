/**
 * The file system an OCI archive's image unpacks to, as a list of paths and entry types: every
 * layer of its manifest listed in order (`tar -tv` of the decompressed blob), with the layers'
 * whiteouts applied as the OCI image spec says (image-spec/layer.md: `.wh.NAME` deletes NAME and
 * everything under it, `.wh..wh..opq` empties its directory of what lower layers put there).
 * What a registry user who unpacks the image gets — without a container runtime.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** tar's first mode letter: `-` regular file, `d` directory, `l` symbolic link, `h` hard link, … */
export type EntryType = string;

/** One `tar -tv` line → [path without a trailing slash, type]. */
function parseEntry(line: string): [string, EntryType] | undefined {
  // drwxr-xr-x 0/0               0 2026-06-07 15:53 usr/share/doc/ ; a link: "… name -> target"
  const m = /^(\S)\S*\s+\S+\s+\d+\s+\S+\s+\S+\s(.*)$/.exec(line);
  if (!m) return undefined;
  const type = m[1]!;
  let name = m[2]!;
  if (type === "l" || type === "h") name = name.split(type === "l" ? " -> " : " link to ")[0]!;
  return [name.replace(/^\.\//, "").replace(/\/$/, ""), type];
}

/** Paths of the image's unpacked file system → entry type. */
export async function imageFiles(archive: string): Promise<Map<string, EntryType>> {
  const { stdout: raw } = await run("skopeo", ["inspect", "--raw", `oci-archive:${archive}`], { maxBuffer: 16 * 1024 * 1024 });
  const layers = (JSON.parse(raw) as { layers: { digest: string; mediaType: string }[] }).layers;
  const files = new Map<string, EntryType>();
  const removeUnder = (dir: string): void => {
    for (const p of files.keys()) if (p.startsWith(`${dir}/`)) files.delete(p);
  };
  for (const layer of layers) {
    const blob = `blobs/sha256/${layer.digest.replace(/^sha256:/, "")}`;
    const decompress = layer.mediaType.endsWith("+gzip") ? "gzip -dc" : layer.mediaType.endsWith("+zstd") ? "zstd -dc" : "cat";
    const { stdout } = await run("sh", ["-c", `tar -xOf "$0" "$1" | ${decompress} | tar -tv`, archive, blob], {
      maxBuffer: 256 * 1024 * 1024,
    });
    const entries = stdout
      .split("\n")
      .map(parseEntry)
      .filter((e) => e !== undefined);
    // Whiteouts of this layer hide what the layers below put there, not what this layer adds.
    for (const [path] of entries) {
      const slash = path.lastIndexOf("/");
      const dir = path.slice(0, slash < 0 ? 0 : slash);
      const base = path.slice(slash + 1);
      if (base === ".wh..wh..opq") removeUnder(dir);
      else if (base.startsWith(".wh.")) {
        const gone = (dir ? `${dir}/` : "") + base.slice(".wh.".length);
        files.delete(gone);
        removeUnder(gone);
      }
    }
    for (const [path, type] of entries) if (!path.split("/").pop()!.startsWith(".wh.")) files.set(path, type);
  }
  return files;
}
