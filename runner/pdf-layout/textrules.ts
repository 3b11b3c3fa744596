/**
 * Rules drawn in text: the bars a monospaced page sets between its cells ("|Kasse   |  1.234,50-|"),
 * as SAP lists, mainframe reports and psql or ASCII tables print them. For finding tables each such
 * run is cut at its bars, the bars left out: its parts are the cells' text, each placed at its
 * characters' share of the run (the type is monospaced, every character as wide). The lines of
 * dashes between the rows are left to the table finders (RULE_PIECE: stream.ts textRule; RULE_LINE:
 * continued.ts). Runs in proportional
 * type keep their bars: there a bar is punctuation ("Home | About"). Pure.
 */
import type { TextItem } from "./types.ts";

/** A bar drawn as a cell's border: ASCII's, and the box-drawing vertical lines. */
const BAR = /[|\u2502\u2503\u2551]/u;

/** Characters that draw a line: dashes, equals signs, underscores, en and em dashes, box drawing. */
const LINE_CHARS = "-=_\\u2013\\u2014\\u2500-\\u257f";
/** A piece of a rule drawn in text: runs of line characters or pluses, a space apart ("-------", "---- ----", "+---+"). */
export const RULE_PIECE = new RegExp(`^[${LINE_CHARS}+]{3,}(?: [${LINE_CHARS}+]{3,})*$`, "u");
/** A whole line drawn in text: line characters, pluses, bars and spaces, three line characters at least ("+------+------+"). */
export const RULE_LINE = new RegExp(`^[${LINE_CHARS}+|\\s]*[${LINE_CHARS}]{3}[${LINE_CHARS}+|\\s]*$`, "u");

/**
 * Font names of monospaced type (pdfjs gives an embedded font's base name, "ABCDEF+CourierNewPSMT";
 * Ghostscript's Courier is Nimbus Mono); Monotype's faces are not.
 */
const MONOSPACED =
  /courier|mono(?!type)|nimbusmon|consol|typewriter|lucida ?console|andale|menlo|monaco|cousine|source ?code|letter ?gothic|fixed|ocr-?b/iu;

/** Whether a font's name is a monospaced face's (MONOSPACED). */
export const monospaced = (font: string | undefined): boolean => MONOSPACED.test(font ?? "");

/**
 * A monospaced run cut at the characters `at` picks (a bar, a space in a column's river), those left
 * out: its parts, trimmed, each where its characters lie (every character as wide); [] when nothing
 * is left. A part has a space before it but the first, when the run starts with it.
 */
export function cutRun(item: TextItem, at: (k: number, c: string) => boolean): TextItem[] {
  const chars = [...item.text];
  const x = (k: number): number => item.x0 + ((item.x1 - item.x0) * k) / chars.length;
  const parts: TextItem[] = [];
  let start = 0;
  for (let k = 0; k <= chars.length; k++) {
    if (k < chars.length && !at(k, chars[k]!)) continue;
    let [s, e] = [start, k];
    while (s < e && /\s/u.test(chars[s]!)) s++;
    while (e > s && /\s/u.test(chars[e - 1]!)) e--;
    if (e > s) {
      const first = parts.length === 0 && s === 0;
      parts.push({ ...item, text: chars.slice(s, e).join(""), x0: x(s), x1: x(e), spaceBefore: first ? item.spaceBefore : true });
    }
    start = k + 1;
  }
  return parts;
}

/**
 * A page's runs with each that `partsOf` cuts in its place as its parts; `drawn` maps each part
 * back to its run, `emptied` are the runs cut to nothing.
 */
export function replaceRuns(
  page: readonly TextItem[],
  partsOf: (item: TextItem) => readonly TextItem[] | undefined,
): { items: TextItem[]; drawn: Map<TextItem, TextItem>; emptied: TextItem[] } {
  const items: TextItem[] = [];
  const drawn = new Map<TextItem, TextItem>();
  const emptied: TextItem[] = [];
  for (const item of page) {
    const parts = partsOf(item);
    if (!parts) {
      items.push(item);
      continue;
    }
    if (!parts.length) emptied.push(item);
    for (const p of parts) {
      items.push(p);
      drawn.set(p, item);
    }
  }
  return { items, drawn, emptied };
}

/**
 * A page's runs with the monospaced ones cut at their bars, for finding tables (see the header);
 * `drawn` maps each part back to the run as drawn, `bars` are the runs that are bars alone.
 */
export function withoutBars(page: readonly TextItem[]): { items: TextItem[]; drawn: Map<TextItem, TextItem>; bars: TextItem[] } {
  const { items, drawn, emptied } = replaceRuns(page, (item) =>
    BAR.test(item.text) && monospaced(item.font) && !item.turned ? cutRun(item, (_, c) => BAR.test(c)) : undefined,
  );
  return { items, drawn, bars: emptied };
}
