/**
 * Turned text joined before layout (runner/pdf-layout/turned.ts): pieces of one sideways label put
 * back together, and nothing else joined — upright runs, pieces of neighbouring labels, text in
 * another direction.
 */
import { describe, expect, it } from "vitest";
import { latticeTables } from "../../runner/pdf-layout/lattice.ts";
import { drawnAcross, joinTurned, unmirrored, type DrawnRun } from "../../runner/pdf-layout/turned.ts";
import type { TextItem } from "../../runner/pdf-layout/types.ts";
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

describe("unmirrored", () => {
  it("draws a run mirrored left to right the usual way over the same box, and leaves every rotation as it is", () => {
    // GeoTopo's mirrored ↦: 10.9 pt, origin at 363.2, its advance running back to 352.3 (display space, y down).
    const arrow = unmirrored([-10.9, 0, 0, -10.9, 363.2, 290.8], 10.9);
    [10.9, 0, 0, -10.9, 352.3, 290.8].forEach((v, i) => expect(arrow[i]).toBeCloseTo(v, 6));
    // Upright, upside down, reading upwards and downwards: not mirrored.
    for (const m of [
      [10.9, 0, 0, -10.9, 100, 200],
      [-10.9, 0, 0, 10.9, 100, 200],
      [0, -10.9, -10.9, 0, 100, 200],
      [0, 10.9, 10.9, 0, 100, 200],
    ] as Matrix[])
      expect(unmirrored(m, 20)).toBe(m);
    // Flipped top to bottom, or mirrored while turned: left as drawn.
    for (const m of [
      [10.9, 0, 0, 10.9, 100, 200],
      [0, -10.9, 10.9, 0, 100, 200],
    ] as Matrix[])
      expect(unmirrored(m, 20)).toBe(m);
  });
});

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

describe("drawnAcross", () => {
  /** An upright item of 9 pt, 5 pt a character; a turned one by its box (x0–x1 its thickness). */
  const item = (text: string, x0: number, base: number, extra: Partial<TextItem> = {}): TextItem => ({
    text,
    x0,
    x1: x0 + 5 * text.length,
    base,
    size: 9,
    font: "F",
    bold: false,
    italic: false,
    mcid: null,
    opaque: false,
    ...extra,
  });
  const turned = (text: string, x0: number, top: number, bottom: number): TextItem =>
    item(text, x0, (top + bottom) / 2 + 2.7, { x1: x0 + 8.8, size: 11, turned: { top, bottom } });
  // A table of states and districts, its left border at 57; a running head turned along the page's
  // edge, over the first column's text; a turned column label over nothing, in its header cell.
  const rows = ["Assam", "Assam", "Assam", "Bihar", "Bihar"].map((state, r) => [
    item(state, 61.4, 130 + 15 * r),
    item(`District ${r}`, 145, 130 + 15 * r),
    item(`${40 + r}.5`, 290, 130 + 15 * r),
  ]);
  const head = turned("Coverage Evaluation Survey 2018", 56.9, 90, 260);
  const label = turned("Drop-out", 292, 96, 118);
  const items = [head, label, ...rows.flat()];
  const grid = [
    ...[84, 120, 135, 150, 165, 180, 195].map((y) => ({ x0: 57, x1: 320, y0: y, y1: y })),
    ...[57, 141, 270, 320].map((x) => ({ x0: x, x1: x, y0: 84, y1: 195 })),
  ];

  it("finds a turned run drawn over upright text on two lines or more, and no other", () => {
    expect([...drawnAcross(items)]).toEqual([head]);
    expect(drawnAcross(rows.flat()).size).toBe(0);
  });

  it("leaves the table's first column its own text once the run drawn across it is set apart", () => {
    const across = drawnAcross(items);
    const [table] = latticeTables(
      grid,
      items.filter((i) => !across.has(i)),
    );
    const texts = table!.cells.map((c) => c.lines.flatMap((l) => l.items.map((i) => i.text)).join(" "));
    expect(texts.filter((t) => t.startsWith("Assam") || t.startsWith("Bihar"))).toEqual(["Assam", "Assam", "Assam", "Bihar", "Bihar"]);
    expect(texts).toContain("Drop-out");
  });
});
