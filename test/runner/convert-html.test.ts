/**
 * HTML, Markdown, zip and URL → PDF on real Chromium, checked with poppler (pdftotext, pdfinfo,
 * pdftoppm). A local HTTP server plays both an allowed public site (allow-listed by name, as an
 * operator would) and an internal service a page must never reach: the server counts what it
 * was asked, so "gets nothing" is measured at the target, not inferred from the PDF.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { deflateRawSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type Config } from "../../core/config.ts";
import { createLogger } from "../../core/logger.ts";
import { createBrowsers, type BrowserProvider } from "../../runner/engines/browsers.ts";
import { errorCode, ok, runOp } from "../helpers/runner.ts";
import { pdfinfo, pdftotext, renderGray, tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
let n = 0;
const out = (): string => path.join(dir, `out-${++n}`);

/** A zip (APPNOTE 4.3) of [name, content, method] entries; `lie` declares a smaller size than the data. */
function zip(entries: { name: string; data: Buffer; deflate?: boolean; declare?: number; symlink?: boolean }[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const body = e.deflate ? deflateRawSync(e.data) : e.data;
    const name = Buffer.from(e.name, "utf8");
    const size = e.declare ?? e.data.length;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(e.deflate ? 8 : 0, 8);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    const dirEntry = Buffer.alloc(46);
    dirEntry.writeUInt32LE(0x02014b50, 0);
    dirEntry.writeUInt16LE(0x031e, 4); // made by Unix
    dirEntry.writeUInt16LE(e.deflate ? 8 : 0, 10);
    dirEntry.writeUInt32LE(body.length, 20);
    dirEntry.writeUInt32LE(size, 24);
    dirEntry.writeUInt16LE(name.length, 28);
    dirEntry.writeUInt32LE(((e.symlink ? 0o120777 : 0o100644) << 16) >>> 0, 38);
    dirEntry.writeUInt32LE(offset, 42);
    locals.push(local, name, body);
    central.push(dirEntry, name);
    offset += 30 + name.length + body.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** The local server: /page serves HTML, everything else answers SECRET-INTERNAL; it counts requests by path. */
let server: http.Server;
let port: number;
const hits: string[] = [];
let config: Config;
let browsers: BrowserProvider;

async function file(name: string, content: string | Buffer): Promise<string> {
  const p = path.join(dir, name);
  await writeFile(p, content);
  return p;
}

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-html-"));
  server = http.createServer((req, res) => {
    hits.push(req.url ?? "");
    if (req.url?.startsWith("/page")) {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<h1>Allowed page</h1><img src="http://127.0.0.1:${port}/secret.png"><iframe src="http://[::1]:${port}/secret"></iframe>`);
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("SECRET-INTERNAL");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
  // "localhost" is allow-listed by name (as an operator would list a host); 127.0.0.1 and ::1 are not.
  config = loadConfig({
    FOLIO_LOG_LEVEL: "silent",
    FOLIO_FETCH_ALLOWED_HOSTS: "localhost",
    FOLIO_CHROMIUM_JOB_TIMEOUT_MS: "8000",
    FOLIO_CHROMIUM_HEAP_MB: "128",
  });
  browsers = createBrowsers(config, createLogger({ level: "silent" }), true);
}, 60_000);
afterAll(async () => {
  await browsers.close();
  server.close();
  await cleanup();
});

const run = (options: Record<string, unknown>, inputs: string[]): ReturnType<typeof runOp> =>
  runOp("convert", { to: "pdf", ...options }, inputs, out(), { config, browsers });

describe("HTML → PDF", () => {
  it("prints an HTML file on A4 by default, landscape when asked, with header and footer page numbers", async () => {
    const html = await file(
      "report.html",
      `<!DOCTYPE html><title>Report</title><h1>Quarterly report</h1>${[1, 2, 3].map((i) => `<p style="page-break-after:always">Section ${i}</p>`).join("")}`,
    );
    const res = ok(
      await run(
        {
          footer_template:
            '<div style="font-size:10px;width:100%;text-align:center">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
        },
        [html],
      ),
    );
    const pdf = res.outputs[0]!.path;
    expect((await pdfinfo(pdf))["Page size"]).toMatch(/^595\.\d* x 841\.\d*/);
    const text = await pdftotext(pdf);
    expect(text).toContain("Quarterly report");
    expect(text).toMatch(/Page 1 of 3[\s\S]*Page 2 of 3[\s\S]*Page 3 of 3/);
    expect(res.figures.engine).toBe("warm");
    const wide = ok(await run({ landscape: true, paper_size: "letter" }, [html])).outputs[0]!.path;
    expect((await pdfinfo(wide))["Page size"]).toMatch(/^792 x 612/);
  });

  it("prints backgrounds only when asked", async () => {
    const html = await file("bg.html", "<html><body style='background:#000;margin:0;height:100vh'>x</body></html>");
    const mean = async (opts: Record<string, unknown>): Promise<number> => {
      const g = await renderGray(ok(await run(opts, [html])).outputs[0]!.path, 1, 20);
      return g.data.reduce((a, b) => a + b, 0) / g.data.length;
    };
    expect(await mean({})).toBeGreaterThan(240);
    expect(await mean({ print_background: true })).toBeLessThan(100);
  });

  it("waits for a selector a script adds late, and without it prints the page as loaded", async () => {
    const html = await file(
      "late.html",
      `<p>early</p><script>setTimeout(()=>{const d=document.createElement("p");d.id="late";d.textContent="LATECOMER";document.body.append(d)},700)</script>`,
    );
    expect(await pdftotext(ok(await run({ wait_for_selector: "#late" }, [html])).outputs[0]!.path)).toContain("LATECOMER");
    expect(await pdftotext(ok(await run({}, [html])).outputs[0]!.path)).not.toContain("LATECOMER");
  });

  it("renders Markdown with raw HTML shown as text, never run", async () => {
    const md = await file("notes.md", "# Release notes\n\n- **bold** item\n\n<script>document.body.innerHTML='INJECTED'</script>\n");
    const text = await pdftotext(ok(await run({}, [md])).outputs[0]!.path);
    expect(text).toContain("Release notes");
    expect(text).toContain("bold item");
    // Had the script run, the body would hold only INJECTED; it is there as text instead.
    expect(text).toContain("<script>document.body.innerHTML");
  });

  it("renders a zipped folder with its stylesheet and images", async () => {
    const png = Buffer.from(
      "89504e470d0a1a0a0000000d4948445200000001000000010806000000" +
        "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e221bc330000000049454e44ae426082",
      "hex",
    );
    const site = await file(
      "site.zip",
      zip([
        {
          name: "site/index.html",
          data: Buffer.from('<link rel="stylesheet" href="css/a.css"><h1 class="t">Zipped site</h1><img src="img/dot.png">'),
          deflate: true,
        },
        { name: "site/css/a.css", data: Buffer.from(".t{color:#fff;background:#000}"), deflate: true },
        { name: "site/img/dot.png", data: png },
      ]),
    );
    const res = ok(await run({ print_background: true }, [site]));
    expect(await pdftotext(res.outputs[0]!.path)).toContain("Zipped site");
    expect(res.figures.blocked).toBe(0);
    expect(res.figures.requests).toBeGreaterThanOrEqual(3); // the page, its stylesheet, its image
  });
});

describe("HTML → PDF: what a page may reach (SSRF guard)", () => {
  it("a page pulling http://127.0.0.1, [::1] and the metadata address gets nothing", async () => {
    hits.length = 0;
    const html = await file(
      "ssrf.html",
      `<h1>Visible</h1>
       <iframe src="http://127.0.0.1:${port}/secret"></iframe>
       <iframe src="http://[::1]:${port}/secret"></iframe>
       <img src="http://169.254.169.254/latest/meta-data/iam">
       <script>fetch("http://127.0.0.1:${port}/fetch").then(r=>r.text()).then(t=>document.body.append(t)).catch(()=>{})</script>`,
    );
    const res = ok(await run({ wait_for_network_idle: true, wait_timeout: 3 }, [html]));
    const text = await pdftotext(res.outputs[0]!.path);
    expect(text).toContain("Visible");
    expect(text).not.toContain("SECRET");
    expect(hits).toEqual([]);
    expect(res.figures.blocked).toBeGreaterThanOrEqual(3);
    expect(res.figures.blocked_reasons).toEqual(
      expect.arrayContaining([expect.stringContaining("loopback"), expect.stringContaining("metadata")]),
    );
  });

  it("refuses a url that points inwards before opening it", async () => {
    hits.length = 0;
    for (const url of [`http://127.0.0.1:${port}/page`, "http://169.254.169.254/latest/meta-data/", `http://[::ffff:127.0.0.1]:${port}/`]) {
      const res = await runOp("convert", { to: "pdf", url }, [], out(), { config, browsers });
      expect(errorCode(res), url).toBe("unsupported_input");
    }
    expect(hits).toEqual([]);
  });

  it("converts an allowed url, and still checks every sub-resource on its own", async () => {
    hits.length = 0;
    const res = ok(await runOp("convert", { to: "pdf", url: `http://localhost:${port}/page` }, [], out(), { config, browsers }));
    expect(res.outputs[0]!.filename).toBe("localhost.pdf");
    expect(await pdftotext(res.outputs[0]!.path)).toContain("Allowed page");
    expect(hits).toContain("/page");
    expect(hits.filter((h) => h.startsWith("/secret"))).toEqual([]);
    expect(res.figures.blocked).toBeGreaterThanOrEqual(2);
  });
});

