/**
 * The public API's route table (issue #16): every /v1 route, declared once (api/routes/route.ts).
 * The application mounts these and nothing else below /v1 (api/app.ts), and the OpenAPI document
 * describes these and nothing else (api/openapi.ts). The order is the document's.
 */
import { accessRequestRoutes } from "./access-requests.ts";
import { fileRoutes } from "./files.ts";
import { jobRoutes } from "./jobs.ts";
import { operationRoutes } from "./operation-routes.ts";
import type { Route } from "./route.ts";

export const ROUTES: readonly Route[] = [...operationRoutes, ...fileRoutes, ...jobRoutes, ...accessRequestRoutes];
