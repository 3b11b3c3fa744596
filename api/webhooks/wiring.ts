/** Builds the webhook queue and SSRF guard from the configuration, for `folio serve`. */
import type { Config } from "../../core/config.ts";
import type { Logger } from "../../core/logger.ts";
import { SsrfGuard } from "../../core/net/ssrf.ts";
import type { WebhookSink } from "../jobs/local.ts";
import type { Metrics } from "../metrics.ts";
import type { Db } from "../store/db.ts";
import type { TenantStore } from "../store/tenants.ts";
import { WebhookDelivery, type AttemptRecord } from "./delivery.ts";

export interface Webhooks {
  sink: WebhookSink;
  /** null when the URL may receive webhooks, else why not (for a 422 at submission). */
  check: (url: string) => Promise<string | null>;
  start(): void;
  stop(): Promise<void>;
}

/** The SSRF guard of the configuration (with its operator allow-list). */
export function webhookGuard(config: Config): SsrfGuard {
  return new SsrfGuard(config.FOLIO_WEBHOOK_ALLOWED_HOSTS);
}

/** A webhook URL check for submissions: null when the URL may receive webhooks, else why not. */
export function webhookUrlCheck(guard: SsrfGuard): (url: string) => Promise<string | null> {
  return async (url) => {
    const res = await guard.check(url);
    return res.ok ? null : res.reason;
  };
}

export function createWebhooks(deps: {
  db: Db;
  config: Config;
  log: Logger;
  metrics: Metrics;
  tenants: TenantStore;
  onAttempt?: (a: AttemptRecord) => void;
}): Webhooks {
  const guard = webhookGuard(deps.config);
  const delivery = new WebhookDelivery({
    db: deps.db,
    tenants: deps.tenants,
    guard,
    log: deps.log,
    onOutcome: (outcome) => deps.metrics.webhooks.inc({ outcome }),
    ...(deps.onAttempt ? { onAttempt: deps.onAttempt } : {}),
  });
  return {
    sink: delivery,
    check: webhookUrlCheck(guard),
    start: () => delivery.start(),
    stop: () => delivery.stop(),
  };
}
