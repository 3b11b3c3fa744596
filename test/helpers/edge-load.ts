/**
 * Hostile load on the API's edge for the resource test and `make bench-edge`: idle sockets from
 * many loopback addresses that reconnect whenever the server closes them (a slowloris client does
 * not give up), and multipart uploads that trickle their bytes. Everything is bounded: it stops
 * when `stop()` is called.
 */
import https from "node:https";
import net from "node:net";

export interface EdgeLoad {
  /** Idle sockets open right now. */
  open(): number;
  /** Idle sockets the server has closed so far. */
  closedByServer(): number;
  /** Slow uploads that are still sending. */
  uploading(): number;
  stop(): Promise<void>;
}

export interface EdgeLoadOptions {
  port: number;
  ca: Buffer;
  key: string;
  idleSockets: number;
  /** Loopback addresses the idle sockets come from (127.1.0.1 …), so no per-address cap is met by design. */
  addresses: number;
  slowUploads: number;
  /** Bytes per trickle and the pause between them. */
  trickleBytes: number;
  trickleMs: number;
}

export function startEdgeLoad(o: EdgeLoadOptions): EdgeLoad {
  let stopped = false;
  let open = 0;
  let closed = 0;
  let uploading = 0;
  const sockets = new Set<net.Socket>();
  const requests = new Set<ReturnType<typeof https.request>>();

  const idle = (i: number): void => {
    if (stopped) return;
    const localAddress = `127.1.${Math.floor((i % o.addresses) / 250)}.${1 + ((i % o.addresses) % 250)}`;
    const socket = net.connect({ host: "127.0.0.1", port: o.port, localAddress });
    let connected = false;
    sockets.add(socket);
    socket.on("connect", () => {
      connected = true;
      open++;
    });
    socket.on("error", () => undefined);
    socket.resume();
    socket.on("close", () => {
      sockets.delete(socket);
      if (connected) {
        open--;
        if (!stopped) closed++;
      }
      // Reconnect, as an attacker would.
      setTimeout(() => idle(i), connected ? 50 : 200).unref();
    });
  };

  const boundary = "folioSlowUpload";
  const slow = (i: number): void => {
    if (stopped) return;
    const req = https.request(
      {
        host: "127.0.0.1",
        port: o.port,
        method: "POST",
        path: "/v1/files",
        ca: o.ca,
        agent: false,
        localAddress: `127.2.0.${1 + (i % 250)}`,
        headers: { Authorization: `Bearer ${o.key}`, "Content-Type": `multipart/form-data; boundary=${boundary}` },
      },
      (res) => res.resume(),
    );
    requests.add(req);
    uploading++;
    req.on("error", () => undefined);
    req.on("close", () => {
      uploading--;
      requests.delete(req);
      setTimeout(() => slow(i), 100).unref();
    });
    req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.pdf"\r\n\r\n%PDF-1.7\n`);
    const chunk = Buffer.alloc(o.trickleBytes, 0x20);
    const timer = setInterval(() => {
      if (stopped || req.destroyed) return clearInterval(timer);
      req.write(chunk);
    }, o.trickleMs);
    timer.unref();
  };

  for (let i = 0; i < o.idleSockets; i++) idle(i);
  for (let i = 0; i < o.slowUploads; i++) slow(i);

  return {
    open: () => open,
    closedByServer: () => closed,
    uploading: () => uploading,
    async stop() {
      stopped = true;
      for (const s of sockets) s.destroy();
      for (const r of requests) r.destroy();
      await new Promise((r) => setTimeout(r, 200));
    },
  };
}

/** The p-th percentile (nearest rank) of `values`. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * The same load in a child process, so that the attacker's event loop never delays the measuring
 * client's (on two cores the CPU is still shared, as it would be on one server).
 */
export interface RemoteEdgeLoad {
  status(): { open: number; closed: number; uploading: number };
  stop(): Promise<void>;
}

export async function spawnEdgeLoad(o: EdgeLoadOptions): Promise<RemoteEdgeLoad> {
  const { spawn } = await import("node:child_process");
  const { fileURLToPath } = await import("node:url");
  const child = spawn(process.execPath, [fileURLToPath(new URL("./edge-load-main.ts", import.meta.url))], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let last = { open: 0, closed: 0, uploading: 0 };
  let buf = "";
  child.stdout.on("data", (b: Buffer) => {
    buf += b.toString();
    const lines = buf.split("\n");
    buf = lines.pop()!;
    for (const l of lines) if (l.startsWith("{")) last = JSON.parse(l) as typeof last;
  });
  child.stdin.end(JSON.stringify({ ...o, ca: o.ca.toString("utf8") }));
  return {
    status: () => last,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
