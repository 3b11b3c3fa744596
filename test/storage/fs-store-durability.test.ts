/**
 * The embedded store makes a file durable before it is acknowledged (issue #10 item 17): the
 * file's bytes are fsynced before the rename that publishes it, and the directory after it.
 * strace watches the real system calls of a real process storing through FsObjectStore.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/tools.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "folio-fsync-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `code` under strace and returns the fsync/rename lines, with file descriptors as paths. */
async function traced(code: string): Promise<string[]> {
  const script = path.join(dir, `script-${Math.random().toString(36).slice(2)}.ts`);
  await writeFile(script, code);
  const log = `${script}.strace`;
  const r = spawnSync(
    "strace",
    ["-f", "-y", "-qq", "-e", "trace=fsync,fdatasync,rename,renameat,renameat2", "-o", log, process.execPath, script],
    {
      encoding: "utf8",
    },
  );
  expect(r.status, r.stderr).toBe(0);
  return (await readFile(log, "utf8")).split("\n").filter((l) => /fsync|fdatasync|rename/.test(l));
}

const store = (root: string): string =>
  `import { FsObjectStore } from ${JSON.stringify(path.join(ROOT, "core/storage/fs-store.ts"))};\nconst s = new FsObjectStore(${JSON.stringify(root)});\n`;

function order(lines: string[], a: RegExp, b: RegExp, c: RegExp): [number, number, number] {
  const at = (p: RegExp): number => lines.findIndex((l) => p.test(l));
  return [at(a), at(b), at(c)];
}

describe("FsObjectStore durability", () => {
  it("put: the bytes are fsynced before the rename, the directory after it", async () => {
    const root = path.join(dir, "put");
    const lines = await traced(
      store(root) +
        `import { Readable } from "node:stream";\nawait s.put("ten_a/file_1", Readable.from([Buffer.from("%PDF-1.7 bytes")]));\n`,
    );
    const [syncFile, rename, syncDir] = order(
      lines,
      /f(data)?sync\(\d+<[^>]*file_1\.part>/,
      /rename.*file_1\.part.*file_1/,
      /f(data)?sync\(\d+<[^>]*\/ten_a>/,
    );
    expect(syncFile, lines.join("\n")).toBeGreaterThanOrEqual(0);
    expect(rename).toBeGreaterThan(syncFile);
    expect(syncDir).toBeGreaterThan(rename);
  });

  it("putFile (a runner's output): fsynced before it is moved in, the directory after", async () => {
    const root = path.join(dir, "putfile");
    const src = path.join(dir, "output.pdf");
    await writeFile(src, "%PDF-1.7 output");
    const lines = await traced(store(root) + `await s.putFile("ten_a/file_2", ${JSON.stringify(src)});\n`);
    const [syncFile, rename, syncDir] = order(
      lines,
      /f(data)?sync\(\d+<[^>]*output\.pdf>/,
      /rename.*output\.pdf.*file_2/,
      /f(data)?sync\(\d+<[^>]*\/ten_a>/,
    );
    expect(syncFile, lines.join("\n")).toBeGreaterThanOrEqual(0);
    expect(rename).toBeGreaterThan(syncFile);
    expect(syncDir).toBeGreaterThan(rename);
  });
});
