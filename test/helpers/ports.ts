/**
 * Free loopback ports for the servers and daemons the tests start. A port from listen(0) lies in
 * the kernel's ephemeral range, which it also hands to outgoing connections: between our check
 * and a daemon's bind, a kube-apiserver's connection to etcd took the port picked for the
 * kube-controller-manager ("bind: address already in use", CI in session 21). Ports are picked
 * below that range (/proc/sys/net/ipv4/ip_local_port_range), where only another listener can take
 * one, at random so that test processes running side by side rarely try the same, and never the
 * same one twice in a process.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/** The lowest port picked; below it live well-known services. */
const LOWEST = 10_000;
/** Ports tried before falling back to one the kernel picks. */
const TRIES = 200;

const handedOut = new Set<number>();

/** The first port of the kernel's ephemeral range (32768 on Linux by default). */
function ephemeralStart(): number {
  try {
    const first = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > 0 ? first : 32_768;
  } catch {
    return 32_768;
  }
}

/** Listens on `port` of 127.0.0.1 (0: any) and closes again; the port bound, or null when it was taken. */
function tryListen(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(null));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : null;
      server.close(() => resolve(bound));
    });
  });
}

/** A TCP port of 127.0.0.1 free when we return, below the ephemeral range when there is room. */
export async function freePort(): Promise<number> {
  const top = ephemeralStart();
  for (let i = 0; i < TRIES && top - LOWEST > TRIES; i++) {
    const port = LOWEST + Math.floor(Math.random() * (top - LOWEST));
    if (handedOut.has(port)) continue;
    if ((await tryListen(port)) !== null) {
      handedOut.add(port);
      return port;
    }
  }
  const port = await tryListen(0);
  if (port === null) throw new Error("no free loopback port");
  handedOut.add(port);
  return port;
}
