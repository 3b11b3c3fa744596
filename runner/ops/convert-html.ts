/**
 * HTML, Markdown and URL → PDF with Chromium (engines/chromium-*.ts), the way Gotenberg's users
 * expect it: paper size, margins, orientation, scale, backgrounds, header and footer templates
 * (Chromium fills class="pageNumber"/"totalPages"/"title"/"date"/"url"), emulated media, and
 * waiting for a selector or for the network to go idle under one cap.
 *
 * What the page sees: its own files under http://SITE_HOST/ (an .html input as index.html, a
 * Markdown input rendered to index.html, a zip extracted with unzip.ts's checks — index.html at
 * its root or in its single top folder), or the client's `url`. Every request goes through the
 * job's fetch proxy and the SSRF guard; the `url` itself is checked before the browser is asked.
 */
import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import MarkdownIt from "markdown-it";
import { JobError } from "../../core/errors.ts";
import { SsrfGuard } from "../../core/net/ssrf.ts";
import { PAPER_SIZES, type ConvertOptions } from "../../core/schemas/convert-options.ts";
import { CONTENT_TYPES } from "../../core/sniff.ts";
import { SITE_HOST } from "../engines/fetch-proxy.ts";
import { commitOutput, discard, partialPath, type PdfOutputFile } from "./outfile.ts";
import { unzipSafely } from "../engines/unzip.ts";
import type { OpContext, OpResult } from "./types.ts";

/** A readable default look for Markdown (GitHub-like): the page's own CSS does not exist. */
const MARKDOWN_CSS = `body{font-family:"DejaVu Sans","Liberation Sans",Arial,sans-serif;font-size:11pt;line-height:1.5;color:#1f2328;max-width:100%}
h1,h2{border-bottom:1px solid #d1d9e0;padding-bottom:.2em}code,pre{font-family:"DejaVu Sans Mono","Liberation Mono",monospace;font-size:9.5pt;background:#f6f8fa}
pre{padding:.8em;overflow-wrap:anywhere;white-space:pre-wrap}table{border-collapse:collapse}th,td{border:1px solid #d1d9e0;padding:.3em .6em}
blockquote{margin:0;padding:0 1em;color:#59636e;border-left:.25em solid #d1d9e0}img{max-width:100%}`;

const escapeHtml = (s: string): string => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);

/** Markdown → a whole HTML page. Raw HTML in the Markdown is shown as text, never run (html: false). */
export function markdownPage(markdown: string, title: string): string {
  const body = new MarkdownIt({ html: false, linkify: true, typographer: true }).render(markdown);
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>${MARKDOWN_CSS}</style></head><body>${body}</body></html>`;
}

/** The folder to serve and the path of the page in it, from the job's input. */
async function stageSite(ctx: OpContext<ConvertOptions>, site: string): Promise<string> {
  const input = ctx.inputs[0]!;
  await mkdir(site, { recursive: true, mode: 0o700 });
  if (input.kind === "html") {
    await copyFile(input.path, path.join(site, "index.html"));
    return "/index.html";
  }
  if (input.kind === "markdown") {
    await writeFile(path.join(site, "index.html"), markdownPage(await readFile(input.path, "utf8"), ctx.baseName));
    return "/index.html";
  }
  const files = await unzipSafely(input.path, site, { maxEntries: 10_000, maxBytes: Math.max(ctx.limits.max_file_bytes * 4, 64 << 20) });
  if (files.includes("index.html")) return "/index.html";
  // A zipped folder: everything under one top folder with its index.html.
  const tops = await readdir(site);
  if (tops.length === 1 && files.includes(`${tops[0]}/index.html`)) return `/${encodeURIComponent(tops[0]!)}/index.html`;
  throw new JobError("unsupported_input", "The zip has no index.html at its root (or in its single top folder).");
}

/** Page.printToPDF parameters from the options (inches, as Chromium and Gotenberg take them). */
function printParams(o: ConvertOptions): Record<string, unknown> {
  const [width, height] = PAPER_SIZES[o.paper_size ?? "a4"];
  const m = { top: 0.4, right: 0.4, bottom: 0.4, left: 0.4, ...o.margins };
  const headerFooter = o.header_template !== undefined || o.footer_template !== undefined;
  return {
    paperWidth: width,
    paperHeight: height,
    landscape: o.landscape ?? false,
    marginTop: m.top,
    marginRight: m.right,
    marginBottom: m.bottom,
    marginLeft: m.left,
    scale: o.scale ?? 1,
    printBackground: o.print_background ?? false,
    displayHeaderFooter: headerFooter,
    // An empty span, not Chromium's default (date and title), for the one not given.
    headerTemplate: o.header_template ?? "<span></span>",
    footerTemplate: o.footer_template ?? "<span></span>",
    preferCSSPageSize: false,
  };
}

/** The `url` option, checked by the SSRF guard before the browser is asked to open it. */
async function checkedUrl(ctx: OpContext<ConvertOptions>, url: string): Promise<string> {
  const check = await new SsrfGuard(ctx.config.FOLIO_FETCH_ALLOWED_HOSTS).checkHost(new URL(url).hostname);
  if (!check.ok) throw new JobError("unsupported_input", `The url cannot be fetched (${check.reason}).`);
  return url;
}

export async function htmlToPdf(ctx: OpContext<ConvertOptions>): Promise<OpResult> {
  const o = ctx.options;
  if (o.url !== undefined && ctx.inputs.length > 0) throw new JobError("unsupported_input", "Give a url or an input file, not both.");
  const site = path.join(ctx.work, "site");
  const url = o.url !== undefined ? await checkedUrl(ctx, o.url) : `http://${SITE_HOST}${await stageSite(ctx, site)}`;
  const tmp = partialPath(ctx.outDir, ".pdf");
  const started = performance.now();
  try {
    const rendered = await ctx.browsers.render({
      url,
      site: o.url !== undefined ? null : site,
      output: tmp,
      print: printParams(o),
      media: o.media ?? "print",
      ...(o.wait_for_selector !== undefined ? { waitForSelector: o.wait_for_selector } : {}),
      waitForNetworkIdle: o.wait_for_network_idle ?? false,
      waitTimeoutMs: (o.wait_timeout ?? 10) * 1000,
      signal: ctx.signal,
    });
    const filename = `${ctx.baseName}.pdf`;
    const out: Omit<PdfOutputFile, "pages"> = {
      path: await commitOutput(tmp, ctx.outDir, filename),
      filename,
      content_type: CONTENT_TYPES.pdf,
    };
    const source_format = o.url !== undefined ? "url" : ctx.inputs[0]!.kind;
    const figures = { source_format, engine: ctx.browsers.engine, render_ms: Math.round(performance.now() - started), ...rendered };
    ctx.log.info(figures, "Rendered a page to PDF");
    return { files: [out], figures };
  } finally {
    await discard(tmp);
  }
}
