/** What the dashboard is built from, and the request context its pages share. */
import type { Request, Response } from "express";
import type { Config } from "../../core/config.ts";
import type { Logger } from "../../core/logger.ts";
import type { PlanLimits } from "../../core/plans.ts";
import type { BucketPolicy, TakeResult } from "../http/rate-limit.ts";
import type { JobBackend } from "../jobs/backend.ts";
import type { AuditLog } from "../store/audit.ts";
import type { KeyLabels } from "../store/key-labels.ts";
import type { UsageStore } from "../store/usage.ts";
import type { UserStore } from "../store/users.ts";
import type { WebhookAttempts } from "../store/webhook-attempts.ts";
import type { CookieSigner } from "./cookies.ts";
import type { Mailer } from "./mail.ts";
import type { OidcSignIn } from "./oidc.ts";
import type { Session, Sessions } from "./sessions.ts";
import type { DashboardAccessRequests, DashboardTenants, TenantSummary } from "./tenants-port.ts";
import type { Throttle } from "./throttle.ts";

/** The service's state for the operators' health page. */
export interface ServiceHealth {
  queued: number;
  running: number;
  /** Embedded: runner workers busy / all; Kubernetes: runner pods not yet finished. */
  engines: { busy: number; size: number } | null;
  webhookBacklog: number | null;
  ready: boolean;
}

export interface DashboardStores {
  users: UserStore;
  audit: AuditLog;
  usage: UsageStore;
  keyLabels: KeyLabels;
  /** Embedded mode's webhook attempt log; null where the controller delivers (Kubernetes). */
  attempts: WebhookAttempts | null;
}

export interface DashboardDeps {
  config: Config;
  log: Logger;
  backend: JobBackend;
  tenants: DashboardTenants;
  accessRequests: DashboardAccessRequests;
  stores: DashboardStores;
  /** Key for session cookies and CSRF tokens (≥ 32 bytes), the same on every replica. */
  signingKey: Buffer;
  /** The public base URL of this installation (links in invites). */
  publicUrl: string;
  health: () => Promise<ServiceHealth>;
  /** The current token bucket of an API key, without taking from it. */
  rateLimitState?: (keyId: string, policy: BucketPolicy) => TakeResult | null;
  mailer: Mailer | null;
  oidc: OidcSignIn | null;
  /** Sends one signed test event to a tenant's URL (Webhooks page). */
  sendTestWebhook: (tenant: TenantSummary, url: string) => Promise<{ status: number | null; latencyMs: number; error: string | null }>;
  /** Counts the tenant's newly ended jobs into the usage aggregates (before a Usage page). */
  collectUsage?: (tenantId: string) => Promise<number>;
}

export interface Ctx {
  d: DashboardDeps;
  signer: CookieSigner;
  sessions: Sessions;
  throttle: Throttle;
  planLimits: (plan: string) => PlanLimits;
}

export type { Session };

/** The session of a request that passed requireSession. */
export const session = (res: Response): Session => res.locals.session as Session;

/** The client's address: the socket's, or the first X-Forwarded-For hop when a trusted proxy sent it. */
export function clientAddress(req: Request, trustProxy: string): string {
  const peer = req.socket.remoteAddress?.replace(/^::ffff:/, "");
  const trusted = trustProxy
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const fwd = peer && trusted.includes(peer) ? req.get("X-Forwarded-For")?.split(",")[0]?.trim() : undefined;
  return fwd || peer || "unknown";
}

/** A route parameter as a string (Express types them loosely behind a guard). */
export function param(req: Request, name: string): string {
  const v = (req.params as Record<string, unknown>)[name];
  return typeof v === "string" ? v : "";
}

/** A form field as a string ("" when absent or not a single string). */
export function field(req: Request, name: string): string {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === "string" ? v : "";
}
