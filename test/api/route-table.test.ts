/**
 * The route table (api/routes/table.ts, issue #16) against a real `folio serve`: every route of the
 * table is documented with exactly its method and path, and is served by its own Express route
 * (the metrics name its route template, for error answers too); and wherever a
 * route declares a schema for its query, headers or body, the server refuses exactly what that
 * schema refuses, with the schema's own field errors, and lets through what it accepts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import { fieldErrors } from "../../api/http/problem.ts";
import { expressPath } from "../../api/routes/route.ts";
import { ROUTES } from "../../api/routes/table.ts";
import { startServer, type HttpResponse, type Server } from "./harness.ts";

let s: Server;

beforeAll(async () => {
  // Enough access requests for the rows below (each one, valid or not, counts against the address).
  s = await startServer({ FOLIO_ACCESS_REQUESTS_PER_HOUR: "100" });
});

afterAll(async () => {
  await s?.cleanup();
});

const absentId = (p: string): string => (p.startsWith("/v1/files") ? `file_${"Z".repeat(24)}` : `job_${"Z".repeat(24)}`);
const concrete = (p: string): string => p.replace("{id}", absentId(p));
const find = (method: string, path: string) => ROUTES.find((r) => r.method === method && r.path === path)!;

describe("the route table", () => {
  it("is what the OpenAPI document describes, method for method", async () => {
    const doc = (await s.request("GET", "/v1/openapi.json", { key: null })).json;
    const documented = Object.entries(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap(([p, ms]) =>
      Object.entries(ms).map(([m, op]) => `${m.toUpperCase()} ${p} ${op.operationId}`),
    );
    expect(documented.sort()).toEqual(ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path} ${r.operationId}`).sort());
  });

  it("is served route by route: each request reaches its own Express route, never the fallback", async () => {
    for (const r of ROUTES) {
      const res = await s.request(r.method.toUpperCase(), concrete(r.path), r.method === "post" ? { json: {} } : {});
      expect(res.status, `${r.method} ${r.path}`).not.toBe(405);
      if (res.status === 404) expect(res.json.detail, `${r.method} ${r.path}`).not.toBe("No such endpoint.");
    }
    const metrics = (await s.request("GET", "/metrics", { key: null })).text;
    for (const r of ROUTES) {
      const label = r.metricsRoute ?? `/v1${expressPath(r.path)}`;
      expect(metrics, `${r.method} ${r.path}`).toContain(`route="${label}",method="${r.method.toUpperCase()}"`);
    }
  });

  it("still answers an operation that does not exist with a 404 that lists the operations", async () => {
    const res = await s.request("POST", "/v1/pdf/shrink", { json: {} });
    expect([res.status, res.json.code]).toEqual([404, "not_found"]);
    expect(res.json.detail).toMatch(/^No operation "shrink"; use compress, merge/);
  });
});

interface Row {
  sentence: string;
  route: [string, string];
  /** What the declared schema is given, and how the request carries it. */
  where: "query" | "headers" | "body";
  value: Record<string, unknown>;
  valid: boolean;
}

const validAccess = {
  email: "a@example.test",
  company: "Acme",
  use_case: "other",
  description: "Routes.",
  expected_monthly_volume: 5,
  file_types: ["pdf"],
  needs_dpa: false,
};

const ROWS: Row[] = [
  { sentence: "a list with no query at all", route: ["get", "/v1/jobs"], where: "query", value: {}, valid: true },
  { sentence: "a list of 100, the most a page holds", route: ["get", "/v1/jobs"], where: "query", value: { limit: "100" }, valid: true },
  { sentence: "a list of 101", route: ["get", "/v1/jobs"], where: "query", value: { limit: "101" }, valid: false },
  { sentence: "a list of none", route: ["get", "/v1/jobs"], where: "query", value: { limit: "0" }, valid: false },
  { sentence: "a status that does not exist", route: ["get", "/v1/jobs"], where: "query", value: { status: "done" }, valid: false },
  { sentence: "an unknown query parameter", route: ["get", "/v1/jobs"], where: "query", value: { sort: "asc" }, valid: false },
  {
    sentence: "a cursor longer than any job id",
    route: ["get", "/v1/jobs"],
    where: "query",
    value: { starting_after: "job_".padEnd(65, "x") },
    valid: false,
  },
  {
    sentence: "an Idempotency-Key of visible ASCII",
    route: ["post", "/v1/pdf/compress"],
    where: "headers",
    value: { "Idempotency-Key": "retry-7" },
    valid: true,
  },
  {
    sentence: "an Idempotency-Key with a space",
    route: ["post", "/v1/pdf/merge"],
    where: "headers",
    value: { "Idempotency-Key": "retry 7" },
    valid: false,
  },
  {
    sentence: "an Idempotency-Key of 256 characters",
    route: ["post", "/v1/pdf/split"],
    where: "headers",
    value: { "Idempotency-Key": "k".repeat(256) },
    valid: false,
  },
  { sentence: "a complete access request", route: ["post", "/v1/access_requests"], where: "body", value: validAccess, valid: true },
  {
    sentence: "an access request with a bad email and an unknown use case",
    route: ["post", "/v1/access_requests"],
    where: "body",
    value: { ...validAccess, email: "nope", use_case: "crypto" },
    valid: false,
  },
  {
    sentence: "an access request with a field the schema does not know",
    route: ["post", "/v1/access_requests"],
    where: "body",
    value: { ...validAccess, referrer: "ads" },
    valid: false,
  },
  { sentence: "an empty access request", route: ["post", "/v1/access_requests"], where: "body", value: {}, valid: false },
];

function send([method, path]: [string, string], where: Row["where"], value: Record<string, unknown>): Promise<HttpResponse> {
  const anonymous = find(method, path).auth === false ? { key: null } : {};
  if (where === "query")
    return s.request(method.toUpperCase(), `${path}?${new URLSearchParams(value as Record<string, string>).toString()}`, anonymous);
  if (where === "headers")
    return s.request(method.toUpperCase(), path, { ...anonymous, headers: value as Record<string, string>, json: {} });
  return s.request(method.toUpperCase(), path, { ...anonymous, json: value });
}

describe("the router refuses what the route's schema refuses, and nothing else", () => {
  it.each(ROWS)("$sentence", async ({ route: [method, path], where, value, valid }) => {
    const r = find(method, path);
    const schema = (where === "body" ? r.body?.json?.schema : r[where]) as z.ZodType;
    const checked = schema.safeParse(value);
    expect(checked.success, "the schema's verdict").toBe(valid);

    const res = await send([method, path], where, value);
    if (!checked.success) {
      expect([res.status, res.json.code], res.text).toEqual([422, "validation_failed"]);
      expect(res.json.errors).toEqual(fieldErrors(checked.error));
    } else {
      // Accepted by the schema: whatever else the request lacks, nothing is said about these fields.
      const fields = Object.keys(value);
      const blamed = res.status === 422 ? (res.json.errors as { path: string }[]).map((e) => e.path.split(".")[0]) : [];
      expect(
        blamed.filter((p) => fields.includes(p!)),
        res.text,
      ).toEqual([]);
      expect(res.status, res.text).toBeLessThan(500);
    }
  });
});
