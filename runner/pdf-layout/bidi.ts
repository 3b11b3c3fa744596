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
 * space, strictly drawn from "234 1", and "1,234 €" stay), and "10 - 20" is no value. Pure.
 */
import { typeCell } from "./cells.ts";

type Kind = "EN" | "AN" | "ES" | "ET" | "CS" | "ON";

function kindOf(ch: string): Kind {
  if (/[0-9\u06f0-\u06f9]/u.test(ch)) return "EN";
  if (/[\u0660-\u0669\u066b\u066c]/u.test(ch)) return "AN";
  if (ch === "+" || ch === "-" || ch === "\u2212") return "ES";
  if (/[#$%\u00a2-\u00a5\u00b0\u00b1\u0609\u060a\u066a\u2030\u2031\u20a0-\u20cf]/u.test(ch)) return "ET";
  if (/[,./:\u00a0\u202f\u060c]/u.test(ch)) return "CS";
  return "ON";
}

/** The embedding levels of letterless text in a right-to-left paragraph: 2 for numbers, 1 for the rest. */
function levels(chars: readonly string[]): number[] {
  const kinds = chars.map(kindOf);
  const at = (i: number): Kind | undefined => kinds[i];
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
  if (/\p{L}/u.test(text) || isValue(text)) return text;
  const turned = reordered(text.trim());
  const logical = nested(turned) ? turned : mirrored(turned);
  return nested(logical) && isValue(logical) ? logical : text;
}
