/** The operations, by name. */
import type { Operation } from "../../core/schemas/options.ts";
import { compress } from "./compress.ts";
import { convert } from "./convert.ts";
import { merge } from "./merge.ts";
import { protect } from "./protect.ts";
import { split } from "./split.ts";
import type { OpDefinition } from "./types.ts";

export const OPS: Record<Operation, OpDefinition<never>> = {
  compress: compress,
  merge: merge,
  split: split,
  convert: convert,
  protect: protect,
};
