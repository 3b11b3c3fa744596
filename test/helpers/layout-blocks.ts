/**
 * Layout blocks for unit tests of the page-level passes (continued.ts): a plain left-aligned
 * paragraph over its lines, spanning them from the first's top to the last's bottom.
 */
import type { Paragraph, Segment } from "../../runner/pdf-layout/types.ts";

export function paragraphOf(lines: Segment[]): Paragraph {
  return {
    type: "paragraph",
    lines,
    heading: null,
    list: null,
    align: "left",
    indent: 0,
    firstLine: 0,
    spaceBefore: 0,
    top: lines[0]!.top,
    bottom: lines.at(-1)!.bottom,
  };
}
