/** PLACEHOLDER — protect is being implemented. */
import { JobError } from "../../core/errors.js";
import type { ProtectOptions } from "../../core/schemas/options.js";
import type { OpDefinition } from "./types.js";

export const protect: OpDefinition<ProtectOptions> = {
  operation: "protect",
  accepts: "pdf",
  minInputs: 1,
  maxInputs: 1,
  run() {
    return Promise.reject(new JobError("unsupported_input", "protect is not implemented yet."));
  },
};
