/**
 * Leader dots, as table finding sees them. A row of a statement or a report leads the eye from its
 * label to its value with dots ("Intangible assets ........ 51,916.7"), set by a tab with a dot
 * leader to the end of the label's cell: the label's run then reaches across the whole cell however
 * short its words, and a label wrapped onto a second line (the leader did not fit after it) no
 * longer looks wrapped. Tables are found from the runs without their leaders (the words' own
 * extent, estimated from the dots' width, the runs marked `led`); a leader drawn as a run of its own
 * is left out, unless it starts its line: then the tab did not fit after a label that filled its
 * line, and the leader, kept as a stub of a few dots, is that label's last line beside its values.
 * The cells' text drops leaders too (withoutLeaders, withoutShortLeader), and text outside the
 * tables keeps them as drawn. Pure.
 */
import type { TextItem } from "./types.ts";

/** A leader: four dots or more (spaced or not), or two ellipses or more (three dots are an ellipsis). */
const RUN = String.raw`(?:(?:\.\s?){4,}|(?:…\s?){2,})`;
/** A leader at a run's end or start. */
const TRAILING = new RegExp(String.raw`\s*${RUN}$`, "u");
const LEADING = new RegExp(String.raw`^${RUN}\s*`, "u");

/** The width of a dot, a space and an ellipsis, in font sizes (the common text faces' periods are 0.25–0.28 em). */
const DOT = 0.27;
const SPACE = 0.25;
const ELLIPSIS = 1;

const leaderWidth = (s: string, size: number): number =>
  [...s].reduce((w, ch) => w + (ch === "." ? DOT : ch === "…" ? ELLIPSIS : SPACE), 0) * size;

/** The run without the leader it starts or ends with; null when it is a leader alone; the run itself when it has none. */
export function withoutLeader(item: TextItem): TextItem | null {
  if (item.opaque || item.turned) return item;
  const tail = TRAILING.exec(item.text)?.[0] ?? "";
  const text = item.text.slice(0, item.text.length - tail.length);
  const head = LEADING.exec(text)?.[0] ?? "";
  if (!tail && !head) return item;
  const words = text.slice(head.length);
  if (!/\S/u.test(words)) return null;
  const width = item.x1 - item.x0;
  // Never narrower than a fifth of the run: the estimate is for the common faces, not every one.
  const keep = Math.max(0.2 * width, width - leaderWidth(head, item.size) - leaderWidth(tail, item.size));
  const x0 = item.x0 + Math.min(leaderWidth(head, item.size), width - keep);
  return { ...item, text: words, x0, x1: x0 + keep, led: true };
}

/** Whether `label` ends in dots that the leader run `leader` goes on with, on its baseline. */
const ledBy = (label: TextItem, leader: TextItem): boolean =>
  /[^.]\.{1,3}$/u.test(label.text) &&
  Math.abs(label.base - leader.base) < 0.2 * label.size &&
  Math.abs(leader.x0 - label.x1) < 0.5 * label.size;

/**
 * A page's runs without their leader dots, for finding tables (see the header); `drawn` maps a run
 * so shortened back to the run as drawn, `leaders` are the runs that are a leader alone.
 */
export function leaderless(page: readonly TextItem[]): { items: TextItem[]; drawn: Map<TextItem, TextItem>; leaders: TextItem[] } {
  const items: TextItem[] = [];
  const drawn = new Map<TextItem, TextItem>();
  const leaders: TextItem[] = [];
  for (const item of page) {
    const short = withoutLeader(item);
    if (!short) leaders.push(item);
    else items.push(short);
    if (short && short !== item) drawn.set(short, item);
  }
  // A leader drawn as a run of its own may start with a dot or two at the end of its label's run.
  for (const leader of leaders) {
    const k = items.findIndex((i) => ledBy(i, leader));
    if (k < 0) continue;
    const label = items[k]!;
    const short = {
      ...label,
      text: label.text.replace(/\.{1,3}$/u, ""),
      x1: label.x1 - label.text.match(/\.+$/u)![0].length * DOT * label.size,
      led: true,
    };
    items[k] = short;
    drawn.set(short, drawn.get(label) ?? label);
  }
  // A leader that starts its line went on from a label the line above ended (the tab did not fit
  // after it): it stays, as short as a few dots, the wrapped label's last line beside its values.
  const wrapped = leaders.filter((l) => !items.some((i) => Math.abs(i.base - l.base) < 0.2 * l.size && i.x1 <= l.x0 + 0.5 * l.size));
  for (const leader of wrapped) {
    const short = { ...leader, x1: Math.min(leader.x1, leader.x0 + LEADER_STUB * DOT * leader.size), led: true };
    items.push(short);
    drawn.set(short, leader);
  }
  return { items, drawn, leaders: leaders.filter((l) => !wrapped.includes(l)) };
}

/** Dots a leader that starts its line is kept as, for finding tables. */
const LEADER_STUB = 4;

// --- in a cell's text ---------------------------------------------------------------------------

/**
 * Leader dots: a run of four dots or more (or of ellipses), spaced or not, leading the eye from a
 * label to its value ("AFM revisions ........ $85", "Total . . . . 12"), or two dots ending a cell
 * after a space (the rest of a leader a column's edge cut). Three dots are an ellipsis
 * ("chicagodetours...", "y1, . . . , yn"), and a cell of three dots or fewer ("..", "…") is a value
 * not given, as statistics tables print it.
 */
const LEADER = new RegExp(String.raw`\s*${RUN}|\s+\.\.$`, "gu");
const LEADER_CELL = /^(?:[.…]\s?)+$/u;
const MAX_VALUE_DOTS = 3;

/** Two or three dots ending a text after a word, spaced or not: a leader the room left short ("sale..", "parties). ."). */
const SHORT_LEADER = /(?<=[^.\s])\s?(?:\.\s?){2,3}$/u;

/** A text without the short leader it ends with (SHORT_LEADER), for a cell of a column whose cells are led to their values. */
export const withoutShortLeader = (text: string): string => text.replace(SHORT_LEADER, "").trimEnd();

/**
 * A cell's text without its leader dots (LEADER): those it ends or starts with are dropped, one
 * between its words becomes a space. A cell holding only a leader (a leader cut off by a column's
 * edge) is empty; one of three dots or fewer stays (a value not given).
 */
export function withoutLeaders(text: string): string {
  const s = text.trim();
  if (LEADER_CELL.test(s)) return s.replace(/\s/g, "").length <= MAX_VALUE_DOTS ? s : "";
  return s
    .replace(LEADER, " ")
    .replace(/\s{2,}/g, " ")
    .trim();
}
