/**
 * The job's shared bubblewrap sandbox (runner/engines/job-sandbox.ts), driven directly with real
 * bwrap: what a command prints comes back whole, bounded by `maxOutput`, and separately for
 * stdout and stderr, whatever the bound (a 64 MiB bound must not mean 64 MiB buffers).
 */
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.ts";
import { sandboxPolicy } from "../../core/sandbox.ts";
import { JobSandbox, SandboxAborted } from "../../runner/engines/job-sandbox.ts";

describe("JobSandbox", () => {
  let dir: string;
  let box: JobSandbox;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "folio-job-sandbox-"));
    const work = path.join(dir, "work");
    await mkdir(work);
    box = new JobSandbox({ ...sandboxPolicy(loadConfig({ FOLIO_SANDBOX: "bwrap" })), readable: [], writable: [work] });
  });

  afterAll(async () => {
    await box.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("returns stdout, stderr and the exit status of each command", async () => {
    const res = await box.run("sh", ["-c", "printf 'out put'; printf 'err' >&2; exit 3"], { maxOutput: 64 * 1024 * 1024 });
    expect(res).toEqual({ code: 3, stdout: "out put", stderr: "err" });
  });

  it("returns empty strings for a command that prints nothing", async () => {
    expect(await box.run("true", [], { maxOutput: 1024 })).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  it("keeps at most maxOutput bytes of a longer output", async () => {
    const res = await box.run("sh", ["-c", "head -c 3000000 /dev/zero | tr '\\0' x"], { maxOutput: 1024 * 1024 });
    expect(res.code).toBe(0);
    expect(res.stdout).toHaveLength(1024 * 1024);
    expect(res.stdout).toMatch(/^x+$/);
  });

  it("fails the commands in it when killed, and runs the next command in a new sandbox", async () => {
    const running = box.run("sleep", ["30"], { maxOutput: 100 });
    await new Promise((r) => setTimeout(r, 200));
    box.kill();
    // Sent at once, before the killed sandbox has been reaped: it must not land in it.
    const next = box.run("echo", ["after"], { maxOutput: 100 });
    await expect(running).rejects.toBeInstanceOf(SandboxAborted);
    expect(await next).toEqual({ code: 0, stdout: "after\n", stderr: "" });
  });

  it("runs commands side by side in the same sandbox", async () => {
    const [a, b] = await Promise.all([
      box.run("sh", ["-c", "sleep 0.2; echo a"], { maxOutput: 100 }),
      box.run("sh", ["-c", "echo b"], { maxOutput: 100 }),
    ]);
    expect([a.stdout, b.stdout]).toEqual(["a\n", "b\n"]);
  });

  it("stops every engine still running when closed, and starts no sandbox for a command sent afterwards", async () => {
    // A job that failed on one input while another input's engine still runs: closing must leave
    // nothing writing into the work directory, which is removed right after.
    // A directory of its own on each try: a retry must not meet the first try's files.
    const work = await mkdtemp(path.join(dir, "closing-"));
    const closing = new JobSandbox({ ...sandboxPolicy(loadConfig({ FOLIO_SANDBOX: "bwrap" })), readable: [], writable: [work] });
    const writer = closing.run("sh", ["-c", `i=0; while :; do : > ${work}/f$i; i=$((i+1)); done`], { maxOutput: 100 });
    const settled = writer.then(
      () => "resolved",
      (e: unknown) => e,
    );
    while ((await readdir(work)).length < 20) await new Promise((r) => setTimeout(r, 20));
    await closing.close();
    expect(await settled).toBeInstanceOf(SandboxAborted);
    const after = (await readdir(work)).length;
    await new Promise((r) => setTimeout(r, 300));
    expect((await readdir(work)).length).toBe(after);
    expect(existsSync(path.join(work, ".engines"))).toBe(false);
    await expect(closing.run("echo", ["late"], { maxOutput: 100 })).rejects.toBeInstanceOf(SandboxAborted);
    expect(existsSync(path.join(work, ".engines"))).toBe(false);
  });
});
