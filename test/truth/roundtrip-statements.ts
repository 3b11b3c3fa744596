/**
 * Truth at scale, part 4: financial statements, the tables of annual and government reports. A
 * statement is a table whose rows carry the structure: section headings with no values, items
 * indented under them (some two levels deep, some wrapped over two lines), subtotals and a total in
 * bold with rules over their values only, "—" for nil, negatives in parentheses, currency signs on
 * the first row of a section and on totals (next to the number, or flush left in the cell on a tab
 * as accounting layouts set them), footnote markers raised after labels, dot leaders from the
 * labels to their cells' ends on some (a tab with a dot leader), amounts written the French way
 * on a fifth ("1 234,5": narrow no-break spaces, a decimal comma), a note column that is
 * mostly blank, and a header of periods (some under a group heading such as "Year ended 31
 * December", some over a units row "$'000"). Written as DOCX with the `docx` package and exported
 * by LibreOffice Writer, untagged or tagged, the way roundtrip-docx.ts writes Word reports.
 *
 * A statement's truth is the text each cell shows; a label keeps its footnote marker ("Goodwill1"
 * when the marker is a raised digit right after the word, "Goodwill (a)" when it is a raised letter
 * after a space); a merged header's text sits in its top-left cell. Checked word by word against
 * poppler's text of the PDF before it is used (roundtrip.ts exportedTruth).
 */
import {
  AlignmentType,
  BorderStyle,
  Document,
  LeaderType,
  Paragraph,
  TabStopType,
  Table,
  TableCell,
  TableRow,
  TextRun,
  VerticalAlignTable,
  type IBorderOptions,
  type ITableCellBorders,
} from "docx";
import { prng } from "../helpers/prng.ts";
import type { TableClass } from "../helpers/table-truth.ts";
import { memoisedCorpus } from "./roundtrip.ts";
import { wordCorpus } from "./roundtrip-docx.ts";
import { chance, pick, words, type Rand, type SpecCell } from "./roundtrip-specs.ts";

type Role = "header" | "section" | "item" | "subtotal" | "total";

export interface StatementTable {
  title: string;
  /** Header rows, then one row per line of the statement; merged-away cells are null. */
  rows: (SpecCell | null)[][];
  roles: Role[];
  /** Each row's label indent, in levels. */
  indents: number[];
  merges: [number, number, number, number][];
  headerRows: number;
  /** Which columns hold values (the label column and a note column do not). */
  valueColumns: number[];
  noteColumn: boolean;
  /** "plain": no rules; "accounting": a rule under the header, over subtotals, a double rule under totals; "lined": a rule under every row. */
  rules: "plain" | "accounting" | "lined";
  /** Where a currency sign stands: none, next to the number, or flush left in the cell (a tab before the number). */
  currency: "none" | "prefix" | "flush";
  /** Label column width as a share of the table's. */
  labelShare: number;
  /** Values set at the foot of a wrapped label's cell (as statements set them) rather than its head. */
  bottomAligned: boolean;
  /** Two statements share a page (the second starts on a new page otherwise). */
  samePage: boolean;
  /** Dot leaders from each item's label to the end of its cell (a right tab with a dot leader, as Word sets them). */
  leaders: boolean;
}

export interface StatementSpec {
  name: string;
  split: "tune" | "holdout";
  tables: StatementTable[];
  font: string;
  fontSize: number;
  tagged: boolean;
  turn: "none";
}

const FONTS = ["Carlito", "Liberation Serif", "Liberation Sans"];
const TEXT_WIDTH = 11906 - 2 * 1440;

