/**
 * Glyph runs (runner/pdf-layout/glyphs.ts) on hand-made operator lists: where the text state puts
 * each glyph, where a jump ends a run, and how a pdfjs text item is cut into the runs it is made
 * of — only where they spell its text and meet at a space; and the glyphs pdfjs' text content
 * drops though they are on the page (dropped.ts).
 */
import { describe, expect, it } from "vitest";
import { droppedGlyphs, pdfjsDrops } from "../../runner/pdf-layout/dropped.ts";
import { glyphRuns, joinFontSwitches, splitAtGaps, type GlyphRun, type TextOpCodes } from "../../runner/pdf-layout/glyphs.ts";
import type { Matrix } from "../../runner/pdf/pdf-matrix.ts";
import type { TextItem } from "../../runner/pdf-layout/types.ts";

const OPS: TextOpCodes = {
  save: 1,
  restore: 2,
  transform: 3,
  paintFormXObjectBegin: 4,
  paintFormXObjectEnd: 5,
  setGState: 6,
  beginText: 7,
  setFont: 8,
  setTextMatrix: 9,
  moveText: 10,
  setLeadingMoveText: 11,
  nextLine: 12,
  setLeading: 13,
  setCharSpacing: 14,
  setWordSpacing: 15,
  setHScale: 16,
  setTextRise: 17,
  showText: 18,
  clip: 19,
  eoClip: 20,
  constructPath: 21,
};
/** A US Letter page's viewport: y flipped, origin at the top-left corner. */
const VIEW: Matrix = [1, 0, 0, -1, 0, 792];
/** Every glyph half an em wide, the space a quarter. */
const glyphs = (text: string): { unicode: string; width: number; isSpace: boolean }[] =>
  [...text].map((c) => ({ unicode: c, width: c === " " ? 250 : 500, isSpace: c === " " }));
/** The one loaded font (pdfjs hands out the same object for a name each time). */
const F1 = { fontMatrix: [0.001, 0, 0, 0.001, 0, 0] };
const font = (): { fontMatrix: number[] } => F1;

/** An operator list from [op name, args] pairs. */
function opList(ops: [keyof TextOpCodes, unknown[]][]): { fnArray: number[]; argsArray: unknown[] } {
  return { fnArray: ops.map(([op]) => OPS[op]!), argsArray: ops.map(([, args]) => args) };
}

/** One TJ array shown in F1 at 10 pt from (100, 700): a line set in one text-showing operator. */
const oneTj = (tj: unknown[]): ReturnType<typeof opList> =>
  opList([
    ["beginText", []],
    ["setFont", ["F1", 10]],
    ["moveText", [100, 700]],
    ["showText", [tj]],
  ]);

const brief = (runs: GlyphRun[]): [string, number, number, number][] =>
  runs.map((r) => [r.text, +r.x0.toFixed(2), +r.x1.toFixed(2), +r.base.toFixed(2)]);

