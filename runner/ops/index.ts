/**
 * The operations, by name. Each is loaded only when a job needs it: a one-shot `folio run merge`
 * then does not pay for loading sharp (compress) or the LibreOffice pool (convert).
 */
import type { Operation } from "../../core/schemas/options.ts";
import type { OpDefinition, OpShape } from "./types.ts";

type Loader = () => Promise<OpDefinition<never>>;

export const OPS: Record<Operation, OpShape & { load: Loader }> = {
  compress: {
    operation: "compress",
    accepts: "pdf",
    minInputs: 1,
    maxInputs: 1,
    load: async () => (await import("./compress.ts")).compress,
  },
  merge: {
    operation: "merge",
    accepts: "pdf",
    minInputs: 2,
    maxInputs: "max_merge_files",
    load: async () => (await import("./merge.ts")).merge,
  },
  split: { operation: "split", accepts: "pdf", minInputs: 1, maxInputs: 1, load: async () => (await import("./split.ts")).split },
  convert: {
    operation: "convert",
    accepts: "any",
    minInputs: 1,
    // Several inputs only for images → one PDF.
    maxInputs: "max_merge_files",
    load: async () => (await import("./convert.ts")).convert,
  },
  protect: { operation: "protect", accepts: "pdf", minInputs: 1, maxInputs: 1, load: async () => (await import("./protect.ts")).protect },
  ocr: { operation: "ocr", accepts: "any", minInputs: 1, maxInputs: "max_merge_files", load: async () => (await import("./ocr.ts")).ocr },
  edit: {
    operation: "edit",
    accepts: "any",
    minInputs: 1,
    maxInputs: 10,
    // One qpdf run over a 5,000-page document costs little more than walking its pages.
    opensEarly: true,
    load: async () => (await import("./edit.ts")).edit,
  },
};
