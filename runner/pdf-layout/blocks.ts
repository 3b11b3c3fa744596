/**
 * Segments → text blocks → reading order.
 *
 * A block is a stack of segments that read as one column of text: each joins the block whose last
 * line sits one line-pitch above it, in the same font size, without sticking out to the right of
 * it (a full-width line below a column is not part of the column). Blocks, tables and images are
 * then ordered by recursive XY-cut: split the group into columns where a vertical gap runs through
 * all of it, else into bands where a horizontal gap does, and read each part in turn. Columns are
 * tried first so that two columns whose paragraph gaps happen to line up are still read column by
 * column. Pure.
 */
import { maxOf, minOf } from "./minmax.ts";
import type { Segment } from "./types.ts";

export interface Box {
  x0: number;
  x1: number;
  top: number;
  bottom: number;
}

export interface TextBlock extends Box {
  segs: Segment[];
}

/** Largest baseline-to-baseline distance (in font sizes) between two lines of one block. */
const MAX_PITCH = 1.75;

function fits(block: TextBlock, seg: Segment): boolean {
  const last = block.segs.at(-1)!;
  const pitch = seg.base - last.base;
  if (pitch <= 0.5 * seg.size || pitch > MAX_PITCH * Math.max(seg.size, last.size)) return false;
  if (Math.abs(seg.size - last.size) > 0.12 * last.size) return false;
  const overlap = Math.min(seg.x1, block.x1) - Math.max(seg.x0, block.x0);
  if (overlap < 0.5 * Math.min(seg.x1 - seg.x0, block.x1 - block.x0)) return false;
  return seg.x1 <= block.x1 + 2 * seg.size && seg.x0 >= block.x0 - 4 * seg.size;
}

/**
 * Groups segments (any order) into blocks. Segments are taken top to bottom, so a block's last
 * baseline only grows: `open` keeps the blocks ordered by it (a Map re-inserted on every append),
 * and each segment looks only at the blocks whose last line is between half a line and
 * MAX_PITCH lines above it; blocks left further behind can take no later segment and are dropped.
 * That keeps a page of tens of thousands of scattered words near-linear.
 */
export function buildBlocks(segments: readonly Segment[]): TextBlock[] {
  const blocks: TextBlock[] = [];
  const open = new Map<TextBlock, Segment>();
  const sorted = [...segments].sort((a, b) => a.base - b.base || a.x0 - b.x0);
  const maxSize = maxOf(sorted, (s) => s.size, 0);
  for (const seg of sorted) {
    let best: TextBlock | null = null;
    for (const [block, last] of open) {
      if (seg.base - last.base > MAX_PITCH * Math.max(maxSize, last.size)) {
        open.delete(block);
        continue;
      }
      if (seg.base - last.base <= 0.5 * seg.size) break;
      if (fits(block, seg) && (!best || last.base > best.segs.at(-1)!.base)) best = block;
    }
    if (best) {
      best.segs.push(seg);
      best.x0 = Math.min(best.x0, seg.x0);
      best.x1 = Math.max(best.x1, seg.x1);
      best.bottom = Math.max(best.bottom, seg.bottom);
      open.delete(best);
      open.set(best, seg);
    } else {
      const block = { segs: [seg], x0: seg.x0, x1: seg.x1, top: seg.top, bottom: seg.bottom };
      blocks.push(block);
      open.set(block, seg);
    }
  }
  return blocks;
}

/** Splits boxes where a gap runs through all of them along one axis. */
function cut<T extends Box>(boxes: readonly T[], lo: (b: Box) => number, hi: (b: Box) => number): T[][] {
  const sorted = [...boxes].sort((a, b) => lo(a) - lo(b));
  const parts: T[][] = [];
  let reach = Number.NEGATIVE_INFINITY;
  for (const b of sorted) {
    if (parts.length && lo(b) < reach) parts.at(-1)!.push(b);
    else parts.push([b]);
    reach = Math.max(reach, hi(b));
  }
  return parts;
}

export function bounds(boxes: readonly Box[]): Box {
  return {
    x0: minOf(boxes, (b) => b.x0),
    x1: maxOf(boxes, (b) => b.x1),
    top: minOf(boxes, (b) => b.top),
    bottom: maxOf(boxes, (b) => b.bottom),
  };
}

/**
 * Reading order by recursive XY-cut. `region` receives, for every box, the bounds of the column
 * it was read in (for alignment and indentation).
 */
export function readingOrder<T extends Box>(boxes: readonly T[], region: Map<T, Box>, frame: Box = bounds(boxes)): T[] {
  if (boxes.length <= 1) {
    for (const b of boxes) region.set(b, frame);
    return [...boxes];
  }
  // Boxes that touch by a hair (rounding) must not block a cut: shrink them slightly.
  const columns = cut(
    boxes,
    (b) => b.x0 + 0.5,
    (b) => b.x1 - 0.5,
  );
  if (columns.length > 1) return columns.flatMap((col) => readingOrder(col, region, bounds(col)));
  const bands = cut(
    boxes,
    (b) => b.top + 0.5,
    (b) => b.bottom - 0.5,
  );
  if (bands.length > 1) return bands.flatMap((band) => readingOrder(band, region, frame));
  const rest = [...boxes].sort((a, b) => a.top - b.top || a.x0 - b.x0);
  for (const b of rest) region.set(b, frame);
  return rest;
}
