/** PLACEHOLDER — merge is being implemented. */
import { JobError } from "../../core/errors.ts";
import type { MergeOptions } from "../../core/schemas/options.ts";
import type { OpDefinition } from "./types.ts";

export const merge: OpDefinition<MergeOptions> = {
  operation: "merge",
  accepts: "pdf",
  minInputs: 1,
  maxInputs: 1,
  run() {
    return Promise.reject(new JobError("unsupported_input", "merge is not implemented yet."));
  },
};
