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

/** A container's memory and CPU limits and requests; requests default to limits (the API server's defaulting does the same). */
interface Quantities {
  memLimit: number | undefined;
  cpuLimit: number | undefined;
  memRequest: number | undefined;
  cpuRequest: number | undefined;
}

function quantities(container: V1Container): Quantities {
  const limits = container.resources?.limits ?? {};
  const requests = container.resources?.requests ?? {};
  const get = (o: Record<string, string | number>, k: string): number | undefined => (o[k] === undefined ? undefined : parseQuantity(o[k]));
  const memLimit = get(limits, "memory");
  const cpuLimit = get(limits, "cpu");
  return { memLimit, cpuLimit, memRequest: get(requests, "memory") ?? memLimit, cpuRequest: get(requests, "cpu") ?? cpuLimit };
}

/** The kubelet's oom_score_adj by QoS class: Guaranteed -997, BestEffort 1000, Burstable by its memory request's share of the node. */
function oomScoreAdj(q: Quantities, nodeMemoryBytes: number): number {
  const guaranteed = q.memLimit !== undefined && q.cpuLimit !== undefined && q.memRequest === q.memLimit && q.cpuRequest === q.cpuLimit;
  if (guaranteed) return -997;
  const bestEffort = q.memLimit === undefined && q.cpuLimit === undefined && q.memRequest === undefined && q.cpuRequest === undefined;
  if (bestEffort) return 1000;
  return Math.min(999, Math.max(2, Math.round(1000 - (1000 * (q.memRequest ?? 0)) / nodeMemoryBytes)));
}

export function cgroupResources(container: V1Container, nodeMemoryBytes: number): CgroupResources {
  const q = quantities(container);
  const { memLimit, cpuLimit, cpuRequest } = q;
  return {
    ...(memLimit !== undefined ? { memoryBytes: Math.round(memLimit) } : {}),
    ...(cpuLimit !== undefined ? { cpuQuotaUs: Math.max(1000, Math.round(cpuLimit * 100_000)) } : {}),
    ...(cpuRequest !== undefined ? { cpuShares: Math.max(2, Math.round(cpuRequest * 1024)) } : {}),
    oomScoreAdj: oomScoreAdj(q, nodeMemoryBytes),
  };
}
