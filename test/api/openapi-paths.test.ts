/**
 * Every path and method of the served OpenAPI document, asked of a real `folio serve` (issue #16):
 * each answers with a status the document declares for it (problems as application/problem+json
 * with a code of the catalogue), refuses an anonymous caller where it declares bearer security,
 * refuses an empty body where it takes one, and answers 405 with exactly the document's methods in
 * `Allow` for any other method. A walk through the happy path then uses each path once for real.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blob, startServer, waitForJob, type Server, type HttpResponse } from "./harness.ts";
import { textPdf } from "./fixtures.ts";

interface Operation {
  responses: Record<string, unknown>;
  security?: unknown[];
}
type Doc = { paths: Record<string, Record<string, Operation>>; security?: unknown[]; components: { schemas: Record<string, any> } };

let s: Server;
let doc: Doc;
let pdf: Uint8Array;

beforeAll(async () => {
  s = await startServer();
  doc = (await s.request("GET", "/v1/openapi.json", { key: null })).json as Doc;
  pdf = await textPdf(2, "openapi");
});

afterAll(async () => {
  await s?.cleanup();
});

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
/** A well-formed id of the kind a path takes, that no object has. */
const absentId = (p: string): string => (p.startsWith("/v1/files") ? `file_${"Z".repeat(24)}` : `job_${"Z".repeat(24)}`);
const concrete = (p: string): string => p.replace("{id}", absentId(p));
const operations = (): [string, string, Operation][] =>
  Object.entries(doc.paths).flatMap(([p, ms]) => Object.entries(ms).map(([m, o]) => [p, m, o] as [string, string, Operation]));

/** The response is one the document declares for the operation; a problem is a problem. */
function declared(res: HttpResponse, p: string, m: string): void {
  const op = doc.paths[p]![m]!;
  expect(Object.keys(op.responses), `${m.toUpperCase()} ${p} answered ${res.status}: ${res.text}`).toContain(String(res.status));
  if (res.status >= 400) {
    expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
    expect(doc.components.schemas.Problem.properties.code.enum).toContain(res.json.code);
  }
}

describe("the OpenAPI document, path by path", () => {
  it("lists the paths the API serves", () => {
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        "/v1/access_requests",
        "/v1/files",
        "/v1/files/{id}",
        "/v1/files/{id}/content",
        "/v1/jobs",
        "/v1/jobs/{id}",
        ...["compress", "convert", "edit", "merge", "ocr", "protect", "split"].map((op) => `/v1/pdf/${op}`),
      ].sort(),
    );
  });

  it("refuses an anonymous caller with 401 wherever bearer security applies", async () => {
    for (const [p, m, op] of operations()) {
      const res = await s.request(m.toUpperCase(), concrete(p), { key: null, ...(m === "post" ? { json: {} } : {}) });
      declared(res, p, m);
      const open = Array.isArray(op.security) && op.security.length === 0;
      if (open) expect(res.status, `${m} ${p}`).not.toBe(401);
      else expect(res.status, `${m} ${p}`).toBe(401);
    }
  });

  it("answers a malformed request with a declared 4xx: an empty body 422, an absent object 404, a list 200", async () => {
    for (const [p, m] of operations()) {
      const res =
        p === "/v1/files" && m === "post"
          ? await s.request("POST", p, { form: new FormData() })
          : await s.request(m.toUpperCase(), concrete(p), m === "post" ? { json: {} } : {});
      declared(res, p, m);
      if (m === "post") expect([res.status, res.json.code], p).toEqual([422, "validation_failed"]);
      else if (p.includes("{id}")) expect([res.status, res.json.code], `${m} ${p}`).toEqual([404, "not_found"]);
      else expect(res.status, `${m} ${p}`).toBe(200);
    }
  });

  it("answers 405 with the document's methods in Allow for every other method", async () => {
    for (const [p, ms] of Object.entries(doc.paths)) {
      const documented = Object.keys(ms);
      for (const m of METHODS.filter((x) => !documented.includes(x))) {
        const res = await s.request(m.toUpperCase(), concrete(p), m === "post" || m === "put" || m === "patch" ? { json: {} } : {});
        expect(res.status, `${m} ${p}`).toBe(405);
        expect(res.json.code).toBe("method_not_allowed");
        const allow = String(res.headers["allow"])
          .split(",")
          .map((x) => x.trim().toLowerCase())
          .filter((x) => x !== "head" && x !== "options");
        expect(allow.sort(), `${m} ${p}`).toEqual([...documented].sort());
      }
    }
  });

  it("walks the happy path once through every file and job path", async () => {
    const form = new FormData();
    form.append("file", blob(pdf), "walk.pdf");
    const up = await s.request("POST", "/v1/files", { form });
    declared(up, "/v1/files", "post");
    expect(up.status).toBe(201);
    const file = up.json.data[0];

    const meta = await s.request("GET", `/v1/files/${file.id}`);
    declared(meta, "/v1/files/{id}", "get");
    expect(meta.json).toMatchObject({ id: file.id, object: "file", content_type: "application/pdf" });
    const content = await s.request("GET", `/v1/files/${file.id}/content`);
    declared(content, "/v1/files/{id}/content", "get");
    expect(Buffer.from(content.body).equals(Buffer.from(pdf))).toBe(true);
    const again = await s.request("GET", `/v1/files/${file.id}/content`, { headers: { "If-None-Match": String(content.headers.etag) } });
    declared(again, "/v1/files/{id}/content", "get");
    expect(again.status).toBe(304);

    const job = await s.request("POST", "/v1/pdf/compress", { json: { inputs: [{ file_id: file.id }], level: "lossless" } });
    declared(job, "/v1/pdf/compress", "post");
    expect([200, 202]).toContain(job.status);
    expect((await waitForJob(s, job.json.id)).status).toBe("succeeded");
    const got = await s.request("GET", `/v1/jobs/${job.json.id}`);
    declared(got, "/v1/jobs/{id}", "get");
    const list = await s.request("GET", "/v1/jobs?operation=compress&limit=5");
    declared(list, "/v1/jobs", "get");
    expect(list.json.data.map((j: { id: string }) => j.id)).toContain(job.json.id);
    const deleted = await s.request("DELETE", `/v1/jobs/${job.json.id}`);
    declared(deleted, "/v1/jobs/{id}", "delete");
    expect(deleted.status).toBe(204);
    expect((await s.request("GET", `/v1/jobs/${job.json.id}`)).status).toBe(404);

    const other = new FormData();
    other.append("file", blob(pdf), "other.pdf");
    const second = (await s.request("POST", "/v1/files", { form: other })).json.data[0];
    const gone = await s.request("DELETE", `/v1/files/${second.id}`);
    declared(gone, "/v1/files/{id}", "delete");
    expect(gone.status).toBe(204);
    expect((await s.request("GET", `/v1/files/${second.id}`)).status).toBe(404);

    const access = await s.request("POST", "/v1/access_requests", {
      key: null,
      json: {
        email: "walk@example.test",
        company: "Walkers",
        use_case: "other",
        description: "Every path of the OpenAPI document, once.",
        expected_monthly_volume: 10,
        file_types: ["pdf"],
        needs_dpa: false,
      },
    });
    declared(access, "/v1/access_requests", "post");
    expect(access.status, access.text).toBe(202);
  });
});
