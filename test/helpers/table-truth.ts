/**
 * Truth tables and how a workbook is scored against them: issue #13's "exact cells", per table and
 * per class of table, the same way for Folio and for the peers of the benchmark.
 *
 * A truth table is a grid of the cell texts a person reads on the page (test/truth/real/*.json,
 * made by hand; test/truth/roundtrip.ts, generated from spreadsheets). A merged cell's text sits in
 * its top-left cell, the cells it covers are "". Each text is typed here, independently of Folio:
 * a number (thousands grouped by ",", "'" or a space, decimals, sign before or after or parentheses, a currency sign
 * or a common ISO code before or after the digits, a percent; or grouped by "." with a decimal comma, "27.083.460", "10.000,00", "3,5"), a date (month/day/year, day-Mon-year, ISO, "Mon d, yyyy", "d Mon yyyy") or text.
 *
 * An output cell agrees with a truth cell when the text the workbook shows equals the truth's text
 * (whitespace, NFKC forms and the spaces a line break leaves after a hyphen or between CJK
 * characters aside), or when both are numbers of the same value (a percent either as 12.5 or 0.125)
 * or the same date; "typed" agreement also asks that a number be a number cell and a date a date
 * cell. Only the truth's non-empty cells are counted: a table's exact share is how many of them the
 * workbook has, at the same places relative to each other (the best placement of the truth grid
 * over the workbook's sheets read one after another, so a table split over sheets is still found).
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { ROOT } from "./tools.ts";

export type TableClass =
  | "ruled"
  | "partly-ruled"
  | "unruled"
  | "spanning"
  | "multi-line"
  | "multi-table"
  | "multi-page"
  | "rotated"
  | "rtl"
  | "tight"
  | "statement"
  | "invoice"
  | "reportlab"
  | "listing"
  | "text-ruled";

export interface TruthTable {
  /** "real/<file>#<name>" or "roundtrip/<name>". */
  id: string;
  pdf: string;
  split: "tune" | "holdout";
  pages: number[];
  classes: TableClass[];
  note?: string;
  cells: string[][];
}

export const REAL_PDFS = path.resolve(ROOT, "../shared/corpus/real-pdfs");
const REAL_TRUTH = path.join(ROOT, "test/truth/real");

interface TruthFile {
  file: string;
  split: "tune" | "holdout";
  tables: { name: string; pages: number[]; classes: TableClass[]; note?: string; cells: string[][] }[];
}

