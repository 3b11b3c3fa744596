/** PLACEHOLDER — split is being implemented. */
import { JobError } from "../../core/errors.js";
import type { SplitOptions } from "../../core/schemas/options.js";
import type { OpDefinition } from "./types.js";

export const split: OpDefinition<SplitOptions> = {
  operation: "split",
  accepts: "pdf",
  minInputs: 1,
  maxInputs: 1,
  run() {
    return Promise.reject(new JobError("unsupported_input", "split is not implemented yet."));
  },
};
