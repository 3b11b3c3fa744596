/**
 * The node's images: OCI archives (what `make images` writes to dist/images/) loaded under the
 * name they carry (the index's org.opencontainers.image.ref.name) and any aliases a test gives,
 * as `ctr images import` + `ctr images tag` would. A container runs on the image's root file
 * system unpacked once per manifest digest — `skopeo copy oci-archive:… oci:…` then `umoci unpack`
 * — into a cache shared by every kubelet on the machine (FOLIO_IMAGES_CACHE, ~/.cache/folio-images,
 * `unpacked/<digest>`), written to a temporary directory and renamed into place, so concurrent
 * unpacks of one digest never see each other's halves. Containers never write to it: each gets an
 * overlay (runc.ts).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync } from "node:fs";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The runtime parts of an image's config (image-spec config.md). */
export interface ImageConfig {
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  /** KEY=VALUE */
  readonly env: readonly string[];
  readonly workingDir: string;
  readonly user: string;
  readonly labels: Readonly<Record<string, string>>;
}

export interface LoadedImage {
  /** Normalized references it answers to (docker.io/folio/runner:0.1.0, aliases). */
  readonly names: readonly string[];
  /** The manifest's digest, sha256:…: what status.imageID reports. */
  readonly digest: string;
  readonly archive: string;
}

export interface UnpackedImage {
  readonly digest: string;
  readonly rootfs: string;
  readonly config: ImageConfig;
}

export const IMAGES_CACHE = process.env.FOLIO_IMAGES_CACHE ?? path.join(homedir(), ".cache", "folio-images");
/** Unpacked digests kept besides the ones in use (each runner image is ~700 MB unpacked). */
const KEEP_UNPACKED = 4;

/**
 * A reference in its full form, as containerd normalizes it: `debian` → `docker.io/library/debian:latest`,
 * `folio/runner:0.1.0` → `docker.io/folio/runner:0.1.0`; a registry (a first part with a dot, a
 * colon or `localhost`) is kept; a digest reference keeps its digest.
 */
export function normalizeRef(ref: string): string {
  const [bare = "", digest] = ref.split("@");
  let name = bare;
  const parts = name.split("/");
  const first = parts[0] ?? "";
  const hasRegistry = parts.length > 1 && (first.includes(".") || first.includes(":") || first === "localhost");
  if (!hasRegistry) name = parts.length === 1 ? `docker.io/library/${name}` : `docker.io/${name}`;
  const last = name.split("/").at(-1) ?? "";
  if (!digest && !last.includes(":")) name += ":latest";
  return digest ? `${name.replace(/:[^/]*$/, "")}@${digest}` : name;
}

const repoOf = (normalized: string): string => normalized.replace(/@.*$/, "").replace(/:[^/]*$/, "");

export class ImageStore {
  readonly #images: LoadedImage[] = [];
  readonly #unpacking = new Map<string, Promise<UnpackedImage>>();
  readonly #cache: string;
  readonly #log: (line: string) => void;

  constructor(opts: { cacheDir?: string; log?: (line: string) => void } = {}) {
    this.#cache = opts.cacheDir ?? IMAGES_CACHE;
    this.#log = opts.log ?? ((): void => undefined);
  }

  /** Loads an OCI archive under its own name and `aliases` (e.g. a test registry's name). */
  async load(archive: string, aliases: readonly string[] = []): Promise<LoadedImage> {
    const { stdout } = await run("tar", ["-xOf", archive, "index.json"], { maxBuffer: 1024 * 1024 });
    const index = JSON.parse(stdout) as { manifests?: { digest: string; annotations?: Record<string, string> }[] };
    const manifest = index.manifests?.[0];
    if (!manifest) throw new Error(`${archive}: no manifest in index.json`);
    const own = manifest.annotations?.["org.opencontainers.image.ref.name"];
    const names = [...(own ? [own] : []), ...aliases].map(normalizeRef);
    const image = { names, digest: manifest.digest, archive };
    this.#images.push(image);
    return image;
  }

  /** The image a pod's `image` names: by tag, or by digest within a repository it is known under. */
  find(ref: string): LoadedImage | undefined {
    const want = normalizeRef(ref);
    if (want.includes("@")) {
      const [repo, digest] = want.split("@");
      return this.#images.findLast((i) => i.digest === digest && i.names.some((n) => repoOf(n) === repo));
    }
    return this.#images.findLast((i) => i.names.includes(want));
  }

