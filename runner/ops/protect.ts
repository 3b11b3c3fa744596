/** PLACEHOLDER — protect is being implemented. */
import { JobError } from "../../core/errors.ts";
import type { ProtectOptions } from "../../core/schemas/options.ts";
import type { OpDefinition } from "./types.ts";

export const protect: OpDefinition<ProtectOptions> = {
  operation: "protect",
  accepts: "pdf",
  minInputs: 1,
  maxInputs: 1,
  run() {
    return Promise.reject(new JobError("unsupported_input", "protect is not implemented yet."));
  },
};
