/**
 * "Send a test event" (Webhooks page): one signed `webhook.test` message, sent at once through the
 * SSRF guard and the same HTTPS client as real deliveries; the answer is shown, nothing is queued.
 */
import { newId } from "../../core/ids.ts";
import type { SsrfGuard } from "../../core/net/ssrf.ts";
import { rfc3339 } from "../../core/time.ts";
import { postWebhook, type TlsTrust } from "../../core/webhooks/http.ts";
import { signHeaders, unixSeconds } from "../../core/webhooks/sign.ts";
import type { TenantSummary } from "./tenants-port.ts";

export function testWebhookSender(guard: SsrfGuard, secrets: (t: TenantSummary) => Promise<string[]>, tls?: TlsTrust) {
  return async (tenant: TenantSummary, url: string): Promise<{ status: number | null; latencyMs: number; error: string | null }> => {
    const started = Date.now();
    const check = await guard.check(url);
    if (!check.ok) return { status: null, latencyMs: Date.now() - started, error: `not sent: ${check.reason}` };
    const now = Date.now();
    const id = newId("msg");
    const body = JSON.stringify({
      type: "webhook.test",
      timestamp: rfc3339(now),
      data: { tenant: tenant.name, message: "A test event from the Folio dashboard." },
    });
    const outcome = await postWebhook({
      url: check.url,
      address: check.addresses[0]!,
      headers: {
        "content-type": "application/json",
        "user-agent": "Folio-Webhooks/1",
        ...signHeaders(await secrets(tenant), id, unixSeconds(now), body),
      },
      body,
      timeoutMs: 15_000,
      ...(tls ? { tls } : {}),
    });
    const latencyMs = Date.now() - now;
    return outcome.kind === "response"
      ? { status: outcome.status, latencyMs, error: null }
      : { status: null, latencyMs, error: outcome.error };
  };
}
