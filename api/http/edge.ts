/**
 * The first middlewares every request meets: a request id, HTTPS enforcement, and the
 * versioning headers. Cheap and without I/O.
 */
import type { NextFunction, Request, Response } from "express";
import { randomBase62 } from "../../core/ids.ts";
import { ApiError, sendProblem } from "./problem.ts";

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a sane client X-Request-Id, else makes one (API.md "Transport"). */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.get("X-Request-Id");
  const id = given && SANE_REQUEST_ID.test(given) ? given : `req_${randomBase62(20)}`;
  res.locals.requestId = id;
  res.setHeader("X-Request-Id", id);
  next();
}

/**
 * Plain HTTP is refused with 403 https_required and never served or redirected. A request is
 * plain when it reached us over a non-TLS socket, or when a trusted proxy says so with
 * X-Forwarded-Proto: http (only trusted proxies' headers count).
 */
export function httpsOnly(trustProxy: (addr: string | undefined) => boolean) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
    const forwarded = trustProxy(req.socket.remoteAddress) ? req.get("X-Forwarded-Proto")?.split(",")[0]?.trim().toLowerCase() : undefined;
    const https = forwarded ? forwarded === "https" : encrypted;
    if (https) return next();
    sendProblem(
      res,
      new ApiError("https_required", "Folio only answers over HTTPS; this request came over plain HTTP and was not processed."),
    );
  };
}
