/**
 * The route table's construction (issue #16), without a server: the Express routers mounted from
 * it hold exactly its routes, and the OpenAPI document refuses a route it could not describe
 * truthfully. The same table served for real: test/api/route-table.test.ts.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { buildOpenApi } from "../../api/openapi.ts";
import { expressPath, mountRoutes, route, type Route, type RouteDeps } from "../../api/routes/route.ts";
import { ROUTES } from "../../api/routes/table.ts";

/** Handlers are made but never run here; the access-request limit reads its rate when made. */
const deps = { config: { FOLIO_ACCESS_REQUESTS_PER_HOUR: 10 } } as unknown as RouteDeps;

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
}
const served = (router: unknown): string[] =>
  ((router as { stack: Layer[] }).stack ?? []).flatMap((l) =>
    l.route ? Object.keys(l.route.methods).map((m) => `${m.toUpperCase()} ${l.route!.path}`) : ["(not a route)"],
  );

const ok = (over: Partial<Route>): Route => ({
  method: "get",
  path: "/v1/things/{id}",
  operationId: "getThing",
  summary: "A thing.",
  tag: "Files",
  params: z.object({ id: z.string() }),
  responses: { "200": { description: "The thing." } },
  errors: ["not_found"],
  handler: () => () => Promise.resolve(),
  ...over,
});

describe("the route table", () => {
  it("is mounted route for route, nothing else: the open routes apart from those behind a key", () => {
    const { open, authenticated } = mountRoutes(ROUTES, deps);
    const want = (auth: boolean): string[] =>
      ROUTES.filter((r) => (r.auth !== false) === auth).map((r) => `${r.method.toUpperCase()} ${expressPath(r.path)}`);
    expect(served(open).sort()).toEqual(want(false).sort());
    expect(served(authenticated).sort()).toEqual(want(true).sort());
    expect(served(open)).toEqual(["POST /access_requests"]);
  });

  it("gives every operation the same metrics label, as dashboards and alerts select it", () => {
    const labels = ROUTES.filter((r) => r.path.startsWith("/v1/pdf/")).map((r) => r.metricsRoute);
    expect(labels.length).toBeGreaterThanOrEqual(7);
    expect(new Set(labels)).toEqual(new Set(["/v1/pdf/:operation"]));
  });

  it("documents a well-declared route", () => {
    const doc = buildOpenApi("t", [ok({})]) as any;
    expect(doc.paths["/v1/things/{id}"].get.parameters).toEqual([{ name: "id", in: "path", required: true, schema: { type: "string" } }]);
    expect(Object.keys(doc.paths["/v1/things/{id}"].get.responses)).toEqual(["200", "401", "403", "404", "429", "500"]);
  });

  it.each([
    ["a path parameter without a schema", [ok({ params: undefined })], /declares path parameters \[\], not \[id\]/],
    ["a schema for a parameter the path lacks", [ok({ path: "/v1/things" })], /declares path parameters \[id\], not \[\]/],
    ["a query it validates without declaring 422", [ok({ query: z.object({ q: z.string() }) })], /does not declare validation_failed/],
    [
      "a JSON body it validates without declaring 415",
      [
        ok({
          method: "post",
          body: { json: { schema: z.object({}), validate: { unsupportedDetail: "JSON." } } },
          errors: ["validation_failed"],
        }),
      ],
      /does not declare unsupported_media_type/,
    ],
    ["the same method and path twice", [ok({}), ok({ operationId: "again" })], /declared twice/],
  ])("refuses %s", (_what, routes, message) => {
    expect(() => buildOpenApi("t", routes)).toThrow(message);
  });

  it("types a handler's input from the route's own schemas", () => {
    const r = route({
      method: "get",
      path: "/v1/things",
      operationId: "listThings",
      summary: "Things.",
      tag: "Jobs",
      query: z.object({ limit: z.coerce.number() }),
      responses: { "200": { description: "Things." } },
      errors: ["validation_failed"],
      handler:
        () =>
        async (_req, res, { query }) => {
          const n: number = query.limit;
          res.json({ n });
          await Promise.resolve();
        },
    });
    expect(r.operationId).toBe("listThings");
  });
});
