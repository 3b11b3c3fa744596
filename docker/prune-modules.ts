/**
 * Makes an image's /opt/folio lean, in the build stage of docker/*.Dockerfile (after `tsc` and
 * `npm prune --omit=dev`):
 *
 *   node docker/prune-modules.ts --entry dist/runner/main.js --entry dist/bin/folio.js \
 *        --drop dist/api --drop dist/controller
 *
 * 1. Our own code: the compiled directories the image does not run are removed (`--drop`).
 * 2. Which npm packages the image runs: the bare imports of every compiled file reachable from
 *    the entries (static and dynamic imports, require() and createRequire().resolve() of a
 *    literal name, and relative `.js` string literals such as a worker's file), then the
 *    packages those depend on (dependencies, optionalDependencies and peerDependencies, resolved
 *    the way Node resolves them: node_modules directories upwards). Every other package goes.
 * 3. What Node never loads from the packages kept: source maps, TypeScript sources and
 *    declarations, Markdown, tests, docs and examples at a package's top level, and browser
 *    bundles (*.iife.js, *.umd.js, *.min.js …) that the package's package.json does not name.
 *    Licence files stay.
 * 4. A few large packages ship other builds Node never loads (listed in UNUSED_BUILDS, with why).
 * 5. Every root package is then imported once, so a prune that went too far fails the build
 *    rather than the first job.
 *
 * Prints what it removed and the biggest packages left. Runs with the image's own Node 24.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import path from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    root: { type: "string", default: process.cwd() },
    entry: { type: "string", multiple: true, default: [] },
    drop: { type: "string", multiple: true, default: [] },
  },
});
const root = path.resolve(values.root);
const modules = path.join(root, "node_modules");

/** Builds Node never loads from these packages (checked against their package.json). */
const UNUSED_BUILDS: Readonly<Record<string, readonly string[]>> = {
  // No "exports": Node loads "main" (cjs/). es/ is for bundlers, dist/ the browser UMD builds.
  "pdf-lib": ["es", "dist", "src", "ts3.4"],
  // "main" is ./excel.js (lib/); dist/ holds browser bundles only.
  exceljs: ["dist"],
  // Folio imports legacy/build/pdf.mjs (and pdfjs loads legacy/build/pdf.worker.mjs beside it);
  // the modern build, the viewer and the separate image decoders are for browsers.
  "pdfjs-dist": ["build", "web", "types", "image_decoders"],
};
/** Top-level directories of a package that are never runtime code. */
const JUNK_DIRS = new Set([
  "test",
  "tests",
  "__tests__",
  "docs",
  "doc",
  "example",
  "examples",
  ".github",
  "benchmark",
  "benchmarks",
  "bench",
]);
const JUNK_FILE = /(\.map|\.d\.[cm]?ts|(?<!\.d)\.[cm]?ts|\.md|\.markdown|\.tsbuildinfo|\.flow)$/i;
const BROWSER_BUNDLE = /\.(iife|umd|min)\.[cm]?js$/;
const BUILTINS = new Set(builtinModules);