const SECTIONS: { heading: string; items: string[]; total: string }[] = [
  {
    heading: "Non-current assets",
    items: [
      "Property, plant and equipment",
      "Intangible assets",
      "Goodwill",
      "Right-of-use assets",
      "Investments in associates and joint ventures",
      "Deferred tax assets",
      "Other financial assets",
    ],
    total: "Total non-current assets",
  },
  {
    heading: "Current assets",
    items: [
      "Inventories",
      "Trade and other receivables",
      "Contract assets",
      "Current tax assets",
      "Cash and cash equivalents",
      "Assets classified as held for sale",
    ],
    total: "Total current assets",
  },
  {
    heading: "Current liabilities",
    items: ["Trade and other payables", "Borrowings", "Lease liabilities", "Provisions", "Current tax liabilities", "Deferred income"],
    total: "Total current liabilities",
  },
  {
    heading: "Equity",
    items: ["Share capital", "Share premium", "Retained earnings", "Hedging reserve", "Translation reserve", "Non-controlling interests"],
    total: "Total equity",
  },
  {
    heading: "Revenue",
    items: ["Sale of goods", "Rendering of services", "Royalties and licence fees", "Grants and contributions", "Rental income"],
    total: "Total revenue",
  },
  {
    heading: "Operating expenses",
    items: [
      "Employee benefits expense",
      "Depreciation and amortisation",
      "Raw materials and consumables used",
      "Impairment of receivables",
      "Supplies and services",
      "Other expenses",
    ],
    total: "Total operating expenses",
  },
  {
    heading: "Cash flows from operating activities",
    items: ["Receipts from customers", "Payments to suppliers and employees", "Interest received", "Interest paid", "Income taxes paid"],
    total: "Net cash from operating activities",
  },
  {
    heading: "Cash flows from investing activities",
    items: [
      "Purchase of property, plant and equipment",
      "Proceeds from sale of equipment",
      "Acquisition of subsidiary, net of cash acquired",
      "Dividends received",
    ],
    total: "Net cash used in investing activities",
  },
];
/** Sub-items: an item of a section broken down one level deeper. */
const DETAILS = ["Land and buildings", "Plant and machinery", "Fixtures and fittings", "Motor vehicles", "Software", "Work in progress"];
const LONG_SUFFIXES = [
  ", net of accumulated depreciation and impairment losses",
  " measured at fair value through other comprehensive income",
  " (including amounts due from related parties)",
];
const TITLES = [
  "Consolidated statement of financial position",
  "Statement of profit or loss",
  "Consolidated statement of cash flows",
  "Statement of comprehensive income",
  "Summary of operating results",
];
const NILS = ["—", "–", "-"];
const UNITS = ["$'000", "$m", "£'000", "€ million", "$"];

const grouped = (n: number, decimals: number): string =>
  n.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
const textCell = (text: string): SpecCell => ({ value: text, text });

/** How one statement is set, drawn before its rows. */
interface Layout {
  periods: number;
  noteColumn: boolean;
  changeColumn: boolean;
  groupHeading: "none" | "one" | "pairs";
  unitsRow: boolean;
  rules: StatementTable["rules"];
  currency: StatementTable["currency"];
  decimals: number;
  nil: string;
  markers: "none" | "digit" | "letter";
  year: number;
  unit: string;
}

function layoutOf(rand: Rand): Layout {
  const periods = pick(rand, [2, 2, 2, 3, 4]);
  const noteColumn = chance(rand, 0.4);
  const changeColumn = periods === 2 && chance(rand, 0.2);
  const groupHeading = periods === 4 ? pick(rand, ["pairs", "one"] as const) : chance(rand, 0.4) ? "one" : "none";
  return {
    periods,
    noteColumn,
    changeColumn,
    groupHeading,
    unitsRow: chance(rand, 0.4),
    rules: pick(rand, ["plain", "accounting", "accounting", "lined"] as const),
    currency: pick(rand, ["none", "prefix", "flush"] as const),
    decimals: chance(rand, 0.25) ? 1 : 0,
    nil: pick(rand, NILS),
    markers: chance(rand, 0.4) ? pick(rand, ["digit", "letter"] as const) : "none",
    year: 2020 + Math.floor(rand() * 6),
    unit: pick(rand, UNITS),
  };
}

/** A statement's rows as they are drawn: the layout, its columns, and what each row is. */
class Rows {
  readonly rows: (SpecCell | null)[][] = [];
  readonly roles: Role[] = [];
  readonly indents: number[] = [];
  readonly merges: [number, number, number, number][] = [];
  /** The note column's index (-1: none) and the first value column's. */
  readonly note: number;
  readonly first: number;
  readonly valueColumns: number[];
  /** The next note's number. */
  noteNo = 0;

  readonly l: Layout;

  constructor(l: Layout) {
    this.l = l;
    this.note = l.noteColumn ? 1 : -1;
    this.first = l.noteColumn ? 2 : 1;
    this.valueColumns = Array.from({ length: l.periods + (l.changeColumn ? 1 : 0) }, (_, i) => this.first + i);
  }

  blank(): (SpecCell | null)[] {
    return Array.from({ length: this.first + this.valueColumns.length }, () => textCell(""));
  }

