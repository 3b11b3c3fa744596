/**
 * Webhook delivery end to end: a real HTTPS receiver on 127.0.0.1 with a self-signed certificate
 * (trusted through the test-only `tls.ca` option; 127.0.0.1 is on the guard's allow-list), the
 * SQLite queue in a temporary data directory, and the stock `standardwebhooks` library verifying
 * every request. Schedules are shortened to milliseconds; time is otherwise real, because the
 * library checks `webhook-timestamp` against the clock.
 */
import { mkdtemp, rm } from "node:fs/promises";
import https from "node:https";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { Webhook } from "standardwebhooks";
import { loadOrCreateTls } from "../../api/tls.ts";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../core/logger.ts";
import { SsrfGuard } from "../../core/net/ssrf.ts";
import type { JobObject } from "../../core/schemas/api.ts";
import { openDb, type Db } from "../../api/store/db.ts";
import { TenantStore, type Tenant } from "../../api/store/tenants.ts";
import { WebhookStore } from "../../api/store/webhooks.ts";
import {
  RETRY_SCHEDULE_MS,
  retryDelay,
  WebhookDelivery,
  type WebhookDeliveryOptions,
  type WebhookOutcome,
} from "../../api/webhooks/delivery.ts";

type Reply = number | "hang" | { status: number; location?: string; bodyBytes?: number };
interface Received {
  headers: Record<string, string>;
  body: string;
}

/** An HTTPS receiver on 127.0.0.1 answering from a script of replies (the last one repeats). */
class Receiver {
  readonly requests: Received[] = [];
  connections = 0;
  replies: Reply[] = [200];
  /** Fixed replies by request path, before the script (two tenants' receivers on one host). */
  byPath: Record<string, Reply> = {};
  readonly server: https.Server;

