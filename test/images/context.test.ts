/**
 * The build context of an image (docker/context.ts): what `<Dockerfile>.dockerignore` admits, with
 * Docker's pattern rules, so that `make images` builds from exactly what `docker build` would send
 * — and keys its cache on exactly that.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/tools.ts";
import { contextFiles, isIgnored, parseIgnore } from "../../docker/context.ts";

const rules = parseIgnore(["# comment", "*", "!.node-version", "!core/", "!docker/folio.sh", "**/*.test.ts", "**/node_modules"].join("\n"));

describe("dockerignore patterns (moby/patternmatcher)", () => {
  it.each([
    ["everything is out by default", "README.md", true],
    ["a re-admitted file", ".node-version", false],
    ["a file under a re-admitted directory", "core/config.ts", false],
    ["deep under it", "core/storage/s3-store.ts", false],
    ["a test file under it, excluded again by a later ** pattern", "core/storage/x.test.ts", true],
    ["node_modules anywhere", "core/node_modules/x/index.js", true],
    ["one file of a directory that is otherwise out", "docker/folio.sh", false],
    ["its neighbours stay out", "docker/build-images.sh", true],
    ["the re-admitted directory itself", "core", false],
  ])("%s: %s", (_why, file, ignored) => {
    expect(isIgnored(file, rules)).toBe(ignored);
  });

  it("admits for the runner image what its Dockerfile copies, and no test file", () => {
    const files = contextFiles(parseIgnore(readIgnore("runner")));
    for (const needed of [
      "package.json",
      "package-lock.json",
      "bin/folio",
      "core/config.ts",
      "runner/main.ts",
      "docker/folio.sh",
      "docker/prune-modules.ts",
    ])
      expect(files, needed).toContain(needed);
    expect(files.filter((f) => f.endsWith(".test.ts") || f.startsWith("test/") || f.startsWith("dist/"))).toEqual([]);
  });
});

function readIgnore(image: string): string {
  return readFileSync(join(ROOT, "docker", `${image}.Dockerfile.dockerignore`), "utf8");
}
