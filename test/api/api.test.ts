/**
 * The public API over real HTTPS against a real `folio serve` (embedded mode): every endpoint,
 * the error codes of API.md, tenant isolation, idempotency and retention.
 */
import { existsSync } from "node:fs";
import { readdir, writeFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageCount, pdftotext } from "../helpers/tools.ts";
import { blob, startServer, waitForJob, type Server } from "./harness.ts";
import { textPdf } from "./fixtures.ts";

let s: Server;
let a: Uint8Array;
let b: Uint8Array;
let other: { key: string };
let free: { key: string };
const secrets: string[] = [];

async function upload(server: Server, files: [Uint8Array | string, string][], key?: string): Promise<any> {
  const form = new FormData();
  for (const [bytes, name] of files) form.append("file", blob(bytes), name);
  return server.request("POST", "/v1/files", { form, ...(key ? { key } : {}) });
}

beforeAll(async () => {
  s = await startServer({ FOLIO_RETENTION_SECONDS: "3", FOLIO_SWEEP_INTERVAL_MS: "300", FOLIO_UPLOAD_TTL_SECONDS: "3600" });
  a = await textPdf(3, "alpha");
  b = await textPdf(2, "beta");
  const t2 = await s.folio(["tenants", "create", "other", "--plan", "business", "--json"]);
  expect(t2.code, t2.stderr).toBe(0);
  other = (await s.folio(["keys", "create", "--tenant", "other", "--json"])).json;
  await s.folio(["tenants", "create", "cheap", "--plan", "free", "--json"]);
  free = (await s.folio(["keys", "create", "--tenant", "cheap", "--json"])).json;
  secrets.push(s.key, s.webhookSecret, other.key, free.key, t2.json.webhook_secret);
}, 60_000);
afterAll(async () => {
  await s?.cleanup();
});