  constructor(key: Buffer, cert: Buffer) {
    this.server = https.createServer({ key, cert }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        this.requests.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString("utf8") });
        const reply = this.byPath[req.url ?? ""] ?? (this.replies.length > 1 ? this.replies.shift()! : this.replies[0]!);
        if (reply === "hang") return;
        if (typeof reply === "number") res.writeHead(reply).end("ok");
        else res.writeHead(reply.status, reply.location ? { location: reply.location } : {}).end(Buffer.alloc(reply.bodyBytes ?? 0, 0x61));
      });
    });
    this.server.on("connection", () => this.connections++);
  }

  async listen(port = 0, host = "127.0.0.1"): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, host, resolve));
    return `https://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let dir: string;
let cert: Buffer;
let tlsKey: Buffer;
let db: Db;
let tenants: TenantStore;
let receiver: Receiver;
let base: string;
const logLines: string[] = [];
const log = createLogger({
  level: "debug",
  destination: new Writable({
    write(chunk: Buffer, _enc, cb) {
      logLines.push(chunk.toString());
      cb();
    },
  }),
});
const secretsSeen: string[] = [];
const running: WebhookDelivery[] = [];
let outcomes: WebhookOutcome[] = [];

function tenant(): Tenant {
  const t = tenants.create(`t${secretsSeen.length}_${Date.now()}`, "business");
  secretsSeen.push(t.webhook_secret);
  return t;
}

function jobSnapshot(id: string, url: string): JobObject {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
  return {
    id,
    object: "job",
    operation: "merge",
    status: "succeeded",
    created_at: now,
    started_at: now,
    completed_at: now,
    expires_at: now,
    inputs: [],
    options: {},
    result: { files: [] },
    error: null,
    webhook: { url, status: "pending", attempts: 0, last_attempt_at: null, last_error: null },
    metadata: { order: "42" },
  };
}

function delivery(over: Partial<WebhookDeliveryOptions> = {}, database: Db = db): WebhookDelivery {
  const d = new WebhookDelivery({
    db: database,
    tenants: database === db ? tenants : new TenantStore(database),
    guard: new SsrfGuard(["127.0.0.1"]),
    log,
    tls: { ca: cert },
    schedule: [100, 100, 100],
    jitter: 0,
    pollIntervalMs: 20,
    onOutcome: (o) => outcomes.push(o),
    ...over,
  });
  running.push(d);
  return d;
}

let jobCounter = 0;
const jobId = (): string => `job_test${String(++jobCounter).padStart(20, "0")}`;
const waitFor = (fn: () => void, timeout = 10_000): Promise<void> => vi.waitFor(fn, { timeout, interval: 20 });

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "folio-webhooks-"));
  // The same self-signed localhost certificate `folio serve` makes on first start.
  const tls = await loadOrCreateTls(dir, {});
  cert = tls.cert;
  tlsKey = tls.key;
  receiver = new Receiver(tls.key, cert);
  base = await receiver.listen();
  db = openDb(path.join(dir, "data"));
  tenants = new TenantStore(db);
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((d) => d.stop()));
  receiver.requests.length = 0;
  receiver.replies = [200];
  outcomes = [];
});

afterAll(async () => {
  await receiver.close();
  db.close();
  await rm(dir, { recursive: true, force: true });
});

describe("webhook delivery", () => {
  it("should deliver a signed event that the stock standardwebhooks library verifies", async () => {
    const t = tenant();
    const d = delivery();
    const job = jobId();
    const url = `${base}/hooks/tok_pathsecret?x=1`;
    const msgId = d.enqueue(t.id, job, url, "job.succeeded", jobSnapshot(job, url));
    d.start();
    await waitFor(() => expect(d.stateForJob(job)).toMatchObject({ status: "delivered", attempts: 1, last_error: null }));
    expect(receiver.requests).toHaveLength(1);
    const [req] = receiver.requests;
    expect(req!.headers["webhook-id"]).toBe(msgId);
    expect(msgId).toMatch(/^msg_[0-9A-Za-z]{24}$/);
    expect(req!.headers["content-type"]).toBe("application/json");
    const event = new Webhook(t.webhook_secret).verify(req!.body, req!.headers) as { type: string; timestamp: string; data: JobObject };
    expect(event.type).toBe("job.succeeded");
    expect(event.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(event.data).toMatchObject({ id: job, object: "job", metadata: { order: "42" } });
    expect(d.stateForJob(job)!.last_attempt_at).toBeTypeOf("number");
    expect(outcomes).toEqual(["delivered"]);
  });

  it("should sign with both secrets during a rotation, each verifying on its own", async () => {
    const old = tenant();
    const rotated = tenants.rotateWebhookSecret(old.id, 3_600_000);
    secretsSeen.push(rotated.webhook_secret);
    const d = delivery();
    const job = jobId();
    d.enqueue(old.id, job, `${base}/`, "job.failed", jobSnapshot(job, `${base}/`));
    d.start();
    await waitFor(() => expect(d.stateForJob(job)?.status).toBe("delivered"));
    const [req] = receiver.requests;
    expect(req!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(() => new Webhook(old.webhook_secret).verify(req!.body, req!.headers)).not.toThrow();
    expect(() => new Webhook(rotated.webhook_secret).verify(req!.body, req!.headers)).not.toThrow();
  });

  it("should retry when the receiver fails: 500 then 200 is delivered after 2 attempts with the same webhook-id", async () => {
    const t = tenant();
    receiver.replies = [500, 200];
    const d = delivery({ schedule: [400] });
    const job = jobId();
    d.enqueue(t.id, job, `${base}/`, "job.succeeded", jobSnapshot(job, `${base}/`));
    d.start();
    await waitFor(() => expect(d.stateForJob(job)).toMatchObject({ status: "failing", attempts: 1, last_error: "HTTP 500" }));
    await waitFor(() => expect(d.stateForJob(job)).toMatchObject({ status: "delivered", attempts: 2, last_error: null }));
    const [first, second] = receiver.requests;
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect(second!.body).toBe(first!.body);
    expect(() => new Webhook(t.webhook_secret).verify(second!.body, second!.headers)).not.toThrow();
    expect(outcomes).toEqual(["failed", "delivered"]);
  });

  it("should stop at once on 410 Gone", async () => {
    const t = tenant();
    receiver.replies = [410];
    const d = delivery({ schedule: [50, 50, 50] });
    const job = jobId();
    d.enqueue(t.id, job, `${base}/`, "job.canceled", jobSnapshot(job, `${base}/`));
    d.start();
    await waitFor(() =>
      expect(d.stateForJob(job)).toMatchObject({ status: "gave_up", attempts: 1, last_error: expect.stringMatching(/410/) }),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.requests).toHaveLength(1);
    expect(outcomes).toEqual(["failed", "gave_up"]);
  });

  it("should give up after the last attempt of the schedule", async () => {
    const t = tenant();
    receiver.replies = [503];
    const d = delivery({ schedule: [50, 50] });
    const job = jobId();
    d.enqueue(t.id, job, `${base}/`, "job.failed", jobSnapshot(job, `${base}/`));
    d.start();
    await waitFor(() => expect(d.stateForJob(job)).toMatchObject({ status: "gave_up", attempts: 3, last_error: "HTTP 503" }));
    expect(receiver.requests).toHaveLength(3);
    expect(outcomes).toEqual(["failed", "failed", "failed", "gave_up"]);
  });

  it("should not follow a redirect: a 302 to another URL is a failed attempt and the target gets nothing", async () => {
    const target = new Receiver(tlsKey, cert);
    const targetUrl = await target.listen();
    try {
      const t = tenant();
      receiver.replies = [{ status: 302, location: `${targetUrl}/stolen` }];
      const d = delivery({ schedule: [50] });
      const job = jobId();
      d.enqueue(t.id, job, `${base}/`, "job.succeeded", jobSnapshot(job, `${base}/`));
      d.start();
      await waitFor(() =>
        expect(d.stateForJob(job)).toMatchObject({ status: "gave_up", attempts: 2, last_error: "redirect (HTTP 302) not followed" }),
      );
      expect(target.connections).toBe(0);
      expect(target.requests).toHaveLength(0);
    } finally {
      await target.close();
    }
  });

  it("should connect to the address the guard checked, not re-resolve the name, and verify the certificate by name", async () => {
    // A second receiver on 127.0.0.2, same port. The guard's (injected) resolver says localhost is
    // 127.0.0.2; the system resolver would say 127.0.0.1 or ::1. Only a pinned connection lands here.
    const pinned = new Receiver(tlsKey, cert);
    const port = new URL(base).port;
    await pinned.listen(Number(port), "127.0.0.2");
    try {
      const t = tenant();
      const lookup = (): Promise<{ address: string; family: 4 }[]> => Promise.resolve([{ address: "127.0.0.2", family: 4 }]);
      const d = delivery({ guard: new SsrfGuard(["localhost"], { lookup }) });
      const job = jobId();
      d.enqueue(t.id, job, `https://localhost:${port}/`, "job.succeeded", jobSnapshot(job, `https://localhost:${port}/`));
      expect(await d.runDue()).toBe(1);
      expect(d.stateForJob(job)).toMatchObject({ status: "delivered", attempts: 1 });
      expect(pinned.requests).toHaveLength(1);
      expect(pinned.requests[0]!.headers.host).toBe(`localhost:${port}`);
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await pinned.close();
    }
  });

  it("should verify TLS by default: without the test CA the self-signed receiver is refused", async () => {
    const t = tenant();
    const d = delivery({ tls: undefined, schedule: [] });
    const job = jobId();
    d.enqueue(t.id, job, `${base}/`, "job.succeeded", jobSnapshot(job, `${base}/`));
    await d.runDue();
    expect(d.stateForJob(job)).toMatchObject({ status: "gave_up", last_error: expect.stringMatching(/SELF_SIGNED/) });
    expect(receiver.requests).toHaveLength(0);
  });

  it("should fail an attempt that takes longer than the timeout", async () => {
    const t = tenant();
    receiver.replies = ["hang"];
    const d = delivery({ timeoutMs: 300, schedule: [] });
    const job = jobId();
    d.enqueue(t.id, job, `${base}/`, "job.succeeded", jobSnapshot(job, `${base}/`));
    const started = Date.now();
    await d.runDue();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(d.stateForJob(job)).toMatchObject({ status: "gave_up", attempts: 1, last_error: "timed out after 300 ms" });
  });

  it("should read at most a few KiB of a large response body and still count the 2xx", async () => {
    const t = tenant();
    receiver.replies = [{ status: 200, bodyBytes: 8 * 1024 * 1024 }];
    const d = delivery();
    const job = jobId();
    d.enqueue(t.id, job, `${base}/`, "job.succeeded", jobSnapshot(job, `${base}/`));
    await d.runDue();
    expect(d.stateForJob(job)).toMatchObject({ status: "delivered", attempts: 1 });
  });

  it("should refuse an address blocked at attempt time (allow-list removed): failure recorded, no connection made", async () => {
    const t = tenant();
    const job = jobId();
    delivery().enqueue(t.id, job, `${base}/`, "job.succeeded", jobSnapshot(job, `${base}/`));
    const before = receiver.connections;
    const d = delivery({ guard: new SsrfGuard([]), schedule: [60_000] });
    expect(await d.runDue()).toBe(1);
    expect(d.stateForJob(job)).toMatchObject({ status: "failing", attempts: 1, last_error: expect.stringMatching(/^blocked: .*loopback/) });
    expect(receiver.connections).toBe(before);
    expect(outcomes).toEqual(["blocked"]);
  });

  it("should survive a restart: a delivery interrupted by stop() is delivered by a new instance on the same database", async () => {
    const t = tenant();
    receiver.replies = ["hang", 200];
    const first = delivery();
    const job = jobId();
    const msgId = first.enqueue(t.id, job, `${base}/`, "job.succeeded", jobSnapshot(job, `${base}/`));
    first.start();
    await waitFor(() => expect(receiver.requests).toHaveLength(1));
    await first.stop();
    // The aborted attempt is handed back: still due, not counted against the schedule.
    expect(first.stateForJob(job)).toMatchObject({ status: "pending", attempts: 0 });

    const db2 = openDb(path.join(dir, "data"));
    try {
      const second = delivery({}, db2);
      second.start();
      await waitFor(() => expect(second.stateForJob(job)).toMatchObject({ status: "delivered", attempts: 1 }));
      expect(receiver.requests.map((r) => r.headers["webhook-id"])).toEqual([msgId, msgId]);
      expect(() => new Webhook(t.webhook_secret).verify(receiver.requests[1]!.body, receiver.requests[1]!.headers)).not.toThrow();
      await second.stop();
    } finally {
      db2.close();
    }
  });

  it("should open the circuit for a failing host and defer its other deliveries without spending their attempts", async () => {
    const t = tenant();
    receiver.replies = [503];
    const d = delivery({
      schedule: [60_000],
      concurrency: 1,
      breaker: { volumeThreshold: 2, errorThresholdPercentage: 50, resetTimeoutMs: 60_000 },
    });
    const jobs = [jobId(), jobId(), jobId(), jobId()];
    for (const j of jobs) d.enqueue(t.id, j, `${base}/`, "job.succeeded", jobSnapshot(j, `${base}/`));
    const started = Date.now();
    d.start();
    const store = new WebhookStore(db);
    const rows = (): { status: string; attempts: number; next_attempt_at: number | null }[] => jobs.map((j) => store.latestForJob(j)!);
    await waitFor(() => expect(rows().every((r) => (r.next_attempt_at ?? 0) > started + 30_000)).toBe(true));
    expect(rows().map((r) => [r.status, r.attempts])).toEqual([
      ["failing", 1],
      ["failing", 1],
      ["pending", 0],
      ["pending", 0],
    ]);
    expect(receiver.requests).toHaveLength(2);
    expect(logLines.join("")).toContain("Opened webhook circuit");
  });

  it("should keep one tenant's failing receiver from deferring another tenant's deliveries to the same host", async () => {
    const failing = tenant();
    const healthy = tenant();
    receiver.byPath = { "/failing": 503, "/healthy": 200 };
    try {
      const d = delivery({
        schedule: [60_000],
        concurrency: 1,
        breaker: { volumeThreshold: 2, errorThresholdPercentage: 50, resetTimeoutMs: 60_000 },
      });
      const store = new WebhookStore(db);
      const bad = [jobId(), jobId(), jobId()];
      for (const j of bad) d.enqueue(failing.id, j, `${base}/failing`, "job.succeeded", jobSnapshot(j, `${base}/failing`));
      d.start();
      // The failing tenant's circuit for this host is open: its third delivery is deferred untried.
      await waitFor(() => expect(store.latestForJob(bad[2]!)).toMatchObject({ status: "pending", attempts: 0 }));
      await waitFor(() => expect(logLines.join("")).toContain("Opened webhook circuit"));
      const good = [jobId(), jobId()];
      for (const j of good) d.enqueue(healthy.id, j, `${base}/healthy`, "job.succeeded", jobSnapshot(j, `${base}/healthy`));
      await waitFor(() => expect(good.map((j) => store.latestForJob(j)!.status)).toEqual(["delivered", "delivered"]));
      expect(store.latestForJob(bad[2]!)).toMatchObject({ status: "pending", attempts: 0 });
    } finally {
      receiver.byPath = {};
    }
  });

  it("should enqueue each event of a job once, and report no state for a job without deliveries", () => {
    const t = tenant();
    const d = delivery();
    const job = jobId();
    const a = d.enqueue(t.id, job, `${base}/`, "job.succeeded", jobSnapshot(job, `${base}/`));
    const b = d.enqueue(t.id, job, `${base}/`, "job.succeeded", jobSnapshot(job, `${base}/`));
    expect(b).toBe(a);
    expect(d.stateForJob(job)).toEqual({ status: "pending", attempts: 0, last_attempt_at: null, last_error: null });
    expect(d.stateForJob("job_none")).toBeNull();
  });
});