  push(row: (SpecCell | null)[], role: Role, indent = 0): void {
    this.rows.push(row);
    this.roles.push(role);
    this.indents.push(indent);
  }

  /** A row of amounts (and a change) under a label: "item", "subtotal" or "total". */
  amounts(label: string, values: number[], role: Role, sign: boolean, rand: Rand, indent = 0): (SpecCell | null)[] {
    const row = this.blank();
    row[0] = textCell(label);
    values.forEach((v, i) => (row[this.valueColumns[i]!] = textCell(money(v, this.l.decimals, this.l.nil, sign))));
    if (this.l.changeColumn) row[this.valueColumns[this.l.periods]!] = textCell(change(rand));
    this.push(row, role, indent);
    return row;
  }
}

/** The header: a group heading over the periods, the periods, a units row. */
function header(t: Rows, rand: Rand): void {
  const { l, first } = t;
  const periodName = (i: number): string => String(l.groupHeading === "pairs" ? l.year - (i % 2) : l.year - i);
  if (l.groupHeading !== "none") {
    const top = t.blank();
    if (l.groupHeading === "one") {
      top[first] = textCell(pick(rand, ["Year ended 31 December", "As at 30 June", "Twelve months to March"]));
      for (let c = first + 1; c < first + l.periods; c++) top[c] = null;
      t.merges.push([0, first, 0, first + l.periods - 1]);
    } else {
      top[first] = textCell("Group");
      top[first + 1] = null;
      top[first + 2] = textCell("Company");
      top[first + 3] = null;
      t.merges.push([0, first, 0, first + 1], [0, first + 2, 0, first + 3]);
    }
    t.push(top, "header");
  }
  const names = t.blank();
  if (t.note >= 0) names[t.note] = textCell("Note");
  t.valueColumns.forEach((c, i) => (names[c] = textCell(i < l.periods ? periodName(i) : "Change")));
  if (chance(rand, 0.3)) names[0] = textCell(pick(rand, ["In thousands of dollars", "Particulars", "Description"]));
  t.push(names, "header");
  if (l.unitsRow) {
    const units = t.blank();
    t.valueColumns.forEach((c, i) => (units[c] = textCell(i < l.periods ? l.unit : "%")));
    t.push(units, "header");
  }
}

/** An item's label: a long suffix on some (wrapped), a footnote mark on some. */
function itemLabel(t: Rows, name: string, indent: number, rand: Rand): string {
  let text = name;
  if (indent === 1 && chance(rand, 0.15)) text += pick(rand, LONG_SUFFIXES);
  if (t.l.markers !== "none" && chance(rand, 0.15))
    text += t.l.markers === "digit" ? String(1 + Math.floor(rand() * 4)) : ` (${pick(rand, ["a", "b", "c"])})`;
  return text;
}

/** A section: its heading, its items (the first broken down into details on some), its subtotal. Returns the subtotals. */
function section(t: Rows, s: (typeof SECTIONS)[number], rand: Rand): number[] {
  const { l } = t;
  const heading = t.blank();
  heading[0] = textCell(s.heading);
  t.push(heading, "section");
  const sums = Array.from({ length: l.periods }, () => 0);
  const items = [...s.items].sort(() => rand() - 0.5).slice(0, 2 + Math.floor(rand() * (s.items.length - 1)));
  items.forEach((item, k) => {
    const lines: [string, number][] = [[item, 1]];
    if (k === 0 && chance(rand, 0.2)) for (const d of [...DETAILS].sort(() => rand() - 0.5).slice(0, 2)) lines.push([d, 2]);
    for (const [name, indent] of lines) {
      const text = itemLabel(t, name, indent, rand);
      const note = t.note >= 0 && chance(rand, 0.45) ? textCell(String(t.noteNo++)) : null;
      // A broken-down item's details carry its values.
      const parent = indent === 1 && lines.length > 1 && name === item;
      const values = parent ? [] : Array.from({ length: l.periods }, () => amount(l.decimals, rand));
      values.forEach((v, i) => (sums[i]! += v));
      const row = parent ? t.blank() : t.amounts(text, values, "item", l.currency !== "none" && k === 0 && indent === 1, rand, indent);
      if (parent) {
        row[0] = textCell(text);
        t.push(row, "item", indent);
      }
      if (note) row[t.note] = note;
    }
  });
  t.amounts(s.total, sums, "subtotal", false, rand);
  return sums;
}