describe("transport and auth", () => {
  it("refuses plain HTTP on the same port with 403 https_required, never serving or redirecting", async () => {
    const raw = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(s.port, "127.0.0.1", () =>
        sock.write(`GET /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\nConnection: close\r\n\r\n`),
      );
      let out = "";
      sock.on("data", (d) => (out += d.toString()));
      sock.on("end", () => resolve(out));
      sock.on("error", reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 403/);
    expect(raw).toContain('"code":"https_required"');
    expect(raw).not.toMatch(/\r\nLocation:/i);
  });

  it.each([
    ["no Authorization header", null],
    ["a malformed key", "not-a-key"],
    ["an unknown key", "folio_sk_AAAAAAAAAAAAAAAA_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"],
    ["a right key id with a wrong secret", "WRONGSECRET"],
  ])("answers %s with 401 unauthorized and WWW-Authenticate: Bearer", async (_why, key) => {
    const k = key === "WRONGSECRET" ? s.key.replace(/_[^_]+$/, "_" + "x".repeat(32)) : key;
    const res = await s.request("GET", "/v1/jobs", { key: k });
    expect(res.status).toBe(401);
    expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(res.json).toMatchObject({
      type: "https://folio.dev/problems/unauthorized",
      status: 401,
      code: "unauthorized",
      request_id: expect.any(String),
    });
  });

  it("refuses a tenant on the free plan with 403 plan_required", async () => {
    const res = await s.request("GET", "/v1/jobs", { key: free.key });
    expect(res.status).toBe(403);
    expect(res.json.code).toBe("plan_required");
    // The key's bucket applies (issue #10 item 17): the refusal says how much of it is left.
    expect(res.headers["ratelimit-policy"]).toMatch(/^"default";q=\d+;w=60$/);
    expect(res.headers["ratelimit"]).toMatch(/^"default";r=\d+;t=\d+$/);
  });

  it("echoes a sane X-Request-Id and replaces an insane one", async () => {
    const echoed = await s.request("GET", "/v1/jobs", { headers: { "X-Request-Id": "trace-123.abc" } });
    expect(echoed.headers["x-request-id"]).toBe("trace-123.abc");
    const replaced = await s.request("GET", "/v1/jobs", { headers: { "X-Request-Id": "<script>" } });
    expect(replaced.headers["x-request-id"]).toMatch(/^req_/);
    const err = await s.request("GET", "/v1/jobs/job_nope", { headers: { "X-Request-Id": "abc" } });
    expect(err.json.request_id).toBe("abc");
  });

  it("revokes a key at once and keeps a rotated key valid for the grace period", async () => {
    const k = (await s.folio(["keys", "create", "--tenant", "other", "--json"])).json;
    secrets.push(k.key);
    expect((await s.request("GET", "/v1/jobs", { key: k.key })).status).toBe(200);
    const rotated = (await s.folio(["keys", "rotate", k.key_id, "--json"])).json;
    secrets.push(rotated.key);
    expect((await s.request("GET", "/v1/jobs", { key: k.key })).status).toBe(200);
    expect((await s.request("GET", "/v1/jobs", { key: rotated.key })).status).toBe(200);
    const revoked = await s.folio(["keys", "revoke", k.key_id, "--json"]);
    expect(revoked.code).toBe(0);
    expect((await s.request("GET", "/v1/jobs", { key: k.key })).status).toBe(401);
    const list = (await s.folio(["keys", "list", "--tenant", "other", "--json"])).json;
    expect(list.find((r: any) => r.key_id === k.key_id).revoked_at).toEqual(expect.any(String));
    expect(JSON.stringify(list)).not.toContain(rotated.key.split("_").pop());
  });

  it("stores keys only as hashes: the database holds no key secret", async () => {
    const { readFileSync } = await import("node:fs");
    const db = Buffer.concat([readFileSync(path.join(s.dataDir, "folio.db")), readFileSync(path.join(s.dataDir, "folio.db-wal"))]);
    for (const key of [s.key, other.key]) {
      const secret = key.split("_").pop()!;
      expect(db.includes(Buffer.from(secret))).toBe(false);
    }
  });

  it("returns rate limit headers in the IETF draft form on every response", async () => {
    const res = await s.request("GET", "/v1/jobs");
    expect(res.headers["ratelimit-policy"]).toBe('"default";q=600;w=60');
    expect(res.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
  });
});

describe("files", () => {
  it("uploads, describes, downloads (with ETag = sha256) and deletes a file, bytes included", async () => {
    const up = await upload(s, [[a, "alpha.pdf"]]);
    expect(up.status).toBe(201);
    const [file] = up.json.data;
    expect(file).toMatchObject({ object: "file", filename: "alpha.pdf", content_type: "application/pdf", size: a.length, pages: 3 });
    expect(file.id).toMatch(/^file_[0-9A-Za-z]{24}$/);
    expect((await s.request("GET", `/v1/files/${file.id}`)).json).toEqual(file);
    const content = await s.request("GET", `/v1/files/${file.id}/content`);
    expect(content.status).toBe(200);
    expect(Buffer.compare(content.body, Buffer.from(a))).toBe(0);
    expect(content.headers.etag).toBe(`"${file.sha256}"`);
    expect(content.headers["content-length"]).toBe(String(a.length));
    expect(content.headers["content-disposition"]).toContain('filename="alpha.pdf"');
    const onDisk = path.join(s.dataDir, "files");
    const before = await listFiles(onDisk);
    expect(before.some((f) => f.endsWith(file.id))).toBe(true);
    expect((await s.request("DELETE", `/v1/files/${file.id}`)).status).toBe(204);
    expect((await s.request("GET", `/v1/files/${file.id}`)).status).toBe(404);
    expect((await listFiles(onDisk)).some((f) => f.endsWith(file.id))).toBe(false);
  });

  it("judges the content type by the bytes: a .pdf that is not a PDF is 415", async () => {
    const res = await upload(s, [["just some text", "invoice.pdf"]]);
    expect(res.status).toBe(415);
    expect(res.json.code).toBe("unsupported_media_type");
  });

  it("refuses a non-multipart upload with 415 and an empty one with 422", async () => {
    expect((await s.request("POST", "/v1/files", { json: { file: "x" } })).status).toBe(415);
    const empty = await s.request("POST", "/v1/files", { form: new FormData() });
    expect(empty.status).toBe(422);
    expect(empty.json.code).toBe("validation_failed");
  });
});

async function listFiles(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) out.push(path.join(e.parentPath, e.name));
  return out;
}

