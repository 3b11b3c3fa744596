/**
 * The dashboard's response headers and its CSRF defence.
 *
 * Headers: a strict Content-Security-Policy (scripts and styles only from this origin's
 * /dashboard/assets, never inline; no plugins; forms post only here; frame-ancestors 'none'
 * against clickjacking), no caching of pages that show secrets, no referrer leaving the site.
 * HSTS is set for every response by the app.
 *
 * CSRF, on every state change (any method but GET/HEAD), two independent checks:
 * 1. the browser says the request is same-origin: `Sec-Fetch-Site` (Fetch Metadata), else an
 *    `Origin` equal to this host — a cross-site form post fails here even before the cookie
 *    question (SameSite=Strict cookies are not sent with it either);
 * 2. a token: for a signed-in person the HMAC of the session id, for the sign-in and invite forms
 *    a double-submit token bound to a random `__Host-` cookie.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import { readCookie, setCookie, type CookieSigner } from "./cookies.ts";

export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

export function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader("Content-Security-Policy", CSP);
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Referrer-Policy", "same-origin");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
  res.setHeader("Cross-Origin-Resource-Policy", "same-origin");
  res.setHeader("Permissions-Policy", "camera=(), microphone=(), geolocation=()");
  res.setHeader("Cache-Control", "no-store");
  next();
}

const ANON_COOKIE = "__Host-folio_csrf";

/** The anonymous CSRF token of this browser (setting its cookie when it has none). */
export function anonymousCsrf(req: Request, res: Response, signer: CookieSigner): string {
  let seed = readCookie(req, ANON_COOKIE);
  if (!seed || !/^[A-Za-z0-9_-]{22,64}$/.test(seed)) {
    seed = randomBytes(18).toString("base64url");
    setCookie(res, ANON_COOKIE, seed);
    // The same request may render a form: let it see the new seed.
    req.headers.cookie = `${req.headers.cookie ? req.headers.cookie + "; " : ""}${ANON_COOKIE}=${seed}`;
  }
  return signer.mac("anon-csrf", seed);
}

/** Whether the browser marks the request as coming from this origin (check 1 above). */
export function sameOrigin(req: Request): boolean {
  const site = req.get("Sec-Fetch-Site");
  if (site) return site === "same-origin";
  const origin = req.get("Origin");
  if (origin) return origin === `https://${req.get("Host") ?? ""}`;
  // No Fetch Metadata and no Origin: not a browser of the last decade; the token still decides.
  return true;
}

export function tokenMatches(expected: string, given: unknown): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
