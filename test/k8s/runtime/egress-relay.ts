/**
 * The far end of a pod's egress allow-list (egress.ts), run inside the pod's own network namespace
 * (`unshare --net`, so it holds the namespace for as long as it lives):
 *
 *   node egress-relay.ts 127.0.0.1:9000=/path/to/kubelet/egress/127.0.0.1-9000.sock …
 *
 * brings the namespace's loopback up, listens on each address — the same address the service has
 * on the host, so the pod uses the endpoint it was configured with — and relays every connection
 * to the kubelet's Unix socket for it (a path-named socket is reachable across network namespaces;
 * TCP is not). Prints "ready" once listening. Nothing else is reachable from the namespace.
 */
import { execFileSync } from "node:child_process";
import net from "node:net";

execFileSync("ip", ["link", "set", "lo", "up"]);
const routes = process.argv.slice(2).map((arg) => {
  const [listen = "", socket = ""] = arg.split("=");
  const colon = listen.lastIndexOf(":");
  return { host: listen.slice(0, colon), port: Number(listen.slice(colon + 1)), socket };
});
await Promise.all(
  routes.map(
    (r) =>
      new Promise<void>((resolve, reject) => {
        const server = net.createServer((inbound) => {
          const outbound = net.connect(r.socket);
          inbound.pipe(outbound).pipe(inbound);
          const close = (): void => {
            inbound.destroy();
            outbound.destroy();
          };
          inbound.on("error", close);
          outbound.on("error", close);
        });
        server.once("error", reject);
        server.listen(r.port, r.host, () => resolve());
      }),
  ),
);
process.stdout.write("ready\n");
