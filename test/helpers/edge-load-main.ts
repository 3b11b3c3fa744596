/** Child process of spawnEdgeLoad: reads its options on stdin, prints its state every 200 ms. */
import { startEdgeLoad, type EdgeLoadOptions } from "./edge-load.ts";

let text = "";
for await (const chunk of process.stdin) text += String(chunk);
const opts = JSON.parse(text) as Omit<EdgeLoadOptions, "ca"> & { ca: string };
const load = startEdgeLoad({ ...opts, ca: Buffer.from(opts.ca) });
const timer = setInterval(() => {
  process.stdout.write(JSON.stringify({ open: load.open(), closed: load.closedByServer(), uploading: load.uploading() }) + "\n");
}, 200);
process.once("SIGTERM", () => {
  clearInterval(timer);
  void load.stop().then(() => process.exit(0));
});