describe("operations and jobs", () => {
  it("merges inline multipart files: 202 with Location, then the job succeeds and its output downloads", async () => {
    const form = new FormData();
    form.append("file", blob(a), "alpha.pdf");
    form.append("file", blob(b), "beta.pdf");
    form.append("outline", "per_file");
    form.append("metadata[customer]", "acme");
    const res = await s.request("POST", "/v1/pdf/merge", { form });
    expect(res.status, res.text).toBe(202);
    expect(res.headers.location).toBe(`/v1/jobs/${res.json.id}`);
    expect(res.json).toMatchObject({
      object: "job",
      operation: "merge",
      status: expect.stringMatching(/queued|running/),
      options: { outline: "per_file" },
      metadata: { customer: "acme" },
      result: null,
      error: null,
    });
    const job = await waitForJob(s, res.json.id);
    expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
    expect(job.result.files).toHaveLength(1);
    const out = job.result.files[0];
    expect(out).toMatchObject({ object: "file", content_type: "application/pdf", pages: 5, download_url: `/v1/files/${out.id}/content` });
    const pdf = await s.request("GET", out.download_url);
    const file = path.join(s.dataDir, "check-merge.pdf");
    await writeFile(file, pdf.body);
    expect(await pageCount(file)).toBe(5);
    expect(await pdftotext(file)).toMatch(/alpha 1[\s\S]*alpha 3[\s\S]*beta 1[\s\S]*beta 2/);
  });

  it("takes uploaded file ids in JSON with per-input pages, and Prefer: wait answers 200 with the finished job", async () => {
    const up = (
      await upload(s, [
        [a, "alpha.pdf"],
        [b, "beta.pdf"],
      ])
    ).json.data;
    const res = await s.request("POST", "/v1/pdf/merge", {
      json: {
        inputs: [
          { file_id: up[0].id, pages: "2-last" },
          { file_id: up[1].id, pages: "1" },
        ],
        output_filename: "combined",
      },
      headers: { Prefer: "wait=30" },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.headers["preference-applied"]).toBe("wait=30");
    expect(res.json.status).toBe("succeeded");
    expect(res.json.result.files[0]).toMatchObject({ filename: "combined.pdf", pages: 3 });
    expect(res.json.inputs.map((i: any) => i.file_id)).toEqual([up[0].id, up[1].id]);
    // Inputs are deleted as soon as their job ends.
    expect((await s.request("GET", `/v1/files/${up[0].id}`)).status).toBe(404);
  });

  it.each([
    ["an unknown option", "compress", { level: "extreme" }, "level"],
    ["an extra field", "compress", { quality: 9 }, "quality"],
    ["a missing required option", "protect", {}, "user_password"],
    ["a malformed range", "split", { mode: "ranges", ranges: "9-2" }, "ranges"],
    ["a plain-http webhook", "compress", { webhook_url: "http://example.com/hook" }, "webhook_url"],
    ["a webhook to a private address", "compress", { webhook_url: "https://10.0.0.5/hook" }, "webhook_url"],
    ["too much metadata", "compress", { metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, "v"])) }, "metadata"],
    ["no inputs", "compress", {}, "inputs"],
  ])("answers %s with 422 validation_failed naming the field", async (_why, op, extra, field) => {
    const up = (await upload(s, [[a, "alpha.pdf"]])).json.data;
    const json = { ...(field === "inputs" ? {} : { inputs: [{ file_id: up[0].id }] }), ...extra };
    const res = await s.request("POST", `/v1/pdf/${op}`, { json });
    expect(res.status, res.text).toBe(422);
    expect(res.json.code).toBe("validation_failed");
    expect(res.json.errors.map((e: any) => e.path.split(".")[0])).toContain(field);
  });

  it("rejects a page range outside the document at submission when the page count is known", async () => {
    const up = (await upload(s, [[a, "alpha.pdf"]])).json.data;
    const res = await s.request("POST", "/v1/pdf/split", { json: { inputs: [{ file_id: up[0].id }], mode: "ranges", ranges: "1-2,3-9" } });
    expect(res.status).toBe(422);
    expect(res.json.errors[0]).toEqual({ path: "ranges", message: "the document has 3 pages" });
  });

  it("fails a job on a broken PDF with the job error code invalid_pdf", async () => {
    const broken = Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(400, 0x41)]);
    const up = (await upload(s, [[broken, "broken.pdf"]])).json.data;
    const res = await s.request("POST", "/v1/pdf/compress", { json: { inputs: [{ file_id: up[0].id }] }, headers: { Prefer: "wait=30" } });
    expect(res.json.status).toBe("failed");
    expect(res.json.error).toEqual({ code: "invalid_pdf", message: expect.any(String) });
  });

  it("lists jobs newest first with cursor pagination and filters", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const up = (await upload(s, [[b, "beta.pdf"]])).json.data;
      ids.push(
        (
          await s.request("POST", "/v1/pdf/split", {
            json: { inputs: [{ file_id: up[0].id }], mode: "pages" },
            headers: { Prefer: "wait=30" },
          })
        ).json.id,
      );
    }
    const first = await s.request("GET", "/v1/jobs?operation=split&limit=2");
    expect(first.json.data.map((j: any) => j.id)).toEqual([ids[2], ids[1]]);
    expect(first.json.has_more).toBe(true);
    const next = await s.request("GET", `/v1/jobs?operation=split&limit=2&starting_after=${ids[1]}`);
    expect(next.json.data[0].id).toBe(ids[0]);
    const filtered = await s.request("GET", "/v1/jobs?status=failed");
    expect(filtered.json.data.every((j: any) => j.status === "failed")).toBe(true);
    expect((await s.request("GET", "/v1/jobs?limit=101")).status).toBe(422);
    expect((await s.request("GET", "/v1/jobs?status=nope")).status).toBe(422);
  });

  it("deletes a job: 204, then its record, outputs and bytes are gone", async () => {
    const up = (await upload(s, [[a, "alpha.pdf"]])).json.data;
    const job = (
      await s.request("POST", "/v1/pdf/split", { json: { inputs: [{ file_id: up[0].id }], mode: "pages" }, headers: { Prefer: "wait=30" } })
    ).json;
    expect(job.result.files).toHaveLength(4);
    const before = await listFiles(path.join(s.dataDir, "files"));
    for (const f of job.result.files) expect(before.some((p) => p.endsWith(f.id))).toBe(true);
    expect((await s.request("DELETE", `/v1/jobs/${job.id}`)).status).toBe(204);
    expect((await s.request("GET", `/v1/jobs/${job.id}`)).status).toBe(404);
    for (const f of job.result.files) expect((await s.request("GET", `/v1/files/${f.id}`)).status).toBe(404);
    const after = await listFiles(path.join(s.dataDir, "files"));
    for (const f of job.result.files) expect(after.some((p) => p.endsWith(f.id))).toBe(false);
  });

  it("expires outputs and the job record after the retention period, removing the bytes", async () => {
    const up = (await upload(s, [[b, "beta.pdf"]])).json.data;
    const job = (
      await s.request("POST", "/v1/pdf/split", { json: { inputs: [{ file_id: up[0].id }], mode: "pages" }, headers: { Prefer: "wait=30" } })
    ).json;
    expect(job.expires_at).toEqual(expect.any(String));
    const ids = job.result.files.map((f: any) => f.id);
    // Not before expires_at (3 s), and gone once the sweeper (every 0.3 s) has passed after it.
    const expires = Date.parse(job.expires_at);
    while ((await s.request("GET", `/v1/jobs/${job.id}`)).status !== 404) {
      expect(Date.now(), "the job record outlived its expiry by 10 s").toBeLessThan(expires + 10_000);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(Date.now()).toBeGreaterThanOrEqual(expires - 1000);
    const after = await listFiles(path.join(s.dataDir, "files"));
    for (const id of ids) expect(after.some((p) => p.endsWith(id))).toBe(false);
  });

  it("answers unknown endpoints and operations with 404 not_found", async () => {
    expect((await s.request("POST", "/v1/pdf/explode", { json: {} })).json.code).toBe("not_found");
    expect((await s.request("GET", "/v1/nothing")).status).toBe(404);
  });
});

