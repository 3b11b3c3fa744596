/**
 * Warm browsers for HTML → PDF, kept like the LibreOffice pool (soffice-pool.ts): a fixed number
 * of slots, one browser and one job at a time per slot, a FIFO queue when all are busy. Each job
 * runs in a fresh browser context (chromium-render.ts). A browser is replaced
 *  - after `maxJobs` jobs, and when its process tree's memory passed `recycleMb` after a job
 *    (Chromium's caches and leaks grow with the pages it has seen; Gotenberg's users report it);
 *  - at once when a job timed out, crashed it or blew its memory cap.
 * A replacement starts in the background, so the next job finds a warm browser, and so does the
 * next job's fresh context and page (chromium-render.ts preparePage). With `warm: false`
 * (a one-shot CLI run, a Kubernetes pod) the browser is closed after its job.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Logger } from "../../core/logger.ts";
import type { SsrfGuard } from "../../core/net/ssrf.ts";
import { ChromiumInstance, type ChromiumSandbox } from "./chromium.ts";
import {
  discardPage,
  preparePage,
  RenderFailure,
  renderPdf,
  type PreparedPage,
  type RenderFigures,
  type RenderRequest,
} from "./chromium-render.ts";
import { startFetchProxy, type FetchProxy } from "./fetch-proxy.ts";

export interface BrowserProvider {
  readonly engine: "warm" | "cold";
  render(req: RenderRequest): Promise<RenderFigures>;
  close(): Promise<void>;
}

export interface ChromiumPoolOptions {
  chromium: string;
  tmpDir: string;
  size: number;
  warm: boolean;
  /** Jobs per browser before it is replaced. */
  maxJobs: number;
  /** Memory (MB, PSS of the browser's process tree) past which a browser is replaced after a job. */
  recycleMb: number;
  /** Memory cap while a job runs: past it the job is limit_exceeded. */
  jobMaxMb: number;
  /** Hard limit on one rendering. */
  jobTimeoutMs: number;
  heapMb: number;
  guard: SsrfGuard;
  log: Logger;
  /** Each browser in bubblewrap, reaching its slot's proxy over a Unix socket (chromium.ts); else bare. */
  sandbox?: ChromiumSandbox["policy"];
}

export interface ChromiumPoolStats {
  starts: number;
  recycles: number;
  kills: number;
  completed: number;
  /** PSS of each live browser tree, MB. */
  memoryMb: number[];
}

interface Slot {
  busy: boolean;
  browser: Promise<ChromiumInstance> | null;
  /** The slot's fetch proxy: every context of this slot's browser goes out through it. */
  proxy: Promise<FetchProxy> | null;
  /** The directory of the proxy's Unix socket, when the browser is sandboxed. */
  socketDir: string | null;
  /** A fresh context and page made for the next job. */
  spare: Promise<PreparedPage> | null;
}

export class ChromiumPool implements BrowserProvider {
  readonly engine: "warm" | "cold";
  private readonly opts: ChromiumPoolOptions;
  private readonly slots: Slot[];
  private readonly waiters: ((slot: Slot) => void)[] = [];
  private closed = false;
  private readonly counts = { starts: 0, recycles: 0, kills: 0, completed: 0 };

  constructor(opts: ChromiumPoolOptions) {
    this.opts = opts;
    this.engine = opts.warm ? "warm" : "cold";
    this.slots = Array.from({ length: Math.max(1, opts.size) }, () => ({
      busy: false,
      browser: null,
      proxy: null,
      socketDir: null,
      spare: null,
    }));
  }

  /** Starts every slot's browser now (a worker is warm before its first job). */
  warmUp(): void {
    // launch() handles its own failure (logged, the slot left empty for the next job to retry).
    for (const slot of this.slots) if (!slot.browser) void this.launch(slot).catch(() => undefined);
  }

  /** The slot's fetch proxy, started on first use: on a Unix socket of its own for a sandboxed browser. */
  private proxyOf(slot: Slot): Promise<FetchProxy> {
    slot.proxy ??= (async () => {
      if (!this.opts.sandbox) return startFetchProxy(this.opts.guard);
      // In the system's temporary directory, not FOLIO_TMP_DIR: a socket path is at most 107 bytes.
      const dir = path.join(os.tmpdir(), `folio-cdp-${randomBytes(4).toString("hex")}`);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      slot.socketDir = dir;
      return startFetchProxy(this.opts.guard, { socket: path.join(dir, "proxy.sock") });
    })();
    return slot.proxy;
  }

