/**
 * The one way out of Chromium while it renders a job: an HTTP forward proxy on loopback that every
 * request of the page goes through (each job's browser context is created with it as its proxy and
 * a bypass list of "<-loopback>", so even loopback goes through it; see chromium-render.ts). One
 * proxy serves one browser slot, which runs one job at a time; `startJob` points it at the job's
 * files and resets its counters. For each request it:
 *  - serves the job's own files for the virtual host SITE_HOST (an HTML file, or the folder a zip
 *    was extracted to), confined to that folder;
 *  - applies the webhooks' SSRF guard (core/net/ssrf.ts: every address the host resolves to must
 *    be public unless the operator allow-listed it) and connects to an address it checked — the
 *    connection is pinned, so a DNS answer that changes between check and connect cannot turn it
 *    inwards (DNS rebinding);
 *  - refuses what it cannot check (WebSocket upgrades, CONNECT to the virtual host) with 403.
 * Redirects are new requests from the browser, so each hop is checked again. Counters say what
 * was refused (for the job's figures and tests), never the URLs of other tenants.
 *
 * A browser in bubblewrap (chromium.ts) has a network namespace of its own with nothing in it: it
 * reaches the proxy through a Unix socket (`socket`), which a file system bind carries across
 * network namespaces, and a relay on the sandbox's own loopback.
 */
import { createReadStream } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import type { SsrfGuard } from "../../core/net/ssrf.ts";

/** The host name under which a job's own files are served to the page. */
export const SITE_HOST = "document.folio.invalid";

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  htm: "text/html; charset=utf-8",
  css: "text/css; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  json: "application/json",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  ico: "image/x-icon",
  woff: "font/woff",
  woff2: "font/woff2",
  ttf: "font/ttf",
  otf: "font/otf",
  txt: "text/plain; charset=utf-8",
  xml: "application/xml",
};

export interface ProxyStats {
  requests: number;
  /** Requests refused by the SSRF guard or as unsupported. */
  blocked: number;
  /** Why requests were refused ("a loopback address", …), without hosts or URLs. */
  reasons: string[];
}

export interface FetchProxy {
  /** The loopback port it listens on (0 when it listens on a Unix socket). */
  port: number;
  /** The Unix socket it listens on instead, if asked for one. */
  socket: string | null;
  /** Serves `site` (null: nothing) as http://SITE_HOST/ from now on, with fresh counters. */
  startJob(site: string | null): Promise<ProxyStats>;
  close(): Promise<void>;
}

/** Resolves a URL path inside `root`, or null when it would leave it (.., encoded slashes, symlinks out). */
async function confined(root: string, urlPath: string): Promise<string | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes("\0") || decoded.includes("\\")) return null;
  const file = path.resolve(root, `.${path.posix.normalize(`/${decoded}`)}`);
  if (file !== root && !file.startsWith(root + path.sep)) return null;
  try {
    const real = await realpath(file);
    return real === root || real.startsWith(root + path.sep) ? real : null;
  } catch {
    return null;
  }
}

async function serveFile(root: string, req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
  const file = await confined(root, url.pathname.endsWith("/") ? `${url.pathname}index.html` : url.pathname);
  const st = file ? await stat(file).catch(() => null) : null;
  if (!file || !st?.isFile() || (req.method !== "GET" && req.method !== "HEAD")) {
    res.writeHead(404).end();
    return;
  }
  const ext = path.extname(file).slice(1).toLowerCase();
  res.writeHead(200, { "content-type": TYPES[ext] ?? "application/octet-stream", "content-length": st.size, "cache-control": "no-store" });
  if (req.method === "HEAD") res.end();
  else
    createReadStream(file)
      .on("error", () => res.destroy())
      .pipe(res);
}

/** Starts a proxy on a free loopback port, or on the Unix socket `opts.socket`. */
export async function startFetchProxy(guard: SsrfGuard, opts: { socket?: string } = {}): Promise<FetchProxy> {
  let root: string | null = null;
  let stats: ProxyStats = { requests: 0, blocked: 0, reasons: [] };
  const sockets = new Set<net.Socket>();
  const refuse = (reason: string): void => {
    stats.blocked++;
    if (stats.reasons.length < 20 && !stats.reasons.includes(reason)) stats.reasons.push(reason);
  };
  /** The checked address to connect to, or null (refused). */
  const pinned = async (host: string): Promise<string | null> => {
    const check = await guard.checkHost(host);
    if (!check.ok) {
      refuse(check.reason);
      return null;
    }
    return check.addresses[0]!.address;
  };

  const server = http.createServer((req, res) => {
    stats.requests++;
    void (async () => {
      let url: URL;
      try {
        url = new URL(req.url ?? "");
      } catch {
        refuse("not an absolute URL");
        return res.writeHead(400).end();
      }
      if (url.protocol !== "http:") {
        refuse(`the ${url.protocol} scheme`);
        return res.writeHead(403).end();
      }
      if (url.hostname === SITE_HOST) {
        if (root) return serveFile(root, req, res, url);
        return res.writeHead(404).end();
      }
      const address = await pinned(url.hostname);
      if (!address) return res.writeHead(403).end();
      const headers = { ...req.headers };
      for (const h of Object.keys(headers)) if (h.startsWith("proxy-")) delete headers[h];
      const upstream = http.request(
        {
          host: address,
          port: Number(url.port || 80),
          method: req.method,
          path: `${url.pathname}${url.search}`,
          headers,
          setHost: false,
          timeout: 30_000,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      upstream.on("timeout", () => upstream.destroy());
      upstream.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
      req.pipe(upstream);
    })().catch(() => res.destroy());
  });

  // https: a CONNECT tunnel to the checked address; TLS is between the browser and the server.
  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    stats.requests++;
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    void (async () => {
      const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(req.url ?? "");
      const address = m && m[1] !== SITE_HOST ? await pinned(m[1]!) : null;
      if (!m || !address) {
        if (!m || m[1] === SITE_HOST) refuse("an unsupported tunnel");
        return client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      }
      const upstream = net.connect({ host: address, port: Number(m[2]), timeout: 30_000 }, () => {
        client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      sockets.add(upstream);
      upstream.on("close", () => sockets.delete(upstream));
      upstream.on("timeout", () => upstream.destroy());
      upstream.on("error", () => client.destroy());
    })().catch(() => client.destroy());
  });
  // ws:// goes as an Upgrade through the proxy: not checked here, so never forwarded.
  server.on("upgrade", (_req, socket: net.Socket) => {
    refuse("a WebSocket");
    socket.destroy();
  });
  server.on("connection", (s: net.Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    if (opts.socket) server.listen(opts.socket, () => resolve());
    else server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = opts.socket ? 0 : (server.address() as net.AddressInfo).port;
  return {
    port,
    socket: opts.socket ?? null,
    startJob: async (site) => {
      root = site ? await realpath(site) : null;
      stats = { requests: 0, blocked: 0, reasons: [] };
      return stats;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