describe("tenant isolation: another tenant's ids are the same 404 as ids that never existed", () => {
  let jobId: string;
  let fileId: string;
  let outputId: string;
  beforeAll(async () => {
    const up = (
      await upload(s, [
        [a, "a.pdf"],
        [b, "b.pdf"],
      ])
    ).json.data;
    fileId = (await upload(s, [[a, "kept.pdf"]])).json.data[0].id;
    const job = (
      await s.request("POST", "/v1/pdf/merge", {
        json: { inputs: [{ file_id: up[0].id }, { file_id: up[1].id }] },
        headers: { Prefer: "wait=30" },
      })
    ).json;
    jobId = job.id;
    outputId = job.result.files[0].id;
  });

  it.each([
    ["GET", "/v1/jobs/JOB"],
    ["DELETE", "/v1/jobs/JOB"],
    ["GET", "/v1/files/FILE"],
    ["GET", "/v1/files/FILE/content"],
    ["DELETE", "/v1/files/FILE"],
    ["GET", "/v1/files/OUTPUT"],
    ["GET", "/v1/files/OUTPUT/content"],
  ])("%s %s", async (method, route) => {
    const real = route.replace("JOB", jobId).replace("FILE", fileId).replace("OUTPUT", outputId);
    const fake = route
      .replace("JOB", "job_000000000000000000000000")
      .replace("FILE", "file_000000000000000000000000")
      .replace("OUTPUT", "file_000000000000000000000001");
    const theirs = await s.request(method, real, { key: other.key });
    const missing = await s.request(method, fake, { key: other.key });
    expect(theirs.status).toBe(404);
    expect({ ...theirs.json, request_id: "" }).toEqual({ ...missing.json, request_id: "" });
    // And the owner still has it.
    expect((await s.request("GET", real.replace(/\/content$/, ""))).status).toBe(200);
  });

  it("does not let another tenant use my file ids as inputs, nor list my jobs", async () => {
    const res = await s.request("POST", "/v1/pdf/compress", { key: other.key, json: { inputs: [{ file_id: fileId }] } });
    expect(res.status).toBe(422);
    expect(res.json.errors[0].path).toBe("inputs.0.file_id");
    const list = await s.request("GET", "/v1/jobs?limit=100", { key: other.key });
    expect(list.json.data.map((j: any) => j.id)).not.toContain(jobId);
  });
});

