/**
 * Values of a right-to-left table read back into logical order. A producer that lays out a
 * right-to-left paragraph (LibreOffice Writer, Word) draws its glyphs in visual order; pdfjs turns
 * runs holding Hebrew or Arabic letters back, but leaves runs without letters as drawn. A number in
 * such a paragraph is reordered by the Unicode Bidirectional Algorithm (UAX #9) when it has
 * neutrals around it: "(30,329)" is drawn ")" "30,329" "(" (each bracket mirrored, and mapped to its
 * logical character), "-25" is drawn "25-". Without letters the algorithm's rules are nearly
 * symmetric (W4, W5 and N1 each read the same both ways, every neutral takes the paragraph's
 * direction; only W4 running before W5 is not, as in "5%,3"), so for the values of tables the
 * levels of the drawn text are those of the logical text reversed, and reordering the drawn text
 * once more gives the logical text back. Only text that reads as a value once turned, and not as
 * drawn, is turned: text that reads as a value as drawn is taken as drawn ("1 234" with a plain
 * space, strictly drawn from "234 1", and "1,234 €" stay), and "10 - 20" is no value. A value with
 * Latin letters ("07-Dec-16", drawn "Dec-16-07") is not symmetric: its words and numbers are put
 * back in the one order that the algorithm draws as drawn and that reads as a value. Pure.
 */
import { typeCell } from "./cells.ts";

/** The right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, N'Ko), as a character class's body. */
export const RTL_SCRIPTS = String.raw`\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}`;
/** Letters of right-to-left scripts and of any script, for counting. */
const RTL_LETTER = new RegExp(`[${RTL_SCRIPTS}]`, "gu");
const LETTER = /\p{L}/gu;
/** A text holds a right-to-left letter; a letter of another script, or a digit. */
const HAS_RTL = new RegExp(`[${RTL_SCRIPTS}]`, "u");
const HAS_LTR = new RegExp(`[[\\p{L}\\p{Nd}]--[${RTL_SCRIPTS}]]`, "v");

/** Whether a text is mostly in a right-to-left script: more than half of its letters. */
export function mostlyRightToLeft(text: string): boolean {
  return (text.match(RTL_LETTER) ?? []).length * 2 > (text.match(LETTER) ?? []).length;
}

/**
 * Runs of one line, each in logical order already (pdfjs reads each run's own text so), put from
 * left to right into reading order: the Unicode Bidirectional Algorithm (UAX #9) run by run. A run
 * with right-to-left letters is at an odd level, one with other letters or digits at the even
 * level above it, a run of neither (a space, a bracket) at its neighbours' level when both sides
 * agree and else at the line's; the line's direction is that of most of its letters. Then each
 * stretch at a level or above is turned, from the highest level down (rule L2). A producer that
 * draws each word of a right-to-left phrase on its own (cairo) gives its words left to right:
 * "كثبان" "بستان" reads "بستان كثبان". Runs without right-to-left letters stay as they are, and so
 * do all runs of a line one of which holds letters of both directions.
 */
export function readingOrder<T extends { text: string }>(runs: readonly T[]): readonly T[] {
  // A run of both directions was put in order by pdfjs itself: nothing to go by between the runs.
  if (!runs.some((r) => HAS_RTL.test(r.text)) || runs.some((r) => HAS_RTL.test(r.text) && HAS_LTR.test(r.text))) return runs;
  const base = mostlyRightToLeft(runs.map((r) => r.text).join(" ")) ? 1 : 0;
  const strong = runs.map((r): number | null => (HAS_RTL.test(r.text) ? 1 : HAS_LTR.test(r.text) ? (base ? 2 : 0) : null));
  const levels = strong.map((level, k) => {
    if (level !== null) return level;
    const before = strong.slice(0, k).findLast((l) => l !== null);
    const after = strong.slice(k + 1).find((l) => l !== null);
    return before !== undefined && before === after ? before : base;
  });
  const order = runs.map((_, k) => k);
  for (let level = Math.max(...levels); level >= 1; level--) {
    for (let k = 0; k < order.length;) {
      if (levels[order[k]!]! < level) {
        k++;
        continue;
      }
      let end = k;
      while (end < order.length && levels[order[end]!]! >= level) end++;
      order.splice(k, end - k, ...order.slice(k, end).reverse());
      k = end;
    }
  }
  return order.map((k) => runs[k]!);
}

