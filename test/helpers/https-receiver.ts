/**
 * A real HTTPS server on loopback that records every request, for tests of what Folio sends
 * (webhooks): its certificate is self-signed (pass `cert` as the client's CA), and `answer`
 * decides each reply (default 204).
 */
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { ServerResponse } from "node:http";
import { loadOrCreateTls } from "../../api/tls.ts";
import { tmpDir } from "./tools.ts";

export interface ReceivedRequest {
  path: string;
  headers: Record<string, string>;
  raw: Buffer;
}

export interface HttpsReceiver {
  /** `https://127.0.0.1:<port>` */
  readonly base: string;
  readonly cert: Buffer;
  /** Every request so far, oldest first; a test may empty it. */
  readonly received: ReceivedRequest[];
  close(): Promise<void>;
}

/** Replies to a request; one that writes nothing leaves the client hanging. */
export type Answer = (req: ReceivedRequest, res: ServerResponse) => void;

export async function startHttpsReceiver(answer: Answer = (_r, res) => void res.writeHead(204).end()): Promise<HttpsReceiver> {
  const dir = await tmpDir("folio-receiver-");
  const tls = await loadOrCreateTls(dir.dir, {});
  const received: ReceivedRequest[] = [];
  const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r = { path: req.url ?? "", headers: req.headers as Record<string, string>, raw: Buffer.concat(chunks) };
      received.push(r);
      answer(r, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    base: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cert: tls.cert,
    received,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dir.cleanup();
    },
  };
}
