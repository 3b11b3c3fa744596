/**
 * What an operation is: a function from validated options and inspected inputs to output files
 * and figures. Each operation lives in one file in this folder and calls the engines it needs.
 */
import type { Config } from "../../core/config.ts";
import type { Logger } from "../../core/logger.ts";
import type { RunnerLimits } from "../../core/schemas/job.ts";
import type { Operation } from "../../core/schemas/options.ts";
import type { DocKind } from "../../core/sniff.ts";
import type { BrowserProvider } from "../engines/browsers.ts";
import type { SofficeProvider } from "../engines/libreoffice.ts";

export interface InspectedInput {
  path: string;
  filename: string;
  /** Page ranges for this input (merge), unparsed; the op resolves them against `pages`. */
  pageSpec?: string;
  kind: DocKind;
  size: number;
  /** Page count, for PDFs. */
  pages: number | null;
  /** PDF is encrypted but opens without a password. */
  encrypted: boolean;
  /**
   * The PDF was damaged and `path` is its reconstruction by qpdf (runner/engines/repair.ts);
   * `size` stays the client's file's.
   */
  repaired?: boolean;
}

export interface OpContext<O> {
  options: O;
  inputs: InspectedInput[];
  /** Where outputs go; the op writes files here and names them. */
  outDir: string;
  /** The base name for outputs (no extension): the client's output_filename or the input's. */
  baseName: string;
  /** Private scratch directory, removed after the job. */
  work: string;
  limits: RunnerLimits;
  config: Config;
  signal: AbortSignal;
  log: Logger;
  /** The LibreOffice instances this process may use (warm pool or cold one-shots). */
  soffice: SofficeProvider;
  /** The browsers HTML → PDF renders with (warm pool or a browser per job). */
  browsers: BrowserProvider;
}

export interface OpOutputFile {
  /** Absolute path of a file in outDir. */
  path: string;
  /** Name the client downloads it as. */
  filename: string;
  content_type: string;
  /** Page count, when the op knows it (saves a qpdf run, and works for encrypted outputs). */
  pages?: number;
}

export interface OpResult {
  files: OpOutputFile[];
  figures: Record<string, unknown>;
}

/** What the runner must know of an operation before loading it. */
export interface OpShape {
  operation: Operation;
  /** Inputs accepted: PDFs only, or any document kind (convert). */
  accepts: "pdf" | "any";
  minInputs: number;
  maxInputs: number | "max_merge_files";
  /**
   * The operation may start before its PDF inputs' page trees are walked (engines/repair.ts
   * openEarly): it reads its inputs only through engines whose output the runner can throw away,
   * and commits its outputs only at its end.
   */
  opensEarly?: boolean;
}

export interface OpDefinition<O> extends OpShape {
  run(ctx: OpContext<O>): Promise<OpResult>;
}
