/**
 * The images `make images` built (docker/images.txt → dist/images/*.oci.tar), checked where a
 * registry user checks them: `skopeo inspect` of each OCI archive shows the chart's tag, uid 10001,
 * the `folio` entrypoint, the OCI labels with the source revision and version, and the image fits
 * its size budget (the uncompressed size make images measured, for this very archive: its config
 * digest must match). The archives' contents are what every e2e suite and the chart test then run.
 * Their file systems (every layer listed, whiteouts applied) hold no compiler, no npm, no
 * documentation besides copyright files, no manual pages and no C headers. The full runner image
 * (docker/images-full.txt, `make images-full`, which `make test` builds too) is checked alike.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { appVersion, imageCatalogue } from "../k8s/images.ts";
import { REPO_ROOT } from "../k8s/versions.ts";
import { imageFiles } from "./layers.ts";

const run = promisify(execFile);

interface Inspect {
  Digest: string;
  Labels: Record<string, string>;
  Layers: string[];
}

/** What a lean runtime image never holds (issue #11: no compiler, no npm, no docs). */
const NOT_IN_AN_IMAGE: readonly RegExp[] = [
  /^usr\/(local\/)?s?bin\/([\w.]+-)?(gcc|g\+\+|cc|c\+\+|clang|make|ld|strip|npm|npx)(-[\d.]+)?$/, // build tools
  /(^|\/)node_modules\/npm\//,
  /^opt\/npm\//,
  /^opt\/folio\/\.tools\/node\/include\//, // Node's C headers
  /^opt\/folio\/node_modules\/.*\.(d\.ts|map)$/, // type declarations, source maps of dependencies
  /^opt\/folio\/(core|api|controller|runner|test|docker)\//, // TypeScript sources: the image runs dist/
];
/**
 * Regular files that are documentation or headers. Symbolic links into them stay (dpkg and
 * update-alternatives make them; they point nowhere). usr/share/info/dir is the info index
 * install-info keeps in every Debian base, the official slim image's included.
 */
const NO_FILE_UNDER: readonly RegExp[] = [
  /^usr\/include\//,
  /^usr\/share\/man\//,
  /^usr\/share\/info\/(?!dir$)/,
  /^usr\/share\/doc\/.*(?<!\/copyright)$/,
];

const images = [
  ...imageCatalogue().map((image) => ({ ...image, required: true })),
  ...imageCatalogue("images-full.txt").map((image) => ({ ...image, required: true })),
];

describe.each(images)("image $name ($dockerfile)", (image) => {
  const built = existsSync(image.archive);

  it.skipIf(!image.required || (!built && !process.env.CI))("exists (make images)", () => {
    expect(built, `${image.archive}: run make images`).toBe(true);
  });

  it.runIf(built)(
    "is tagged with the chart's appVersion, runs as 10001 with the folio entrypoint, and carries the OCI labels",
    async () => {
      const { stdout } = await run("skopeo", ["inspect", `oci-archive:${image.archive}`], { maxBuffer: 16 * 1024 * 1024 });
      const info = JSON.parse(stdout) as Inspect;
      const { stdout: rawConfig } = await run("skopeo", ["inspect", "--config", `oci-archive:${image.archive}`], {
        maxBuffer: 16 * 1024 * 1024,
      });
      const config = (JSON.parse(rawConfig) as { config: { User?: string; Entrypoint?: string[]; Cmd?: string[]; Env?: string[] } }).config;
      const { stdout: manifest } = await run("skopeo", ["inspect", "--raw", `oci-archive:${image.archive}`], {
        maxBuffer: 16 * 1024 * 1024,
      });
      const { stdout: index } = await run("tar", ["-xOf", image.archive, "index.json"]);
      const refName = (JSON.parse(index) as { manifests: { annotations?: Record<string, string> }[] }).manifests[0]?.annotations?.[
        "org.opencontainers.image.ref.name"
      ];
      expect(refName).toBe(`docker.io/${image.repository}:${appVersion()}`);
      expect(config.User).toBe("10001:10001");
      expect(config.Entrypoint).toEqual(["folio"]);
      expect(config.Env).toContain("FOLIO_SANDBOX=container");
      const labels = info.Labels;
      expect(labels["org.opencontainers.image.version"]).toBe(appVersion());
      const revision = labels["org.opencontainers.image.revision"] ?? "";
      expect(revision).toMatch(/^[0-9a-f]{40}(-dirty)?$/);
      // A commit of this repository (the image was built from its tree, or from a tree with the same context).
      const { stdout: kind } = await run("git", ["cat-file", "-t", revision.replace(/-dirty$/, "")], { cwd: REPO_ROOT });
      expect(kind.trim()).toBe("commit");
      expect(labels["org.opencontainers.image.licenses"]).toBe("Apache-2.0");
      expect(labels["org.opencontainers.image.title"]).toMatch(/^Folio /);
      expect(Date.parse(labels["org.opencontainers.image.created"] ?? "")).not.toBeNaN();
      expect(labels["org.opencontainers.image.base.name"]).toBe("docker.io/library/debian:bookworm-slim");

      // The size make images measured is this archive's (same config digest), within its budget.
      const meta = JSON.parse(readFileSync(image.archive.replace(/\.oci\.tar$/, ".json"), "utf8")) as {
        size_mb: number;
        ref: string;
        config_digest: string;
      };
      expect(meta.ref).toBe(`docker.io/${image.ref}`);
      expect(meta.config_digest, "dist/images/*.json was written for another archive: run make images").toBe(
        (JSON.parse(manifest) as { config: { digest: string } }).config.digest,
      );
      expect(
        meta.size_mb,
        `${image.name} is ${meta.size_mb} MB; its budget (docker/images.txt) is ${image.budgetMb} MB`,
      ).toBeLessThanOrEqual(image.budgetMb);
    },
  );

  it.runIf(built)("holds no compiler, no npm, no documentation but copyright files, no manual pages and no C headers", async () => {
    const files = await imageFiles(image.archive);
    // What it does hold: Folio's compiled code, its Node, tini.
    expect(files.get("opt/folio/dist/bin/folio.js")).toBe("-");
    expect(files.get("opt/folio/.tools/node/bin/node")).toBe("-");
    expect(files.get("usr/bin/tini")).toBe("-");
    const notDirs = [...files].filter(([, type]) => type !== "d").map(([p]) => p);
    expect(notDirs.filter((p) => NOT_IN_AN_IMAGE.some((re) => re.test(p)))).toEqual([]);
    const regular = [...files].filter(([, type]) => type === "-").map(([p]) => p);
    expect(regular.filter((p) => NO_FILE_UNDER.some((re) => re.test(p)))).toEqual([]);
  });
});
