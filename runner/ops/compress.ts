/** PLACEHOLDER — compress is being implemented. */
import { JobError } from "../../core/errors.ts";
import type { CompressOptions } from "../../core/schemas/options.ts";
import type { OpDefinition } from "./types.ts";

export const compress: OpDefinition<CompressOptions> = {
  operation: "compress",
  accepts: "pdf",
  minInputs: 1,
  maxInputs: 1,
  run() {
    return Promise.reject(new JobError("unsupported_input", "compress is not implemented yet."));
  },
};
