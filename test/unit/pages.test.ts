import { describe, expect, it } from "vitest";
import { highestExplicitPage, parsePageRanges, resolvePageRanges, toQpdfRange } from "../../core/pages.ts";

describe("page ranges (API.md: 1-based, inclusive, N- to the end, last)", () => {
  const resolve = (spec: string, n: number) => {
    const parsed = parsePageRanges(spec);
    if (typeof parsed === "string") return `parse: ${parsed}`;
    return resolvePageRanges(parsed, n);
  };

  it.each([
    ["a single page", "7", 10, [[7]]],
    ["a closed range", "1-3", 10, [[1, 2, 3]]],
    ["an open range runs to the end", "8-", 10, [[8, 9, 10]]],
    ["last names the final page", "last", 10, [[10]]],
    ["N-last is the same as N-", "9-last", 10, [[9, 10]]],
    ["several ranges stay separate and ordered as given", "1-2, 5 ,9-", 10, [[1, 2], [5], [9, 10]]],
    ["a range may repeat pages", "2,2", 3, [[2], [2]]],
  ])("%s: %s", (_why, spec, n, want) => {
    expect(resolve(spec, n)).toEqual(want);
  });

  it.each([
    ["empty", ""],
    ["a dangling comma", "1,"],
    ["page zero", "0-3"],
    ["backwards", "5-2"],
    ["words", "one-two"],
    ["negative", "-3"],
    ["last before a number", "last-3"],
  ])("rejects %s (%j) with a message", (_why, spec) => {
    expect(typeof parsePageRanges(spec)).toBe("string");
  });

  it("reports a page beyond the document when resolving", () => {
    expect(resolve("1-12", 10)).toMatch(/page 12 is outside the document, which has 10 pages/);
    expect(resolve("11-", 10)).toMatch(/outside/);
  });

  it("knows the highest page named explicitly, for checks at submission", () => {
    const parsed = parsePageRanges("1-3,40,7-");
    expect(typeof parsed).not.toBe("string");
    expect(highestExplicitPage(parsed as never)).toBe(40);
  });

  it("formats page lists compactly for qpdf", () => {
    expect(toQpdfRange([1, 2, 3, 7, 9, 10])).toBe("1-3,7,9-10");
    expect(toQpdfRange([5])).toBe("5");
    expect(toQpdfRange([3, 2, 1])).toBe("3,2,1");
  });
});
