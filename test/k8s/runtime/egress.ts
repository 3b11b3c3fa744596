/**
 * Network for pods that may reach only an allow-list of endpoints — the runner pods, which the
 * chart's NetworkPolicy confines to the object store (and DNS). On a cluster a CNI plugin enforces
 * that policy; on this one-host "node", where pods otherwise share the host's network, the kubelet
 * gives such a pod a network namespace of its own with nothing in it but loopback, and in it a
 * relay (egress-relay.ts) that listens on each allowed endpoint's own address and forwards to it
 * through a Unix socket of the kubelet's. So the pod reaches the object store at the URL it was
 * configured with, and nothing else: not the API server, not the other pods, not the host.
 *
 * Host side: one Unix socket per allowed endpoint, shared by every isolated pod of the kubelet.
 * Pod side: one relay process per pod; the container joins its namespace (/proc/<pid>/ns/net).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { createInterface } from "node:readline";

export interface Endpoint {
  readonly host: string;
  readonly port: number;
}

const RELAY = new URL(import.meta.url.endsWith(".ts") ? "./egress-relay.ts" : "./egress-relay.js", import.meta.url).pathname;

/** The kubelet's end: a Unix socket per endpoint, each forwarding to the endpoint over TCP. */
export class EgressGateway {
  readonly #dir: string;
  readonly #servers = new Map<string, { server: net.Server; socket: string }>();

  constructor(dir: string) {
    this.#dir = dir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  async #socketFor(e: Endpoint): Promise<string> {
    const key = `${e.host}-${e.port}`;
    const known = this.#servers.get(key);
    if (known) return known.socket;
    const socket = path.join(this.#dir, `${key}.sock`);
    rmSync(socket, { force: true });
    const server = net.createServer((inbound) => {
      const outbound = net.connect(e.port, e.host);
      inbound.pipe(outbound).pipe(inbound);
      const close = (): void => {
        inbound.destroy();
        outbound.destroy();
      };
      inbound.on("error", close);
      outbound.on("error", close);
    });
    this.#servers.set(key, { server, socket });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socket, resolve);
    });
    return socket;
  }

  /**
   * A fresh network namespace whose only way out is `allow`; resolves with its path once the
   * relay listens. `stop()` ends the relay, and with it the namespace.
   */
  async isolate(allow: readonly Endpoint[]): Promise<{ netns: string; stop: () => void }> {
    const routes = await Promise.all(allow.map(async (e) => `${e.host}:${e.port}=${await this.#socketFor(e)}`));
    const relay: ChildProcess = spawn("unshare", ["--net", "--", process.execPath, RELAY, ...routes], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    relay.stderr?.on("data", (b: Buffer) => (stderr += b.toString()));
    await new Promise<void>((resolve, reject) => {
      const lines = createInterface({ input: relay.stdout! });
      lines.once("line", (line) => (line === "ready" ? resolve() : reject(new Error(`egress relay: ${line}`))));
      relay.once("exit", (code) => reject(new Error(`egress relay exited with ${code}: ${stderr.trim()}`)));
      relay.once("error", reject);
    });
    return {
      netns: `/proc/${relay.pid}/ns/net`,
      stop: () => {
        relay.kill("SIGKILL");
      },
    };
  }

  close(): void {
    for (const { server, socket } of this.#servers.values()) {
      server.close();
      rmSync(socket, { force: true });
    }
    this.#servers.clear();
  }
}
