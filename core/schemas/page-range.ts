/** The page-range string of every operation's options; its own module so that option files can share it. */
import { z } from "zod";
import { parsePageRanges } from "../pages.ts";

/** A page-range string ("1-3,7,10-", "last"), checked for syntax; bounds are checked later. */
export const PageRangeSpec = z
  .string()
  .max(1000)
  .superRefine((value, ctx) => {
    const parsed = parsePageRanges(value);
    if (typeof parsed === "string") ctx.addIssue({ code: "custom", message: parsed });
  })
  .meta({ description: '1-based inclusive page ranges, e.g. "1-3,7,10-" or "5-last".', examples: ["1-3,7,10-"] });
