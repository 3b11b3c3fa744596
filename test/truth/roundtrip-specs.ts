/**
 * Truth at scale, part 1: the spreadsheets of the round-trip corpus (test/truth/roundtrip.ts) and
 * their truth, drawn from a seeded PRNG so that every run makes the same files.
 *
 * A sheet holds one to three tables (stacked, or side by side), each with a header (one row, a
 * header wrapped over several lines, or two rows with group headers merged across columns) and
 * typed columns: labels, categories, codes (text that looks numeric), integers and decimals with
 * thousands separators, negatives in parentheses, percentages, currency, dates in three formats,
 * and long text wrapped in its cell. Tables are ruled (every cell border), partly ruled (a rule
 * under the header, or horizontal rules only) or unruled; some merge a row label down a group of
 * rows; some are long enough to run over pages (half of those repeating their header on each);
 * some are set tight (columns just wide enough, small type), some in right-to-left script on a
 * right-to-left sheet, some on landscape pages, and some pages are turned afterwards.
 *
 * The truth of a table is the text each cell shows (the value through its number format, as
 * test/helpers/xlsx-display.ts prints it), a merged cell's text in its top-left cell. Pure.
 */
import { prng } from "../helpers/prng.ts";
import type { TableClass } from "../helpers/table-truth.ts";
import { displayText } from "../helpers/xlsx-display.ts";

export type ColumnKind = "label" | "category" | "code" | "int" | "decimal" | "paren" | "percent" | "currency" | "date" | "wrap";

export interface SpecCell {
  value: string | number | Date;
  numFmt?: string;
  /** What the cell shows. */
  text: string;
}

export interface TableSpec {
  header: "single" | "wrapped" | "grouped";
  /** The first column's label merged down groups of two or three rows. */
  mergedLabels: boolean;
  borders: "all" | "none" | "header" | "horizontal";
  rtl: boolean;
  kinds: ColumnKind[];
  /** Header rows then data rows; merged-away cells are null. */
  rows: (SpecCell | null)[][];
  /** Merged areas, 0-based and inclusive: [top, left, bottom, right]. */
  merges: [number, number, number, number][];
  /** Column widths in spreadsheet character units. */
  widths: number[];
  headerRows: number;
}

export interface SheetSpec {
  name: string;
  split: "tune" | "holdout";
  tables: TableSpec[];
  arrangement: "stacked" | "side";
  landscape: boolean;
  tight: boolean;
  fontSize: number;
  /** Turn the exported page: by /Rotate, or by drawing the page turned onto a new one. */
  turn: "none" | "rotate" | "content";
  repeatHeader: boolean;
}

const WORDS = (
  "harbour lighthouse meadow ledger orchard velvet granite compass falcon juniper lantern mosaic nebula oyster pepper " +
  "quartz saffron tundra anchor barley cobalt dune ember fjord glacier hazel indigo jasmine lagoon marble nutmeg " +
  "prairie raven sierra thistle valley willow almond bramble cedar delta estuary fennel grove heron island jetty " +
  "linden meridian osprey pier reef shoal vessel wharf beacon cargo crane dock freight hull keel mast rudder berth"
).split(" ");
const ARABIC = "ميناء منارة مرج دفتر بستان مخمل جرانيت بوصلة صقر فانوس فسيفساء سديم محار فلفل كوارتز زعفران مرساة شعير كوبالت كثبان".split(
  " ",
);
const CATEGORIES = ["North", "South", "East", "West", "Central", "Overseas"];
const ARABIC_CATEGORIES = ["شمال", "جنوب", "شرق", "غرب", "وسط"];
const HEADERS: Record<ColumnKind, string[]> = {
  label: ["Item", "Product", "Account", "Station"],
  category: ["Region", "Segment", "Zone"],
  code: ["Code", "Reference", "Ledger no."],
  int: ["Units", "Tonnage", "Visitors", "Employees"],
  decimal: ["Revenue", "Cost", "Weight"],
  paren: ["Net change", "Variance", "Balance"],
  percent: ["Share", "Growth", "Margin"],
  currency: ["Price", "Fee", "Amount"],
  date: ["Date", "Shipped", "Due"],
  wrap: ["Description", "Remarks", "Notes"],
};
const LONG_HEADERS = [
  "Total operating revenue for the year",
  "Number of vessels inspected",
  "Average handling time in days",
  "Share of the regional fleet",
];
const DATE_FORMATS = ["yyyy-mm-dd", "mm/dd/yyyy", "dd-mmm-yy"];

