/**
 * Rules drawn in text: the bars a monospaced page sets between its cells ("|Kasse   |  1.234,50-|"),
 * as SAP lists, mainframe reports and psql or ASCII tables print them. For finding tables each such
 * run is cut at its bars, the bars left out: its parts are the cells' text, each placed at its
 * characters' share of the run (the type is monospaced, every character as wide). The lines of
 * dashes between the rows are left to the table finders (stream.ts textRule). Runs in proportional
 * type keep their bars: there a bar is punctuation ("Home | About"). Pure.
 */
import type { TextItem } from "./types.ts";

/** A bar drawn as a cell's border: ASCII's, and the box-drawing vertical lines. */
const BAR = /[|\u2502\u2503\u2551]/u;

/**
 * Font names of monospaced type (pdfjs gives an embedded font's base name, "ABCDEF+CourierNewPSMT";
 * Ghostscript's Courier is Nimbus Mono); Monotype's faces are not.
 */
const MONOSPACED =
  /courier|mono(?!type)|nimbusmon|consol|typewriter|lucida ?console|andale|menlo|monaco|cousine|source ?code|letter ?gothic|fixed|ocr-?b/iu;

/** Whether a font's name is a monospaced face's (MONOSPACED). */
export const monospaced = (font: string | undefined): boolean => MONOSPACED.test(font ?? "");

/** The parts of a monospaced run between its bars, trimmed, each where its characters lie; [] for bars alone. */
function cutAtBars(item: TextItem): TextItem[] {
  const chars = [...item.text];
  const at = (k: number): number => item.x0 + ((item.x1 - item.x0) * k) / chars.length;
  const parts: TextItem[] = [];
  let start = 0;
  for (let k = 0; k <= chars.length; k++) {
    if (k < chars.length && !BAR.test(chars[k]!)) continue;
    let [s, e] = [start, k];
    while (s < e && /\s/u.test(chars[s]!)) s++;
    while (e > s && /\s/u.test(chars[e - 1]!)) e--;
    if (e > s) {
      const first = parts.length === 0 && s === 0;
      parts.push({ ...item, text: chars.slice(s, e).join(""), x0: at(s), x1: at(e), spaceBefore: first ? item.spaceBefore : true });
    }
    start = k + 1;
  }
  return parts;
}

/**
 * A page's runs with the monospaced ones cut at their bars, for finding tables (see the header);
 * `drawn` maps each part back to the run as drawn, `bars` are the runs that are bars alone.
 */
export function withoutBars(page: readonly TextItem[]): { items: TextItem[]; drawn: Map<TextItem, TextItem>; bars: TextItem[] } {
  const items: TextItem[] = [];
  const drawn = new Map<TextItem, TextItem>();
  const bars: TextItem[] = [];
  for (const item of page) {
    if (!BAR.test(item.text) || !monospaced(item.font) || item.turned) {
      items.push(item);
      continue;
    }
    const parts = cutAtBars(item);
    if (!parts.length) bars.push(item);
    for (const p of parts) {
      items.push(p);
      drawn.set(p, item);
    }
  }
  return { items, drawn, bars };
}
