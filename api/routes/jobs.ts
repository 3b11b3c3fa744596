/** /v1/jobs: get, list (newest first, cursor pagination) and delete = cancel + purge (API.md "Jobs"). */
import { Router } from "express";
import { JobListQuery } from "../../core/schemas/api.ts";
import type { JobBackend } from "../jobs/backend.ts";
import { auth } from "../http/auth.ts";
import { ApiError, fieldErrors, validationFailed } from "../http/problem.ts";

export function jobsRouter(backend: JobBackend): Router {
  const r = Router();

  r.get("/jobs", async (req, res) => {
    const q = JobListQuery.safeParse(req.query);
    if (!q.success) throw validationFailed(fieldErrors(q.error));
    const { limit, status, operation, starting_after } = q.data;
    res.json(
      await backend.listJobs(auth(res).tenant.id, {
        limit,
        ...(status ? { status } : {}),
        ...(operation ? { operation } : {}),
        ...(starting_after ? { startingAfter: starting_after } : {}),
      }),
    );
  });

  r.get("/jobs/:id", async (req, res) => {
    const job = await backend.getJob(auth(res).tenant.id, req.params.id);
    if (!job) throw new ApiError("not_found", "No such job.");
    res.json(job);
  });

  r.delete("/jobs/:id", async (req, res) => {
    if (!(await backend.deleteJob(auth(res).tenant.id, req.params.id))) throw new ApiError("not_found", "No such job.");
    res.status(204).end();
  });

  return r;
}
