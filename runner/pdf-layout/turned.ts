/**
 * Text drawn sideways (a column label turned 90°, a page number along the edge) put back together
 * before the layout analysis sees it. Producers often draw such text one glyph at a time, each with
 * its own text matrix, and pdfjs then hands it over in pieces ("Ab", "abg Aaaab", "maab" for
 * "Ababg Aaaab maab"). Upright text is cut and joined later on its baseline (glyphs.ts, lines.ts),
 * but a turned piece is stood in for by its bounding box (extract-worker.ts), whose pseudo-baseline
 * is the middle of the piece: the pieces of one label then land on different lines, each glued to
 * the pieces of its neighbours, and no word of the label survives whole.
 *
 * joinTurned joins consecutive pieces that continue one another along their own baseline: same
 * direction, same line across it, the next starting where the last ends (a gap wider than a word
 * space gets a space, as pdfjs itself does), and a superscript or subscript set against the end of
 * a piece (a footnote mark on a column label, as lines.ts joins one to upright text). A run drawn
 * mirrored is first turned into the run that covers the same box drawn the usual way (unmirrored).
 * Pure.
 */
import type { Matrix } from "../pdf/pdf-matrix.ts";
import type { TextItem } from "./types.ts";
import { WORD_GAP } from "./lines.ts";

/** A text run as drawn: its matrix in display space (y down), its advance width along it, its size. */
export interface DrawnRun {
  text: string;
  m: Matrix;
  width: number;
  size: number;
  font: string;
  mcid: string | null;
  opaque: boolean;
}

/**
 * A run drawn mirrored left to right (its matrix flips the glyphs, as TeX's \reflectbox or a ↦ set
 * reversed in a formula) as the run that covers the same box drawn the usual way: the same
 * direction across, along the other way, from the far end of its advance. Mirrored, the run would
 * read as text turned upside down starting at its right end, and land a word early on its line;
 * poppler, too, reads mirrored glyphs where they stand. Only a run that then reads left to right:
 * one flipped top to bottom (its advance rightwards) is read upright, as before. `m` is in display
 * space (y down), where upright text has a negative determinant.
 */
export function unmirrored(m: Matrix, width: number): Matrix {
  if (m[0] * m[3] - m[1] * m[2] <= 0 || -m[0] <= Math.abs(m[1])) return m;
  const len = Math.hypot(m[0], m[1]) || 1;
  return [-m[0], -m[1], m[2], m[3], m[4] + (m[0] / len) * width, m[5] + (m[1] / len) * width];
}

/** The widest gap (font sizes) between two pieces along their baseline that still joins them. */
const JOIN_GAP = 1;
/**
 * How far (font sizes) the next piece may start back inside the last one: producers that place each
 * glyph on its own often set them closer than the font's widths say (a substituted font), and
 * pdfjs cuts its items exactly there.
 */
const OVERLAP = 0.5;
/** How far (font sizes) two pieces' baselines may lie apart across the direction of writing. */
const ACROSS = 0.2;
/** A superscript or subscript is in smaller type than this share of its run's size… */
const SCRIPT_SIZE = 0.85;
/** …and its baseline is off the run's by no more than this (font sizes of the run). */
const SCRIPT_SHIFT = 0.6;

/** Whether a run is upright left-to-right text (those are cut and joined on their baseline later). */
const isUpright = (m: Matrix): boolean => Math.abs(m[1]) <= 1e-3 * Math.abs(m[0]) && m[0] > 0;

/** Unit vector along a run's baseline. */
function direction(m: Matrix): [number, number] {
  const len = Math.hypot(m[0], m[1]) || 1;
  return [m[0] / len, m[1] / len];
}

/** Where `next` starts, measured from the end of `run` along its baseline and across it (points). */
function offsets(run: DrawnRun, next: DrawnRun): { along: number; across: number } {
  const [dx, dy] = direction(run.m);
  const ex = run.m[4] + dx * run.width;
  const ey = run.m[5] + dy * run.width;
  const vx = next.m[4] - ex;
  const vy = next.m[5] - ey;
  return { along: vx * dx + vy * dy, across: vx * -dy + vy * dx };
}

/** Whether two runs are drawn in the same direction. */
function parallel(a: Matrix, b: Matrix): boolean {
  const [ax, ay] = direction(a);
  const [bx, by] = direction(b);
  return ax * bx + ay * by > 0.999;
}

/**
 * How `next` continues the turned run `run` (see the header): "word" (in the same size, on the
 * same line), "script" (a smaller superscript or subscript touching its end, as a footnote mark on
 * a column label), or null.
 */
function continuation(run: DrawnRun, next: DrawnRun): { kind: "word" | "script"; along: number } | null {
  if (run.opaque || next.opaque || isUpright(run.m) || run.mcid !== next.mcid || !parallel(run.m, next.m)) return null;
  const { along, across } = offsets(run, next);
  if (along < -OVERLAP * run.size) return null;
  const sameSize = Math.abs(next.size - run.size) <= 0.1 * run.size;
  if (sameSize && Math.abs(across) <= ACROSS * run.size && along <= JOIN_GAP * run.size) return { kind: "word", along };
  const script = next.size <= SCRIPT_SIZE * run.size && Math.abs(across) <= SCRIPT_SHIFT * run.size && along <= WORD_GAP * run.size;
  return script ? { kind: "script", along } : null;
}

/** The runs with consecutive pieces of turned text joined (see the header); upright runs pass unchanged. */
export function joinTurned(runs: readonly DrawnRun[]): DrawnRun[] {
  const out: DrawnRun[] = [];
  for (const run of runs) {
    const last = out.at(-1);
    const next = last ? continuation(last, run) : null;
    if (last === undefined || next === null) {
      out.push(run);
      continue;
    }
    const { kind, along } = next;
    // A space drawn as a glyph of its own ends up as one space, however narrow it was set.
    const space = kind === "word" && (along > WORD_GAP * run.size || !run.text.trim()) && !/\s$/.test(last.text) ? " " : "";
    // A script keeps the run's size and line: it reads as part of the word it is set against ("Total¹").
    const text = run.text.trim() ? last.text + space + run.text : last.text + space;
    out[out.length - 1] = { ...last, text, width: last.width + along + run.width };
  }
  return out;
}

/** A turned run overlaps an upright one when their boxes share more than this (points) across. */
const ACROSS_OVERLAP = 1;
/** Lines of upright text a turned run must be drawn over to be drawn across them. */
const ACROSS_LINES = 2;

/**
 * The turned runs drawn across upright text: a running head set along the page's edge that the
 * page's table runs under ("Coverage Evaluation Survey 2018" over a table's first column), whose
 * box overlaps upright runs on two lines or more. No cell holds text drawn over other text, so these
 * are left to the page's flow of text, not read into a table's cell (a turned column label or a
 * group's label turned beside its rows stands in a cell of its own, over nothing).
 */
export function drawnAcross(items: readonly TextItem[]): Set<TextItem> {
  const out = new Set<TextItem>();
  const upright = items.filter((i) => !i.turned);
  for (const t of items) {
    if (!t.turned) continue;
    const { top, bottom } = t.turned;
    const bases = new Set<number>();
    for (const u of upright) {
      const across = Math.min(t.x1, u.x1) - Math.max(t.x0, u.x0);
      if (across > ACROSS_OVERLAP && u.base > top && u.base - 0.7 * u.size < bottom) bases.add(Math.round(u.base));
    }
    if (bases.size >= ACROSS_LINES) out.add(t);
  }
  return out;
}