describe("HTML → PDF: hostile inputs", () => {
  it("refuses zips that escape their folder, link out, or unpack beyond what they declare", async () => {
    const cases: [string, Buffer, string][] = [
      [
        "a ../ path",
        zip([
          { name: "index.html", data: Buffer.from("x") },
          { name: "../evil.html", data: Buffer.from("x") },
        ]),
        "unsupported_input",
      ],
      ["an absolute path", zip([{ name: "/etc/evil", data: Buffer.from("x") }]), "unsupported_input"],
      ["a symbolic link", zip([{ name: "index.html", data: Buffer.from("/etc/passwd"), symlink: true }]), "unsupported_input"],
      [
        "a bomb (1 MiB of zeros declared as 10 bytes)",
        zip([{ name: "index.html", data: Buffer.alloc(1 << 20), deflate: true, declare: 10 }]),
        "limit_exceeded",
      ],
      [
        "no index.html",
        zip([
          { name: "a/x.html", data: Buffer.from("x") },
          { name: "b/y.html", data: Buffer.from("y") },
        ]),
        "unsupported_input",
      ],
    ];
    for (const [what, bytes, code] of cases) {
      const z = await file(`bad-${what.replace(/\W+/g, "-")}.zip`, bytes);
      expect(errorCode(await run({}, [z])), what).toBe(code);
    }
  });

  it("ends a page that loops forever with timeout, and the next job still renders", async () => {
    const loop = await file("loop.html", "<p>spin</p><script>for(;;){}</script>");
    const started = performance.now();
    expect(errorCode(await run({ wait_timeout: 1 }, [loop]))).toBe("timeout");
    expect(performance.now() - started).toBeLessThan(30_000);
    const fine = await file("fine.html", "<p>after the loop</p>");
    expect(await pdftotext(ok(await run({}, [fine])).outputs[0]!.path)).toContain("after the loop");
  }, 60_000);

  it("ends a page that allocates without bound with limit_exceeded, and the next job still renders", async () => {
    const hog = await file("hog.html", "<script>const a=[];for(;;){a.push(new Array(1e6).fill(Math.random()))}</script>");
    const res = await run({ wait_timeout: 1 }, [hog]);
    expect(errorCode(res), (res as Error).message).toBe("limit_exceeded");
    const fine = await file("fine2.html", "<p>after the hog</p>");
    expect(await pdftotext(ok(await run({}, [fine])).outputs[0]!.path)).toContain("after the hog");
  }, 60_000);
});
