/**
 * What a public route is (issue #16): one declaration that the Express application mounts and the
 * OpenAPI document describes, so that a route served but undocumented, or documented but not
 * served, cannot be written. A route names its method and path, its documentation (operationId,
 * summary, tag), its zod schemas (path, query and header parameters, request body, responses),
 * the problem codes it answers with (core/errors.ts), and its handler. The router validates the
 * parameters and a `validate`d JSON body with the declared schemas before the handler runs, with
 * the same `422 validation_failed` field errors everywhere (api/http/problem.ts).
 *
 * The table itself is api/routes/table.ts; the document is api/openapi.ts.
 */
import { Router, type Request, type RequestHandler, type Response } from "express";
import type { z } from "zod";
import type { ApiErrorCode } from "../../core/errors.ts";
import type { Config } from "../../core/config.ts";
import type { ObjectStore } from "../../core/storage/store.ts";
import type { JobBackend } from "../jobs/backend.ts";
import type { BucketTable } from "../http/rate-limit.ts";
import type { AccessRequests } from "../store/tenant-admin.ts";
import { ApiError, fieldErrors, validationFailed } from "../http/problem.ts";

type Json = Record<string, unknown>;

/** Everything the handlers need, given once by the application (api/app.ts). */
export interface RouteDeps {
  backend: JobBackend;
  store: ObjectStore;
  config: Config;
  /** null when the URL may receive webhooks, else the reason it may not. */
  checkWebhookUrl: (url: string) => Promise<string | null>;
  accessRequests: AccessRequests;
  /** Per-client-address buckets (access requests are limited per address, not per key). */
  addressBuckets: BucketTable;
  clientAddress: (req: Request) => string;
}

/** A JSON request body: its schema, and whether the router checks it before the handler. */
export interface JsonBody<B extends z.ZodType> {
  schema: B;
  /** The component it is documented as; default: the schema's own `.meta({id})`. */
  component?: string;
  /** The body also carries the common fields (inputs, webhook_url, …) beside these options. */
  withCommonFields?: boolean;
  /**
   * The router answers anything but application/json with `415` and this detail, then a body the
   * schema refuses with `422`, before the handler runs. Without it the handler reads the body.
   */
  validate?: { unsupportedDetail: string };
}

export interface ResponseDef {
  description: string;
  /** A zod schema, documented as application/json (a reference when the schema has an id). */
  schema?: z.ZodType;
  /** Other content, as OpenAPI media types (a download's bytes). */
  content?: Json;
  headers?: Json;
}

type Shape = z.ZodObject | undefined;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What the handler is given besides the request: the validated parameters and body. */
export interface RouteInput<P extends Shape, Q extends Shape, H extends Shape, B extends z.ZodType> {
  params: Out<P>;
  query: Out<Q>;
  headers: Out<H>;
  /**
   * The validated body, for a route whose `body.json.validate` is set (undefined for the others:
   * they read `req.body` themselves, as an operation must after an Idempotency-Key replay).
   */
  body: z.output<B>;
}

export interface RouteDef<P extends Shape, Q extends Shape, H extends Shape, B extends z.ZodType> {
  method: "get" | "post" | "delete";
  /** The path as OpenAPI writes it, `/v1/files/{id}`. */
  path: `/v1/${string}`;
  operationId: string;
  summary: string;
  tag: "Operations" | "Files" | "Jobs" | "Access";
  /** false: no API key (OpenAPI `security: []`); the route is mounted before authentication. */
  auth?: false;
  params?: P;
  query?: Q;
  headers?: H;
  body?: { json?: JsonBody<B>; multipart?: Json };
  /** The successful answers, by status. */
  responses: Record<string, ResponseDef>;
  /** The problem codes it answers with, besides those of authentication (api/openapi.ts AUTHED). */
  errors: ApiErrorCode[];
  /** The `route` label of the HTTP metrics when it is not the Express path (`/v1/files/:id`); dashboards and alerts select it. */
  metricsRoute?: string;
  /** Runs before any validation (a rate limit that must count invalid requests too). */
  guard?: (deps: RouteDeps) => RequestHandler;
  handler: (deps: RouteDeps) => (req: Request, res: Response, input: RouteInput<P, Q, H, B>) => Promise<void>;
}

/** A route of the table, its parameter types erased. */
export type Route = RouteDef<Shape, Shape, Shape, z.ZodType>;

/** Declares a route, checking its handler against its own schemas. */
export function route<
  P extends Shape = undefined,
  Q extends Shape = undefined,
  H extends Shape = undefined,
  B extends z.ZodType = z.ZodUnknown,
>(def: RouteDef<P, Q, H, B>): Route {
  // The handler's input is typed from this route's own schemas; the table holds routes of all kinds.
  return def;
}

/** `/v1/files/{id}` as Express writes it below the /v1 mount point: `/files/:id`. */
export function expressPath(path: string): string {
  return path.replace(/^\/v1/, "").replace(/\{([^}]+)\}/g, ":$1");
}

function parsed<S extends Shape>(schema: S, value: unknown): Out<S> {
  if (!schema) return undefined as Out<S>;
  const got = schema.safeParse(value);
  if (!got.success) throw validationFailed(fieldErrors(got.error));
  return got.data as Out<S>;
}

/** The declared headers of a request, by their declared names (absent ones undefined). */
function headersOf(req: Request, schema: Shape): Record<string, string | undefined> {
  return Object.fromEntries(Object.keys(schema?.shape ?? {}).map((name) => [name, req.get(name)]));
}

function bodyOf(req: Request, json: JsonBody<z.ZodType> | undefined): unknown {
  if (!json?.validate) return undefined;
  if (!req.is("application/json")) throw new ApiError("unsupported_media_type", json.validate.unsupportedDetail);
  const got = json.schema.safeParse(req.body);
  if (!got.success) throw validationFailed(fieldErrors(got.error));
  return got.data;
}

/** The Express handlers of one route: its guard, the metrics label, validation, then the handler. */
function handlersOf(r: Route, deps: RouteDeps): RequestHandler[] {
  const handle = r.handler(deps);
  // The metrics name the route by this label, set here because Express has unwound req.baseUrl
  // by the time an error's answer is sent (api/app.ts reads it when the response finishes).
  const metricsRoute = r.metricsRoute ?? `/v1${expressPath(r.path)}`;
  const label: RequestHandler = (_req, res, next) => {
    res.locals.metricsRoute = metricsRoute;
    next();
  };
  const run = async (req: Request, res: Response): Promise<void> => {
    const input = {
      params: parsed(r.params, req.params),
      query: parsed(r.query, req.query),
      headers: parsed(r.headers, headersOf(req, r.headers)),
      body: bodyOf(req, r.body?.json),
    };
    await handle(req, res, input);
  };
  return [label, ...(r.guard ? [r.guard(deps)] : []), run];
}

/** The routes mounted on two routers (below /v1): those open to anyone, and those behind an API key. */
export function mountRoutes(routes: readonly Route[], deps: RouteDeps): { open: Router; authenticated: Router } {
  const open = Router();
  const authenticated = Router();
  for (const r of routes) (r.auth === false ? open : authenticated)[r.method](expressPath(r.path), ...handlersOf(r, deps));
  return { open, authenticated };
}