const amount = (decimals: number, rand: Rand): number =>
  chance(rand, 0.1) ? 0 : Math.round((rand() ** 2 * 90_000 + 100) * (chance(rand, 0.15) ? -1 : 1) * 10 ** decimals) / 10 ** decimals;

function statementTable(rand: Rand, samePage: boolean): StatementTable {
  const l = layoutOf(rand);
  const t = new Rows(l);
  header(t, rand);
  const headerRows = t.rows.length;
  // Body: two to four sections, each with its items and a subtotal, and a total.
  const totals = Array.from({ length: l.periods }, () => 0);
  const sections = [...SECTIONS].sort(() => rand() - 0.5).slice(0, 2 + Math.floor(rand() * 3));
  t.noteNo = 1 + Math.floor(rand() * 5);
  for (const s of sections) section(t, s, rand).forEach((v, i) => (totals[i]! += v));
  t.amounts(
    pick(rand, ["Total", "Net assets", "Net result for the year", "Balance at end of year"]),
    totals,
    "total",
    l.currency !== "none",
    rand,
  );
  // A flush currency sign is the cell's text too, with the space a reader sees ("$ 1,234").
  if (l.currency === "flush") {
    for (const row of t.rows.slice(headerRows)) {
      for (const c of t.valueColumns) {
        const cell = row[c];
        if (cell?.text.startsWith("$")) row[c] = textCell(`$ ${cell.text.slice(1)}`);
      }
    }
  }
  return {
    title: pick(rand, TITLES),
    rows: t.rows,
    roles: t.roles,
    indents: t.indents,
    merges: t.merges,
    headerRows,
    valueColumns: t.valueColumns,
    noteColumn: l.noteColumn,
    rules: l.rules,
    currency: l.currency,
    labelShare: pick(rand, [0.35, 0.45, 0.55]),
    bottomAligned: chance(rand, 0.5),
    samePage,
    leaders: false,
  };
}

function money(v: number, decimals: number, nil: string, sign: boolean): string {
  if (v === 0) return nil;
  const body = grouped(Math.abs(v), decimals);
  const text = sign ? `$${body}` : body;
  return v < 0 ? `(${text})` : text;
}

/**
 * A statement's amounts as French, Nordic and Polish reports write them: thousands grouped by
 * narrow no-break spaces, a decimal comma ("1 234,5", "(12 408)"); the labels and the header as they were.
 */
function frenchAmounts(t: StatementTable): StatementTable {
  const french = (text: string): string => text.replace(/[,.]/g, (m) => (m === "," ? "\u202f" : ","));
  const rows = t.rows.map((row, r) =>
    r < t.headerRows ? row : row.map((c, k) => (c && t.valueColumns.includes(k) ? textCell(french(c.text)) : c)),
  );
  return { ...t, rows };
}

const change = (rand: Rand): string => (chance(rand, 0.1) ? "n/m" : `${(Math.round((rand() - 0.4) * 600) / 10).toFixed(1)}%`);

/** The statements of the corpus: `count` documents from `seed`; every third is held out. */
export function statementSpecs(count: number, seed = 41): StatementSpec[] {
  const rand = prng(seed);
  // Leaders and French amounts are drawn apart, so that the rest of each statement is what the
  // seed made before them.
  const leaderRand = prng(seed * 7919 + 1);
  const localeRand = prng(seed * 7919 + 2);
  return Array.from({ length: count }, (_, i): StatementSpec => {
    const two = chance(rand, 0.35);
    const samePage = two && chance(rand, 0.5);
    return {
      name: `statement-${String(i + 1).padStart(3, "0")}`,
      split: i % 3 === 2 ? "holdout" : "tune",
      tables: Array.from({ length: two ? 2 : 1 }, (_, k) => {
        const t = { ...statementTable(rand, k > 0 && samePage), leaders: chance(leaderRand, 0.3) };
        return chance(localeRand, 0.2) ? frenchAmounts(t) : t;
      }),
      font: pick(rand, FONTS),
      fontSize: pick(rand, [8, 9, 10, 10, 11]),
      tagged: chance(rand, 0.35),
      turn: "none",
    };
  });
}