  private launch(slot: Slot): Promise<ChromiumInstance> {
    this.counts.starts++;
    const policy = this.opts.sandbox;
    const started = this.proxyOf(slot).then((proxy) =>
      ChromiumInstance.launch({
        chromium: this.opts.chromium,
        tmpDir: this.opts.tmpDir,
        heapMb: this.opts.heapMb,
        ...(policy && proxy.socket ? { sandbox: { policy, proxySocket: proxy.socket } } : {}),
      }),
    );
    slot.browser = started;
    slot.spare = null;
    started.then(
      (browser) => this.prepare(slot, browser),
      (err: unknown) => {
        this.opts.log.warn({ err }, "Chromium did not start");
        if (slot.browser === started) slot.browser = null;
      },
    );
    return started;
  }

  /** Makes the next job's context and page on `browser` (in the background). */
  private prepare(slot: Slot, browser: ChromiumInstance): void {
    const spare = this.proxyOf(slot).then((proxy) => preparePage(browser, browser.proxyPort ?? proxy.port));
    spare.catch(() => undefined);
    slot.spare = spare;
  }

  /** The prepared page for a job on `browser`, or a new one if none is ready or it failed. */
  private async pageFor(slot: Slot, browser: ChromiumInstance): Promise<PreparedPage> {
    const spare = slot.spare;
    slot.spare = null;
    const ready = spare ? await spare.catch(() => null) : null;
    if (ready) return ready;
    const proxy = await this.proxyOf(slot);
    return preparePage(browser, browser.proxyPort ?? proxy.port);
  }

  private acquire(): Promise<Slot> {
    const free = this.slots.find((s) => !s.busy);
    if (free) {
      free.busy = true;
      return Promise.resolve(free);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private release(slot: Slot): void {
    const next = this.waiters.shift();
    if (next) next(slot);
    else slot.busy = false;
  }

  private async retire(slot: Slot, browser: ChromiumInstance, why: "kill" | "recycle"): Promise<void> {
    if (why === "kill") {
      this.counts.kills++;
      browser.kill();
    } else this.counts.recycles++;
    slot.browser = null;
    slot.spare = null;
    await browser.close();
    if (this.opts.warm && !this.closed) void this.launch(slot).catch(() => undefined);
  }

  async render(req: RenderRequest): Promise<RenderFigures> {
    if (this.closed) throw new Error("the Chromium pool is closed");
    const slot = await this.acquire();
    try {
      let browser = await (slot.browser ?? this.launch(slot));
      if (!browser.alive) browser = await this.launch(slot);
      try {
        const page = await this.pageFor(slot, browser);
        const proxy = await slot.proxy!;
        const figures = await renderPdf(browser, proxy, page, req, { hardMs: this.opts.jobTimeoutMs, maxMb: this.opts.jobMaxMb });
        this.counts.completed++;
        browser.jobs++;
        if (!this.opts.warm) await this.retire(slot, browser, "recycle");
        else if (browser.jobs >= this.opts.maxJobs || (await browser.rssMb()) > this.opts.recycleMb) {
          this.opts.log.info({ jobs: browser.jobs }, "Recycling a Chromium");
          await this.retire(slot, browser, "recycle");
        } else this.prepare(slot, browser);
        return figures;
      } catch (err) {
        if (err instanceof RenderFailure) {
          if (err.aftermath === "kill" || !this.opts.warm) await this.retire(slot, browser, "kill");
          throw err.jobError;
        }
        // Anything else (the pipe broke): this browser cannot be trusted with another job.
        await this.retire(slot, browser, "kill");
        throw err;
      }
    } finally {
      this.release(slot);
    }
  }

  async stats(): Promise<ChromiumPoolStats> {
    const memoryMb: number[] = [];
    for (const s of this.slots) {
      const b = s.browser ? await s.browser.catch(() => null) : null;
      if (b?.alive) memoryMb.push(await b.rssMb());
    }
    return { ...this.counts, memoryMb };
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      this.slots.map(async (s) => {
        const b = s.browser ? await s.browser.catch(() => null) : null;
        const spare = s.spare ? await s.spare.catch(() => null) : null;
        s.browser = null;
        s.spare = null;
        if (b && spare) await discardPage(b, spare);
        await b?.close();
        const proxy = s.proxy ? await s.proxy.catch(() => null) : null;
        s.proxy = null;
        await proxy?.close();
        if (s.socketDir) await rm(s.socketDir, { recursive: true, force: true });
      }),
    );
  }
}
