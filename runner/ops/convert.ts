/** PLACEHOLDER — convert is being implemented. */
import { JobError } from "../../core/errors.js";
import type { ConvertOptions } from "../../core/schemas/options.js";
import type { OpDefinition } from "./types.js";

export const convert: OpDefinition<ConvertOptions> = {
  operation: "convert",
  accepts: "pdf",
  minInputs: 1,
  maxInputs: 1,
  run() {
    return Promise.reject(new JobError("unsupported_input", "convert is not implemented yet."));
  },
};