/** A statement's classes: how it is ruled, "spanning" for a merged header, "multi-line" for wrapped labels, and "statement". */
export function statementClasses(doc: StatementSpec, t: StatementTable, pages: number): TableClass[] {
  const out: TableClass[] = [t.rules === "plain" ? "unruled" : "partly-ruled", "statement"];
  if (t.merges.length) out.push("spanning");
  if (t.rows.some((r) => LONG_SUFFIXES.some((s) => r[0]?.text.includes(s)))) out.push("multi-line");
  if (doc.tables.length > 1 && doc.tables.some((x) => x.samePage)) out.push("multi-table");
  if (pages > doc.tables.length) out.push("multi-page");
  return out;
}

const line: IBorderOptions = { style: BorderStyle.SINGLE, size: 4, color: "000000" };
const double: IBorderOptions = { style: BorderStyle.DOUBLE, size: 4, color: "000000" };
const none: IBorderOptions = { style: BorderStyle.NONE, size: 0, color: "FFFFFF" };

function cellBorders(t: StatementTable, ri: number, ci: number): ITableCellBorders {
  const value = t.valueColumns.includes(ci);
  const role = t.roles[ri]!;
  const b: ITableCellBorders = { top: none, bottom: none, left: none, right: none };
  if (t.rules === "lined") return { ...b, bottom: line };
  if (t.rules === "plain") return b;
  if (ri === t.headerRows - 1 && value) return { ...b, bottom: line };
  if (role === "subtotal" && value) return { ...b, top: line };
  if (role === "total" && value) return { ...b, top: line, bottom: double };
  return b;
}

/** The runs of a label: a footnote mark after it raised and smaller. */
function labelRuns(text: string, bold: boolean, size: number): TextRun[] {
  const m = /^(.*?)( \([abc]\)|(?<=[a-z])[1-4])$/.exec(text);
  const plain = (s: string): TextRun => new TextRun({ text: s, size: size * 2, bold });
  if (!m) return [plain(text)];
  return [plain(m[1]!), new TextRun({ text: m[2]!, size: size * 2, bold, superScript: true })];
}

/** An amount with its currency sign flush left in the cell, the number on a right tab ("$ 1,234"). */
function flushAmount(text: string, bold: boolean, cellWidth: number, size: number): Paragraph {
  return new Paragraph({
    tabStops: [{ type: TabStopType.RIGHT, position: cellWidth - 216 }],
    children: [new TextRun({ text: "$", size: size * 2, bold }), new TextRun({ text: `\t${text.slice(2)}`, size: size * 2, bold })],
  });
}

/** An item's label led by dots to its cell's end: a right tab with a dot leader after it, as Word sets one. */
function ledLabel(text: string, indent: number, cellWidth: number, size: number): Paragraph {
  return new Paragraph({
    ...(indent ? { indent: { left: 240 * indent } } : {}),
    tabStops: [{ type: TabStopType.RIGHT, position: cellWidth - 216, leader: LeaderType.DOT }],
    children: [...labelRuns(text, false, size), new TextRun({ text: "\t", size: size * 2 })],
  });
}

/** Labels to the left, a value right-aligned, a header over several columns centred. */
const alignmentOf = (ci: number, isValue: boolean, span: number): (typeof AlignmentType)[keyof typeof AlignmentType] =>
  ci === 0 ? AlignmentType.LEFT : isValue && span === 1 ? AlignmentType.RIGHT : AlignmentType.CENTER;

/** A cell's paragraph: an amount with a flush sign on a right tab, a label indented, a section's heading spaced. */
function cellParagraph(
  t: StatementTable,
  spec: SpecCell,
  [ri, ci, span]: [number, number, number],
  cellWidth: number,
  size: number,
): Paragraph {
  const role = t.roles[ri]!;
  const isValue = t.valueColumns.includes(ci);
  const bold = role !== "item";
  if (t.currency === "flush" && isValue && spec.text.startsWith("$ ")) return flushAmount(spec.text, bold, cellWidth, size);
  const indent = ci === 0 ? (t.indents[ri] ?? 0) : 0;
  if (t.leaders && ci === 0 && role === "item") return ledLabel(spec.text, indent, cellWidth, size);
  return new Paragraph({
    alignment: alignmentOf(ci, isValue, span),
    ...(indent ? { indent: { left: 240 * indent } } : {}),
    ...(role === "section" ? { spacing: { before: 120 } } : {}),
    children: ci === 0 && role === "item" ? labelRuns(spec.text, bold, size) : [new TextRun({ text: spec.text, size: size * 2, bold })],
  });
}

