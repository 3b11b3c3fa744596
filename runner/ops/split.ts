/** PLACEHOLDER — split is being implemented. */
import { JobError } from "../../core/errors.ts";
import type { SplitOptions } from "../../core/schemas/options.ts";
import type { OpDefinition } from "./types.ts";

export const split: OpDefinition<SplitOptions> = {
  operation: "split",
  accepts: "pdf",
  minInputs: 1,
  maxInputs: 1,
  run() {
    return Promise.reject(new JobError("unsupported_input", "split is not implemented yet."));
  },
};
