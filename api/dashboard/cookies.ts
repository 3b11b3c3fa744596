/**
 * Signed cookies. A value is base64url(JSON) "." base64url(HMAC-SHA256(key, purpose ‖ JSON)), so
 * a cookie made for one purpose (a session, a pending second factor, an OpenID Connect state) is
 * never accepted as another. Every cookie is `__Host-` prefixed: Secure, Path=/ and no Domain are
 * then enforced by the browser (RFC 6265bis §4.1.3.2), HttpOnly, and SameSite=Strict, so no other
 * site can make the browser send it.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { Request, Response } from "express";

export class CookieSigner {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length < 32) throw new Error("the dashboard's signing key must have at least 32 bytes");
    this.key = key;
  }

  mac(purpose: string, text: string): string {
    return createHmac("sha256", this.key).update(`${purpose}\n${text}`).digest("base64url");
  }

  sign(purpose: string, payload: object): string {
    const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
    return `${body}.${this.mac(purpose, body)}`;
  }

  verify<T>(purpose: string, value: string | undefined): T | null {
    if (!value) return null;
    const [body, mac] = value.split(".", 2);
    if (!body || !mac) return null;
    const want = Buffer.from(this.mac(purpose, body));
    const got = Buffer.from(mac);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return null;
    try {
      return JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as T;
    } catch {
      return null;
    }
  }
}

export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Sets a `__Host-` cookie; maxAgeSeconds undefined makes it a browser-session cookie. Only the
 * OpenID Connect state cookie is Lax: it must come back with the provider's cross-site redirect.
 */
export function setCookie(res: Response, name: string, value: string, maxAgeSeconds?: number, sameSite: "Strict" | "Lax" = "Strict"): void {
  const attrs = [`${name}=${value}`, "Path=/", "Secure", "HttpOnly", `SameSite=${sameSite}`];
  if (maxAgeSeconds !== undefined) attrs.push(`Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`);
  res.append("Set-Cookie", attrs.join("; "));
}

export function clearCookie(res: Response, name: string): void {
  setCookie(res, name, "", 0);
}
