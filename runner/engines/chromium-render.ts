/**
 * One HTML → PDF job on a running browser: a fresh browser context whose only way out is the
 * slot's fetch proxy (nothing — cookies, cache, storage, service workers — survives into the next
 * job), one page, navigate, wait (load, then network idle and/or a selector, all under one cap),
 * print (Page.printToPDF, streamed to disk), dispose of the context.
 *
 * The context and its page are made before the job arrives (preparePage, right after the previous
 * job): creating them starts a renderer process, the largest part of a small job's time. A page
 * prepared that way has never been used, so it is as fresh as one made on demand.
 *
 * What ends a job early, and how it is reported:
 *  - the render deadline (a page that loops forever blocks printing): `timeout`; the browser is
 *    killed, since a renderer stuck in a loop does not let its context go;
 *  - the renderer crashing, or the browser's memory passing its cap while the job runs (a page
 *    that allocates without bound): `limit_exceeded`;
 *  - a page that cannot be loaded at all (DNS, TLS, refused): `conversion_failed`.
 */
import { open } from "node:fs/promises";
import { JobError } from "../../core/errors.ts";
import { CdpError } from "./cdp.ts";
import type { ChromiumInstance } from "./chromium.ts";
import type { FetchProxy } from "./fetch-proxy.ts";

export interface RenderRequest {
  /** The page to open: the client's URL, or http://SITE_HOST/… for the job's own files. */
  url: string;
  /** The folder served as http://SITE_HOST/ (null for a URL). */
  site: string | null;
  /** Where the PDF is written. */
  output: string;
  /** Page.printToPDF parameters (paper, margins, scale, background, header and footer). */
  print: Record<string, unknown>;
  media: "print" | "screen";
  waitForSelector?: string;
  waitForNetworkIdle: boolean;
  /** Cap on all waiting (load, idle, selector); past it the page is printed as it is. */
  waitTimeoutMs: number;
  signal: AbortSignal;
}

export interface RenderFigures {
  /** Requests the page made, and how many the fetch proxy refused (with the reasons). */
  requests: number;
  blocked: number;
  blocked_reasons: string[];
  /** The waits that ran out at their cap. */
  wait_capped: boolean;
}

/** What the pool must do with the browser after a job. */
export type Aftermath = "keep" | "kill";

export class RenderFailure extends Error {
  override readonly name = "RenderFailure";
  readonly jobError: JobError;
  readonly aftermath: Aftermath;

  constructor(jobError: JobError, aftermath: Aftermath) {
    super(jobError.message, { cause: jobError });
    this.jobError = jobError;
    this.aftermath = aftermath;
  }
}

/** A fresh context with one blank page, attached and listened to. */
export interface PreparedPage {
  contextId: string;
  targetId: string;
  sessionId: string;
  /** Lifecycle events of the main frame, as "loaderId:name". */
  events: Set<string>;
  off: () => void;
}

/** Makes a context whose traffic goes through the proxy on `proxyPort`, with one blank page. */
export async function preparePage(browser: ChromiumInstance, proxyPort: number): Promise<PreparedPage> {
  const { cdp } = browser;
  const { browserContextId: contextId } = await cdp.send<{ browserContextId: string }>("Target.createBrowserContext", {
    disposeOnDetach: true,
    proxyServer: `http://127.0.0.1:${proxyPort}`,
    proxyBypassList: "<-loopback>",
  });
  const { targetId } = await cdp.send<{ targetId: string }>("Target.createTarget", { url: "about:blank", browserContextId: contextId });
  const { sessionId } = await cdp.send<{ sessionId: string }>("Target.attachToTarget", { targetId, flatten: true });
  const events = new Set<string>();
  const offs = [
    // Keyed by the loader: about:blank's own "load" must not count for the page.
    cdp.on("Page.lifecycleEvent", (p, s) => {
      if (s === sessionId && p.frameId === targetId) events.add(`${String(p.loaderId)}:${String(p.name)}`);
    }),
    // alert(), confirm(), print() would block the page: dismissed at once.
    cdp.on("Page.javascriptDialogOpening", (_p, s) => {
      if (s === sessionId) void cdp.send("Page.handleJavaScriptDialog", { accept: false }, sessionId).catch(() => undefined);
    }),
  ];
  await Promise.all([cdp.send("Page.enable", {}, sessionId), cdp.send("Page.setLifecycleEventsEnabled", { enabled: true }, sessionId)]);
  return { contextId, targetId, sessionId, events, off: () => offs.forEach((f) => f()) };
}