  /** The image's root file system and config, unpacked on first use (tens of seconds for the runner). */
  unpack(image: LoadedImage): Promise<UnpackedImage> {
    let p = this.#unpacking.get(image.digest);
    if (!p) {
      p = this.#unpack(image);
      this.#unpacking.set(image.digest, p);
      p.catch(() => this.#unpacking.delete(image.digest));
    }
    return p;
  }

  async #unpack(image: LoadedImage): Promise<UnpackedImage> {
    const dir = path.join(this.#cache, "unpacked", image.digest.replace(":", "-"));
    const done = path.join(dir, "image.json");
    if (!existsSync(done)) {
      const started = Date.now();
      const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
      mkdirSync(tmp, { recursive: true });
      try {
        const layout = path.join(tmp, "layout");
        await run("skopeo", ["copy", "--quiet", `oci-archive:${image.archive}`, `oci:${layout}:image`], { maxBuffer: 16 * 1024 * 1024 });
        const config = await readImageConfig(layout);
        await run("umoci", ["unpack", "--image", `${layout}:image`, path.join(tmp, "bundle")], { maxBuffer: 64 * 1024 * 1024 });
        await rename(path.join(tmp, "bundle", "rootfs"), path.join(tmp, "rootfs"));
        await rm(layout, { recursive: true, force: true });
        await rm(path.join(tmp, "bundle"), { recursive: true, force: true });
        await writeFile(path.join(tmp, "image.json"), JSON.stringify(config, null, 2));
        await rename(tmp, dir).catch(async (err: unknown) => {
          // Another kubelet finished the same digest first: use theirs.
          if (!existsSync(done)) throw err;
          await rm(tmp, { recursive: true, force: true });
        });
      } catch (err) {
        await rm(tmp, { recursive: true, force: true });
        throw new Error(`unpacking ${image.names[0] ?? image.digest} failed: ${err instanceof Error ? err.message : String(err)}`, {
          cause: err,
        });
      }
      this.#log(`images: unpacked ${image.names[0] ?? ""} (${image.digest.slice(0, 19)}) in ${Date.now() - started} ms`);
      this.#pruneOld(dir);
    }
    const now = new Date();
    utimesSync(dir, now, now); // most recently used
    const config = JSON.parse(await readFile(done, "utf8")) as ImageConfig;
    return { digest: image.digest, rootfs: path.join(dir, "rootfs"), config };
  }

  /** Removes the least recently used unpacked images beyond KEEP_UNPACKED (never `current`). */
  #pruneOld(current: string): void {
    const root = path.join(this.#cache, "unpacked");
    const dirs = readdirSync(root)
      .filter((d) => /^sha256-[0-9a-f]{64}$/.test(d))
      .map((d) => path.join(root, d))
      .filter((d) => d !== current)
      .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
    for (const d of dirs.slice(KEEP_UNPACKED)) {
      void rm(d, { recursive: true, force: true }).then(() => this.#log(`images: removed the unused unpacked image ${path.basename(d)}`));
    }
  }
}

/** Reads an OCI layout's image config: index → manifest → config (image-spec). */
async function readImageConfig(layout: string): Promise<ImageConfig> {
  const blob = async (digest: string): Promise<Record<string, unknown>> =>
    JSON.parse(await readFile(path.join(layout, "blobs", ...digest.split(":")), "utf8")) as Record<string, unknown>;
  const index = JSON.parse(await readFile(path.join(layout, "index.json"), "utf8")) as { manifests: { digest: string }[] };
  const manifest = (await blob(index.manifests[0]!.digest)) as { config: { digest: string } };
  const image = (await blob(manifest.config.digest)) as {
    config?: { Entrypoint?: string[]; Cmd?: string[]; Env?: string[]; WorkingDir?: string; User?: string; Labels?: Record<string, string> };
  };
  const c = image.config ?? {};
  return {
    entrypoint: c.Entrypoint ?? [],
    cmd: c.Cmd ?? [],
    env: c.Env ?? [],
    workingDir: c.WorkingDir ?? "",
    user: c.User ?? "",
    labels: c.Labels ?? {},
  };
}
