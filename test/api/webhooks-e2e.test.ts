/**
 * Webhooks through the real server (API.md "Webhooks"): a receiver on loopback (allow-listed, as
 * an operator would) verifies every delivery with the stock `standardwebhooks` library; a failing
 * receiver gets the same webhook-id again; a delivery pending at a restart is delivered after it;
 * the job shows the delivery state.
 */
import { mkdtemp, rm } from "node:fs/promises";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { loadOrCreateTls } from "../../api/tls.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blob, startServer, waitForJob, type Server } from "./harness.ts";
import { textPdf } from "./fixtures.ts";

interface Received {
  id: string;
  payload: any;
  verified: boolean;
}

let dir: string;
let cert: Buffer;
let key: Buffer;
let s: Server;
let received: Received[] = [];
let answer = 200;
let receiver: https.Server;
let receiverUrl = "";

function startReceiver(port = 0): Promise<number> {
  receiver = https.createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      let verified = false;
      try {
        new Webhook(s.webhookSecret).verify(body, req.headers as Record<string, string>);
        verified = true;
      } catch {
        verified = false;
      }
      received.push({ id: String(req.headers["webhook-id"]), payload: JSON.parse(body), verified });
      res.writeHead(answer).end();
    });
  });
  return new Promise((resolve) => receiver.listen(port, "127.0.0.1", () => resolve((receiver.address() as AddressInfo).port)));
}

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function submit(webhookUrl: string): Promise<string> {
  const form = new FormData();
  form.append("file", blob(await textPdf(2, "w")), "w.pdf");
  form.append("mode", "pages");
  form.append("webhook_url", webhookUrl);
  const res = await s.request("POST", "/v1/pdf/split", { form });
  expect(res.status, res.text).toBe(202);
  return res.json.id;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "folio-hook-"));
  // The same self-signed localhost certificate `folio serve` makes on first start.
  const tls = await loadOrCreateTls(dir, {});
  cert = tls.cert;
  key = tls.key;
  const port = await startReceiver();
  receiverUrl = `https://127.0.0.1:${port}/hooks/folio`;
  s = await startServer({ FOLIO_WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", NODE_EXTRA_CA_CERTS: tls.certPath });
}, 60_000);
afterAll(async () => {
  await s?.cleanup();
  receiver?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("webhooks end to end", () => {
  it("delivers job.succeeded signed so that the standardwebhooks library verifies it, and shows it on the job", async () => {
    received = [];
    answer = 200;
    const id = await submit(receiverUrl);
    await until(() => received.length >= 1, 30_000);
    const [hit] = received;
    expect(hit!.verified).toBe(true);
    expect(hit!.id).toMatch(/^msg_/);
    expect(hit!.payload).toMatchObject({
      type: "job.succeeded",
      timestamp: expect.any(String),
      data: { id, object: "job", status: "succeeded" },
    });
    expect(hit!.payload.data.result.files).toHaveLength(3);
    const job = await waitForJob(s, id);
    const state = (await s.request("GET", `/v1/jobs/${id}`)).json.webhook;
    expect(state).toMatchObject({ url: receiverUrl, status: "delivered", attempts: 1, last_error: null });
    expect(job.status).toBe("succeeded");
  });

  it("retries a failing receiver with the same webhook-id until it answers 2xx", { timeout: 60_000 }, async () => {
    received = [];
    answer = 500;
    const id = await submit(receiverUrl);
    await until(() => received.length >= 1, 30_000);
    expect((await s.request("GET", `/v1/jobs/${id}`)).json.webhook).toMatchObject({
      status: "failing",
      attempts: 1,
      last_error: expect.stringContaining("500"),
    });
    answer = 200;
    await until(() => received.length >= 2, 30_000);
    expect(received[1]!.id).toBe(received[0]!.id);
    expect(received.every((r) => r.verified)).toBe(true);
    const state = (await s.request("GET", `/v1/jobs/${id}`)).json.webhook;
    expect(state).toMatchObject({ status: "delivered", attempts: 2 });
  });

  it("delivers after a restart of the server what was pending before it", { timeout: 90_000 }, async () => {
    received = [];
    const port = Number(new URL(receiverUrl).port);
    await new Promise<void>((r) => receiver.close(() => r()));
    const id = await submit(receiverUrl);
    await waitForJob(s, id);
    // The first attempt failed (nobody listening); the retry is due after about 5 s: stop before it.
    await until(async () => (await s.request("GET", `/v1/jobs/${id}`)).json.webhook?.attempts >= 1, 30_000);
    const before = (await s.request("GET", `/v1/jobs/${id}`)).json.webhook;
    expect(before.attempts).toBe(1);
    expect(before.status).not.toBe("delivered");
    await s.stop();
    await startReceiver(port);
    answer = 200;
    await s.restart();
    await until(() => received.some((r) => r.payload.data.id === id), 60_000);
    expect(received.find((r) => r.payload.data.id === id)!.verified).toBe(true);
  });

  it("announces a deleted unfinished job as job.canceled", { timeout: 60_000 }, async () => {
    received = [];
    answer = 200;
    const form = new FormData();
    form.append("file", blob(await textPdf(600, "c")), "c.pdf");
    form.append("mode", "pages");
    form.append("webhook_url", receiverUrl);
    const res = await s.request("POST", "/v1/pdf/split", { form });
    expect((await s.request("DELETE", `/v1/jobs/${res.json.id}`)).status).toBe(204);
    await until(() => received.some((r) => r.payload.data.id === res.json.id), 30_000);
    const hit = received.find((r) => r.payload.data.id === res.json.id)!;
    expect(hit.payload.type).toBe("job.canceled");
    expect(hit.payload.data.status).toBe("canceled");
    expect(hit.verified).toBe(true);
  });

  it("refuses at submission a webhook URL that is not allow-listed and not public", async () => {
    const res = await s.request("POST", "/v1/pdf/split", {
      json: { inputs: [{ file_id: "file_xxxxxxxxxxxxxxxxxxxxxxxx" }], mode: "pages", webhook_url: "https://[::1]:1/x" },
    });
    expect(res.status).toBe(422);
    expect(res.json.errors.map((e: any) => e.path)).toContain("webhook_url");
  });

  it("never logs the webhook secret or signatures", () => {
    expect(s.logs().split("wrote merged.pdf").pop()).not.toContain(s.webhookSecret);
    expect(s.logs()).not.toMatch(/v1,[A-Za-z0-9+/=]{40,}/);
  });
});