describe("idempotency", () => {
  it("gives the same job for the same key and body, and 409 for a different body", async () => {
    const up = (await upload(s, [[a, "a.pdf"]])).json.data;
    const body = { inputs: [{ file_id: up[0].id }], level: "lossless" };
    const one = await s.request("POST", "/v1/pdf/compress", { json: body, headers: { "Idempotency-Key": "order-1" } });
    const two = await s.request("POST", "/v1/pdf/compress", { json: body, headers: { "Idempotency-Key": "order-1" } });
    expect(one.status).toBe(202);
    expect(two.json.id).toBe(one.json.id);
    expect(two.headers["idempotent-replayed"]).toBe("true");
    const conflict = await s.request("POST", "/v1/pdf/compress", {
      json: { ...body, level: "high" },
      headers: { "Idempotency-Key": "order-1" },
    });
    expect(conflict.status).toBe(409);
    expect(conflict.json.code).toBe("idempotency_conflict");
  });

  it("creates exactly one job for concurrent identical inline requests", async () => {
    const send = async (): Promise<any> => {
      const form = new FormData();
      form.append("file", blob(b), "beta.pdf");
      form.append("mode", "pages");
      return s.request("POST", "/v1/pdf/split", { form, headers: { "Idempotency-Key": "concurrent-1" } });
    };
    const answers = await Promise.all(Array.from({ length: 8 }, send));
    const ids = new Set(answers.map((r) => r.json.id));
    expect(answers.every((r) => r.status === 202)).toBe(true);
    expect(ids.size).toBe(1);
    const jobs = (await s.request("GET", "/v1/jobs?operation=split&limit=100")).json.data.filter((j: any) => ids.has(j.id));
    expect(jobs).toHaveLength(1);
  });

  it("refuses an Idempotency-Key longer than 255 characters", async () => {
    const res = await s.request("POST", "/v1/pdf/compress", { json: {}, headers: { "Idempotency-Key": "k".repeat(256) } });
    expect(res.status).toBe(422);
  });
});

