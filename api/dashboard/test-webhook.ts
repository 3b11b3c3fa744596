/**
 * "Send a test event" (Webhooks page): one signed `webhook.test` message, sent at once through the
 * SSRF guard and the same HTTPS client as real deliveries; the answer is shown, nothing is queued.
 */
import { newId } from "../../core/ids.ts";
import type { SsrfGuard } from "../../core/net/ssrf.ts";
import { rfc3339 } from "../../core/time.ts";
import { TEST_EVENT_TYPE, webhookRequest } from "../../core/webhooks/events.ts";
import { postWebhook, type TlsTrust } from "../../core/webhooks/http.ts";
import type { TenantSummary } from "./tenants-port.ts";

export function testWebhookSender(guard: SsrfGuard, secrets: (t: TenantSummary) => Promise<string[]>, tls?: TlsTrust) {
  return async (tenant: TenantSummary, url: string): Promise<{ status: number | null; latencyMs: number; error: string | null }> => {
    const started = Date.now();
    const check = await guard.check(url);
    if (!check.ok) return { status: null, latencyMs: Date.now() - started, error: `not sent: ${check.reason}` };
    const now = Date.now();
    const id = newId("msg");
    const request = webhookRequest(await secrets(tenant), id, now, {
      type: TEST_EVENT_TYPE,
      timestamp: rfc3339(now),
      data: { tenant: tenant.name, message: "A test event from the Folio dashboard." },
    });
    const outcome = await postWebhook({
      url: check.url,
      address: check.addresses[0]!,
      headers: request.headers,
      body: request.body,
      timeoutMs: 15_000,
      ...(tls ? { tls } : {}),
    });
    const latencyMs = Date.now() - now;
    return outcome.kind === "response"
      ? { status: outcome.status, latencyMs, error: null }
      : { status: null, latencyMs, error: outcome.error };
  };
}
