/**
 * LibreOffice (soffice), the engine behind Office → PDF.
 * PLACEHOLDER INTERFACE — the warm pool is implemented in runner/engines/soffice-pool.ts.
 */

export interface SofficeConvertOptions {
  /** The job's private scratch directory. */
  work: string;
  signal: AbortSignal;
}

/** Something that converts an Office document to PDF: a warm pool or a cold one-shot soffice. */
export interface SofficeProvider {
  /** Converts `input` to PDF and returns the path of the PDF (inside opts.work). */
  toPdf(input: string, opts: SofficeConvertOptions): Promise<string>;
  close(): Promise<void>;
}

import type { Config } from "../../core/config.ts";
import type { Logger } from "../../core/logger.ts";

/**
 * The provider for this process: a warm pool of `size` instances, or cold one-shot conversions
 * when size is 0 (what a single `folio run` wants).
 */
export function createSoffice(_config: Config, _log: Logger, _size: number): SofficeProvider {
  return {
    toPdf: () => Promise.reject(new Error("LibreOffice is not wired up yet")),
    close: () => Promise.resolve(),
  };
}
