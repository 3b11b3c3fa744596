/**
 * The build context of one Dockerfile, as BuildKit would send it, and its content key:
 *
 *   node docker/context.ts DOCKERFILE OUTDIR    copies the context into OUTDIR (made afresh) and
 *                                               prints the key: sha256 of every file's path, mode
 *                                               and bytes, and of the Dockerfile itself
 *
 * The files are those of the repository that `<DOCKERFILE>.dockerignore` admits, with Docker's
 * rules (github.com/moby/patternmatcher): patterns are matched against slash-separated paths
 * relative to the root, a pattern that matches a directory matches everything under it, `*` and
 * `?` never cross a `/`, `**` crosses any number of directories, `!` re-admits, the last matching
 * pattern wins. .git, node_modules, dist and .tools are never part of a context (no Dockerfile of
 * ours admits them, and walking them would be slow).
 *
 * docker/build-images.sh builds from OUTDIR and skips the build when the key is unchanged.
 */
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
const NEVER = new Set([".git", "node_modules", "dist", ".tools", ".data"]);

interface Pattern {
  readonly negate: boolean;
  readonly re: RegExp;
}

/** A dockerignore pattern as a regular expression over a whole relative path. */
export function compilePattern(line: string): Pattern {
  const negate = line.startsWith("!");
  const glob = path.posix.normalize((negate ? line.slice(1) : line).trim().replace(/^\/+/, "")).replace(/\/+$/, "");
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      // `**/` matches zero or more directories; a final `**` matches everything.
      if (glob[i + 2] === "/") {
        re += "(?:.*/)?";
        i += 2;
      } else {
        re += ".*";
        i += 1;
      }
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return { negate, re: new RegExp(`^${re}$`) };
}

export function parseIgnore(text: string): Pattern[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))
    .map(compilePattern);
}

/** True when `rel` (or a directory above it) is excluded: the last matching pattern decides. */
export function isIgnored(rel: string, patterns: readonly Pattern[]): boolean {
  const parts = rel.split("/");
  const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
  let ignored = false;
  for (const p of patterns) if (prefixes.some((x) => p.re.test(x))) ignored = !p.negate;
  return ignored;
}

/** The context's files, sorted, as paths relative to the root. */
export function contextFiles(patterns: readonly Pattern[], dir = ROOT, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (dir === ROOT && NEVER.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    const rel = path.relative(ROOT, full).split(path.sep).join("/");
    if (entry.isDirectory()) contextFiles(patterns, full, out);
    else if (entry.isFile() && !isIgnored(rel, patterns)) out.push(rel);
  }
  return out.sort();
}

function main(): void {
  const [dockerfile, outDir] = process.argv.slice(2);
  if (!dockerfile || !outDir) throw new Error("usage: node docker/context.ts DOCKERFILE OUTDIR");
  const file = path.resolve(ROOT, dockerfile);
  const patterns = parseIgnore(readFileSync(`${file}.dockerignore`, "utf8"));
  const hash = createHash("sha256").update(readFileSync(file));
  rmSync(outDir, { recursive: true, force: true });
  for (const rel of contextFiles(patterns)) {
    const src = path.join(ROOT, rel);
    const mode = statSync(src).mode & 0o777;
    const dest = path.join(outDir, rel);
    mkdirSync(path.dirname(dest), { recursive: true });
    copyFileSync(src, dest);
    chmodSync(dest, mode);
    hash.update(`\0${rel}\0${mode & 0o111 ? "x" : "-"}\0`).update(readFileSync(src));
  }
  process.stdout.write(hash.digest("hex") + "\n");
}

if (import.meta.filename === path.resolve(process.argv[1] ?? "")) main();
