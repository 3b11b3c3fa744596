/**
 * Turned text joined before layout (runner/pdf-layout/turned.ts): pieces of one sideways label put
 * back together, and nothing else joined — upright runs, pieces of neighbouring labels, text in
 * another direction.
 */
import { describe, expect, it } from "vitest";
import { joinTurned, type DrawnRun } from "../../runner/pdf-layout/turned.ts";
import type { Matrix } from "../../runner/pdf/pdf-matrix.ts";

/** A run reading upwards on the displayed page (y down) from (x, y), `width` long. */
const up = (text: string, x: number, y: number, width: number, size = 9): DrawnRun => ({
  text,
  m: [0, -size, size, 0, x, y] as Matrix,
  width,
  size,
  font: "F",
  mcid: null,
  opaque: false,
});
const upright = (text: string, x: number, y: number, width: number): DrawnRun => ({ ...up(text, x, y, width), m: [9, 0, 0, 9, x, y] });

describe("joinTurned", () => {
  it("joins the pieces of an upward label, overlapping or a space apart, and its footnote mark", () => {
    const runs = [up("Ab", 600, 400, 11.5), up("abg", 600, 390.5, 15), up("Total", 600, 373, 20), up("06", 596, 353, 5, 6)];
    expect(joinTurned(runs).map((r) => r.text)).toEqual(["Ababg Total06"]);
  });

  it("takes a space drawn on its own as a space, however narrow", () => {
    const runs = [up("Net", 600, 400, 14), up(" ", 600, 386.5, 2), up("Income", 600, 385, 30)];
    expect(joinTurned(runs).map((r) => r.text)).toEqual(["Net Income"]);
  });

  it("leaves upright runs, the next label over and text turned the other way alone", () => {
    const down: DrawnRun = { ...up("down", 600, 370, 20), m: [0, 9, -9, 0, 600, 370] };
    const runs = [upright("a", 100, 100, 5), upright("b", 105, 100, 5), up("One", 600, 400, 15), up("Two", 612, 385, 15), down];
    expect(joinTurned(runs).map((r) => r.text)).toEqual(["a", "b", "One", "Two", "down"]);
  });
});
