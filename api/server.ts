/**
 * One port, two protocols: a connection whose first byte is a TLS handshake record (0x16,
 * RFC 8446 §5.1) goes to the HTTPS server; anything else is plain HTTP and goes to a server that
 * answers every request with 403 https_required — never served, never redirected (API.md).
 *
 * Every stage of a connection has a clock and the port has a budget, so idle sockets cannot
 * exhaust file descriptors (slowloris, issue #10 item 7):
 * - connections are capped in all and per client address (an IPv6 client by its /64); one over
 *   the cap is closed at once, before any byte is read. Trusted proxies are exempt from the
 *   per-address cap (every client behind them shares their address) but not from the total;
 * - nothing before the first byte for `firstByteTimeoutMs` → closed;
 * - the TLS handshake and then the request headers must complete within `headersTimeoutMs`;
 * - a socket silent for `idleTimeoutMs` mid-request is closed (a slow upload that keeps sending
 *   is fine, and `requestTimeoutMs` bounds it in all; the idle clock must outlast `Prefer: wait=60`);
 * - an idle keep-alive connection is closed after `keepAliveTimeoutMs`.
 */
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { RequestListener } from "node:http";
import { addressKey } from "../core/net/proxies.ts";

export interface ConnectionLimits {
  maxConnections: number;
  maxConnectionsPerAddress: number;
  firstByteTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** A whole request, body included (uploads of a gigabyte take a while). */
  requestTimeoutMs: number;
  /** A connection with a request in progress that is silent this long is closed. */
  idleTimeoutMs: number;
  /** Addresses exempt from the per-address cap. */
  isTrustedProxy: (address: string | undefined) => boolean;
}

export const DEFAULT_LIMITS: ConnectionLimits = {
  maxConnections: 4096,
  maxConnectionsPerAddress: 128,
  firstByteTimeoutMs: 10_000,
  headersTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  requestTimeoutMs: 30 * 60_000,
  idleTimeoutMs: 120_000,
  isTrustedProxy: () => false,
};

export interface DualServer {
  server: net.Server;
  https: https.Server;
  /** Open connections now, in all and per address key (for tests and metrics). */
  connections(): { total: number; byAddress: ReadonlyMap<string, number> };
  close(): Promise<void>;
}

export function createDualServer(
  app: RequestListener,
  tls: { cert: Buffer; key: Buffer },
  plainApp: RequestListener,
  limits: Partial<ConnectionLimits> = {},
): DualServer {
  const l: ConnectionLimits = { ...DEFAULT_LIMITS, ...limits };
  const secure = https.createServer({ cert: tls.cert, key: tls.key, minVersion: "TLSv1.2", handshakeTimeout: l.headersTimeoutMs }, app);
  const plain = http.createServer(plainApp);
  for (const s of [secure, plain]) {
    s.requestTimeout = l.requestTimeoutMs;
    s.headersTimeout = l.headersTimeoutMs;
    s.keepAliveTimeout = l.keepAliveTimeoutMs;
    // Inactivity: Node destroys a socket that is silent this long (no 'timeout' listener of ours).
    s.timeout = l.idleTimeoutMs;
    // headersTimeout and requestTimeout are enforced by a periodic sweep over the server's
    // connections, which Node starts on 'listening'. These two servers never listen (the sniffer
    // hands them sockets), so without this event neither timeout was ever enforced: start it.
    (s as unknown as { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(
      30_000,
      Math.max(250, l.headersTimeoutMs / 4),
    );
    s.emit("listening");
  }
  let total = 0;
  const byAddress = new Map<string, number>();
  /** Sockets whose first byte has not come yet: neither HTTP server knows them. */
  const sniffing = new Set<net.Socket>();

  const server = net.createServer({ pauseOnConnect: true }, (socket) => {
    const peer = socket.remoteAddress;
    const key = addressKey(peer ?? "unknown");
    const exempt = l.isTrustedProxy(peer);
    const mine = byAddress.get(key) ?? 0;
    if (total >= l.maxConnections || (!exempt && mine >= l.maxConnectionsPerAddress)) {
      // No TLS alert, no HTTP answer: either would cost more than the connection is worth.
      socket.destroy();
      return;
    }
    total++;
    byAddress.set(key, mine + 1);
    socket.once("close", () => {
      total--;
      const n = (byAddress.get(key) ?? 1) - 1;
      if (n > 0) byAddress.set(key, n);
      else byAddress.delete(key);
    });
    socket.on("error", () => socket.destroy());
    sniffing.add(socket);
    socket.once("close", () => sniffing.delete(socket));
    socket.setTimeout(l.firstByteTimeoutMs, () => socket.destroy());
    socket.once("data", (first) => {
      sniffing.delete(socket);
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(first);
      (first[0] === 0x16 ? secure : plain).emit("connection", socket);
      process.nextTick(() => socket.resume());
    });
    socket.resume();
  });
  return {
    server,
    https: secure,
    connections: () => ({ total, byAddress }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sniffing) socket.destroy();
        secure.closeAllConnections();
        plain.closeAllConnections();
        // Stops their connection sweeps (they never listened, so close() only reports that).
        secure.close(() => undefined);
        plain.close(() => undefined);
      }),
  };
}