describe("retry schedule", () => {
  it("should follow 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: about a day, then give up", () => {
    const total = RETRY_SCHEDULE_MS.reduce((a, b) => a + b, 0);
    expect(total / 3_600_000).toBeGreaterThan(24);
    expect(total / 3_600_000).toBeLessThan(30);
    expect(retryDelay(1, RETRY_SCHEDULE_MS, 0, Math.random)).toBe(5_000);
    expect(retryDelay(7, RETRY_SCHEDULE_MS, 0, Math.random)).toBe(36_000_000);
    expect(retryDelay(8, RETRY_SCHEDULE_MS, 0.2, Math.random)).toBeNull();
  });

  it("should jitter each delay within ±20 %", () => {
    expect(retryDelay(2, RETRY_SCHEDULE_MS, 0.2, () => 0)).toBe(240_000);
    expect(retryDelay(2, RETRY_SCHEDULE_MS, 0.2, () => 0.999_999)).toBeCloseTo(360_000, -1);
    for (let i = 0; i < 100; i++) {
      const d = retryDelay(3, RETRY_SCHEDULE_MS, 0.2, Math.random)!;
      expect(d).toBeGreaterThanOrEqual(1_440_000);
      expect(d).toBeLessThanOrEqual(2_160_000);
    }
  });
});

describe("logs", () => {
  it("should never contain a webhook secret, a signature or the URL's path", () => {
    const text = logLines.join("");
    expect(text).toContain("Delivered webhook");
    expect(secretsSeen.length).toBeGreaterThan(5);
    for (const s of secretsSeen) {
      expect(text).not.toContain(s);
      expect(text).not.toContain(s.slice("whsec_".length));
    }
    expect(text).not.toContain("v1,");
    expect(text).not.toContain("tok_pathsecret");
  });
});
