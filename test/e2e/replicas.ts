/**
 * Several `folio serve` replicas in Kubernetes mode behind a round-robin TCP proxy, as a Service
 * would put them: each replica is a container of the API image (test/k8s/folio-container.ts: runc,
 * uid 10001, read-only root; SIGKILL, graceful restart), they share one TLS
 * certificate (the proxy passes TLS through, so the client verifies it whichever replica answers),
 * and an EndpointSlice of the "Service" says which are ready — what the endpoint-slice controller
 * would write for pods, written here because these replicas are containers, not pods — so that
 * each takes its share of the rate limits (FOLIO_API_SERVICE).
 */
import { chownSync, copyFileSync, mkdirSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { DiscoveryV1Api, type KubeConfig } from "@kubernetes/client-node";
import { encodeForm, freePort, httpsRequest, type HttpResponse } from "../api/harness.ts";
import { startFolioContainer, type FolioContainer } from "../k8s/folio-container.ts";
import { apiImage } from "../k8s/images.ts";
import type { Platform } from "../k8s/platform.ts";

export interface ReplicaSetOptions {
  platform: Platform;
  count: number;
  env: Record<string, string>;
  /** The shared certificate and key files (FOLIO_TLS_CERT / FOLIO_TLS_KEY), as a Secret would mount them. */
  tls: { certFile: string; keyFile: string; cert: Buffer };
  kc: KubeConfig;
  namespace: string;
  /** The Service name the EndpointSlice stands for (the replicas' FOLIO_API_SERVICE). */
  service: string;
  dir: string;
}

/** UID and GID of the images' user (docker/*.Dockerfile). */
const IMAGE_USER = 10001;

export class Replica {
  readonly name: string;
  readonly port: number;
  #container: FolioContainer | null = null;
  #exited = true;
  #log = "";
  readonly #o: ReplicaSetOptions;

  constructor(name: string, port: number, o: ReplicaSetOptions) {
    this.name = name;
    this.port = port;
    this.#o = o;
  }

  get alive(): boolean {
    return this.#container !== null && !this.#exited;
  }

  /** The container's init process, as the host sees it. */
  get pid(): number {
    return this.#container?.container.pid ?? 0;
  }

  logs(): string {
    return this.#log + (this.#container?.logs() ?? "");
  }

  /** Starts a container and resolves once it listens. */
  async start(): Promise<void> {
    if (this.#container) {
      this.#log += this.#container.logs();
      await this.#container.cleanup();
    }
    const { KUBECONFIG: kubeconfig, ...env } = this.#o.env;
    const c = await startFolioContainer(this.#o.platform, {
      name: `folio-api-${this.name}`,
      image: apiImage(),
      args: ["serve", "--port", String(this.port)],
      env: {
        FOLIO_LOG_LEVEL: "warn",
        FOLIO_HOST: "127.0.0.1",
        FOLIO_TLS_CERT: this.#o.tls.certFile,
        FOLIO_TLS_KEY: this.#o.tls.keyFile,
        FOLIO_METRICS_PORT: "0",
        FOLIO_API_SERVICE: this.#o.service,
        ...env,
      },
      ...(kubeconfig ? { kubeconfig } : {}),
      files: [this.#o.tls.certFile, this.#o.tls.keyFile],
      dataDir: path.join(this.#o.dir, this.name),
    });
    this.#container = c;
    this.#exited = false;
    void c.exited.then(() => (this.#exited = true));
    const end = Date.now() + 60_000;
    while (!/listening on/.test(c.logs())) {
      if (this.#exited) throw new Error(`replica ${this.name} exited:\n${c.logs()}`);
      if (Date.now() > end) throw new Error(`replica ${this.name} did not start:\n${c.logs()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Ends the container: SIGKILL (a crash, an OOM kill) or SIGTERM (a rolling update's graceful stop). */
  async stop(signal: "SIGKILL" | "SIGTERM"): Promise<void> {
    const c = this.#container;
    if (!c || !this.alive) return;
    if (signal === "SIGTERM") await c.stop(15_000);
    else {
      c.kill("SIGKILL");
      await c.exited;
    }
  }

  /** Removes the container's directory (after it has stopped). */
  async cleanup(): Promise<void> {
    await this.#container?.cleanup();
  }

  /** One request straight to this replica (not through the proxy). */
  request(method: string, urlPath: string, key: string | null, ca: Buffer): Promise<HttpResponse> {
    return request(`https://127.0.0.1:${this.port}`, ca, method, urlPath, key ? { Authorization: `Bearer ${key}` } : {});
  }
}

/** A request to a replica (or the proxy) on a fresh connection, verifying its certificate as "localhost". */
export function request(
  base: string,
  ca: Buffer,
  method: string,
  urlPath: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<HttpResponse> {
  return httpsRequest(base, ca, method, urlPath, headers, body, { servername: "localhost", timeoutMs: 90_000 });
}

/** Multipart for `request`. */
export async function multipart(form: FormData): Promise<{ body: Buffer; headers: Record<string, string> }> {
  const enc = await encodeForm(form);
  return { body: enc.body, headers: { "Content-Type": enc.contentType } };
}

/** A TCP proxy handing each connection to the next live replica, round robin (TLS passes through). */
export class RoundRobinProxy {
  readonly #server: net.Server;
  readonly #replicas: () => Replica[];
  #next = 0;
  port = 0;

  constructor(replicas: () => Replica[]) {
    this.#replicas = replicas;
    this.#server = net.createServer((client) => this.#connect(client, 0));
  }

  #connect(client: net.Socket, tries: number): void {
    const all = this.#replicas();
    if (tries >= all.length) return void client.destroy();
    const target = all[this.#next++ % all.length]!;
    const upstream = net.connect(target.port, "127.0.0.1");
    let connected = false;
    upstream.once("connect", () => {
      connected = true;
      client.pipe(upstream);
      upstream.pipe(client);
    });
    upstream.on("error", () => {
      // A dead replica refuses the connection: the next one gets it, as a Service's endpoints would.
      if (!connected) return this.#connect(client, tries + 1);
      client.destroy();
    });
    client.on("error", () => upstream.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.port = (this.#server.address() as net.AddressInfo).port;
    return `https://127.0.0.1:${this.port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** N replicas, their proxy and their EndpointSlice. */
export class ReplicaSet {
  readonly replicas: Replica[] = [];
  readonly proxy: RoundRobinProxy;
  base = "";
  #o: ReplicaSetOptions;
  readonly #discovery: DiscoveryV1Api;

  constructor(o: ReplicaSetOptions) {
    this.#o = o;
    this.#discovery = o.kc.makeApiClient(DiscoveryV1Api);
    this.proxy = new RoundRobinProxy(() => this.replicas);
  }

  async start(): Promise<void> {
    // The key as a Secret volume gives it to the image's user (defaultMode 0400 with its fsGroup).
    mkdirSync(this.#o.dir, { recursive: true });
    const keyFile = path.join(this.#o.dir, "replicas-tls-key.pem");
    copyFileSync(this.#o.tls.keyFile, keyFile);
    chownSync(keyFile, IMAGE_USER, IMAGE_USER);
    this.#o = { ...this.#o, tls: { ...this.#o.tls, keyFile } };
    for (let i = 0; i < this.#o.count; i++) this.replicas.push(new Replica(`r${i}`, await freePort(), this.#o));
    await Promise.all(this.replicas.map((r) => r.start()));
    await this.#publish();
    this.base = await this.proxy.listen();
  }

  /** The EndpointSlice of the live replicas (ready ones only), as the endpoint-slice controller would keep it. */
  async #publish(): Promise<void> {
    const body = {
      metadata: { name: this.#o.service, namespace: this.#o.namespace, labels: { "kubernetes.io/service-name": this.#o.service } },
      addressType: "IPv4",
      ports: [{ name: "https", port: 8443, protocol: "TCP" }],
      endpoints: this.replicas.map((r, i) => ({
        addresses: [`10.99.0.${i + 1}`],
        conditions: { ready: r.alive },
        targetRef: { kind: "Pod", name: r.name, namespace: this.#o.namespace, uid: `uid-${r.name}` },
      })),
    };
    try {
      const cur = await this.#discovery.readNamespacedEndpointSlice({ name: this.#o.service, namespace: this.#o.namespace });
      await this.#discovery.replaceNamespacedEndpointSlice({
        name: this.#o.service,
        namespace: this.#o.namespace,
        body: { ...body, metadata: { ...body.metadata, resourceVersion: cur.metadata?.resourceVersion } },
      });
    } catch {
      await this.#discovery.createNamespacedEndpointSlice({ namespace: this.#o.namespace, body });
    }
  }

  /** SIGKILLs replica `i` (a crash); the EndpointSlice marks it not ready. */
  async kill(i: number): Promise<void> {
    await this.replicas[i]!.stop("SIGKILL");
    await this.#publish();
  }

  /** Starts replica `i` again and marks it ready once it listens. */
  async revive(i: number): Promise<void> {
    await this.replicas[i]!.start();
    await this.#publish();
  }

  /** A rolling restart: each replica in turn marked not ready, stopped gracefully, started again. */
  async rollingRestart(): Promise<void> {
    for (let i = 0; i < this.replicas.length; i++) {
      await this.replicas[i]!.stop("SIGTERM");
      await this.#publish();
      await this.revive(i);
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.replicas.map((r) => r.stop("SIGKILL")));
    await Promise.all(this.replicas.map((r) => r.cleanup()));
    await this.proxy.close();
  }
}

export { multipart as form };
