/**
 * The dashboard's webhook attempts in Kubernetes mode: the controller keeps each job's delivery
 * ledger in its PdfJob's status (core/schemas/pdfjob.ts WebhookLedger, controller/ledger.ts),
 * with the last RECENT_ATTEMPTS_MAX attempts, so this store only reads the PdfJob through this
 * replica's informer cache (read through when the cache does not know the job yet).
 *
 * "Redeliver": the API's Role may patch PdfJobs but never their status, so it asks the controller
 * with the folio.dev/redeliver-requested annotation (an RFC 3339 time, with milliseconds); the
 * controller starts a new attempt series of the same message (same webhook-id, as embedded mode's
 * redeliver) and records the request it answered (controller/decide.ts). A delivery's id here is
 * its webhook-id (`msg_…`).
 */
import { jobIdOf } from "../../../core/pdfjob-view.ts";
import { ID_PATTERN } from "../../../core/ids.ts";
import { LABELS, PDFJOB_ANNOTATIONS, type PdfJob } from "../../../core/schemas/pdfjob.ts";
import type { PdfJobClient } from "../../jobs/pdfjob-client.ts";
import type { DeliverySummary, WebhookAttempt, WebhookAttempts } from "../webhook-attempts.ts";
import { live, type PdfJobCache } from "./pdfjob-cache.ts";

const ms = (t: string | undefined): number | null => {
  const v = t === undefined ? Number.NaN : Date.parse(t);
  return Number.isNaN(v) ? null : v;
};

export class KubernetesWebhookAttempts implements WebhookAttempts {
  readonly #cache: Pick<PdfJobCache, "byJobId" | "all">;
  readonly #kube: Pick<PdfJobClient, "listByLabel" | "annotate">;

  constructor(cache: Pick<PdfJobCache, "byJobId" | "all">, kube: Pick<PdfJobClient, "listByLabel" | "annotate">) {
    this.#cache = cache;
    this.#kube = kube;
  }

  /** The tenant's live PdfJob of a job id: from the cache, else (or `fresh`) read from the apiserver. */
  async #pdfJob(tenantId: string, jobId: string, fresh = false): Promise<PdfJob | null> {
    if (!ID_PATTERN("job").test(jobId)) return null;
    const cached = fresh ? undefined : this.#cache.byJobId(jobId);
    const pj = cached ?? (await this.#kube.listByLabel(`${LABELS.tenant}=${tenantId},${LABELS.jobId}=${jobId}`)).find(live);
    return pj && pj.spec.tenant === tenantId ? pj : null;
  }

  async forJob(tenantId: string, jobId: string): Promise<{ deliveries: DeliverySummary[]; attempts: WebhookAttempt[] }> {
    const pj = await this.#pdfJob(tenantId, jobId);
    const w = pj?.status?.webhook;
    const url = pj?.spec.webhook?.url;
    if (!pj || !w || !url) return { deliveries: [], attempts: [] };
    const settled = w.status === "delivered" || w.status === "gave_up";
    const delivery: DeliverySummary = {
      id: w.messageId,
      event_type: w.eventType,
      url,
      status: w.status,
      attempts: w.attempts,
      next_attempt_at: settled ? null : ms(w.nextAttemptTime),
    };
    const attempts = (w.recentAttempts ?? []).map((a): WebhookAttempt => ({
      delivery_id: w.messageId,
      job_id: jobIdOf(pj),
      tenant_id: tenantId,
      at: ms(a.time) ?? 0,
      status_code: a.statusCode ?? null,
      latency_ms: a.latencyMs ?? null,
      error: a.error ?? null,
      next_attempt_at: ms(a.nextAttemptTime),
    }));
    return { deliveries: [delivery], attempts };
  }

  /**
   * Annotates the PdfJob (guarded by its resourceVersion; a stale cached copy is read again once).
   * False when the job or delivery is unknown, or its webhook is still being retried.
   */
  async redeliver(tenantId: string, jobId: string, deliveryId: string, now = Date.now()): Promise<boolean> {
    for (const fresh of [false, true]) {
      const pj = await this.#pdfJob(tenantId, jobId, fresh);
      const w = pj?.status?.webhook;
      if (!pj || !w || w.messageId !== deliveryId || (w.status !== "delivered" && w.status !== "gave_up")) return false;
      // Always later than the last request, whichever replica's clock made it (the controller answers newer ones only).
      const prior = Date.parse(pj.metadata.annotations?.[PDFJOB_ANNOTATIONS.redeliverRequested] ?? "");
      const at = Number.isNaN(prior) ? now : Math.max(now, prior + 1);
      if (await this.#kube.annotate(pj, { [PDFJOB_ANNOTATIONS.redeliverRequested]: new Date(at).toISOString() })) return true;
    }
    return false;
  }

  backlog(): Promise<number> {
    const waiting = this.#cache.all().filter((pj) => pj.status?.webhook?.status === "pending" || pj.status?.webhook?.status === "failing");
    return Promise.resolve(waiting.length);
  }
}
