/** /v1/jobs: get, list (newest first, cursor pagination) and delete = cancel + purge (API.md "Jobs"). */
import { z } from "zod";
import { JobList, JobListQuery, JobObject } from "../../core/schemas/api.ts";
import { auth } from "../http/auth.ts";
import { ApiError } from "../http/problem.ts";
import { route, type Route } from "./route.ts";

const JobId = z.object({ id: z.string().meta({ description: "The job id." }) });

export const jobRoutes: Route[] = [
  route({
    method: "get",
    path: "/v1/jobs",
    operationId: "listJobs",
    tag: "Jobs",
    summary: "Your jobs, newest first.",
    query: JobListQuery,
    responses: { "200": { description: "A page of jobs.", schema: JobList } },
    errors: ["validation_failed"],
    handler:
      ({ backend }) =>
      async (_req, res, { query }) => {
        const { limit, status, operation, starting_after } = query;
        res.json(
          await backend.listJobs(auth(res).tenant.id, {
            limit,
            ...(status ? { status } : {}),
            ...(operation ? { operation } : {}),
            ...(starting_after ? { startingAfter: starting_after } : {}),
          }),
        );
      },
  }),
  route({
    method: "get",
    path: "/v1/jobs/{id}",
    operationId: "getJob",
    tag: "Jobs",
    summary: "A job.",
    params: JobId,
    responses: { "200": { description: "The job.", schema: JobObject } },
    errors: ["not_found"],
    handler:
      ({ backend }) =>
      async (_req, res, { params }) => {
        const job = await backend.getJob(auth(res).tenant.id, params.id);
        if (!job) throw new ApiError("not_found", "No such job.");
        res.json(job);
      },
  }),
  route({
    method: "delete",
    path: "/v1/jobs/{id}",
    operationId: "deleteJob",
    tag: "Jobs",
    summary: "Cancel a queued or running job, then delete its inputs, outputs and record at once.",
    params: JobId,
    responses: { "204": { description: "Deleted." } },
    errors: ["not_found"],
    handler:
      ({ backend }) =>
      async (_req, res, { params }) => {
        if (!(await backend.deleteJob(auth(res).tenant.id, params.id))) throw new ApiError("not_found", "No such job.");
        res.status(204).end();
      },
  }),
];
