/**
 * The runner's PDF lexers on inputs the fuzzer found (make bench-fuzz-parser): each must answer in
 * time linear in its input. Before the fix, a 24 KB run of digits ending in a letter took 3.5 s
 * in the number pattern, and these 400 KB runs would not finish within the test's timeout.
 */
import { describe, expect, it } from "vitest";
import { forEachOperator } from "../../runner/pdf/content-stream.ts";
import { parseQpdfJson } from "../../runner/pdf/pdf-json.ts";
import { PdfLexer, PdfSyntaxError } from "../../runner/pdf/pdf-syntax.ts";

const digitsThen = (tail: string): string => `${"0069".repeat(100_000)}${tail}`;

describe("PDF lexers stay linear", () => {
  it("refuses a huge digit run that ends in a letter with its typed error", { timeout: 10_000 }, () => {
    expect(() => new PdfLexer(digitsThen("X")).value()).toThrow(PdfSyntaxError);
    expect(() => new PdfLexer(`[ ${digitsThen("X ")}]`).value()).toThrow(/unexpected token/);
  });

  it("still reads every number form of §7.3.3", () => {
    for (const n of ["12", "-7", "+3", "34.5", "-.002", "0.0", "4.", "-3.62"])
      expect(new PdfLexer(n).value()).toEqual({ kind: "token", text: n });
  });

  it("takes the same run in a content stream as one unknown operator", { timeout: 10_000 }, () => {
    const ops: string[] = [];
    forEachOperator(Buffer.from(`1 0 0 1 5 5 cm ${digitsThen("Q")} q`, "latin1"), (op) => ops.push(op));
    expect(ops).toEqual(["cm", digitsThen("Q"), "q"]);
  });
});

describe("qpdf JSON with PDF numbers", () => {
  it("reads the reals qpdf writes as the PDF has them (0., -.5), which JSON does not allow (qpdf corpus good10.pdf)", () => {
    expect(parseQpdfJson('{"a": [0., -0., -.5, 1.25, "u:0.", ".5", "3 0 R"], "b": 3.}')).toEqual({
      a: [0, -0, -0.5, 1.25, "u:0.", ".5", "3 0 R"],
      b: 3,
    });
  });
});
