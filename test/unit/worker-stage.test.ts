/**
 * A sandboxed runner worker's stage (api/jobs/worker-sandbox.ts) and the bubblewrap command line
 * it runs under (core/sandbox.ts bwrapArgv), on the real file system: the API stages a job's
 * inputs for the worker, takes back only regular files from its `out/`, and empties the stage
 * after the job. The worker is not trusted: what it reports as outputs is checked.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkReachable, Stage, type WorkerSandbox } from "../../api/jobs/worker-sandbox.ts";
import { bwrapArgv, withMemoryCap, type SandboxScope } from "../../core/sandbox.ts";
import type { RunnerResult } from "../../core/schemas/job.ts";

let dir: string;
let box: WorkerSandbox;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "folio-stage-test-"));
  mkdirSync(path.join(dir, "root"));
  box = { policy: { mode: "bwrap", memoryBytes: 1 << 30, hidden: [], engineDirs: [] }, root: path.join(dir, "root"), user: null };
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const result = (file: string): RunnerResult => ({
  operation: "merge",
  outputs: [{ filename: "out.pdf", path: file, content_type: "application/pdf", size: 1, sha256: "0".repeat(64), pages: 1 }],
  figures: {},
  duration_ms: 1,
});

describe("a worker's stage", () => {
  it("stages the inputs as links in in/, sends the outputs to out/, takes them back and is empty after", async () => {
    const stage = new Stage(box);
    const stored = path.join(dir, "stored-input");
    writeFileSync(stored, "%PDF-1.7 input");
    const spec = await stage.stageSpec({
      operation: "merge",
      inputs: [{ path: stored, filename: "a.pdf" }],
      options: {},
      output_dir: path.join(dir, "api-out"),
    });
    expect(spec.inputs[0]!.path).toBe(path.join(stage.in, "0"));
    expect(spec.output_dir).toBe(stage.out);
    expect(statSync(spec.inputs[0]!.path).ino).toBe(statSync(stored).ino); // a hard link, no copy
    writeFileSync(path.join(stage.out, "out.pdf"), "%PDF-1.7 output");
    const back = await stage.collect(result(path.join(stage.out, "out.pdf")), path.join(dir, "api-out"));
    expect(back.outputs[0]!.path).toBe(path.join(dir, "api-out", "out.pdf"));
    expect(readFileSync(back.outputs[0]!.path, "utf8")).toBe("%PDF-1.7 output");
    await stage.wipe();
    expect(readdirSync(stage.in)).toEqual([]);
    expect(readdirSync(stage.out)).toEqual([]);
    expect(readFileSync(stored, "utf8")).toBe("%PDF-1.7 input"); // the stored file itself stays
    await stage.remove();
  });

  it.each([
    ["a symbolic link in out/ to a file of the API's (the seal key)", "link"],
    ["a path outside out/", "outside"],
    ["out/ itself", "self"],
    ["a file that is not there", "missing"],
  ])("refuses an output that is %s", async (_what, kind) => {
    const stage = new Stage(box);
    const secret = path.join(dir, "seal.key");
    writeFileSync(secret, "SECRET");
    const paths: Record<string, string> = {
      link: path.join(stage.out, "out.pdf"),
      outside: secret,
      self: stage.out,
      missing: path.join(stage.out, "nothing.pdf"),
    };
    if (kind === "link") symlinkSync(secret, paths.link!);
    await expect(stage.collect(result(paths[kind]!), path.join(dir, `api-out-${kind}`))).rejects.toThrow(/not a file in its out directory/);
    await stage.remove();
  });
});

describe("a root Folio's workers, run as nobody", () => {
  it("refuse to start when their code or scratch space sits below a directory others cannot enter, naming it", () => {
    chmodSync(dir, 0o711); // mkdtemp's 0700
    const closed = path.join(dir, "closed");
    mkdirSync(path.join(closed, "folio"), { recursive: true });
    chmodSync(closed, 0o700);
    expect(() => checkReachable([path.join(closed, "folio", "core")])).toThrow(`${closed} is not searchable by others`);
    chmodSync(closed, 0o711);
    expect(() => checkReachable([path.join(closed, "folio", "core")])).not.toThrow();
  });
});

describe("bwrapArgv", () => {
  const fs = { exists: (): boolean => true, isDir: (p: string): boolean => !p.endsWith(".key"), isLink: (): boolean => false };
  const scope: SandboxScope = {
    mode: "bwrap",
    memoryBytes: 1 << 30,
    hidden: ["/srv/folio/.data", "/srv/folio/tls.key"],
    system: ["/srv/folio/core", "/srv/folio"],
    writable: ["/stage"],
    readable: ["/stage/in"],
    network: "host",
  };
  const argv = bwrapArgv(scope, "/usr/bin/node", ["x"], undefined, fs);
  const at = (...words: string[]): number => argv.findIndex((_, i) => words.every((w, j) => argv[i + j] === w));

  it("masks the hidden paths inside the extra read-only directories, after binding them", () => {
    expect(at("--ro-bind", "/srv/folio", "/srv/folio")).toBeGreaterThan(0);
    expect(at("--tmpfs", "/srv/folio/.data")).toBeGreaterThan(at("--ro-bind", "/srv/folio", "/srv/folio"));
    expect(at("--ro-bind", "/dev/null", "/srv/folio/tls.key")).toBeGreaterThan(0);
  });

  it("binds a read-only path inside a writable one after it, so it stays read-only, and the other way round", () => {
    expect(at("--ro-bind", "/stage/in", "/stage/in")).toBeGreaterThan(at("--bind", "/stage", "/stage"));
    const browser = bwrapArgv({ ...scope, readable: ["/tmp/s"], writable: ["/tmp/s/profile"] }, "/usr/bin/node", [], undefined, fs);
    const find = (...w: string[]): number => browser.findIndex((_, i) => w.every((x, j) => browser[i + j] === x));
    expect(find("--bind", "/tmp/s/profile", "/tmp/s/profile")).toBeGreaterThan(find("--ro-bind", "/tmp/s", "/tmp/s"));
  });

  it("is bwrap alone; withMemoryCap puts the RLIMIT_AS in front for the engines that take one", () => {
    expect(argv[0]).toBe("bwrap");
    expect(argv).not.toContain("prlimit");
    expect(withMemoryCap(scope.memoryBytes, argv)).toEqual(["prlimit", `--as=${1 << 30}`, "--", ...argv]);
  });

  it("keeps the host's network only when asked", () => {
    expect(at("--share-net")).toBeGreaterThan(at("--unshare-all"));
    expect(bwrapArgv({ ...scope, network: undefined }, "/usr/bin/node", [], undefined, fs)).not.toContain("--share-net");
  });
});
