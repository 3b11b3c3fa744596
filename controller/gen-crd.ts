/**
 * Writes the PdfJob CRD generated from the zod schemas:
 *
 *   node controller/gen-crd.ts            writes crds/pdfjobs.folio.dev.yaml
 *   node controller/gen-crd.ts --stdout   prints it instead
 *   node controller/gen-crd.ts --check    exits 1 when the committed file is stale
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CRD_NAME, crdYaml } from "./crd.ts";

export const CRD_FILE = fileURLToPath(new URL(`../crds/${CRD_NAME}.yaml`, import.meta.url));

function main(argv: readonly string[]): number {
  const yaml = crdYaml();
  if (argv.includes("--stdout")) {
    process.stdout.write(yaml);
    return 0;
  }
  if (argv.includes("--check")) {
    let committed = "";
    try {
      committed = readFileSync(CRD_FILE, "utf8");
    } catch {
      // missing: stale
    }
    if (committed === yaml) return 0;
    process.stderr.write(`${CRD_FILE} is stale: run \`make crds\` and commit the result\n`);
    return 1;
  }
  writeFileSync(CRD_FILE, yaml);
  process.stderr.write(`wrote ${CRD_FILE}\n`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main(process.argv.slice(2));
