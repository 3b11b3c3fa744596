/**
 * Counting what stream filters decode to (runner/pdf/stream-filters.ts), checked against
 * qpdf's own decoding of real files and against zlib, and stopped at the budget.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { countedFilters, decodedSize } from "../../runner/pdf/stream-filters.ts";
import { zerosZlib } from "../fixtures/bomb-fixtures.ts";
import { CORPUS } from "../helpers/tools.ts";

/** A stream's stored or decoded bytes, by qpdf: the reference. */
function qpdfStream(file: string, obj: number, mode: "raw" | "filtered"): Buffer {
  return execFileSync("qpdf", [`--show-object=${obj}`, mode === "raw" ? "--raw-stream-data" : "--filtered-stream-data", file], {
    maxBuffer: 64 << 20,
  });
}

describe("stream filter counting", () => {
  it.each([
    ["lin5.pdf", 149, ["ASCII85", "LZW"]],
    ["lin8.pdf", 111, ["ASCII85", "LZW"]],
  ])("counts %s object %i (%j) as qpdf decodes it", async (name, obj, filters) => {
    const file = path.join(CORPUS, name);
    expect(await decodedSize(qpdfStream(file, obj, "raw"), filters, 1e9)).toBe(qpdfStream(file, obj, "filtered").length);
  });

  it("counts Flate exactly, and stops once past the budget", async () => {
    const text = Buffer.from("BT /F1 12 Tf (hello) Tj ET\n".repeat(5000));
    expect(await decodedSize(deflateSync(text), ["Flate"], 1e9)).toBe(text.length);
    const over = await decodedSize(zerosZlib(256), ["Flate"], 10 * 1024 * 1024);
    expect(over).toBeGreaterThan(10 * 1024 * 1024);
    expect(over).toBeLessThan(12 * 1024 * 1024);
  });

  it("counts RunLength and ASCII chains before Flate", async () => {
    expect(await decodedSize(Buffer.from([2, 65, 66, 67, 254, 68, 128]), ["RunLength"], 1e9)).toBe(3 + 3);
    const flate = deflateSync(Buffer.alloc(100_000, 7));
    const hex = Buffer.from(`${flate.toString("hex")}>`);
    expect(await decodedSize(hex, ["ASCIIHex", "Flate"], 1e9)).toBe(100_000);
  });

  it("counts a bomb inside a Flate stream, and treats a first stage past 256 MiB as over any budget", async () => {
    expect(await decodedSize(deflateSync(zerosZlib(300)), ["Flate", "Flate"], 100 * 1024 * 1024)).toBeGreaterThan(100 * 1024 * 1024);
    expect(await decodedSize(zerosZlib(300), ["Flate", "ASCIIHex"], 1e9)).toBeGreaterThan(1e9);
  });

  it("counts up to the first filter it does not decode, by name or abbreviation", () => {
    expect(countedFilters(["/ASCII85Decode", "/FlateDecode", "/DCTDecode"])).toEqual(["ASCII85", "Flate"]);
    expect(countedFilters(["/AHx", "/Fl"])).toEqual(["ASCIIHex", "Flate"]);
    expect(countedFilters(["/DCTDecode"])).toEqual([]);
  });
});
