/**
 * The first start of `folio serve` (embedded mode): the sample PDFs and the banner it prints.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { PDFDocument, StandardFonts } from "pdf-lib";
import type { Config } from "../core/config.ts";

/** Two one-page PDFs for the first start's merge command, made once in `dir`. */
export async function samplePdfs(dir: string): Promise<[string, string]> {
  await mkdir(dir, { recursive: true });
  const files: [string, string] = [path.join(dir, "hello.pdf"), path.join(dir, "world.pdf")];
  for (const [i, file] of files.entries()) {
    if (existsSync(file)) continue;
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    doc
      .addPage([595, 842])
      .drawText(i === 0 ? "Hello from Folio (page 1 of the merge)" : "World (page 2 of the merge)", { x: 72, y: 760, size: 20, font });
    await writeFile(file, await doc.save());
  }
  return files;
}

/**
 * What `folio serve` prints when it listens: where, and on the first start the dev tenant's key,
 * webhook secret and dashboard sign-in link (shown once) with a curl command merging the samples.
 */
export function banner(
  version: string,
  cfg: Config,
  dataDir: string,
  certPath: string,
  first: { key: string; secret: string; signIn: string } | null,
  samples: [string, string],
): string {
  const host =
    cfg.FOLIO_HOST === "0.0.0.0" || cfg.FOLIO_HOST === "::" ? "localhost" : cfg.FOLIO_HOST === "127.0.0.1" ? "localhost" : cfg.FOLIO_HOST;
  const base = `https://${host}:${cfg.FOLIO_PORT}`;
  const lines = [`Folio ${version} (${cfg.FOLIO_BACKEND}) listening on ${base}  —  reference: ${base}/docs`, `data directory: ${dataDir}`];
  if (first) {
    lines.push(
      "",
      'First start: created tenant "dev" on the business plan. These are shown ONCE:',
      `  API key:        ${first.key}`,
      `  webhook secret: ${first.secret}`,
      `  dashboard:      ${first.signIn}`,
      "                  (the dev tenant owner's one-time sign-in link, valid 24 h: set a password there)",
      "",
      "Merge two sample PDFs and download the result (copy and paste):",
      `  KEY=${first.key}`,
      `  curl -s --cacert ${certPath} -H "Authorization: Bearer $KEY" -H "Prefer: wait=60" \\`,
      `    -F file=@${samples[0]} -F file=@${samples[1]} ${base}/v1/pdf/merge \\`,
      `  | grep -o '/v1/files/file_[A-Za-z0-9]*/content' | head -n1 \\`,
      `  | xargs -I{} curl -s --cacert ${certPath} -H "Authorization: Bearer $KEY" -o merged.pdf ${base}{} && echo "wrote merged.pdf"`,
    );
  }
  return lines.join("\n");
}