export type Rand = () => number;
export const pick = <T>(rand: Rand, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
export const chance = (rand: Rand, p: number): boolean => rand() < p;
/** An integer's digits grouped by thousands with `sep` ("1,234,567"). */
export const group = (n: number, sep = ","): string => n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, sep);
const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

export function words(rand: Rand, n: number, rtl: boolean): string {
  return Array.from({ length: n }, (_, i) => (rtl ? pick(rand, ARABIC) : i === 0 ? capitalise(pick(rand, WORDS)) : pick(rand, WORDS))).join(
    " ",
  );
}

function cellOf(value: string | number | Date, numFmt?: string): SpecCell {
  return { value, ...(numFmt ? { numFmt } : {}), text: displayText(value, numFmt) };
}

function dataCell(rand: Rand, kind: ColumnKind, rtl: boolean, dateFormat: string): SpecCell {
  switch (kind) {
    case "label":
      return cellOf(words(rand, 1 + Math.floor(rand() * 2), rtl));
    case "category":
      return cellOf(pick(rand, rtl ? ARABIC_CATEGORIES : CATEGORIES));
    case "code":
      return cellOf(
        chance(rand, 0.5)
          ? `00${Math.floor(rand() * 9000 + 1000)}`
          : `${pick(rand, ["AB", "KT", "ZX"])}-${Math.floor(rand() * 9000 + 1000)}`,
      );
    case "int":
      return cellOf(Math.floor(rand() ** 2 * 2_500_000), "#,##0");
    case "decimal":
      return cellOf(Math.round(rand() * 9_000_000) / 100, "#,##0.00");
    case "paren":
      return cellOf(Math.round((rand() - 0.5) * 200_000), "#,##0;(#,##0)");
    case "percent":
      return cellOf(Math.round(rand() * 1000) / 1000, "0.0%");
    case "currency":
      return cellOf(Math.round(rand() * 500_000) / 100, '"$"#,##0.00');
    case "date":
      return cellOf(new Date(Date.UTC(2015 + Math.floor(rand() * 10), Math.floor(rand() * 12), 1 + Math.floor(rand() * 28))), dateFormat);
    case "wrap":
      return cellOf(words(rand, 6 + Math.floor(rand() * 10), rtl));
  }
}

/** A column width that shows every cell of the column (wrapped columns excepted). */
function widthOf(cells: readonly (SpecCell | null)[], kind: ColumnKind, tight: boolean, rtl: boolean): number {
  if (kind === "wrap") return 24;
  const longest = Math.max(4, ...cells.map((c) => (c ? c.text.length : 0)));
  // Dates print wider on a right-to-left sheet; a number that does not fit would print "###".
  const slack = kind === "date" && rtl ? 6 : 0;
  return (tight ? longest * 1.05 + 2 : longest * 1.15 + 3) + slack;
}

