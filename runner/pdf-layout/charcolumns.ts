/**
 * Columns of a character grid: a page set in one monospaced face, as line printers, enscript and
 * mainframe or ERP exports print their listings, puts its columns at fixed character positions, as
 * little as one space apart ("PO696419 JE974257 Quartz hull meridian"). One space there is both a
 * word space and a column gap; what tells them apart is the page's other lines. A character
 * position blank on nearly every line of a block is a river; a run with a space in a river is cut
 * there for finding tables, when the columns on both sides of it are columns: text there starts or
 * ends at one position on two lines or more, on a quarter of the block's lines at least.
 *
 * The lines of a block stand at most a blank line apart (two blank lines part tables). A line that
 * crosses two rivers or more is no row of the grid (a running head, a title): the rivers are found
 * again without it. A line through one (a group heading over two columns, a header wider than its
 * column) keeps the river for the rest, up to RIVER_SPAN of the lines. Neither is cut, nor a line
 * of one run among lines of several (a group heading "Branch 007", a total's label), nor a line
 * off the grid (onGrid); a line is cut only at the rivers it leaves blank (a long figure reaches
 * into one from its column). Like textrules.ts, the parts are for finding tables only; the runs go
 * back whole to the text where no table takes them. Pure.
 */
import { maxOf, minOf } from "./minmax.ts";
import { cutRun, monospaced, replaceRuns } from "./textrules.ts";
import type { TextItem } from "./types.ts";

/** Share of a block's lines that may cross a river: headings and totals spanning two columns. */
const RIVER_SPAN = 0.15;
/** Lines a block needs for its rivers to say anything. */
const MIN_LINES = 4;
/** Share of a block's lines a column must hold text on (two at least). */
const COLUMN_SUPPORT = 0.25;
/** A monospaced face's characters are this share of its size wide (Courier's 0.6), or the run is no text of a grid. */
const PITCH = [0.4, 0.8] as const;
/**
 * A block wider than this many characters, or of more lines, is read as it stands: printers set
 * 132 to 255 columns and some 100 lines a page; the work per block grows with lines × width.
 */
const MAX_WIDTH = 1000;
const MAX_LINES = 500;
/** Rounds of leaving out the lines across the columns (a running head's few lines go in one or two). */
const MAX_ROUNDS = 8;

interface Placed {
  item: TextItem;
  /** First character position and the characters. */
  at: number;
  chars: string[];
}

type Line = Placed[];

const isSpace = (c: string): boolean => /\s/u.test(c);
const pitchOf = (i: TextItem): number => (i.x1 - i.x0) / Math.max(1, [...i.text].length);

