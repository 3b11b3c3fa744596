/**
 * Slowloris (issue #10 item 7): idle and slow connections must not exhaust the server. Sockets
 * come from several loopback addresses (127.0.0.2…) so per-address caps are exercised the way
 * distinct clients would exercise them; the legitimate client speaks from 127.0.0.1.
 */
import net from "node:net";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type Server } from "./harness.ts";

const PER_ADDRESS = 40;
const TOTAL = 150;
const FIRST_BYTE_MS = 1500;
const HEADERS_MS = 2000;
const KEEP_ALIVE_MS = 1000;

let s: Server;
beforeAll(async () => {
  s = await startServer({
    FOLIO_MAX_CONNECTIONS: String(TOTAL),
    FOLIO_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
    FOLIO_FIRST_BYTE_TIMEOUT_MS: String(FIRST_BYTE_MS),
    FOLIO_HEADERS_TIMEOUT_MS: String(HEADERS_MS),
    FOLIO_KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
  });
}, 60_000);
afterAll(async () => {
  await s?.cleanup();
});

interface Idle {
  socket: net.Socket;
  openedAt: number;
  /** Resolves with how long the socket lived once the server closed it. */
  closed: Promise<number>;
}

async function idleSocket(localAddress: string): Promise<Idle> {
  const socket = net.connect({ host: "127.0.0.1", port: s.port, localAddress });
  socket.on("error", () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const openedAt = Date.now();
  socket.resume(); // read (and drop) whatever the server answers, so its FIN is seen
  const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(Date.now() - openedAt)));
  return { socket, openedAt, closed };
}

/** A TLS connection from `localAddress`, handshake done. */
async function tlsFrom(localAddress: string): Promise<tls.TLSSocket> {
  const raw = (await idleSocket(localAddress)).socket;
  const socket = tls.connect({ socket: raw, ca: s.ca, servername: "localhost" });
  socket.on("error", () => undefined);
  await new Promise<void>((resolve) => socket.once("secureConnect", () => resolve()));
  socket.resume();
  return socket;
}

async function healthy(): Promise<void> {
  const res = await s.request("GET", "/healthz", { key: null });
  expect(res.status).toBe(200);
}

describe("idle connections", () => {
  it("sockets past the per-address cap are closed at once, the rest after the first-byte timeout, and the server serves throughout", async () => {
    const from = "127.0.0.2";
    const sockets: Idle[] = [];
    for (let i = 0; i < PER_ADDRESS + 10; i++) sockets.push(await idleSocket(from));
    // The 10 over the cap are closed by the server without waiting for any timeout.
    const over = await Promise.all(sockets.slice(PER_ADDRESS).map((x) => x.closed));
    for (const lived of over) expect(lived).toBeLessThan(FIRST_BYTE_MS);
    // Another client, another address: served while the idle ones hold their slots.
    await healthy();
    const within = await Promise.all(sockets.slice(0, PER_ADDRESS).map((x) => x.closed));
    for (const lived of within) {
      expect(lived).toBeGreaterThanOrEqual(FIRST_BYTE_MS - 100);
      expect(lived).toBeLessThan(FIRST_BYTE_MS + 5_000);
    }
    await healthy();
  });

  it("the total cap holds across addresses; once the idle sockets are gone, new clients are served", async () => {
    const sockets: Idle[] = [];
    // Stay under the per-address cap, spread over enough addresses to reach the total.
    for (let i = 0; i < TOTAL; i++) sockets.push(await idleSocket(`127.0.1.${1 + Math.floor(i / (PER_ADDRESS - 1))}`));
    const extra = await idleSocket("127.0.2.1");
    expect(await extra.closed).toBeLessThan(FIRST_BYTE_MS);
    await Promise.all(sockets.map((x) => x.closed));
    await healthy();
  });

  it("a TLS handshake with no request after it is closed after the headers timeout", async () => {
    const socket = await tlsFrom("127.0.0.3");
    const t0 = Date.now();
    await new Promise<void>((resolve) => socket.once("close", () => resolve()));
    expect(Date.now() - t0).toBeLessThan(HEADERS_MS + 5_000);
  });

  it("headers sent a line at a time (classic slowloris) are cut off by the headers timeout", async () => {
    const socket = await tlsFrom("127.0.0.4");
    const t0 = Date.now();
    let closed = false;
    socket.once("close", () => (closed = true));
    socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n");
    for (let i = 0; i < 100 && !closed; i++) {
      socket.write(`X-Drip-${i}: ${i}\r\n`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(closed).toBe(true);
    expect(Date.now() - t0).toBeLessThan(HEADERS_MS + 5_000);
  });

  it("an idle keep-alive connection is closed after the keep-alive timeout", async () => {
    const socket = await tlsFrom("127.0.0.5");
    let text = "";
    socket.on("data", (b: Buffer) => (text += b.toString()));
    socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n");
    const t0 = Date.now();
    await new Promise<void>((resolve) => socket.once("close", () => resolve()));
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(KEEP_ALIVE_MS - 100);
    expect(Date.now() - t0).toBeLessThan(KEEP_ALIVE_MS + 5_000);
  });

  it("plain HTTP that stops after the first byte is closed too", async () => {
    const x = await idleSocket("127.0.0.6");
    x.socket.write("G");
    expect(await x.closed).toBeLessThan(HEADERS_MS + 5_000);
  });
});
