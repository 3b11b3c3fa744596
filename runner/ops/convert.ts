/** PLACEHOLDER — convert is being implemented. */
import { JobError } from "../../core/errors.ts";
import type { ConvertOptions } from "../../core/schemas/options.ts";
import type { OpDefinition } from "./types.ts";

export const convert: OpDefinition<ConvertOptions> = {
  operation: "convert",
  accepts: "pdf",
  minInputs: 1,
  maxInputs: 1,
  run() {
    return Promise.reject(new JobError("unsupported_input", "convert is not implemented yet."));
  },
};
