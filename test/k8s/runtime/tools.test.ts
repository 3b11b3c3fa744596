/**
 * The local kubelet refuses to start without the container tools it runs pods with, naming the
 * Debian package to install (issue #11: "if bubblewrap or runc is missing, Folio refuses to start
 * in that mode with a message that names the package"; bubblewrap's refusal is test/api/sandbox.test.ts).
 * The tools are hidden by a PATH that has a shell and only the commands each case keeps.
 */
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { ContainerRuntime, checkTools } from "./runtime.ts";

const savedPath = process.env.PATH;
const dirs: string[] = [];

/** A PATH directory with sh and the named commands (links to the machine's own). */
function pathWith(commands: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "folio-tools-"));
  dirs.push(dir);
  for (const cmd of ["sh", ...commands])
    symlinkSync(execFileSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8", env: { PATH: savedPath } }).trim(), join(dir, cmd));
  return dir;
}

afterEach(() => {
  process.env.PATH = savedPath;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the local kubelet's container tools", () => {
  it("are all here on a machine make setup prepared", () => {
    expect(() => checkTools()).not.toThrow();
  });

  it.each([
    ["runc", [], "install the Debian package runc"],
    ["skopeo", ["runc"], "install the Debian package skopeo"],
    ["umoci", ["runc", "skopeo"], "install the Debian package umoci"],
  ])("refuses to start without %s, naming its package", (missing, present, message) => {
    process.env.PATH = pathWith(present);
    expect(() => checkTools()).toThrow(`runs containers with ${missing}, which is missing: ${message}`);
    expect(() => new ContainerRuntime({ rootDir: join(tmpdir(), "folio-never-made") })).toThrow(message);
  });
});
