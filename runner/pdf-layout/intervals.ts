/** Intervals on a line, as ruling lines and box edges are measured against one another. Pure. */

/** Share of the interval [a, b] covered by the given intervals (sorted by their start); 0 for an empty one. */
export function coverage(a: number, b: number, spans: readonly (readonly [number, number])[]): number {
  let covered = 0;
  let cursor = a;
  for (const [s, e] of spans) {
    const from = Math.max(s, cursor);
    const to = Math.min(e, b);
    if (to > from) {
      covered += to - from;
      cursor = to;
    }
  }
  return b > a ? covered / (b - a) : 0;
}