describe("glyph runs", () => {
  it("ends a run where the next text object starts a fifth of an em after the last glyph", () => {
    const ops = opList([
      ["beginText", []],
      ["setFont", ["F1", 10]],
      ["moveText", [100, 700]],
      ["showText", [glyphs("2024")]],
      ["beginText", []],
      ["moveText", [122, 700]],
      ["showText", [glyphs("East")]],
    ]);
    expect(brief(glyphRuns(ops, OPS, VIEW, font))).toEqual([
      ["2024", 100, 120, 92],
      ["East", 122, 142, 92],
    ]);
  });

  it("keeps kerning, spaces and word spacing inside a run, and follows the text and graphics state", () => {
    const ops = opList([
      ["save", []],
      ["transform", [2, 0, 0, 2, 0, 0]],
      ["beginText", []],
      ["setFont", ["F1", 10]],
      ["setWordSpacing", [3]],
      ["setTextMatrix", [[1, 0, 0, 1, 50, 300]]],
      // "ab" kerned together (−0.05 em), a space stretched by Tw, then "cd".
      ["showText", [[...glyphs("a"), 50, ...glyphs("b c"), ...glyphs("d")]]],
      ["setLeadingMoveText", [0, -12]],
      ["showText", [glyphs("next")]],
      ["restore", []],
    ]);
    // In text space: a 0–5, b 4.5–9.5, the space to 15 (2.5 + Tw 3), c 15–20, d 20–25; all scaled
    // by 2 from x = 100. The second line is 12 text units (24 pt) lower.
    expect(brief(glyphRuns(ops, OPS, VIEW, font))).toEqual([
      ["ab cd", 100, 150, 192],
      ["next", 100, 140, 216],
    ]);
  });

  it("keeps word spacing done with TJ offsets inside a run, as TeX does", () => {
    // "lower", 0.3 em, "8", 0.3 em, "bits", all in one TJ array.
    const ops = oneTj([...glyphs("lower"), -300, ...glyphs("8"), -300, ...glyphs("bits")]);
    expect(brief(glyphRuns(ops, OPS, VIEW, font))).toEqual([["lower8bits", 100, 156, 92]]);
  });

  it("ends a run at a TJ offset from a number to a number, as TeX sets two cells of a row", () => {
    // A booktabs row in one TJ array: "VLD", a word space, "(MSE)", then the cells "0.61" and
    // "0.84" 0.42 em apart (pdfjs reads "0.61 0.84"); the word spaces stay inside the runs.
    const ops = oneTj([...glyphs("VLD"), -279, ...glyphs("(MSE)"), -1336, ...glyphs("0.61"), -417, ...glyphs("0.84")]);
    expect(brief(glyphRuns(ops, OPS, VIEW, font)).map((r) => r[0])).toEqual(["VLD(MSE)", "0.61", "0.84"]);
  });

  it("ends a run at a TJ offset from a row label to its first number, wider than the row's word spaces", () => {
    // "VLD", a word space of 0.28 em, "(MSE)", then the first cell "0.71" 0.46 em on: narrower
    // than pdfjs' own limit, wider than any word space TeX sets on that line.
    const ops = oneTj([...glyphs("VLD"), -279, ...glyphs("(MSE)"), -460, ...glyphs("0.71"), -1336, ...glyphs("0.67")]);
    expect(brief(glyphRuns(ops, OPS, VIEW, font)).map((r) => r[0])).toEqual(["VLD(MSE)", "0.71", "0.67"]);
  });

  it("keeps a justified line's word spaces, and the wider one after a sentence, inside a run", () => {
    // TeX sets a line's word spaces alike; a sentence's end gets a wider one, before "3" too.
    const line = [...glyphs("in"), -333, ...glyphs("2019."), -520, ...glyphs("3"), -333, ...glyphs("of"), -333, ...glyphs("12")];
    const ops = oneTj(line);
    expect(brief(glyphRuns(ops, OPS, VIEW, font)).map((r) => r[0])).toEqual(["in2019.3of12"]);
  });

  it("ends a run at a wide TJ offset in a TJ that draws its spaces, as a ledger sets its cells", () => {
    // A ledger's row in one TJ array: "4", 0.43 em, "JV", 0.59 em, "R", then "BEING TRF" with a
    // space glyph between its words; the tiny offsets are kerning. Then a balance and its "Cr."
    // in a TJ of their own without a space: the font draws spaces elsewhere on the page.
    const ops = opList([
      ["beginText", []],
      ["setFont", ["F1", 10]],
      ["moveText", [100, 700]],
      ["showText", [[...glyphs("4"), -430, ...glyphs("J"), -6, ...glyphs("V"), -590, ...glyphs("R"), -590, ...glyphs("BEING TRF")]]],
      ["moveText", [100, 0]],
      ["showText", [[...glyphs("25"), -430, ...glyphs("Cr.")]]],
    ]);
    expect(brief(glyphRuns(ops, OPS, VIEW, font))).toEqual([
      ["4", 100, 105, 92],
      ["JV", 109.3, 119.36, 92],
      ["R", 125.26, 130.26, 92],
      ["BEING TRF", 136.16, 178.66, 92],
      ["25", 200, 210, 92],
      ["Cr.", 214.3, 229.3, 92],
    ]);
  });

  it("ends a run at a TJ offset between two letters wider than any kerning, in a TJ that draws its spaces", () => {
    // cairo sets a spreadsheet's row in one TJ: a right-aligned amount, then the next cell's code
    // 0.199 em on, under the 0.2 em a cell jump takes after a space; kerning moves a few thousandths.
    const ops = oneTj([...glyphs("32,679.33"), -199, ...glyphs("ZX-5012"), -3713, ...glyphs("a b"), -5, ...glyphs("c")]);
    expect(brief(glyphRuns(ops, OPS, VIEW, font)).map((r) => r[0])).toEqual(["32,679.33", "ZX-5012", "a bc"]);
    // A move of just the font's space (a quarter em here) between two words is a word space cairo
    // drew as a number: the run goes on; from a word to a figure it is the next cell.
    const words = oneTj([...glyphs("including"), -250, ...glyphs("amounts"), -252, ...glyphs("9"), -3713, ...glyphs("a b")]);
    expect(brief(glyphRuns(words, OPS, VIEW, font)).map((r) => r[0])).toEqual(["includingamounts", "9", "a b"]);
    // After a space glyph, the same offset widens a word space (justification): the run goes on.
    const justified = oneTj([...glyphs("net "), -199, ...glyphs("assets")]);
    expect(brief(glyphRuns(justified, OPS, VIEW, font)).map((r) => r[0])).toEqual(["net assets"]);
  });

  it("ends a run's box at its clip, keeps the hidden glyphs' text, and parts runs clipped apart", () => {
    // A ledger cell clipped to x 100–150 (re W n) whose text runs on under the next cell, then the
    // next cell's amount drawn right where the hidden text ends, without a gap: two cells.
    const ops = opList([
      ["save", []],
      ["clip", []],
      ["constructPath", [0, [], [100, 0, 150, 792]]],
      ["beginText", []],
      ["setFont", ["F1", 10]],
      ["moveText", [100, 700]],
      ["showText", [glyphs("Payment 2016")]],
      ["restore", []],
      ["beginText", []],
      ["setFont", ["F1", 10]],
      ["moveText", [157.5, 700]],
      ["showText", [glyphs("1074")]],
    ]);
    // "Payment 2016": 11 glyphs of 5 and a space of 2.5, 100 to 157.5; the clip hides from 150.
    const runs = glyphRuns(ops, OPS, VIEW, font);
    expect(brief(runs)).toEqual([
      ["Payment 2016", 100, 150, 92],
      ["1074", 157.5, 177.5, 92],
    ]);
    expect(runs[1]!.clipped).toBe(true);
    // pdfjs reads the two as one item with no space; it is cut where the clip parts them.
    const item: TextItem = {
      text: "Payment 20161074",
      x0: 100,
      x1: 177.5,
      base: 92,
      size: 10,
      font: "F",
      bold: false,
      italic: false,
      mcid: null,
      opaque: false,
    };
    expect(splitAtGaps([item], runs).map((p) => [p.text, p.x0, p.x1])).toEqual([
      ["Payment 2016", 100, 150],
      ["1074", 157.5, 177.5],
    ]);
  });

  it("measures nothing in a font it cannot resolve or in rotated text", () => {
    const unknown = opList([
      ["beginText", []],
      ["setFont", ["F9", 10]],
      ["showText", [glyphs("abc")]],
    ]);
    expect(glyphRuns(unknown, OPS, VIEW, () => null)).toEqual([]);
    const rotated = opList([
      ["beginText", []],
      ["setFont", ["F1", 10]],
      ["setTextMatrix", [[0, 1, -1, 0, 100, 100]]],
      ["showText", [glyphs("abc")]],
    ]);
    expect(glyphRuns(rotated, OPS, VIEW, font)).toEqual([]);
  });
});