type Kind = "EN" | "AN" | "ES" | "ET" | "CS" | "ON";

function kindOf(ch: string): Kind {
  if (/[0-9\u06f0-\u06f9]/u.test(ch)) return "EN";
  if (/[\u0660-\u0669\u066b\u066c]/u.test(ch)) return "AN";
  if (ch === "+" || ch === "-" || ch === "\u2212") return "ES";
  if (/[#$%\u00a2-\u00a5\u00b0\u00b1\u0609\u060a\u066a\u2030\u2031\u20a0-\u20cf]/u.test(ch)) return "ET";
  if (/[,./:\u00a0\u202f\u060c]/u.test(ch)) return "CS";
  return "ON";
}

/** A character's kind, a Latin letter's among them ("L"). */
type LatinKind = Kind | "L";

/** W4 and W5 of UAX #9, in place: separators between numbers and terminators beside them are numbers. */
function weakNumbers(kinds: LatinKind[]): void {
  const at = (i: number): LatinKind | undefined => kinds[i];
  // W4: one separator between two numbers of its kind is part of them.
  for (let i = 1; i + 1 < kinds.length; i++) {
    if (at(i - 1) === "EN" && at(i + 1) === "EN" && (at(i) === "ES" || at(i) === "CS")) kinds[i] = "EN";
    else if (at(i - 1) === "AN" && at(i + 1) === "AN" && at(i) === "CS") kinds[i] = "AN";
  }
  // W5: terminators next to a number are part of it.
  for (let i = 0; i < kinds.length; i++) {
    if (at(i) !== "ET") continue;
    let j = i;
    while (at(j) === "ET") j++;
    if (at(i - 1) === "EN" || at(j) === "EN") kinds.fill("EN", i, j);
    i = j - 1;
  }
}

/** The embedding levels of letterless text in a right-to-left paragraph: 2 for numbers, 1 for the rest. */
function levels(chars: readonly string[]): number[] {
  const kinds = chars.map(kindOf);
  weakNumbers(kinds);
  // W6, N1, N2: whatever is left is neutral, and with no letters takes the paragraph's direction.
  return kinds.map((k) => (k === "EN" || k === "AN" ? 2 : 1));
}

/** Drawn (visual) letterless text of a right-to-left paragraph, in logical order (rule L2 applied again). */
function reordered(text: string): string {
  const chars = [...text];
  const lv = levels(chars);
  const runs: string[] = [];
  for (let i = 0; i < chars.length;) {
    let j = i + 1;
    if (lv[i] === 2) while (j < chars.length && lv[j] === 2) j++;
    runs.push(chars.slice(i, j).join(""));
    i = j;
  }
  return runs.reverse().join("");
}

const MIRROR: Record<string, string> = { "(": ")", ")": "(", "[": "]", "]": "[", "{": "}", "}": "{", "<": ">", ">": "<" };
const mirrored = (s: string): string => s.replace(/[()[\]{}<>]/g, (c) => MIRROR[c]!);

/** Whether every closing bracket follows its opening one. */
function nested(s: string): boolean {
  let depth = 0;
  for (const c of s) {
    if ("([{<".includes(c)) depth++;
    else if (")]}>".includes(c) && --depth < 0) return false;
  }
  return depth === 0;
}

const isValue = (s: string): boolean => typeof typeCell(s).value !== "string";

/**
 * The logical text of a cell's line in a right-to-left table, or the text as it is. Brackets are
 * mapped to their logical characters by some producers and to the glyphs drawn by others: of the
 * turned text and its mirror, the one whose brackets nest is taken.
 */
export function logicalValue(text: string): string {
  if (isValue(text)) return text;
  if (/\p{L}/u.test(text)) return latinValue(text) ?? text;
  const turned = reordered(text.trim());
  const logical = nested(turned) ? turned : mirrored(turned);
  return nested(logical) && isValue(logical) ? logical : text;
}

// --- values with Latin letters ------------------------------------------------------------------

/** W4, W5 and W7 of UAX #9 over Latin letters, numbers and neutrals in a right-to-left paragraph. */
function latinKinds(chars: readonly string[]): LatinKind[] {
  const kinds: LatinKind[] = chars.map((c) => (/\p{L}/u.test(c) ? "L" : kindOf(c)));
  weakNumbers(kinds);
  // W7: a number after a letter (the paragraph starts right to left) is left to right.
  let strong: "L" | "R" = "R";
  for (let i = 0; i < kinds.length; i++) {
    if (kinds[i] === "L") strong = "L";
    else if (kinds[i] === "EN" && strong === "L") kinds[i] = "L";
  }
  return kinds;
}

/** The levels (2 left to right, 1 right to left) of those kinds: N1, N2 (numbers count as right to left) and I2. */
function latinLevels(kinds: readonly LatinKind[]): number[] {
  const dir = (k: LatinKind | undefined): "L" | "R" | null => (k === "L" ? "L" : k === "EN" || k === "AN" ? "R" : null);
  const level = kinds.map((k) => (dir(k) === null ? 1 : 2));
  for (let i = 0; i < kinds.length; i++) {
    if (dir(kinds[i]) !== null) continue;
    let j = i;
    while (j < kinds.length && dir(kinds[j]) === null) j++;
    if ((dir(kinds[i - 1]) ?? "R") === "L" && (dir(kinds[j]) ?? "R") === "L") level.fill(2, i, j);
    i = j - 1;
  }
  return level;
}

/**
 * The visual order a right-to-left paragraph gives a text of Latin letters, numbers and neutrals
 * (UAX #9 without right-to-left letters; L2: each run at level 2 reversed, then the whole line).
 * W7 makes it lopsided: a number after a letter is left to right, one before it is not, so
 * "07-Dec-16" is drawn "Dec-16-07" and "Dec-16-07" as it is.
 */
function visualOrder(text: string): string {
  const chars = [...text];
  const level = latinLevels(latinKinds(chars));
  const out = [...chars];
  for (let i = 0; i < out.length;) {
    let j = i;
    while (j < out.length && level[j] === 2) j++;
    if (j > i) out.splice(i, j - i, ...out.slice(i, j).reverse());
    i = Math.max(j, i + 1);
  }
  return out.reverse().join("");
}

/** Every order of `items` (a handful at most). */
function orders<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((x, k) => orders([...items.slice(0, k), ...items.slice(k + 1)]).map((rest) => [x, ...rest]));
}

/** At most this many words and numbers in a value read back from its visual order. */
const MAX_TOKENS = 4;

/**
 * The logical text of a value of Latin letters and numbers drawn in a right-to-left paragraph
 * ("Dec-16-07" drawn for "07-Dec-16"): the one order of its words and numbers, separators kept in
 * place, that the paragraph draws as drawn and that reads as a value; null when there is none, or
 * more than one, or the text holds right-to-left letters (pdfjs orders those itself).
 */
function latinValue(text: string): string | null {
  const s = text.trim();
  if (!/^[\p{Script=Latin}\d\s\-/.,:%$€£]+$/u.test(s) || !/\d/u.test(s)) return null;
  const tokens = s.match(/[\p{L}\d]+/gu) ?? [];
  const seps = s.split(/[\p{L}\d]+/u);
  if (tokens.length < 2 || tokens.length > MAX_TOKENS) return null;
  const found = new Set<string>();
  for (const order of orders(tokens)) {
    const candidate = seps.map((sep, k) => sep + (order[k] ?? "")).join("");
    if (candidate !== s && isValue(candidate) && visualOrder(candidate) === s) found.add(candidate);
  }
  return found.size === 1 ? [...found][0]! : null;
}

/**
 * The runs of one word (touching, no space between: lines.ts runsText), given left to right, in
 * reading order: right to left when every run of it is right-to-left letters only (a word drawn in
 * two runs); else as given.
 */
export function wordOrder<T extends { text: string }>(runs: readonly T[]): readonly T[] {
  const rtl = runs.length > 1 && runs.every((r) => !HAS_LTR.test(r.text)) && runs.some((r) => HAS_RTL.test(r.text));
  return rtl ? [...runs].reverse() : runs;
}
