/** PLACEHOLDER — merge is being implemented. */
import { JobError } from "../../core/errors.js";
import type { MergeOptions } from "../../core/schemas/options.js";
import type { OpDefinition } from "./types.js";

export const merge: OpDefinition<MergeOptions> = {
  operation: "merge",
  accepts: "pdf",
  minInputs: 1,
  maxInputs: 1,
  run() {
    return Promise.reject(new JobError("unsupported_input", "merge is not implemented yet."));
  },
};
