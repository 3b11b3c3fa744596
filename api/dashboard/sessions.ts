/**
 * Dashboard sessions as signed cookies, so that any API replica can check one without a shared
 * session table: the cookie carries the session id, the user, the user's session epoch, when it
 * was issued and when it was last used. A session ends when
 * - it has been idle longer than the idle timeout (the cookie is re-issued at most once a minute
 *   with a new "seen" time while it is used);
 * - it is older than the absolute timeout, however active;
 * - the user's epoch moved on ("sign out everywhere", a disabled member), or this one session was
 *   signed out (its id is remembered with the user until it would have expired anyway).
 * The CSRF token of a session is an HMAC of its id: forms carry it, and it is worthless elsewhere.
 */
import { randomBytes } from "node:crypto";
import type { Request, Response } from "express";
import type { User, UserStore } from "../store/users.ts";
import { clearCookie, readCookie, setCookie, type CookieSigner } from "./cookies.ts";

export const SESSION_COOKIE = "__Host-folio_session";
const TOUCH_EVERY_MS = 60_000;

export interface SessionClaims {
  sid: string;
  uid: string;
  ep: number;
  iat: number;
  seen: number;
  /** How the person signed in: "pwd", "pwd+totp" or "oidc". */
  amr: string;
}

export interface Session {
  claims: SessionClaims;
  user: User;
  csrf: string;
}

export interface SessionOptions {
  idleMs: number;
  absoluteMs: number;
}

export class Sessions {
  private readonly signer: CookieSigner;
  private readonly users: UserStore;
  private readonly o: SessionOptions;

  constructor(signer: CookieSigner, users: UserStore, options: SessionOptions) {
    this.signer = signer;
    this.users = users;
    this.o = options;
  }

  issue(res: Response, user: User, amr: string, now = Date.now()): void {
    const claims: SessionClaims = {
      sid: randomBytes(16).toString("base64url"),
      uid: user.id,
      ep: user.session_epoch,
      iat: now,
      seen: now,
      amr,
    };
    this.write(res, claims);
  }

  private write(res: Response, c: SessionClaims): void {
    setCookie(res, SESSION_COOKIE, this.signer.sign("session", c), Math.ceil((c.iat + this.o.absoluteMs - Date.now()) / 1000));
  }

  /** The live session of the request, or null; refreshes the cookie's idle clock when due. */
  async read(req: Request, res: Response, now = Date.now()): Promise<Session | null> {
    const c = this.signer.verify<SessionClaims>("session", readCookie(req, SESSION_COOKIE));
    if (!c || typeof c.sid !== "string" || typeof c.uid !== "string") return null;
    if (now - c.seen > this.o.idleMs || now - c.iat > this.o.absoluteMs) return null;
    const user = await this.users.byId(c.uid);
    if (!user || user.disabled_at !== null || user.session_epoch !== c.ep || (await this.users.isSessionRevoked(user.id, c.sid)))
      return null;
    if (now - c.seen > TOUCH_EVERY_MS) this.write(res, { ...c, seen: now });
    return { claims: c, user, csrf: this.signer.mac("csrf", c.sid) };
  }

  /** Signs out this session only. */
  async end(res: Response, s: Session): Promise<void> {
    await this.users.revokeSession(s.user.id, s.claims.sid, s.claims.iat + this.o.absoluteMs);
    clearCookie(res, SESSION_COOKIE);
  }

  /** Signs out every session of the user, on every replica. */
  async endAll(res: Response, s: Session): Promise<void> {
    await this.users.bumpEpoch(s.user.id);
    clearCookie(res, SESSION_COOKIE);
  }
}