/** Disposes of a prepared page's context (the browser may be gone: then there is nothing to do). */
export async function discardPage(browser: ChromiumInstance, page: PreparedPage): Promise<void> {
  page.off();
  await Promise.race([
    browser.cdp.send("Target.disposeBrowserContext", { browserContextId: page.contextId }).catch(() => undefined),
    sleep(5000),
  ]);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Resolves when `cond` holds, or when `deadline` passes (false). Polls every `every` ms. */
async function until(cond: () => boolean | Promise<boolean>, deadline: number, every = 50): Promise<boolean> {
  while (Date.now() < deadline) {
    if (await cond()) return true;
    await sleep(every);
  }
  return false;
}

type Race = <T>(p: Promise<T>) => Promise<T>;
type Stop = "timeout" | "memory" | "crash";

/**
 * Waits for the page: its load, then network idle and/or the selector if asked, all under one cap
 * (`req.waitTimeoutMs`). True when a wait ran out at the cap.
 */
async function waitForPage(
  browser: ChromiumInstance,
  page: PreparedPage,
  req: RenderRequest,
  loaderId: string,
  race: Race,
): Promise<boolean> {
  const deadline = Date.now() + req.waitTimeoutMs;
  const seen = (name: string): boolean => page.events.has(`${loaderId}:${name}`);
  // Lifecycle events land in a Set: looking every 10 ms costs nothing and adds 5 ms on average.
  let capped = !(await race(until(() => seen("load"), deadline, 10)));
  if (req.waitForNetworkIdle) capped = !(await race(until(() => seen("networkIdle"), deadline, 10))) || capped;
  if (req.waitForSelector) {
    const expression = `document.querySelector(${JSON.stringify(req.waitForSelector)}) !== null`;
    const found = (): Promise<boolean> =>
      Promise.race([
        browser.cdp
          .send<{ result?: { value?: unknown } }>("Runtime.evaluate", { expression, returnByValue: true }, page.sessionId)
          .then((r) => r.result?.value === true)
          .catch(() => false),
        sleep(Math.max(0, deadline - Date.now())).then(() => false),
      ]);
    capped = !(await race(until(found, deadline, 100))) || capped;
  }
  return capped;
}

/** Prints the page (Page.printToPDF) and streams the PDF to `req.output`. */
async function printToFile(browser: ChromiumInstance, page: PreparedPage, req: RenderRequest, race: Race): Promise<void> {
  const { cdp } = browser;
  const { stream } = await race(
    cdp.send<{ stream: string }>("Page.printToPDF", { ...req.print, transferMode: "ReturnAsStream" }, page.sessionId),
  );
  const fh = await open(req.output, "wx", 0o600);
  try {
    for (;;) {
      const chunk = await race(
        cdp.send<{ data: string; base64Encoded?: boolean; eof: boolean }>("IO.read", { handle: stream, size: 1 << 20 }, page.sessionId),
      );
      await fh.write(Buffer.from(chunk.data, chunk.base64Encoded ? "base64" : "utf8"));
      if (chunk.eof) break;
    }
  } finally {
    await fh.close();
  }
  await cdp.send("IO.close", { handle: stream }, page.sessionId).catch(() => undefined);
}

/**
 * A render that failed, judged: a RenderFailure as it is; a deadline, memory cap or crash as the
 * job's stable error (the browser killed); anything else rethrown.
 *
 * A renderer that runs out of its heap can take its session or the whole browser with it: the
 * command fails before (or instead of) the crash event, so the event is given a moment to come.
 * Under load the failure can also be the pipe to a browser that is going (EPIPE) or printing
 * failing in a renderer out of memory: whatever failed, a browser that died or a target that went
 * is the page's doing, not an internal error.
 */
async function judgeFailure(err: unknown, state: { stop: Stop | null }, browser: ChromiumInstance): Promise<never> {
  if (err instanceof RenderFailure) throw err;
  if (state.stop === null && err instanceof Error) {
    await sleep(300);
    const pipeGone = /EPIPE|ECONNRESET/.test(err.message);
    const targetGone = err instanceof CdpError && /crash|closed|detached|not found|printing failed/i.test(err.message);
    if (state.stop === null && (!browser.alive || pipeGone || targetGone)) state.stop = "crash";
  }
  if (state.stop === "timeout")
    throw new RenderFailure(new JobError("timeout", "The page did not finish rendering in time (does a script run forever?)."), "kill");
  if (state.stop === "memory" || state.stop === "crash") {
    throw new RenderFailure(
      new JobError("limit_exceeded", "The page used more memory than a rendering may (or crashed its renderer)."),
      "kill",
    );
  }
  throw err;
}

/**
 * Runs the job on a prepared page. `limits.hardMs` bounds the whole render; `limits.maxMb` the
 * browser tree's memory while it runs. Throws RenderFailure (with what to do with the browser).
 */
export async function renderPdf(
  browser: ChromiumInstance,
  proxy: FetchProxy,
  page: PreparedPage,
  req: RenderRequest,
  limits: { hardMs: number; maxMb: number },
): Promise<RenderFigures> {
  const { cdp } = browser;
  const { sessionId, targetId } = page;
  const stats = await proxy.startJob(req.site);
  // An object, not a variable: the callbacks below set it, and control-flow narrowing cannot see that.
  const state: { stop: Stop | null } = { stop: null };
  // The three ways a job is cut short, as one promise that rejects.
  let cut!: (why: Stop) => void;
  const cutShort = new Promise<never>((_, reject) => {
    cut = (why) => {
      state.stop ??= why;
      reject(new Error(why));
    };
  });
  cutShort.catch(() => undefined);
  const hard = setTimeout(() => cut("timeout"), limits.hardMs);
  const onAbort = (): void => cut("timeout");
  req.signal.addEventListener("abort", onAbort, { once: true });
  const watch = setInterval(() => {
    void browser.rssMb().then((mb) => mb > limits.maxMb && cut("memory"));
  }, 250);
  const offCrash = cdp.on("Target.targetCrashed", (p) => p.targetId === targetId && cut("crash"));
  const race: Race = (p) => Promise.race([p, cutShort]);
  try {
    if (req.signal.aborted) cut("timeout");
    await race(cdp.send("Emulation.setEmulatedMedia", { media: req.media }, sessionId));
    const nav = await race(cdp.send<{ errorText?: string; loaderId?: string }>("Page.navigate", { url: req.url }, sessionId));
    if (nav.errorText)
      throw new RenderFailure(new JobError("conversion_failed", `The page could not be loaded (${nav.errorText}).`), "keep");
    const capped = await waitForPage(browser, page, req, String(nav.loaderId), race);
    await printToFile(browser, page, req, race);
    return { requests: stats.requests, blocked: stats.blocked, blocked_reasons: stats.reasons, wait_capped: capped };
  } catch (err) {
    return await judgeFailure(err, state, browser);
  } finally {
    clearTimeout(hard);
    clearInterval(watch);
    offCrash();
    req.signal.removeEventListener("abort", onAbort);
    // A context whose renderer is stuck does not go away: the pool kills the browser instead.
    if (state.stop === null) await discardPage(browser, page);
    else page.off();
  }
}
