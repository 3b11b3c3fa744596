/**
 * One port, two protocols: a connection whose first byte is a TLS handshake record (0x16,
 * RFC 8446 §5.1) goes to the HTTPS server; anything else is plain HTTP and goes to a server that
 * answers every request with 403 https_required — never served, never redirected (API.md).
 */
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { RequestListener } from "node:http";

export interface DualServer {
  server: net.Server;
  https: https.Server;
  close(): Promise<void>;
}

export function createDualServer(app: RequestListener, tls: { cert: Buffer; key: Buffer }, plainApp: RequestListener): DualServer {
  const secure = https.createServer({ cert: tls.cert, key: tls.key, minVersion: "TLSv1.2" }, app);
  const plain = http.createServer(plainApp);
  // Uploads of a gigabyte take a while; a slow client still must not hold a socket forever.
  secure.requestTimeout = 30 * 60_000;
  secure.headersTimeout = 60_000;
  secure.keepAliveTimeout = 5_000;
  const server = net.createServer((socket) => {
    socket.once("data", (first) => {
      socket.pause();
      socket.unshift(first);
      (first[0] === 0x16 ? secure : plain).emit("connection", socket);
      process.nextTick(() => socket.resume());
    });
    socket.on("error", () => socket.destroy());
  });
  return {
    server,
    https: secure,
    close: () =>
      new Promise<void>((resolve) => {
        secure.closeAllConnections();
        plain.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
