/**
 * `make bench-edge`: one tenant's job latency, alone and while the edge is attacked — idle sockets
 * that reconnect whenever they are closed and uploads that trickle — on a real embedded server.
 * Each phase runs ROUNDS × JOBS compress jobs (upload + Prefer: wait), interleaved baseline/attack
 * rounds; prints p50/p99 per phase, the attack's state, and the machine's load average.
 *
 *   node bench/edge.ts [IDLE_SOCKETS] [SLOW_UPLOADS] [ROUNDS]
 */
import os from "node:os";
import { blob, startServer } from "../test/api/harness.ts";
import { textPdf } from "../test/api/fixtures.ts";
import { percentile, spawnEdgeLoad } from "../test/helpers/edge-load.ts";

const idleSockets = Number(process.argv[2] ?? 2000);
const slowUploads = Number(process.argv[3] ?? 50);
const rounds = Number(process.argv[4] ?? 3);
const JOBS = 30;

const s = await startServer({ FOLIO_RATE_LIMIT_PER_MINUTE: "100000", FOLIO_RATE_LIMIT_BURST: "100000" });
try {
  await s.folio(["tenants", "create", "attacker", "--plan", "business", "--json"]);
  const attacker = (await s.folio(["keys", "create", "--tenant", "attacker", "--json"])).json.key as string;
  const pdf = await textPdf(2, "victim");
  const jobs = async (): Promise<number[]> => {
    const ms: number[] = [];
    for (let i = 0; i < JOBS; i++) {
      const form = new FormData();
      form.append("file", blob(pdf), "v.pdf");
      const t = performance.now();
      const res = await s.request("POST", "/v1/pdf/compress", { form, headers: { Prefer: "wait=60" } });
      if (res.status !== 200) throw new Error(`${res.status} ${res.text}`);
      ms.push(performance.now() - t);
    }
    return ms;
  };
  await jobs(); // warm-up
  const base: number[] = [];
  const attacked: number[] = [];
  for (let r = 0; r < rounds; r++) {
    base.push(...(await jobs()));
    const load = await spawnEdgeLoad({
      port: s.port,
      ca: s.ca,
      key: attacker,
      idleSockets,
      addresses: Math.ceil(idleSockets / 100),
      slowUploads,
      trickleBytes: 64,
      trickleMs: 1000,
    });
    const end = Date.now() + 60_000;
    while ((load.status().open < idleSockets * 0.75 || load.status().uploading < slowUploads) && Date.now() < end)
      await new Promise((x) => setTimeout(x, 200));
    attacked.push(...(await jobs()));
    const st = load.status();
    console.log(`round ${r + 1}: ${st.open} idle sockets open, ${st.closed} closed by the server, ${st.uploading} slow uploads`);
    await load.stop();
  }
  const f = (xs: number[]): string => `p50 ${percentile(xs, 50).toFixed(0)} ms, p99 ${percentile(xs, 99).toFixed(0)} ms (n=${xs.length})`;
  console.log(`alone:       ${f(base)}`);
  console.log(`under attack: ${f(attacked)}  (${idleSockets} idle sockets, ${slowUploads} slow uploads)`);
  console.log(
    `load average: ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")}`,
  );
} finally {
  await s.cleanup();
}
