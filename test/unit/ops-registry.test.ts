import { describe, expect, it } from "vitest";
import { OPS } from "../../runner/ops/index.ts";

describe("operation registry", () => {
  it.each(Object.keys(OPS))("describes %s exactly as its module does", async (name) => {
    const entry = OPS[name as keyof typeof OPS];
    const op = await entry.load();
    expect({ operation: op.operation, accepts: op.accepts, minInputs: op.minInputs, maxInputs: op.maxInputs }).toEqual({
      operation: entry.operation,
      accepts: entry.accepts,
      minInputs: entry.minInputs,
      maxInputs: entry.maxInputs,
    });
  });
});