describe("splitAtGaps", () => {
  const item = (text: string, x0: number, x1: number): TextItem => ({
    text,
    x0,
    x1,
    base: 92,
    size: 10,
    font: "Carlito",
    bold: false,
    italic: false,
    mcid: "p1_mc3",
    opaque: false,
  });
  const run = (text: string, x0: number, x1: number): GlyphRun => ({ text, x0, x1, base: 92, size: 10 });

  it("cuts the run pdfjs joined across a gap into the two cells' texts", () => {
    const pieces = splitAtGaps([item("2024-05-30 East", 100, 142)], [run("2024-05-30", 100, 120), run("East", 122, 142)]);
    expect(pieces.map((p) => [p.text, p.x0, p.x1, p.mcid])).toEqual([
      ["2024-05-30", 100, 120, "p1_mc3"],
      ["East", 122, 142, "p1_mc3"],
    ]);
  });

  it("ends an item its clip cuts where its run's visible glyphs end, over the next cells' runs", () => {
    // pdfjs measures the clipped text whole (to 400), over an amount of the next cell; the item's
    // run (its hidden rest included, "NO.133" beyond what pdfjs put in this item) ends at 150.
    const clipped = item("Chq. No. 085900 BILL", 100, 400);
    const runs = [run("Chq. No. 085900 BILL NO.133", 100, 150), run("26406576", 200, 240)];
    expect(splitAtGaps([clipped], runs).map((p) => [p.text, p.x0, p.x1])).toEqual([["Chq. No. 085900 BILL", 100, 150]]);
  });

  it("joins the runs pdfjs parted at a font switch along one glyph run, in reading order", () => {
    // cairo draws the "fi" ligature from another subset of the face: pdfjs parts the title there,
    // the space before it drawn at the end of the first run.
    const title = [item("Consolidated statement of", 72, 226.1), item("fi", 229.3, 237.1), item("nancial", 237, 280)];
    const along = [run("Consolidated statement of financial", 72, 280)];
    expect(joinFontSwitches(title, along).map((p) => [p.text, p.x0, p.x1])).toEqual([["Consolidated statement of financial", 72, 280]]);
    // Right-to-left words drawn one after the other read from the right.
    const words = [item("كثبان", 503.9, 520.7), item("بستان", 523.2, 543.2)];
    expect(joinFontSwitches(words, [run("نابثك ناتسب", 503.9, 543.2)]).map((p) => p.text)).toEqual(["بستان كثبان"]);
    // Not across a jump (two glyph runs: two cells), nor between two faces.
    const jumped = joinFontSwitches(title, [run("Consolidated statement of", 72, 226.1), run("financial", 229.3, 280)]);
    expect(jumped.map((p) => p.text)).toEqual(["Consolidated statement of", "financial"]);
    const bold = [title[0]!, { ...title[1]!, font: "Carlito-Bold" }];
    expect(joinFontSwitches(bold, along)).toHaveLength(2);
  });

  it("keeps a run whole where the glyphs do not spell it or would be cut inside a word", () => {
    const whole = item("Hello world", 100, 155);
    expect(splitAtGaps([whole], [run("Hel", 100, 115), run("lo world", 117, 155)])).toEqual([whole]);
    expect(splitAtGaps([whole], [run("Hello", 100, 125), run("there", 127, 155)])).toEqual([whole]);
    expect(splitAtGaps([whole], [run("Hello world", 100, 155)])).toEqual([whole]);
  });
});