describe("access requests", () => {
  const valid = {
    email: "cto@example.com",
    company: "Example GmbH",
    use_case: "batch_conversion",
    description: "Invoices",
    expected_monthly_volume: 50000,
    file_types: ["docx", "pdf"],
    needs_dpa: true,
  };

  it("accepts a valid request without a key, and an operator approves it into a business tenant with a working key", async () => {
    const res = await s.request("POST", "/v1/access_requests", { key: null, json: valid });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ id: expect.stringMatching(/^areq_/), object: "access_request", status: "pending" });
    const listed = (await s.folio(["access-requests", "list", "--json"])).json;
    expect(listed.find((r: any) => r.id === res.json.id)).toMatchObject({ email: "cto@example.com", needs_dpa: true });
    const approved = await s.folio(["access-requests", "approve", res.json.id, "--json"]);
    expect(approved.code, approved.stderr).toBe(0);
    secrets.push(approved.json.key, approved.json.webhook_secret);
    expect(approved.json).toMatchObject({ tenant: "example-gmbh", plan: "business" });
    expect((await s.request("GET", "/v1/jobs", { key: approved.json.key })).status).toBe(200);
    expect((await s.folio(["access-requests", "approve", res.json.id])).code).toBe(2);
  });

  it("validates like everything else", async () => {
    const res = await s.request("POST", "/v1/access_requests", {
      key: null,
      json: { ...valid, email: "not-an-email", use_case: "crypto" },
    });
    expect(res.status).toBe(422);
    expect(res.json.errors.map((e: any) => e.path).sort()).toEqual(["email", "use_case"]);
  });
});

describe("service endpoints", () => {
  it("serves healthz, readyz, metrics, the OpenAPI document and the docs page", async () => {
    expect((await s.request("GET", "/healthz", { key: null })).json).toEqual({ status: "ok" });
    expect((await s.request("GET", "/readyz", { key: null })).status).toBe(200);
    const metrics = (await s.request("GET", "/metrics", { key: null })).text;
    expect(metrics).toMatch(/folio_http_requests_total\{route="\/v1\/jobs\/:id",method="GET",status="\d+"\}/);
    expect(metrics).toMatch(/folio_jobs_total\{operation="merge",outcome="succeeded"\} \d+/);
    expect(metrics).not.toMatch(/job_[0-9A-Za-z]{24}|file_[0-9A-Za-z]{24}|ten_/);
    const doc = (await s.request("GET", "/v1/openapi.json", { key: null })).json;
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/v1/pdf/merge", "/v1/jobs/{id}", "/v1/files/{id}/content", "/v1/access_requests"]),
    );
    const html = (await s.request("GET", "/docs", { key: null })).text;
    expect(html).toContain("/v1/pdf/compress");
    expect(html).toContain("idempotency_conflict");
  });
});

describe("protect through the API", () => {
  it("encrypts, and the passwords appear in no job record, response or log", async () => {
    const userPw = '--Pässwörd "with" spaces-7731';
    const ownerPw = "owner-secret-5c1f0e";
    secrets.push(userPw, ownerPw);
    const up = (await upload(s, [[a, "alpha.pdf"]])).json.data;
    const res = await s.request("POST", "/v1/pdf/protect", {
      json: { inputs: [{ file_id: up[0].id }], user_password: userPw, owner_password: ownerPw, permissions: { print: "low", copy: false } },
      headers: { Prefer: "wait=30" },
    });
    expect(res.json.status, res.text).toBe("succeeded");
    expect(res.text).not.toContain(userPw);
    expect(res.json.options).toEqual({
      encryption: "aes-256",
      permissions: { print: "low", modify: true, copy: false, annotate: true, fill_forms: true, assemble: true, accessibility: true },
    });
    const file = path.join(s.dataDir, "check-protect.pdf");
    await writeFile(file, (await s.request("GET", res.json.result.files[0].download_url)).body);
    expect(await pdftotext(file, userPw)).toContain("alpha 1");
    await expect(pdftotext(file)).rejects.toThrow();
    const db = await import("node:fs").then((fs) => fs.readFileSync(path.join(s.dataDir, "folio.db")));
    expect(db.includes(Buffer.from(userPw))).toBe(false);
  });
});

describe("logs", () => {
  it("never contain a key, password or webhook secret", () => {
    const logs = s.logs();
    const lines = logs.split("\n");
    // The first-start banner prints the dev key and secret once, by design; nothing else may.
    const bannerEnd = lines.findIndex((l) => l.includes("wrote merged.pdf"));
    const after = lines.slice(bannerEnd + 1).join("\n");
    expect(after.length).toBeGreaterThan(100);
    for (const secret of secrets) expect(after).not.toContain(secret);
  });
});
