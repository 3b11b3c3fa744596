/**
 * The public API's route table (issue #16): every /v1 route, declared once (api/routes/route.ts).
 * The application mounts these below /v1 (api/app.ts; besides them only the service endpoint
 * /v1/openapi.json and the 404 of an operation that does not exist), and the OpenAPI document
 * describes these and nothing else (api/openapi.ts). The order is the document's.
 */
import { accessRequestRoutes } from "./access-requests.ts";
import { fileRoutes } from "./files.ts";
import { jobRoutes } from "./jobs.ts";
import { operationRoutes } from "./operation-routes.ts";
import type { Route } from "./route.ts";

export const ROUTES: readonly Route[] = [...operationRoutes, ...fileRoutes, ...jobRoutes, ...accessRequestRoutes];
