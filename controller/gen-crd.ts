/**
 * Writes the CRDs generated from the zod schemas (PdfJob, Tenant, AccessRequest):
 *
 *   node controller/gen-crd.ts            writes crds/<plural>.folio.dev.yaml
 *   node controller/gen-crd.ts --stdout   prints them instead
 *   node controller/gen-crd.ts --check    exits 1 when a committed file is stale
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CRD_NAME, CRDS, crdYaml } from "./crd.ts";

const fileOf = (name: string): string => fileURLToPath(new URL(`../crds/${name}.yaml`, import.meta.url));
/** The PdfJob CRD's file. */
export const CRD_FILE = fileOf(CRD_NAME);
/** Every generated file and what it must contain. */
export const CRD_FILES: readonly { file: string; yaml: () => string }[] = CRDS.map((c) => ({
  file: fileOf(c.name),
  yaml: () => crdYaml(c.object(), c.source),
}));

function main(argv: readonly string[]): number {
  if (argv.includes("--stdout")) {
    process.stdout.write(CRD_FILES.map((c) => c.yaml()).join(""));
    return 0;
  }
  if (argv.includes("--check")) {
    let stale = 0;
    for (const c of CRD_FILES) {
      let committed = "";
      try {
        committed = readFileSync(c.file, "utf8");
      } catch {
        // missing: stale
      }
      if (committed === c.yaml()) continue;
      process.stderr.write(`${c.file} is stale: run \`make crds\` and commit the result\n`);
      stale++;
    }
    return stale ? 1 : 0;
  }
  for (const c of CRD_FILES) {
    writeFileSync(c.file, c.yaml());
    process.stderr.write(`wrote ${c.file}\n`);
  }
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main(process.argv.slice(2));
