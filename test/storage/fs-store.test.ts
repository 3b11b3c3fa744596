/** FsObjectStore.deletePrefix: removes one job's objects and nothing else, refuses unsafe prefixes. */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FsObjectStore } from "../../core/storage/fs-store.ts";
import { tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
let store: FsObjectStore;

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-fs-store-"));
  store = new FsObjectStore(path.join(dir, "store"));
});
afterAll(() => cleanup());

const put = (key: string): Promise<number> => store.put(key, Readable.from([Buffer.from(key)]));

describe("FsObjectStore.deletePrefix", () => {
  it("should delete every object under the prefix, nested ones too, and keep its siblings", async () => {
    for (const key of [
      "ten_a/job_1/file_x",
      "ten_a/job_1/result.json",
      "ten_a/job_1/sub/deep",
      "ten_a/job_12/file_y",
      "ten_a/job_2/file_z",
    ])
      await put(key);
    await store.deletePrefix("ten_a/job_1/");
    expect(await store.exists("ten_a/job_1/file_x")).toBe(false);
    expect(await store.exists("ten_a/job_1/sub/deep")).toBe(false);
    expect(await store.exists("ten_a/job_12/file_y")).toBe(true);
    expect(await store.exists("ten_a/job_2/file_z")).toBe(true);
    expect((await readdir(path.join(store.root, "ten_a"))).sort()).toEqual(["job_12", "job_2"]);
  });

  it("should accept a prefix with nothing under it", async () => {
    await expect(store.deletePrefix("ten_a/job_none/")).resolves.toBeUndefined();
  });

  it("should refuse prefixes that are empty, not directory-like or escape the root", async () => {
    for (const bad of ["", "/", "ten_a/job_2", "../", "ten_a/../", "/etc/", "ten_a/job_2/../../"]) {
      await expect(store.deletePrefix(bad), JSON.stringify(bad)).rejects.toThrow(/unsafe storage (prefix|key)/);
    }
    expect(await store.exists("ten_a/job_2/file_z")).toBe(true);
  });
});
