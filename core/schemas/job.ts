/**
 * The runner's contract: the job spec it is given and the result it reports. The embedded worker
 * pool sends a RunnerSpec over stdio, a Kubernetes pod reads it from a file; both get back a
 * RunnerResult (or a RunnerFailure) as JSON.
 */
import { z } from "zod";
import { JOB_ERROR_CODES } from "../errors.ts";
import { Operation, PageRangeSpec } from "./options.ts";

export const RunnerInput = z.strictObject({
  /** Path of the input on the runner's file system. */
  path: z.string().min(1),
  /** The client's filename; used for outlines and output names, never as a path. */
  filename: z.string().min(1).max(255),
  /** Pages to take from this input (merge only). */
  pages: PageRangeSpec.optional(),
});
export type RunnerInput = z.infer<typeof RunnerInput>;

export const RunnerLimits = z.strictObject({
  max_pages: z.int().positive(),
  max_file_bytes: z.int().positive(),
  max_merge_files: z.int().positive(),
  /** Largest decoded image (width × height) the compressor will open. */
  max_image_pixels: z.int().positive(),
  timeout_ms: z.int().positive(),
  /** Pages in all outputs together; never below the pages of the job's inputs. */
  max_output_pages: z.int().positive(),
  /** Bytes of all outputs together; never below twice the job's input bytes. */
  max_output_bytes: z.int().positive(),
  /** Inflated bytes per input: compressed PDF streams, Office zip parts. */
  max_decompressed_bytes: z.int().positive(),
  /** Inflated bytes per byte of input, above a 64 MiB floor. */
  max_decompression_ratio: z.int().positive(),
});
export type RunnerLimits = z.infer<typeof RunnerLimits>;

export const RunnerSpec = z.strictObject({
  job_id: z.string().min(1).max(100).optional(),
  operation: Operation,
  /** Empty only for a convert of a `url` (issue #15). */
  inputs: z.array(RunnerInput),
  /** Validated again by the runner against the operation's schema. */
  options: z.record(z.string(), z.unknown()).default({}),
  output_dir: z.string().min(1),
  /** Base name for outputs, without extension (API.md `output_filename`). */
  output_filename: z.string().min(1).max(200).optional(),
  limits: RunnerLimits.partial().optional(),
});
export type RunnerSpec = z.infer<typeof RunnerSpec>;

export const OutputFile = z.strictObject({
  filename: z.string(),
  path: z.string(),
  content_type: z.string(),
  size: z.int().nonnegative(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  pages: z.int().nonnegative().nullable(),
});
export type OutputFile = z.infer<typeof OutputFile>;

export const RunnerResult = z.object({
  operation: Operation,
  outputs: z.array(OutputFile),
  /** The operation's figures, e.g. compress: original_size, size, ratio, compressed. */
  figures: z.record(z.string(), z.unknown()),
  duration_ms: z.number().nonnegative(),
});
export type RunnerResult = z.infer<typeof RunnerResult>;

export const RunnerFailure = z.object({
  error: z.object({ code: z.enum(JOB_ERROR_CODES), message: z.string() }),
});
export type RunnerFailure = z.infer<typeof RunnerFailure>;