describe("glyphs pdfjs' text content drops (dropped.ts)", () => {
  /** A vertical CJK font: every glyph a full em wide, advancing an em downwards. */
  const V = { fontMatrix: [0.001, 0, 0, 0.001, 0, 0], vertical: true, name: "BAAAAA+SimSun" };
  const fonts = (name: string): typeof V | typeof F1 => (name === "F3" ? V : F1);
  const cjk = (c: string): { unicode: string; width: number; vmetric: number[] } => ({
    unicode: c,
    width: 1000,
    vmetric: [-1000, 500, 880],
  });
  const frame = { viewBox: [0, 0, 612, 792], view: VIEW, width: 612, height: 792 };
  /** One glyph of F3 in 46 pt, scaled by the CTM to 7.36 × 5.52 pt, its origin at (x + 3.68, y + 5.52) in user space. */
  const ocrGlyph = (c: string, x: number, y: number): [keyof TextOpCodes, unknown[]][] => [
    ["save", []],
    ["transform", [0.16, 0, 0, 0.12, x, y]],
    ["beginText", []],
    ["setFont", ["F3", 46]],
    ["moveText", [23, 46]],
    ["showText", [[cjk(c)]]],
    ["restore", []],
  ];
  const brief = (items: TextItem[]): [string, number, number, number, number][] =>
    items.map((i) => [i.text, +i.x0.toFixed(2), +i.x1.toFixed(2), +i.base.toFixed(2), +i.size.toFixed(2)]);

  it("tests a glyph as pdfjs does: its unscaled advance against the page in user space", () => {
    // 46 pt down from an origin 40 pt above the foot: "off the page" for pdfjs.
    expect(pdfjsDrops(40, 40, -46, true, frame.viewBox)).toBe(true);
    expect(pdfjsDrops(40, 50, -46, true, frame.viewBox)).toBe(false);
    // A vertical glyph centred on the left edge; a horizontal one whose advance ends on the page.
    expect(pdfjsDrops(-1, 400, -10, true, frame.viewBox)).toBe(true);
    expect(pdfjsDrops(-5, 400, 7, false, frame.viewBox)).toBe(false);
    expect(pdfjsDrops(-8, 400, 7, false, frame.viewBox)).toBe(true);
  });

  it("returns the glyphs of a shrunk vertical font by the foot of the page, where they stand", () => {
    const ops = opList([...ocrGlyph("扎", 2.4, 7.44), ...ocrGlyph("筐", 2.4, 200)]);
    // The first one's origin is 12.96 pt above the foot: pdfjs drops it, it stands wholly on the
    // page (x 2.4–9.76, y 7.44–12.96 in user space); the second one pdfjs keeps.
    expect(brief(droppedGlyphs(ops, OPS, frame, fonts))).toEqual([["扎", 2.4, 9.76, 783.46, 5.52]]);
  });

  it("returns the first letters of a word scaled up at the left edge, not a word whose baseline lies below the page", () => {
    const ops = opList([
      ["save", []],
      ["transform", [4, 0, 0, 4, 0, 0]],
      ["beginText", []],
      ["setFont", ["F1", 10]],
      ["moveText", [-2, 150]],
      ["showText", [glyphs("Hello")]],
      ["restore", []],
      // A page number set 2 pt below the foot: pdfjs and poppler drop it (MuPDF reads it).
      ["beginText", []],
      ["moveText", [300, -2]],
      ["showText", [glyphs("7")]],
    ]);
    // pdfjs drops "H" (its origin 8 pt left of the page, 5 pt unscaled advance); scaled, it reaches 12 pt in.
    expect(brief(droppedGlyphs(ops, OPS, frame, fonts))).toEqual([["H", -8, 12, 192, 40]]);
  });
});
