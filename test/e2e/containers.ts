/**
 * The API and the controller as containers of the API image `make images` built
 * (test/k8s/folio-container.ts), for the e2e suites: `startApiContainer` answers with the API test
 * harness's `Server` (so a suite reads the same as against a local `folio serve`), its admin
 * commands run inside the container (`kubectl exec`); `startControllerContainer` runs
 * `folio controller` configured through its environment, as the chart's Deployment configures it.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { apiImage, runnerImage } from "../k8s/images.ts";
import { startFolioContainer, type FolioContainer } from "../k8s/folio-container.ts";
import type { Platform } from "../k8s/platform.ts";
import { encodeForm, freePort, httpsRequest, type Server } from "../api/harness.ts";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Waits until the container has printed `pattern`, or fails with its log if it exits first. */
async function waitForLog(c: FolioContainer, pattern: RegExp, from: number, what: string, timeoutMs = 60_000): Promise<void> {
  let exited = false;
  void c.exited.then(() => (exited = true));
  const end = Date.now() + timeoutMs;
  while (!pattern.test(c.logs().slice(from))) {
    if (exited) throw new Error(`${what} exited:\n${c.logs()}`);
    if (Date.now() > end) throw new Error(`${what} did not start within ${timeoutMs} ms:\n${c.logs()}`);
    await sleep(100);
  }
}

/**
 * `folio serve` in a container of the API image, on a free loopback port, its data directory a
 * host directory (so its certificate can be trusted). `env` as the chart would set it.
 */
export async function startApiContainer(platform: Platform, env: Record<string, string>, files: readonly string[] = []): Promise<Server> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "folio-api-container-"));
  const port = await freePort();
  const kubeconfig = env.KUBECONFIG;
  const { KUBECONFIG: _, ...rest } = env;
  let container: FolioContainer | undefined;
  let before = "";
  const launch = async (): Promise<void> => {
    if (container) before += container.logs();
    container = await startFolioContainer(platform, {
      name: "folio-api",
      image: apiImage(),
      args: ["serve", "--port", String(port)],
      env: { FOLIO_LOG_LEVEL: "info", FOLIO_HOST: "127.0.0.1", ...rest },
      ...(kubeconfig ? { kubeconfig } : {}),
      files,
      dataDir,
    });
    await waitForLog(container, /listening on/, 0, "folio serve (API container)");
  };
  await launch();
  const ca = await readFile(path.join(dataDir, "tls-cert.pem"));
  const base = `https://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    await container?.stop(10_000);
  };
  return {
    port,
    base,
    dataDir,
    key: "",
    webhookSecret: "",
    ca,
    logs: () => before + (container?.logs() ?? ""),
    pid: () => container?.container.pid ?? 0,
    async kill() {
      container?.kill("SIGKILL");
      await container?.exited;
    },
    async request(method, urlPath, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.key) headers.Authorization ??= `Bearer ${opts.key}`;
      let body = opts.body;
      if (opts.json !== undefined) {
        body = JSON.stringify(opts.json);
        headers["Content-Type"] ??= "application/json";
      }
      if (opts.form) {
        const enc = await encodeForm(opts.form);
        body = enc.body;
        headers["Content-Type"] = enc.contentType;
      }
      return httpsRequest(base, ca, method, urlPath, headers, body);
    },
    async folio(args) {
      const r = await container!.exec(["folio", ...args]);
      let json: unknown;
      try {
        json = JSON.parse(r.stdout);
      } catch {
        json = undefined;
      }
      return { ...r, json };
    },
    stop,
    async restart() {
      await stop();
      await container?.cleanup();
      await launch();
    },
    async cleanup() {
      await stop();
      await container?.cleanup();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** A controller container and the loopback port of its /metrics, /healthz and /readyz. */
export interface ReadyController extends FolioContainer {
  readonly metricsPort: number;
}

/**
 * `folio controller` for the runner images `make images` built (pulled never: they are on the
 * node), watching the default namespace unless `env` says otherwise, started and ready: its
 * /readyz (on a free metrics port, `metricsPort`) answers 200. Fails with its log if it exits first.
 */
export async function startReadyController(
  platform: Platform,
  env: Record<string, string>,
  files: readonly string[] = [],
  name = "folio-controller",
): Promise<ReadyController> {
  const port = await freePort();
  const c = await startControllerContainer(
    platform,
    name,
    {
      FOLIO_RUNNER_IMAGE: runnerImage(),
      FOLIO_RUNNER_IMAGE_PULL_POLICY: "Never",
      FOLIO_CONTROLLER_NAMESPACE: "default",
      ...env,
      FOLIO_METRICS_PORT: String(port),
    },
    files,
  );
  let exited = false;
  void c.exited.then(() => (exited = true));
  const end = Date.now() + 120_000;
  for (;;) {
    const status = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return Object.assign(c, { metricsPort: port });
    if (exited || Date.now() > end)
      throw new Error(`folio controller (container) ${exited ? "exited" : "is not ready after 120 s"}:\n${c.logs()}`);
    await sleep(250);
  }
}

/** `folio controller` in a container of the API image; `env` as the chart's Deployment sets it. */
export async function startControllerContainer(
  platform: Platform,
  name: string,
  env: Record<string, string>,
  files: readonly string[] = [],
): Promise<FolioContainer> {
  const c = await startFolioContainer(platform, {
    name,
    image: apiImage(),
    args: ["controller"],
    env: { FOLIO_LOG_LEVEL: "info", POD_NAME: name, ...env },
    kubeconfig: platform.kubeconfig,
    files,
  });
  return c;
}
