import { describe, expect, it } from "vitest";
import { OPS } from "../../runner/ops/index.ts";

describe("operation registry", () => {
  it.each(Object.keys(OPS))("describes %s exactly as its module does", async (name) => {
    const entry = OPS[name as keyof typeof OPS];
    const op = await entry.load();
    const shape = ({ operation, accepts, minInputs, maxInputs, opensEarly }: typeof op | typeof entry) => ({
      operation,
      accepts,
      minInputs,
      maxInputs,
      opensEarly,
    });
    expect(shape(op)).toEqual(shape(entry));
  });
});