let removedBytes = 0;
const sizeOf = (p: string): number => {
  const st = statSync(p, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.size;
  return readdirSync(p).reduce((n, e) => n + sizeOf(path.join(p, e)), 0);
};
const remove = (p: string): void => {
  removedBytes += sizeOf(p);
  rmSync(p, { recursive: true, force: true });
};
const mb = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MB`;

/** What a package specifier can look like (npm names: lower case, no spaces or markup). */
const SPECIFIER = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(\/[\w./-]*)?$/;

/** The package name of a bare specifier (`@aws-sdk/client-s3/x` → `@aws-sdk/client-s3`). */
function packageName(spec: string): string | undefined {
  if (spec.startsWith("node:") || spec.startsWith(".") || spec.startsWith("/") || BUILTINS.has(spec.split("/")[0]!)) return undefined;
  // The patterns also match prose in string literals ("… from "the list" …"): not a package.
  if (!SPECIFIER.test(spec)) return undefined;
  const parts = spec.split("/");
  return spec.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

const SPECIFIERS = [
  /\bfrom\s*["']([^"']+)["']/g,
  /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
  /\bimport\s+["']([^"']+)["']/g,
  /\brequire(?:\.resolve)?\s*\(\s*["']([^"']+)["']\s*\)/g,
  /\.resolve\(\s*["']([^"']+)["']\s*\)/g,
  /["'](\.{1,2}\/[^"']+\.js)["']/g,
];

/** Our compiled files reachable from the entries, and the packages they import. */
function traceOwnCode(entries: readonly string[]): { files: Set<string>; packages: Set<string>; specifiers: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const specifiers = new Set<string>();
  const queue = entries.map((e) => path.resolve(root, e));
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (files.has(file) || !existsSync(file)) continue;
    files.add(file);
    const text = readFileSync(file, "utf8");
    const found = SPECIFIERS.flatMap((re) => [...text.matchAll(re)].map((m) => m[1]!));
    for (const spec of found) {
      if (spec.startsWith(".")) queue.push(path.resolve(path.dirname(file), spec));
      const name = packageName(spec);
      if (name) {
        packages.add(name);
        specifiers.add(spec);
      }
    }
  }
  return { files, packages, specifiers };
}

/** Node's lookup of package `name` from directory `from`: node_modules/<name> upwards. */
function resolvePackage(name: string, from: string): string | undefined {
  for (let dir = from; dir.startsWith(root); dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (existsSync(path.join(candidate, "package.json"))) return candidate;
    if (dir === root) break;
  }
  return undefined;
}

interface PackageJson {
  name?: string;
  main?: string;
  module?: string;
  browser?: unknown;
  exports?: unknown;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}
const readPkg = (dir: string): PackageJson => JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as PackageJson;

/** Package directories needed: the roots and everything they depend on. */
function closure(roots: Iterable<string>): Set<string> {
  const keep = new Set<string>();
  const queue: [string, string][] = [...roots].map((name) => [name, root]);
  for (let item = queue.pop(); item !== undefined; item = queue.pop()) {
    const [name, from] = item;
    const dir = resolvePackage(name, from);
    if (!dir || keep.has(dir)) continue;
    keep.add(dir);
    const pkg = readPkg(dir);
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies })) queue.push([dep, dir]);
  }
  return keep;
}

/** Every installed package directory (nested node_modules included). */
function allPackages(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    if (entry.name.startsWith("@")) {
      allPackages(full, out);
      continue;
    }
    if (!existsSync(path.join(full, "package.json"))) continue;
    out.push(full);
    if (existsSync(path.join(full, "node_modules"))) allPackages(path.join(full, "node_modules"), out);
  }
  return out;
}

/**
 * Files Node may load by a package's name: what "exports" maps to (but the "types" and "browser"
 * conditions), else "main". Never removed as browser bundles. ("module" and "browser" are for
 * bundlers: Node never reads them.)
 */
function namedFiles(dir: string, pkg: PackageJson): Set<string> {
  const named = new Set<string>();
  const visit = (v: unknown): void => {
    if (typeof v === "string") named.add(path.resolve(dir, v));
    else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) if (k !== "types" && k !== "browser") visit(x);
  };
  visit(pkg.exports ?? pkg.main);
  return named;
}

function cleanPackage(dir: string): void {
  const pkg = readPkg(dir);
  const named = namedFiles(dir, pkg);
  for (const sub of UNUSED_BUILDS[pkg.name ?? ""] ?? []) remove(path.join(dir, sub));
  const walk = (d: string, top: boolean): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) {
        if (entry.name === "node_modules") continue; // nested packages are cleaned on their own
        if (top && JUNK_DIRS.has(entry.name)) remove(full);
        else walk(full, false);
      } else if (/^(license|licence|notice|copying)/i.test(entry.name)) {
        continue;
      } else if (JUNK_FILE.test(entry.name) || (BROWSER_BUNDLE.test(entry.name) && !named.has(full))) {
        remove(full);
      }
    }
  };
  walk(dir, true);
}

async function main(): Promise<void> {
  for (const d of values.drop) remove(path.resolve(root, d));
  const own = traceOwnCode(values.entry);
  const keep = closure(own.packages);
  const before = removedBytes;
  // Deepest first, so a nested package is judged before its parent's directory goes.
  for (const dir of allPackages(modules).sort((a, b) => b.length - a.length)) {
    if (!keep.has(dir) && existsSync(dir)) remove(dir);
  }
  const unreachable = removedBytes - before;
  for (const dir of keep) if (existsSync(dir)) cleanPackage(dir);
  // What prune left empty (scopes whose packages all went).
  for (const entry of readdirSync(modules)) {
    const full = path.join(modules, entry);
    if (entry.startsWith("@") && readdirSync(full).length === 0) rmSync(full, { recursive: true });
  }

  // Every import must still resolve and load: a prune that went too far fails here, not in the
  // first job. (This script sits in the image's /opt/folio, so bare names resolve as Folio's do.)
  const require = createRequire(path.join(root, "package.json"));
  for (const spec of own.specifiers) {
    try {
      if (spec.endsWith(".json")) require.resolve(spec);
      else await import(spec);
    } catch (err) {
      throw new Error(`prune-modules: "${spec}" no longer loads: ${String(err)}`, { cause: err });
    }
  }

  const sizes = [...keep].map((d) => [path.relative(modules, d), sizeOf(d)] as const).sort((a, b) => b[1] - a[1]);
  const total = sizeOf(modules);
  process.stdout.write(
    `prune-modules: ${own.files.size} compiled files reachable from ${values.entry.join(", ")}; ` +
      `${own.packages.size} root packages (${[...own.packages].sort().join(" ")}), ${keep.size} packages kept\n` +
      `prune-modules: removed ${mb(removedBytes)} (${mb(unreachable)} of packages the image never loads); node_modules now ${mb(total)}\n` +
      `prune-modules: largest: ${sizes
        .slice(0, 8)
        .map(([n, s]) => `${n} ${mb(s)}`)
        .join(", ")}\n`,
  );
}

await main();
