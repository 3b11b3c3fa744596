/** Times are kept as epoch milliseconds and shown as RFC 3339 UTC (API.md "Transport"). */
export function rfc3339(ms: number): string;
export function rfc3339(ms: number | null | undefined): string | null;
export function rfc3339(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
