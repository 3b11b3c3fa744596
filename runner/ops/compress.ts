/** PLACEHOLDER — compress is being implemented. */
import { JobError } from "../../core/errors.js";
import type { CompressOptions } from "../../core/schemas/options.js";
import type { OpDefinition } from "./types.js";

export const compress: OpDefinition<CompressOptions> = {
  operation: "compress",
  accepts: "pdf",
  minInputs: 1,
  maxInputs: 1,
  run() {
    return Promise.reject(new JobError("unsupported_input", "compress is not implemented yet."));
  },
};
