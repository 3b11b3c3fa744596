/** The operations, by name. */
import type { Operation } from "../../core/schemas/options.js";
import { compress } from "./compress.js";
import { convert } from "./convert.js";
import { merge } from "./merge.js";
import { protect } from "./protect.js";
import { split } from "./split.js";
import type { OpDefinition } from "./types.js";

export const OPS: Record<Operation, OpDefinition<never>> = {
  compress: compress,
  merge: merge,
  split: split,
  convert: convert,
  protect: protect,
};
