/** Reading Prometheus text exposition in tests (a scrape of /metrics). */

/** The sum of a metric's samples in Prometheus text (every label set containing `labels`); undefined when it has none. */
export function metricSum(text: string, name: string, labels = ""): number | undefined {
  let sum: number | undefined;
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name || !(m[2] ?? "").includes(labels)) continue;
    sum = (sum ?? 0) + Number(m[3]);
  }
  return sum;
}
