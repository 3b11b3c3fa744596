/**
 * What Folio asks of the apiserver, counted by the apiserver itself: kube-apiserver's
 * `apiserver_request_total` (its /metrics, read with an admin kubeconfig), by `VERB resource`.
 * Watches are left out (long-lived: one per informer, not one per request). Used by the stateless
 * API's tests (reads cost nothing) and by `make bench-k8s` (requests per API request).
 */
import https from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";

/**
 * kube-apiserver's apiserver_request_total by `VERB resource[/subresource]`, watches left out;
 * with `byCode`, by `VERB resource[/subresource] code`, watches included (bench/k8s.ts).
 */
export async function requestCounts(kc: KubeConfig, o: { byCode?: boolean } = {}): Promise<Map<string, number>> {
  const opts: https.RequestOptions = { method: "GET" };
  await kc.applyToHTTPSOptions(opts);
  const text = await new Promise<string>((resolve, reject) => {
    const req = https.request(`${kc.getCurrentCluster()?.server ?? ""}/metrics`, opts, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve(body));
    });
    req.on("error", reject);
    req.end();
  });
  const counts = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const label = (name: string): string => new RegExp(`${name}="([^"]*)"`).exec(line)?.[1] ?? "";
    if (label("verb") === "WATCH" && !o.byCode) continue;
    const key = `${label("verb")} ${label("resource")}${label("subresource") ? `/${label("subresource")}` : ""}${o.byCode ? ` ${label("code")}` : ""}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1)));
  }
  return counts;
}

/** The resources Folio's API touches (the rest is the control plane's own traffic: leases, endpoints, …). */
export const FOLIO_RESOURCES = /^\S+ (pdfjobs|tenants|accessrequests|secrets|endpointslices)(\/|$)/;

/** Folio's requests between two snapshots, by kind, and their total. */
export function delta(before: Map<string, number>, after: Map<string, number>): { total: number; byKind: string } {
  const kinds: string[] = [];
  let total = 0;
  for (const [k, v] of after) {
    if (!FOLIO_RESOURCES.test(k)) continue;
    const d = v - (before.get(k) ?? 0);
    if (d <= 0) continue;
    total += d;
    kinds.push(`${k} ${d}`);
  }
  return { total, byKind: kinds.join(", ") };
}