export function tableSpec(rand: Rand, rowCount: number, tight: boolean, rtl: boolean): TableSpec {
  const kinds: ColumnKind[] = ["label"];
  const count = 3 + Math.floor(rand() * 5);
  const pool: ColumnKind[] = ["category", "code", "int", "decimal", "paren", "percent", "currency", "date", "int", "decimal"];
  while (kinds.length < count) kinds.push(pick(rand, pool));
  if (chance(rand, 0.25)) kinds.splice(1 + Math.floor(rand() * (kinds.length - 1)), 0, "wrap");
  const header = pick(rand, ["single", "single", "wrapped", "grouped"] as const);
  const mergedLabels = chance(rand, 0.2) && rowCount < 40;
  const borders = pick(rand, ["all", "all", "none", "none", "header", "horizontal"] as const);
  const dateFormat = pick(rand, DATE_FORMATS);
  const rows: (SpecCell | null)[][] = [];
  const merges: [number, number, number, number][] = [];
  if (header === "grouped") {
    // A group header over each run of two or three columns after the first.
    const top: (SpecCell | null)[] = [cellOf("")];
    for (let c = 1; c < kinds.length;) {
      const span = Math.min(kinds.length - c, 2 + Math.floor(rand() * 2));
      top.push(cellOf(rtl ? words(rand, 2, true) : `${capitalise(pick(rand, WORDS))} ${2016 + Math.floor(rand() * 8)}`));
      for (let k = 1; k < span; k++) top.push(null);
      if (span > 1) merges.push([0, c, 0, c + span - 1]);
      c += span;
    }
    rows.push(top);
  }
  rows.push(
    kinds.map((k, c) =>
      cellOf(
        rtl
          ? words(rand, 1, true)
          : header === "wrapped" && c > 0 && k !== "wrap" && chance(rand, 0.6)
            ? pick(rand, LONG_HEADERS)
            : pick(rand, HEADERS[k]),
      ),
    ),
  );
  const headerRows = rows.length;
  for (let r = 0; r < rowCount; r++) rows.push(kinds.map((k) => dataCell(rand, k, rtl, dateFormat)));
  if (mergedLabels) {
    for (let r = headerRows; r + 1 < rows.length;) {
      const span = Math.min(rows.length - r, 2 + Math.floor(rand() * 2));
      for (let k = 1; k < span; k++) rows[r + k]![0] = null;
      if (span > 1) merges.push([r, 0, r + span - 1, 0]);
      r += span;
    }
  }
  const widths = kinds.map((k, c) =>
    widthOf(
      rows.slice(header === "wrapped" ? headerRows : 0).map((row) => row[c] ?? null),
      k,
      tight,
      rtl,
    ),
  );
  if (header === "wrapped") widths.forEach((w, c) => (widths[c] = Math.max(w, 10)));
  return { header, mergedLabels, borders, rtl, kinds, rows, merges, widths, headerRows };
}

/** The sheets of the round-trip corpus: `count` of them from `seed`; every third is held out. */
export function sheetSpecs(count: number, seed = 13): SheetSpec[] {
  const rand = prng(seed);
  return Array.from({ length: count }, (_, i): SheetSpec => {
    const rtl = chance(rand, 0.2);
    const tight = chance(rand, 0.25);
    const long = chance(rand, 0.12);
    const several = !long && chance(rand, 0.25);
    const arrangement = several && chance(rand, 0.4) ? "side" : "stacked";
    const tables = Array.from({ length: several ? 2 + (arrangement === "stacked" && chance(rand, 0.4) ? 1 : 0) : 1 }, () =>
      tableSpec(rand, long ? 70 + Math.floor(rand() * 60) : 4 + Math.floor(rand() * 14), tight, rtl),
    );
    return {
      name: `sheet-${String(i + 1).padStart(3, "0")}`,
      split: i % 3 === 2 ? "holdout" : "tune",
      tables,
      arrangement,
      landscape: chance(rand, 0.3),
      tight,
      fontSize: tight ? 8 : pick(rand, [9, 10, 11]),
      turn: chance(rand, 0.15) ? pick(rand, ["rotate", "content"] as const) : "none",
      repeatHeader: long && chance(rand, 0.5),
    };
  });
}

/** The classes a table of a sheet belongs to (TableClass of test/helpers/table-truth.ts). */
export function classesOf(sheet: Pick<SheetSpec, "tables" | "turn" | "tight">, table: TableSpec, pages: number): TableClass[] {
  const out: TableClass[] = [table.borders === "all" ? "ruled" : table.borders === "none" ? "unruled" : "partly-ruled"];
  if (table.merges.length) out.push("spanning");
  if (table.header === "wrapped" || table.kinds.includes("wrap")) out.push("multi-line");
  if (sheet.tables.length > 1) out.push("multi-table");
  if (pages > 1 && sheet.tables.length === 1) out.push("multi-page");
  if (sheet.turn !== "none") out.push("rotated");
  if (table.rtl) out.push("rtl");
  if (sheet.tight) out.push("tight");
  return out;
}