/** The hand-made truth tables of test/truth/real/, with their PDFs' paths in the shared corpus. */
export async function loadRealTruth(): Promise<TruthTable[]> {
  const out: TruthTable[] = [];
  for (const name of (await readdir(REAL_TRUTH)).filter((f) => f.endsWith(".json")).sort()) {
    const doc = JSON.parse(await readFile(path.join(REAL_TRUTH, name), "utf8")) as TruthFile;
    for (const t of doc.tables) {
      out.push({
        id: `real/${path.basename(doc.file, ".pdf")}#${t.name}`,
        pdf: path.join(REAL_PDFS, doc.file),
        split: doc.split,
        pages: t.pages,
        classes: t.classes,
        ...(t.note ? { note: t.note } : {}),
        cells: t.cells,
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Typing and comparing cells

export type Typed =
  { kind: "number"; value: number; text: string } | { kind: "date"; value: string; text: string } | { kind: "text"; text: string };

// A currency sign or a common ISO code before the digits, or after them ("1.234,56 €", "12.50 EUR"),
// or a local sign of letters a space apart ("1 234,50 kr", "2 076,00 zł", "R$ 10,00").
const CODE = String.raw`USD|EUR|GBP|CHF|JPY|CAD|AUD|SEK|NOK|DKK|PLN|CZK|HUF|BRL|INR|kr|zł|Kč|Ft|R\$`;
const CUR_BEFORE = String.raw`(?<cur>[$€£¥₹]|(?:${CODE}) )?`;
const CUR_AFTER = String.raw`(?:\s?(?<cur2>[$€£¥₹]|${CODE}))?`;
const NUMBER = new RegExp(
  String.raw`^(?<neg>[-\u2212])?(?<open>\()?${CUR_BEFORE}\s?(?<num>\d{1,3}(?:(?<sep>[, \u00a0\u202f'])\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)\s?(?<pct>%)?${CUR_AFTER}(?<close>\))?(?<after>-)?$`,
  "u",
);
// Grouped by "." or by spaces (French, Nordic, Polish: "1 234,56"), with a decimal comma.
const COMMA_DECIMAL = new RegExp(
  String.raw`^(?<neg>[-\u2212])?(?<open>\()?${CUR_BEFORE}\s?(?<num>\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?|\d{1,3}(?:\.\d{3})*,\d+|\d{1,3}(?:[ \u00a0\u202f]\d{3})+,\d+)\s?(?<pct>%)?${CUR_AFTER}(?<close>\))?(?<after>-)?$`,
  "u",
);
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

function isoDate(y: number, m: number, d: number): string | null {
  const date = new Date(Date.UTC(y, m - 1, d));
  if (m < 1 || m > 12 || date.getUTCMonth() !== m - 1 || date.getUTCDate() !== d) return null;
  return date.toISOString().slice(0, 10);
}

const year = (y: string): number => (y.length === 2 ? (Number(y) < 30 ? 2000 : 1900) + Number(y) : Number(y));
const month = (name: string): number => MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1;

function dateOf(s: string): string | null {
  let m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (m) return isoDate(Number(m[1]), Number(m[2]), Number(m[3]));
  m = /^(\d{1,2})\/(\d{1,2})\/(\d{4}|\d{2})$/.exec(s);
  if (m) return isoDate(year(m[3]!), Number(m[1]), Number(m[2]));
  m = /^(\d{1,2})[- ]([A-Za-z]{3,9})\.?[- ](\d{4}|\d{2})$/.exec(s);
  if (m && month(m[2]!)) return isoDate(year(m[3]!), month(m[2]!), Number(m[1]));
  m = /^([A-Za-z]{3,9})\.? (\d{1,2}), (\d{4})$/.exec(s);
  if (m && month(m[1]!)) return isoDate(Number(m[3]), month(m[1]!), Number(m[2]));
  return null;
}

/** A number in scientific notation ("3e-5", "-1.50E+10"), as papers print their hyperparameters. */
const SCIENTIFIC = /^[-−]?\d+(?:\.\d+)?[eE][+-]?\d+$/;

/**
 * The value of a number written as NUMBER or COMMA_DECIMAL says, or in scientific notation, or null.
 * Both parentheses or neither; "007" and "0085648100300" are identifiers, not numbers.
 */
/** A sign after the digits ("1,234.56-") is an amount's, once: never beside another sign, nor after a bare integer ("2019-"). */
const signedAfter = (g: Record<string, string | undefined>): boolean => !g.after || (!g.neg && !g.open && !/^\d+$/.test(g.num!));

function numberOf(s: string): number | null {
  if (SCIENTIFIC.test(s)) return Number(s.replace("−", "-"));
  const en = NUMBER.exec(s)?.groups;
  // Grouped by "." with a decimal comma ("27.083.460", "$ 10.000,00", "3,5"): Spanish, German, …
  const comma = en ? undefined : COMMA_DECIMAL.exec(s)?.groups;
  const g = en ?? comma;
  if (!g || Boolean(g.open) !== Boolean(g.close) || /^0\d/.test(g.num!) || !signedAfter(g)) return null;
  const digits = en ? g.num!.replace(/[, \u00a0\u202f']/g, "") : g.num!.replace(/[. \u00a0\u202f]/g, "").replace(",", ".");
  return (g.neg || g.open || g.after ? -1 : 1) * Number(digits) * (g.pct ? 0.01 : 1);
}

/** A truth cell's type and value, from its text (see the header). */
export function typeTruth(text: string): Typed {
  const s = text.trim();
  const date = dateOf(s);
  if (date) return { kind: "date", value: date, text: s };
  const value = numberOf(s);
  return value === null ? { kind: "text", text: s } : { kind: "number", value, text: s };
}

const SPACELESS = "\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}";

/** Text as compared: NFKC, whitespace collapsed, none between CJK characters or after a hyphen in a word. */
export function normText(s: string): string {
  return s
    .normalize("NFKC")
    .replace(/\s+/g, " ")
    .replace(new RegExp(`(?<=[${SPACELESS}]) (?=[${SPACELESS}])`, "gu"), "")
    .replace(/(?<=\p{L}-) (?=\p{L})/gu, "")
    .trim();
}

/** One cell of an output workbook: its type, its value and the text it shows. */
export interface OutCell {
  type: "number" | "date" | "text";
  value: number | string;
  display: string;
}

const sameNumber = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a));

/** Whether an output cell agrees with a truth cell; `typed` also asks for the right cell type. */
export function cellAgrees(t: Typed, g: OutCell | undefined, typed: boolean): boolean {
  if (!g) return false;
  if (t.kind === "number" && g.type === "number") {
    const v = g.value as number;
    if (sameNumber(v, t.value) || (/%\)?$/.test(t.text) && sameNumber(v, t.value * 100))) return true;
  }
  if (t.kind === "date" && g.type === "date" && g.value === t.value) return true;
  if (typed && t.kind !== "text") return false;
  return normText(g.display) === normText(t.text);
}

// ---------------------------------------------------------------------------------------------
// Scoring a table

export interface TableScore {
  /** Non-empty truth cells. */
  cells: number;
  /** Share of them the workbook has, typed (numbers as numbers, dates as dates). */
  exact: number;
  /** Share of them the workbook shows with the right text (the peers' measure). */
  exactText: number;
}

/** Keys under which a cell can be matched: its normalised text, and its value when it is a number. */
function keys(text: string, num: number | null): string[] {
  const out = [`t:${normText(text)}`];
  if (num !== null) out.push(`n:${Number(num.toPrecision(12))}`);
  return out;
}

type Grid = readonly (readonly (OutCell | undefined)[])[];
type TruthCell = { r: number; c: number; t: Typed };

/** Where each key of the workbook's cells (see keys) occurs. */
function keyIndex(grid: Grid): Map<string, [number, number][]> {
  const where = new Map<string, [number, number][]>();
  grid.forEach((row, r) =>
    row.forEach((g, c) => {
      if (!g) return;
      for (const k of keys(g.display, g.type === "number" ? (g.value as number) : null)) {
        const list = where.get(k);
        if (list) list.push([r, c]);
        else where.set(k, [[r, c]]);
      }
    }),
  );
  return where;
}

/** Offsets ("dr,dc") of the truth in the grid, with how many truth cells agree with a cell there (each cell votes once per offset). */
function offsetVotes(typedTruth: readonly TruthCell[], where: Map<string, [number, number][]>): Map<string, number> {
  const votes = new Map<string, number>();
  for (const { r, c, t } of typedTruth) {
    const seen = new Set<string>();
    for (const k of keys(t.text, t.kind === "number" ? t.value : null)) {
      const hits = where.get(k) ?? [];
      // A value found hundreds of times ("0") says little about where the table is.
      if (hits.length > 200) continue;
      for (const [gr, gc] of hits) {
        const off = `${gr - r},${gc - c}`;
        if (seen.has(off)) continue;
        seen.add(off);
        votes.set(off, (votes.get(off) ?? 0) + 1);
      }
    }
  }
  return votes;
}

/** How many truth cells the grid has right at an offset: exactly (typed), and as text. */
function agreementAt(typedTruth: readonly TruthCell[], grid: Grid, dr: number, dc: number): { exact: number; exactText: number } {
  let exact = 0;
  let text = 0;
  for (const { r, c, t } of typedTruth) {
    const g = grid[r + dr]?.[c + dc];
    if (cellAgrees(t, g, true)) exact++;
    if (cellAgrees(t, g, false)) text++;
  }
  return { exact, exactText: text };
}

/**
 * The exact shares of one truth table in a workbook (its sheets as grids, read one after another).
 * The placement is found by voting: every pair of agreeing cells proposes an offset, and the most
 * proposed offsets are scored exactly.
 */
export function scoreTable(truth: readonly (readonly string[])[], sheets: readonly (readonly (OutCell | undefined)[])[][]): TableScore {
  const grid = sheets.flat();
  const typedTruth: TruthCell[] = [];
  truth.forEach((row, r) => row.forEach((text, c) => text.trim() && typedTruth.push({ r, c, t: typeTruth(text) })));
  if (!typedTruth.length) return { cells: 0, exact: 1, exactText: 1 };
  const votes = offsetVotes(typedTruth, keyIndex(grid));
  const candidates = [...votes].sort((a, b) => b[1] - a[1]).slice(0, 8);
  let best = { exact: 0, exactText: 0 };
  for (const [off] of candidates) {
    const [dr, dc] = off.split(",").map(Number) as [number, number];
    const at = agreementAt(typedTruth, grid, dr, dc);
    if (at.exact > best.exact || (at.exact === best.exact && at.exactText > best.exactText)) best = at;
  }
  return { cells: typedTruth.length, exact: best.exact / typedTruth.length, exactText: best.exactText / typedTruth.length };
}

export interface ClassScore {
  tables: number;
  cells: number;
  /** Mean over the tables of their exact share (each table counts once). */
  meanExact: number;
  meanExactText: number;
  /** Exact share over all the cells of the class's tables. */
  cellExact: number;
}

/** Scores aggregated per class (a table counts in each of its classes) and over all ("all"). */
export function byClass(rows: readonly { table: TruthTable; score: TableScore }[]): Map<string, ClassScore> {
  const groups = new Map<string, { table: TruthTable; score: TableScore }[]>();
  for (const row of rows) {
    for (const k of ["all", ...row.table.classes]) {
      const g = groups.get(k);
      if (g) g.push(row);
      else groups.set(k, [row]);
    }
  }
  const out = new Map<string, ClassScore>();
  for (const [k, g] of groups) {
    const cells = g.reduce((n, r) => n + r.score.cells, 0);
    out.set(k, {
      tables: g.length,
      cells,
      meanExact: g.reduce((n, r) => n + r.score.exact, 0) / g.length,
      meanExactText: g.reduce((n, r) => n + r.score.exactText, 0) / g.length,
      cellExact: cells ? g.reduce((n, r) => n + r.score.exact * r.score.cells, 0) / cells : 1,
    });
  }
  return out;
}
