/**
 * The local kubelet's pure translations: image → argv (Kubernetes command/args semantics),
 * $(VAR) expansion, container paths → local directories, status patches, termination messages.
 * No cluster needed; the platform itself is exercised by `node test/k8s/smoke.ts`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1Pod } from "@kubernetes/client-node";
import { afterAll, describe, expect, it } from "vitest";
import { expandReferences } from "./env.ts";
import { findMapping, resolveArgv, type ImageMapping } from "./images.ts";
import { statusPatch } from "./pod-status.ts";
import { readTerminationMessage } from "./process.ts";
import { translatePaths } from "./volumes.ts";

const runner: ImageMapping = { image: "folio/runner:*", entrypoint: ["node", "/repo/bin/folio.ts"], cmd: ["--help"] };
const images: ImageMapping[] = [
  runner,
  { image: "folio/runner:special", entrypoint: ["special"] },
  { image: "folio/*", entrypoint: ["generic"] },
];

describe("image mapping (first exact match, else the longest prefix)", () => {
  it.each([
    ["an exact name beats every prefix", "folio/runner:special", "special"],
    ["the longest prefix wins", "folio/runner:1.2.3", "node"],
    ["a shorter prefix still matches", "folio/other:1", "generic"],
  ])("%s: %s", (_why, image, first) => {
    expect(findMapping(images, image)?.entrypoint[0]).toBe(first);
  });

  it("finds nothing for an unmapped image", () => {
    expect(findMapping(images, "docker.io/library/busybox:1")).toBeUndefined();
  });
});

describe("argv from ENTRYPOINT/CMD and command/args (the API's documented table)", () => {
  it.each([
    ["neither: ENTRYPOINT + CMD", {}, ["node", "/repo/bin/folio.ts", "--help"]],
    ["args only: ENTRYPOINT + args", { args: ["runner", "--spec", "-"] }, ["node", "/repo/bin/folio.ts", "runner", "--spec", "-"]],
    ["command only: CMD is ignored", { command: ["sh", "-c", "true"] }, ["sh", "-c", "true"]],
    ["command and args", { command: ["sh", "-c"], args: ["exit 3"] }, ["sh", "-c", "exit 3"]],
    ["an in-image command is translated", { command: ["folio", "runner"] }, ["node", "/repo/bin/folio.ts", "runner"]],
    ["$(VAR) expands from the env", { args: ["--spec", "$(SPEC)"] }, ["node", "/repo/bin/folio.ts", "--spec", "/spec/job.json"]],
  ])("%s", (_why, container, want) => {
    expect(resolveArgv(container, runner, { SPEC: "/spec/job.json" }, { folio: ["node", "/repo/bin/folio.ts"] })).toEqual(want);
  });
});

describe("$(VAR) expansion (third_party/forked/golang/expansion)", () => {
  it.each([
    ["a defined name", "a=$(A)", "a=1"],
    ["an undefined name stays as written", "$(NOPE)", "$(NOPE)"],
    ["$$ escapes a dollar", "$$(A)", "$(A)"],
    ["shell syntax is not a reference", "$(cat /x) $HOME", "$(cat /x) $HOME"],
  ])("%s: %s", (_why, input, want) => {
    expect(expandReferences(input, { A: "1" })).toBe(want);
  });
});

describe("container paths → local stand-ins", () => {
  const mounts = [
    { containerPath: "/tmp", hostPath: "/pods/u/volumes/tmp" },
    { containerPath: "/data", hostPath: "/pods/u/volumes/data" },
    { containerPath: "/data/in", hostPath: "/pods/u/volumes/in" },
    { containerPath: "/dev/termination-log", hostPath: "/pods/u/termination-log" },
  ];
  it.each([
    ["the mount path itself", "/tmp", "/pods/u/volumes/tmp"],
    ["a file under it", "/tmp/a.pdf", "/pods/u/volumes/tmp/a.pdf"],
    ["inside a flag", "--out=/tmp/x", "--out=/pods/u/volumes/tmp/x"],
    ["inside a shell script", "echo 1 > /dev/termination-log", "echo 1 > /pods/u/termination-log"],
    ["the longest mount wins", "/data/in/a.pdf", "/pods/u/volumes/in/a.pdf"],
    ["a longer name is not a mount", "/tmpfoo /data/inbox", "/tmpfoo /pods/u/volumes/data/inbox"],
    ["a path containing the mount elsewhere is untouched", "/var/tmp/x", "/var/tmp/x"],
  ])("%s: %s", (_why, input, want) => {
    expect(translatePaths(input, mounts)).toBe(want);
  });
});

describe("pod status patches (kubelet generateAPIPodStatus)", () => {
  const pod: V1Pod = {
    metadata: { name: "p", namespace: "n", uid: "u1", generation: 1 },
    spec: { containers: [{ name: "main", image: "folio/runner:1" }] },
    status: { conditions: [{ type: "Initialized", status: "True", lastTransitionTime: "2020-01-01T00:00:00Z" as unknown as Date }] },
  };
  const now = new Date("2030-01-01T00:00:00.500Z");
  type Patch = {
    metadata: { uid: string };
    status: {
      phase: string;
      conditions: { type: string; status: string; reason?: string; lastTransitionTime: string }[];
      containerStatuses: { ready: boolean; state: unknown }[];
    };
  };
  const patch = (phase: "Running" | "Succeeded", state: object): Patch =>
    statusPatch(pod, { phase, state: state as never, startTime: now }, now) as unknown as Patch;

  it("carries the UID as a precondition", () => {
    expect(patch("Running", { running: { startedAt: "x" } }).metadata.uid).toBe("u1");
  });

  it("is Ready while running and PodCompleted once terminal", () => {
    const running = patch("Running", { running: { startedAt: "x" } }).status;
    expect(running.conditions.find((c) => c.type === "Ready")?.status).toBe("True");
    expect(running.containerStatuses[0]?.ready).toBe(true);
    const done = patch("Succeeded", { terminated: { exitCode: 0, reason: "Completed", finishedAt: "x" } }).status;
    expect(done.conditions.find((c) => c.type === "Ready")).toMatchObject({ status: "False", reason: "PodCompleted" });
  });

  it("keeps lastTransitionTime while a condition's status is unchanged, in second precision", () => {
    const conditions = patch("Running", { running: { startedAt: "x" } }).status.conditions;
    expect(conditions.find((c) => c.type === "Initialized")?.lastTransitionTime).toBe("2020-01-01T00:00:00Z");
    expect(conditions.find((c) => c.type === "Ready")?.lastTransitionTime).toBe("2030-01-01T00:00:00Z");
  });
});

describe("termination message (kubelet limits)", () => {
  const dir = mkdtempSync(join(tmpdir(), "folio-kubelet-test-"));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const msg = join(dir, "msg");
  const log = join(dir, "log");
  writeFileSync(log, Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n") + "\n");

  it("reads the file, at most 4096 bytes", () => {
    writeFileSync(msg, "x".repeat(5000));
    expect(readTerminationMessage(msg, log, "File", 1)).toHaveLength(4096);
  });

  it("falls back to the last 80 log lines only on failure with an empty file", () => {
    writeFileSync(msg, "");
    expect(readTerminationMessage(msg, log, "FallbackToLogsOnError", 0)).toBe("");
    const tail = readTerminationMessage(msg, log, "FallbackToLogsOnError", 3);
    expect(tail.startsWith("line 20\n")).toBe(true);
    expect(tail.endsWith("line 99\n")).toBe(true);
  });
});
