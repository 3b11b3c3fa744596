/**
 * A container's resources as cgroup settings, as the kubelet computes them
 * (pkg/kubelet/cm/helpers_linux.go): limits.memory → memory limit in bytes; limits.cpu → CFS quota
 * per 100 ms period (milliCPU × 100 µs, at least 1 ms); requests.cpu → cpu.shares (milliCPU ×
 * 1024 / 1000, at least 2); and the oom_score_adj of the container's QoS class (policy.go:
 * Guaranteed −997, BestEffort 1000, Burstable 1000 − 1000 × request / node memory, kept in 2‥999).
 * Pure.
 */
import type { V1Container } from "@kubernetes/client-node";

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, "": 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** A resource.Quantity ("2Gi", "512Mi", "250m", "1.5", "1e3") as a number of base units. */
export function parseQuantity(q: string | number): number {
  if (typeof q === "number") return q;
  const m = /^([+-]?\d+(?:\.\d*)?|[+-]?\.\d+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/.exec(q.trim());
  if (!m) throw new Error(`invalid quantity "${q}"`);
  const n = Number(m[1]) * (m[2] ? 10 ** Number(m[2].slice(1)) : 1);
  const suffix = m[3] ?? "";
  return n * (BINARY[suffix] ?? DECIMAL[suffix] ?? 1);
}

export interface CgroupResources {
  readonly memoryBytes?: number;
  readonly cpuQuotaUs?: number;
  readonly cpuShares?: number;
  readonly oomScoreAdj: number;
}

export function cgroupResources(container: V1Container, nodeMemoryBytes: number): CgroupResources {
  const limits = container.resources?.limits ?? {};
  const requests = container.resources?.requests ?? {};
  // Requests default to limits (the API server's defaulting does the same).
  const get = (o: Record<string, string | number>, k: string): number | undefined => (o[k] === undefined ? undefined : parseQuantity(o[k]));
  const memLimit = get(limits, "memory");
  const cpuLimit = get(limits, "cpu");
  const memRequest = get(requests, "memory") ?? memLimit;
  const cpuRequest = get(requests, "cpu") ?? cpuLimit;
  const guaranteed = memLimit !== undefined && cpuLimit !== undefined && memRequest === memLimit && cpuRequest === cpuLimit;
  const bestEffort = memLimit === undefined && cpuLimit === undefined && memRequest === undefined && cpuRequest === undefined;
  const oomScoreAdj = guaranteed
    ? -997
    : bestEffort
      ? 1000
      : Math.min(999, Math.max(2, Math.round(1000 - (1000 * (memRequest ?? 0)) / nodeMemoryBytes)));
  return {
    ...(memLimit !== undefined ? { memoryBytes: Math.round(memLimit) } : {}),
    ...(cpuLimit !== undefined ? { cpuQuotaUs: Math.max(1000, Math.round(cpuLimit * 100_000)) } : {}),
    ...(cpuRequest !== undefined ? { cpuShares: Math.max(2, Math.round(cpuRequest * 1024)) } : {}),
    oomScoreAdj,
  };
}