function docTable(doc: StatementSpec, t: StatementTable): Table {
  const columns = t.rows[0]!.length;
  // Values never wrap: their columns as wide as the longest value (a flush sign two characters
  // more), the label's what is left, a third of the width at least (the type made smaller if need be).
  const longest = Math.max(...t.rows.slice(t.headerRows).flatMap((r) => t.valueColumns.map((c) => r[c]?.text.length ?? 0)));
  const needed = (size: number): number => Math.round((longest + (t.currency === "flush" ? 3 : 1)) * size * 0.6 * 20) + 216;
  let size = doc.fontSize;
  const note = t.noteColumn ? Math.round(5 * size * 0.6 * 20) + 216 : 0;
  while (size > 7 && TEXT_WIDTH - note - needed(size) * t.valueColumns.length < TEXT_WIDTH / 3) size -= 0.5;
  const label = Math.min(Math.round(TEXT_WIDTH * t.labelShare), TEXT_WIDTH - note - needed(size) * t.valueColumns.length);
  const value = Math.round((TEXT_WIDTH - label - note) / t.valueColumns.length);
  const widths = Array.from({ length: columns }, (_, c) => (c === 0 ? label : t.noteColumn && c === 1 ? note : value));
  const spanOf = (ri: number, ci: number): number => {
    const m = t.merges.find(([r0, c0]) => r0 === ri && c0 === ci);
    return m ? m[3] - m[1] + 1 : 1;
  };
  const cell = (spec: SpecCell, ri: number, ci: number): TableCell => {
    const span = spanOf(ri, ci);
    const cellWidth = widths.slice(ci, ci + span).reduce((a, b) => a + b, 0);
    const paragraph = cellParagraph(t, spec, [ri, ci, span], cellWidth, size);
    return new TableCell({
      ...(span > 1 ? { columnSpan: span } : {}),
      width: { size: cellWidth, type: "dxa" },
      borders: cellBorders(t, ri, ci),
      verticalAlign: t.bottomAligned && ri >= t.headerRows ? VerticalAlignTable.BOTTOM : VerticalAlignTable.TOP,
      children: [paragraph],
    });
  };
  return new Table({
    rows: t.rows.map(
      (cells, ri) =>
        new TableRow({
          children: cells.flatMap((spec, ci) => (spec ? [cell(spec, ri, ci)] : [])),
          ...(ri < t.headerRows ? { tableHeader: true } : {}),
          cantSplit: true,
        }),
    ),
    columnWidths: widths,
    borders: { top: none, bottom: none, left: none, right: none, insideHorizontal: none, insideVertical: none },
  });
}

function statementDocx(doc: StatementSpec, rand: Rand): Document {
  const para = (text: string, opts: { bold?: boolean; size?: number; pageBreakBefore?: boolean } = {}): Paragraph =>
    new Paragraph({
      spacing: { after: 120 },
      ...(opts.pageBreakBefore ? { pageBreakBefore: true } : {}),
      children: [new TextRun({ text, bold: opts.bold ?? false, size: (opts.size ?? 11) * 2 })],
    });
  const children: (Paragraph | Table)[] = [];
  doc.tables.forEach((t, k) => {
    children.push(para(t.title, { bold: true, size: 14, pageBreakBefore: k > 0 && !t.samePage }));
    children.push(para(`For the year ended 31 December, ${words(rand, 3, false).toLowerCase()}`, { size: 10 }));
    children.push(docTable(doc, t));
    children.push(para(`The notes on pages ${10 + k * 4} to ${40 + k * 4} form part of these statements.`, { size: 8 }));
  });
  return new Document({
    styles: { default: { document: { run: { font: doc.font, size: 22 } } } },
    sections: [
      {
        properties: { page: { size: { width: 11906, height: 16838 }, margin: { top: 1440, bottom: 1440, left: 1440, right: 1440 } } },
        children,
      },
    ],
  });
}

/** Builds the statements' corpus in `dir` (30 documents from seed 41 unless told) and returns its truth tables. */
export const buildStatementRoundTrip = memoisedCorpus({ count: 30, seed: 41 }, (dir, count, seed) =>
  wordCorpus(dir, statementSpecs(count, seed), {
    rand: prng(seed + 1),
    docx: statementDocx,
    prefix: "statement",
    classes: statementClasses,
  }),
);