/** The monospaced runs of a page grouped by size and character pitch, each group's runs by line. */
function gridGroups(page: readonly TextItem[]): TextItem[][][] {
  const groups = new Map<string, TextItem[]>();
  for (const item of page) {
    if (!monospaced(item.font) || item.turned || item.opaque || !item.text.trim()) continue;
    const pitch = pitchOf(item);
    if (!(pitch >= PITCH[0] * item.size && pitch <= PITCH[1] * item.size)) continue;
    const key = `${item.size.toFixed(1)}:${pitch.toFixed(2)}`;
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return [...groups.values()].map((items) => {
    const lines: TextItem[][] = [];
    for (const item of [...items].sort((a, b) => a.base - b.base || a.x0 - b.x0)) {
      const last = lines[lines.length - 1];
      if (last && Math.abs(last[0]!.base - item.base) < item.size * 0.2) last.push(item);
      else lines.push([item]);
    }
    return lines;
  });
}

/** A group's lines parted into blocks where two blank lines or more stand between them. */
function blocks(lines: readonly TextItem[][]): TextItem[][][] {
  const steps = lines.slice(1).map((l, k) => l[0]!.base - lines[k]![0]!.base);
  const pitch = [...steps].sort((a, b) => a - b)[Math.floor(steps.length / 4)] ?? 0;
  const out: TextItem[][][] = [];
  for (const [k, line] of lines.entries()) {
    const last = out[out.length - 1];
    if (last && k > 0 && steps[k - 1]! <= pitch * 2.5) last.push(line);
    else out.push([line]);
  }
  return out;
}

/**
 * A block's runs at their character positions, counted from where most runs' grid lies (a change
 * bar or a marker half a character off leaves the others on it); runs off the grid are left out.
 */
function placed(block: readonly TextItem[][]): Line[] {
  const pitch = pitchOf(block[0]![0]!);
  /** Where a run stands within a character's width, in tenths. */
  const phaseOf = (i: TextItem): number => Math.round(((((i.x0 / pitch) % 1) + 1) % 1) * 10) % 10;
  const votes = new Map<number, number>();
  for (const i of block.flat()) votes.set(phaseOf(i), (votes.get(phaseOf(i)) ?? 0) + 1);
  const phase = [...votes].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  const onPhase = block.flat().filter((i) => phaseOf(i) === phase);
  const origin = minOf(onPhase, (i) => i.x0, 0);
  return block.map((line) =>
    line.flatMap((item) => {
      const at = (item.x0 - origin) / pitch;
      return at > -0.15 && Math.abs(at - Math.round(at)) < 0.15 ? [{ item, at: Math.round(at), chars: [...item.text] }] : [];
    }),
  );
}

/** Per line, which character positions hold a character. */
function occupancy(lines: readonly Line[], width: number): Uint8Array[] {
  return lines.map((line) => {
    const filled = new Uint8Array(width);
    for (const p of line) p.chars.forEach((c, k) => !isSpace(c) && (filled[p.at + k] = 1));
    return filled;
  });
}

/** Ranges [from, to] of positions blank on all of `rows` but RIVER_SPAN of them, inside the text. */
function rivers(rows: readonly Uint8Array[], width: number): [number, number][] {
  const allowed = Math.floor(rows.length * RIVER_SPAN);
  const out: [number, number][] = [];
  for (let p = 1; p < width - 1; p++) {
    const crossing = rows.reduce((n, r) => n + r[p]!, 0);
    if (crossing > allowed) continue;
    const last = out[out.length - 1];
    if (last && last[1] === p - 1) last[1] = p;
    else out.push([p, p]);
  }
  return out;
}

const crosses = (row: Uint8Array, [from, to]: [number, number]): boolean => row.subarray(from, to + 1).some((v) => v === 1);

/**
 * Whether a line's text runs through a river: a phrase of it (words a space apart) holds characters
 * in the river and reaches past it on both sides — a title over the columns, not a long figure
 * reaching into the river from its column, nor a row whose single space is the river.
 */
function through(row: Uint8Array, river: [number, number]): boolean {
  if (!crosses(row, river)) return false;
  const phrase = (p: number, step: number): number => {
    while (p + step >= 0 && p + step < row.length && (row[p + step] === 1 || row[p + 2 * step] === 1)) p += step;
    return p;
  };
  const inside = row.subarray(river[0], river[1] + 1).indexOf(1) + river[0];
  return phrase(inside, -1) < river[0] && phrase(inside, 1) > river[1];
}

/** Whether the positions [from, to) hold a column: text that starts or ends at one place, on enough lines. */
function isColumn(rows: readonly Uint8Array[], from: number, to: number, left: [number, number] | undefined): boolean {
  const starts = new Map<number, number>();
  const ends = new Map<number, number>();
  let support = 0;
  for (const row of rows) {
    if (left && crosses(row, left)) continue;
    const first = row.subarray(from, to).indexOf(1);
    if (first < 0) continue;
    support++;
    const last = row.subarray(from, to).lastIndexOf(1);
    starts.set(first, (starts.get(first) ?? 0) + 1);
    ends.set(last, (ends.get(last) ?? 0) + 1);
  }
  const aligned = Math.max(
    maxOf(starts.values(), (v) => v, 0),
    maxOf(ends.values(), (v) => v, 0),
  );
  return aligned >= 2 && support >= Math.max(2, Math.ceil(rows.length * COLUMN_SUPPORT));
}

/** The rivers whose columns on both sides are columns (isColumn), dropping the others until none fails. */
function columnRivers(rows: readonly Uint8Array[], width: number, found: [number, number][]): [number, number][] {
  const kept = [...found];
  for (let k = 0; k < kept.length;) {
    const from = k > 0 ? kept[k - 1]![1] + 1 : 0;
    const to = kept[k + 1]?.[0] ?? width;
    const river = kept[k]!;
    if (isColumn(rows, from, river[0], kept[k - 1]) && isColumn(rows, river[1] + 1, to, river)) k++;
    else {
      kept.splice(k, 1);
      k = Math.max(0, k - 1);
    }
  }
  return kept;
}

/** How many lines have a word starting, and ending, at each position. */
interface Edges {
  starts: Map<number, number>;
  ends: Map<number, number>;
}

function wordEdges(rows: readonly Uint8Array[]): Edges {
  const starts = new Map<number, number>();
  const ends = new Map<number, number>();
  for (const row of rows) {
    row.forEach((v, p) => {
      if (v === 1 && row[p - 1] !== 1) starts.set(p, (starts.get(p) ?? 0) + 1);
      if (v === 1 && row[p + 1] !== 1) ends.set(p, (ends.get(p) ?? 0) + 1);
    });
  }
  return { starts, ends };
}

/**
 * Whether a line is set in the grid: each of its phrases (words a space apart) starts or ends
 * where a quarter of the `lines` (two at least) have a word start or end — a row's cells do, a
 * running head's centred title and run date do not.
 */
function onGrid(row: Uint8Array, { starts, ends }: Edges, lines: number): boolean {
  const shared = Math.max(2, Math.ceil(lines * COLUMN_SUPPORT));
  for (let p = 0; p < row.length; p++) {
    if (row[p] !== 1 || row[p - 1] === 1 || row[p - 2] === 1) continue;
    let e = p;
    while (row[e + 1] === 1 || row[e + 2] === 1) e++;
    if ((starts.get(p) ?? 0) < shared && (ends.get(e) ?? 0) < shared) return false;
    p = e;
  }
  return true;
}

/**
 * Whether the word after a river on a line starts a cell: another line has a word starting where
 * it starts (a column set flush left), or it is the last word before the next river and another
 * line has a word ending where it ends (a figure set flush right) — not a label's second word
 * that happens to stand past the others' ends ("Office supplies" among "Rent", "Wages").
 */
function cellStarts(edges: Edges, kept: readonly [number, number][]): (row: Uint8Array, river: [number, number]) => boolean {
  const { starts, ends } = edges;
  return (row, [, b]) => {
    const s = b + 1;
    if (row[s] !== 1) return false;
    if ((starts.get(s) ?? 0) >= 2) return true;
    let e = s;
    while (row[e + 1] === 1) e++;
    const next = kept.find(([a]) => a > e)?.[0] ?? row.length;
    return !row.subarray(e + 1, next).includes(1) && (ends.get(e) ?? 0) >= 2;
  };
}

/** A run's parts at the rivers its spaces fall in, each where its characters lie. */
function cut(p: Placed, cuts: readonly [number, number][]): TextItem[] {
  const river = new Uint8Array(p.chars.length);
  for (const [a, b] of cuts) river.fill(1, Math.max(0, a - p.at), Math.max(0, b + 1 - p.at));
  return cutRun(p.item, (k, c) => river[k] === 1 && isSpace(c));
}

/** The cuts of one block: each run that has a space in a column river, mapped to its parts. */
function blockCuts(block: readonly TextItem[][], into: Map<TextItem, TextItem[]>): void {
  if (block.length > MAX_LINES) return;
  const lines = placed(block);
  const width = maxOf(lines.flat(), (p) => p.at + p.chars.length, 0);
  if (width > MAX_WIDTH) return;
  const rows = occupancy(lines, width);
  // Lines crossing two rivers are left out, and the rivers found again without them, until none is.
  let gridded = rows.map((r, k) => ({ r, line: lines[k]! }));
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const found = rivers(
      gridded.map((g) => g.r),
      width,
    );
    const rest = gridded.filter(({ r }) => found.filter((v) => crosses(r, v)).length < 2);
    if (rest.length === gridded.length) break;
    gridded = rest;
  }
  if (gridded.length < MIN_LINES) return;
  const grid = gridded.map((g) => g.r);
  const kept = columnRivers(grid, width, rivers(grid, width));
  if (!kept.length) return;
  // A line of one run among rows of several is a heading or a total's label: it stays whole.
  const rowsOfSeveral = gridded.filter((g) => g.line.length > 1).length * 2 > gridded.length;
  const edges = wordEdges(grid);
  const startsCell = cellStarts(edges, kept);
  for (const { r, line } of gridded) {
    // A line across a river (a title, a header wider than its column) is no line of the grid.
    if ((rowsOfSeveral && line.length === 1) || kept.some((v) => through(r, v)) || !onGrid(r, edges, gridded.length)) continue;
    // A figure reaching into a river from its column leaves that river uncut on its line.
    const open = kept.filter((v) => !crosses(r, v) && startsCell(r, v));
    for (const p of line) {
      const parts = cut(p, open);
      if (parts.length > 1) into.set(p.item, parts);
    }
  }
}

/**
 * A page's runs with the monospaced ones cut at their grid's column rivers, for finding tables (see
 * the header); `drawn` maps each part back to its run.
 */
export function atCharColumns(page: readonly TextItem[]): { items: TextItem[]; drawn: Map<TextItem, TextItem> } {
  const cuts = new Map<TextItem, TextItem[]>();
  for (const lines of gridGroups(page)) for (const block of blocks(lines)) if (block.length >= MIN_LINES) blockCuts(block, cuts);
  const { items, drawn } = replaceRuns(page, (item) => cuts.get(item));
  return { items, drawn };
}
