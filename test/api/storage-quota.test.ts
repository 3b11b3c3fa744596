/**
 * The per-tenant storage quota (issue #10 item 15): uploads plus unexpired outputs stay within
 * FOLIO_MAX_STORED_BYTES, refusals are `413 storage_quota_exceeded` with nothing left on disk, and
 * one tenant's usage never limits another's.
 */
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { PDFDocument, PDFName } from "pdf-lib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blob, startServer, type Server } from "./harness.ts";

const QUOTA = 200_000;
let s: Server;
let other: { key: string };

beforeAll(async () => {
  s = await startServer({ FOLIO_MAX_STORED_BYTES: String(QUOTA) });
  expect((await s.folio(["tenants", "create", "neighbour", "--plan", "business", "--json"])).code).toBe(0);
  other = (await s.folio(["keys", "create", "--tenant", "neighbour", "--json"])).json;
}, 60_000);
afterAll(async () => {
  await s?.cleanup();
});

/** A PDF whose pages each carry `perPage` incompressible bytes (a stream the page refers to). */
async function padded(pages: number, perPage: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  for (let i = 0; i < pages; i++) {
    const page = doc.addPage([100, 100]);
    const pad = doc.context.register(doc.context.stream(randomBytes(perPage)));
    page.node.set(PDFName.of("FolioPad"), pad);
  }
  return Buffer.from(await doc.save());
}

async function upload(bytes: number, key?: string, pages = 1) {
  const form = new FormData();
  form.append("file", blob(await padded(pages, Math.floor(bytes / pages)), "application/pdf"), "pad.pdf");
  return s.request("POST", "/v1/files", { form, ...(key ? { key } : {}) });
}

async function storedOnDisk(): Promise<number> {
  let n = 0;
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else n += (await stat(p)).size;
    }
  };
  await walk(path.join(s.dataDir, "files"));
  return n;
}

describe("storage quota", () => {
  const ids: string[] = [];

  it("accepts uploads up to the quota, then answers 413 storage_quota_exceeded and keeps nothing", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await upload(60_000);
      expect(res.status, res.text).toBe(201);
      ids.push(res.json.data[0].id);
    }
    const before = await storedOnDisk();
    // 180,000 stored; 60,000 more would pass 200,000: refused while it streams.
    const res = await upload(60_000);
    expect(res.status, res.text).toBe(413);
    expect(res.json.code).toBe("storage_quota_exceeded");
    expect(res.json.detail).toMatch(/storage/);
    expect(await storedOnDisk()).toBe(before);
    // A file that fits still fits.
    const small = await upload(10_000);
    expect(small.status, small.text).toBe(201);
    ids.push(small.json.data[0].id);
  });

  it("another tenant's uploads are not limited by this tenant's usage", async () => {
    const res = await upload(150_000, other.key);
    expect(res.status, res.text).toBe(201);
  });

  it("outputs count too: a tenant taken over its quota by a job's outputs cannot upload or start jobs until it deletes its way back", async () => {
    const heavy = (await s.folio(["tenants", "create", "heavy", "--plan", "business", "--json"])).code;
    expect(heavy).toBe(0);
    const key = (await s.folio(["keys", "create", "--tenant", "heavy", "--json"])).json.key as string;
    const p = await upload(90_000, key, 2);
    const q = await upload(90_000, key, 1);
    expect([p.status, q.status]).toEqual([201, 201]);
    // Split into pages: two page files plus a zip of both, about twice the input.
    const split = await s.request("POST", "/v1/pdf/split", {
      key,
      json: { inputs: [{ file_id: p.json.data[0].id }], mode: "pages" },
      headers: { Prefer: "wait=60" },
    });
    expect(split.json.status, split.text).toBe("succeeded");
    const outputs = (split.json.result.files as { size: number }[]).reduce((n, f) => n + f.size, 0);
    expect(q.json.data[0].size + outputs).toBeGreaterThan(QUOTA);
    const job = await s.request("POST", "/v1/pdf/compress", { key, json: { inputs: [{ file_id: q.json.data[0].id }] } });
    expect(job.status, job.text).toBe(413);
    expect(job.json.code).toBe("storage_quota_exceeded");
    expect((await upload(1_000, key)).status).toBe(413);
    // Deleting the split frees its outputs: the stored file can be processed again.
    expect((await s.request("DELETE", `/v1/jobs/${split.json.id}`, { key })).status).toBe(204);
    const again = await s.request("POST", "/v1/pdf/compress", { key, json: { inputs: [{ file_id: q.json.data[0].id }] } });
    expect(again.status, again.text).toBe(202);
  });

  it("deleting a file gives its bytes back to the quota", async () => {
    expect((await upload(30_000)).status).toBe(413);
    expect((await s.request("DELETE", `/v1/files/${ids[0]}`)).status).toBe(204);
    expect((await upload(30_000)).status).toBe(201);
  });
});
