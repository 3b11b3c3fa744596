/**
 * Truth at scale, part 7: listings as ERP systems, mainframes and report writers print them, the
 * bulk of what a back office converts every day. A listing is a table set in a fixed grid of
 * characters under a running head (company left, title centred, page number right, a report id
 * and run date under them, a blank line), its columns set by spaces, descriptions cut to their
 * field's width, amounts right-aligned with thousands grouped the English or German way or not
 * at all, negatives signed before, after ("1,234.56-", as COBOL and SAP print them) or in
 * parentheses; rules drawn in text (a line of dashes under the header, dashes over a subtotal's
 * amounts, equals signs over the grand total); group headings with the rows under them and a
 * subtotal after each group; long listings go on over pages under the head and header again.
 * Some are SAP lists (every cell between "|" bars, "|----|" lines between header and rows) or
 * database clients' tables (psql's "----+----", MySQL's "+----+" boxes).
 *
 * Printed three ways: by a line printer's PDF writer (each line one Courier string, pdf-lib), by
 * GNU enscript through Ghostscript (the Unix way of printing a text file, its own page header on
 * some), and by a report writer (every field its own text object at its column's place, in
 * Helvetica or Times, headers in bold, rules drawn as lines or not at all).
 *
 * A listing's truth is its header (a two-line header's lines joined by a space), its rows, group
 * headings (text in the first cell), subtotals and totals, each cell the text it shows; the
 * running head, rules and "continued" lines are not the table's. Checked word by word against
 * poppler's text of the PDF before it is used (roundtrip.ts exportedTruth).
 */
import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { PDFDocument, type PDFFont, type PDFPage, StandardFonts, rgb } from "pdf-lib";
import { prng } from "../helpers/prng.ts";
import type { TableClass, TruthTable } from "../helpers/table-truth.ts";
import { exportedTruth, memoisedCorpus } from "./roundtrip.ts";
import { chance, group, pick, words, type Rand, type SpecCell } from "./roundtrip-specs.ts";

const run = promisify(execFile);

export type ListingProducer = "line-printer" | "enscript" | "report-writer";
/** How the grid is drawn: columns set by spaces, SAP's bars, psql's or MySQL's ASCII tables. */
type Style = "plain" | "sap" | "psql" | "mysql";
type Kind = "account" | "code" | "text" | "date" | "qty" | "amount" | "rate";
type Notation = "en" | "de" | "bare";
type Negative = "before" | "after" | "paren";
type Role = "header" | "data" | "group" | "subtotal" | "total";

interface Column {
  /** The header's lines, top first (one or two). */
  header: string[];
  kind: Kind;
  width: number;
  right: boolean;
}

interface Line {
  role: Role;
  cells: string[];
}

export interface ListingTable {
  columns: Column[];
  /** The data, group, subtotal and total lines in print order. */
  lines: Line[];
  /** The truth: the header, then every line, as each cell shows. */
  rows: SpecCell[][];
  /** Spaces between columns (plain style). */
  gap: number;
  /** What stands under the header (plain style). */
  rule: "dashes" | "columns" | "equals" | "none";
  grouped: boolean;
}

export interface ListingSpec {
  name: string;
  split: "tune" | "holdout";
  producer: ListingProducer;
  style: Style;
  /** The running head: up to three lines of left, centre and right parts ("{page}" the page number). */
  head: [string, string, string][];
  /** Data lines a page holds before the listing goes on over the next. */
  perPage: number;
  /** "CONTINUED" printed at the foot of a page the listing goes on from. */
  continued: boolean;
  endLine: string | null;
  font: "Courier" | "Helvetica" | "Times";
  /** enscript prints its own page header over the running head. */
  enscriptHeader: boolean;
  tables: ListingTable[];
  turn: "none";
}

const COMPANIES = ["ACME CORPORATION", "Northwind Traders Ltd", "GLOBEX INC.", "Müller & Söhne GmbH", "Initech Systems"];
const TITLES = [
  "GENERAL LEDGER TRIAL BALANCE",
  "Accounts Receivable Aging",
  "OPEN PURCHASE ORDERS",
  "Saldenliste Sachkonten",
  "Inventory Valuation Report",
  "DAILY CASH RECEIPTS",
];
const HEADERS: Record<Kind, string[][]> = {
  account: [["ACCOUNT"], ["Acct"], ["Konto"], ["ACCOUNT", "NUMBER"], ["CUST", "NO"]],
  code: [["DOC NO"], ["Ref."], ["Belegnr."], ["ORDER", "NUMBER"], ["Item"]],
  text: [["DESCRIPTION"], ["Name"], ["Bezeichnung"], ["CUSTOMER NAME"], ["ITEM", "DESCRIPTION"]],
  date: [["DATE"], ["Posted"], ["Datum"], ["DUE", "DATE"], ["INV DATE"]],
  qty: [["QTY"], ["Units"], ["Menge"], ["ON", "HAND"], ["QTY ORDERED"]],
  amount: [["AMOUNT"], ["Debit"], ["Credit"], ["Soll"], ["Haben"], ["BALANCE"], ["OPENING", "BALANCE"], ["CURRENT"], ["OVER 90", "DAYS"]],
  rate: [["RATE"], ["Disc %"], ["MARGIN"]],
};
const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];

function amountText(v: number, notation: Notation, negative: Negative, decimals: number): string {
  const [int, frac] = Math.abs(v).toFixed(decimals).split(".");
  const sep = notation === "en" ? "," : notation === "de" ? "." : "";
  const body = `${sep ? group(Number(int), sep) : int}${frac ? `${notation === "de" ? "," : "."}${frac}` : ""}`;
  if (v >= 0) return body;
  return negative === "before" ? `-${body}` : negative === "after" ? `${body}-` : `(${body})`;
}

/** A field's text, cut to its width as a report program cuts it. */
function fieldText(
  rand: Rand,
  kind: Kind,
  width: number,
  notation: Notation,
  negative: Negative,
  dateStyle: number,
  upper: boolean,
): string {
  switch (kind) {
    case "account":
      return width >= 10 ? String(Math.floor(rand() * 900000) + 100000).padStart(10, "0") : String(1000 + Math.floor(rand() * 8999));
    case "code":
      return `${pick(rand, ["INV", "PO", "CM", "JE"])}${Math.floor(rand() * 900000) + 100000}`.slice(0, width);
    case "text": {
      const t = words(rand, 2 + Math.floor(rand() * 4), false)
        .slice(0, width)
        .trimEnd();
      return upper ? t.toUpperCase() : t;
    }
    case "date": {
      const [y, m, d] = [2025 + Math.floor(rand() * 2), Math.floor(rand() * 12), 1 + Math.floor(rand() * 28)];
      const [mm, dd] = [String(m + 1).padStart(2, "0"), String(d).padStart(2, "0")];
      if (notation === "de") return `${dd}.${mm}.${y}`;
      return [`${mm}/${dd}/${y}`, `${y}-${mm}-${dd}`, `${dd}-${MONTHS[m]}-${y}`][dateStyle]!;
    }
    case "qty":
      return amountText(Math.floor(rand() ** 2 * 40000) * (chance(rand, 0.1) ? -1 : 1), notation, negative, 0);
    case "amount":
      return amountText(
        Math.round((rand() ** 2 * 2_000_000 - (chance(rand, 0.2) ? 1_000_000 : 0)) * 100) / 100 / 10,
        notation,
        negative,
        2,
      );
    case "rate":
      return `${(rand() * 40).toFixed(2)}${notation === "de" ? "" : "%"}`.replace(".", notation === "de" ? "," : ".");
  }
}

const NUMERIC = new Set<Kind>(["qty", "amount", "rate"]);

/** A listing's columns: an account, code or date, maybe a second, a description, maybe a quantity, amounts, maybe a rate. */
function listingColumns(rand: Rand): Column[] {
  const kinds: Kind[] = [pick(rand, ["account", "code", "date"] as const)];
  if (chance(rand, 0.4)) kinds.push(pick(rand, ["code", "date"] as const));
  kinds.push("text");
  if (chance(rand, 0.3)) kinds.push("qty");
  const amounts = 1 + Math.floor(rand() * 4);
  for (let i = 0; i < amounts; i++) kinds.push("amount");
  if (chance(rand, 0.15)) kinds.push("rate");
  const twoLine = chance(rand, 0.3);
  const used = new Set<string>();
  return kinds.map((kind) => {
    const options = HEADERS[kind].filter((h) => (twoLine || h.length === 1) && !used.has(h.join(" ")));
    const header = pick(rand, options.length ? options : HEADERS[kind]);
    used.add(header.join(" "));
    const natural = {
      account: chance(rand, 0.2) ? 10 : 6,
      code: 9,
      text: 18 + Math.floor(rand() * 14),
      date: 11,
      qty: 9,
      amount: 14,
      rate: 6,
    }[kind];
    return { header, kind, width: Math.max(natural, ...header.map((h) => h.length)), right: NUMERIC.has(kind) };
  });
}

function listingTable(rand: Rand, notation: Notation, negative: Negative, style: Style, long: boolean): ListingTable {
  const columns = listingColumns(rand);
  const upper = chance(rand, 0.5);
  const dateStyle = Math.floor(rand() * 3);
  const grouped = style === "plain" && chance(rand, 0.35);
  const count = long ? 45 + Math.floor(rand() * 50) : 6 + Math.floor(rand() * 20);
  const label = columns.findIndex((c) => c.kind === "text");
  const data = (): Line => ({
    role: "data",
    cells: columns.map((c) => fieldText(rand, c.kind, c.width, notation, negative, dateStyle, upper)),
  });
  const sums = (role: Role, text: string): Line => ({
    role,
    cells: columns.map((c, i) =>
      i === label ? text.slice(0, c.width) : c.kind === "amount" ? fieldText(rand, "amount", c.width, notation, negative, 0, upper) : "",
    ),
  });
  const lines: Line[] = [];
  if (grouped) {
    let left = count;
    for (let g = 1; left > 0; g++) {
      const n = Math.min(left, 3 + Math.floor(rand() * 8));
      const name = `${upper ? "BRANCH" : "Branch"} ${String(g * 7).padStart(3, "0")}`;
      lines.push({ role: "group", cells: columns.map((_, i) => (i === 0 ? name : "")) });
      for (let i = 0; i < n; i++) lines.push(data());
      lines.push(sums("subtotal", `${upper ? "TOTAL" : "Total"} ${name}`));
      left -= n;
    }
  } else for (let i = 0; i < count; i++) lines.push(data());
  if (chance(rand, 0.7)) lines.push(sums("total", pick(rand, ["GRAND TOTAL", "Report total", "** TOTAL **", "Summe"])));
  const header = columns.map((c) => c.header.join(" "));
  return {
    columns,
    lines,
    rows: [header, ...lines.map((l) => l.cells)].map((r) => r.map((text) => ({ value: text, text }))),
    gap: style === "plain" ? pick(rand, [1, 2, 2, 3]) : 1,
    rule: style === "plain" ? pick(rand, ["dashes", "columns", "equals", "none"] as const) : "none",
    grouped,
  };
}

/** The listings of the corpus: `count` documents from `seed`; every third is held out. */
export function listingSpecs(count: number, seed = 101): ListingSpec[] {
  const rand = prng(seed);
  return Array.from({ length: count }, (_, i): ListingSpec => {
    const producer = pick(rand, ["line-printer", "enscript", "report-writer"] as const);
    const style: Style = producer === "report-writer" ? "plain" : pick(rand, ["plain", "plain", "plain", "sap", "psql", "mysql"] as const);
    const notation: Notation = style === "sap" ? "de" : pick(rand, ["en", "en", "de", "bare"] as const);
    const negative: Negative = notation === "de" ? "after" : pick(rand, ["before", "after", "after", "paren"] as const);
    const long = chance(rand, 0.35);
    const tables = Array.from({ length: !long && chance(rand, 0.25) ? 2 : 1 }, () => listingTable(rand, notation, negative, style, long));
    const title = pick(rand, TITLES);
    const lines = Math.floor(rand() * 4);
    const head: [string, string, string][] = [
      [pick(rand, COMPANIES), title, "PAGE {page}"],
      [
        `RPT${Math.floor(rand() * 9000 + 1000)}`,
        `PERIOD ${1 + Math.floor(rand() * 12)}/2026`,
        `RUN DATE ${notation === "de" ? "07.12.2026" : "12/07/2026"}`,
      ],
      ["", `Currency: ${notation === "de" ? "EUR" : "USD"}`, "TIME 23:41:07"],
    ].slice(0, lines) as [string, string, string][];
    return {
      name: `listing-${String(i + 1).padStart(3, "0")}`,
      split: i % 3 === 2 ? "holdout" : "tune",
      producer,
      style,
      head,
      perPage: 20 + Math.floor(rand() * 25),
      continued: long && chance(rand, 0.3),
      endLine: chance(rand, 0.4) ? pick(rand, ["*** END OF REPORT ***", "** Ende der Liste **", "End of listing"]) : null,
      font: producer === "report-writer" ? pick(rand, ["Helvetica", "Helvetica", "Times", "Courier"] as const) : "Courier",
      enscriptHeader: producer === "enscript" && chance(rand, 0.5),
      tables,
      turn: "none",
    };
  });
}

/** A listing table's classes: "listing", how its grid is drawn, multi-line / multi-table / multi-page / tight. */
export function listingClasses(doc: ListingSpec, t: ListingTable, pages: number): TableClass[] {
  const out: TableClass[] = [
    "listing",
    doc.style === "plain" ? (doc.producer === "report-writer" ? "unruled" : "partly-ruled") : "text-ruled",
  ];
  if (t.columns.some((c) => c.header.length > 1)) out.push("multi-line");
  if (doc.tables.length > 1) out.push("multi-table");
  if (pages > 1) out.push("multi-page");
  if (doc.style === "plain" && t.gap === 1) out.push("tight");
  return out;
}

// ---- printing: the text grid -------------------------------------------------------------------

/** One printed line: its characters, or its fields at their character columns (a report writer places fields). */
interface Printed {
  text: string;
  fields: { at: number; width: number; text: string; right: boolean; bold: boolean; centre?: boolean }[];
  /** A rule a report writer draws as a line: the character columns it spans. */
  rule?: [number, number];
}

const pad = (s: string, w: number, right: boolean): string => (right ? s.padStart(w) : s.padEnd(w));

/** Where each column starts, in characters, and the width of a whole line. */
function grid(t: ListingTable, style: Style): { at: number[]; width: number } {
  const at: number[] = [];
  let x = style === "mysql" || style === "sap" ? 1 : 0;
  const gap = style === "plain" ? t.gap : style === "sap" ? 1 : 3;
  for (const c of t.columns) {
    if (style === "mysql") x += 1;
    at.push(x);
    x += c.width + gap;
  }
  return { at, width: x - gap + (style === "mysql" ? 2 : style === "sap" ? 1 : 0) };
}

function row(t: ListingTable, style: Style, cells: readonly string[], bold: boolean): Printed {
  const { at } = grid(t, style);
  const fields = t.columns.map((c, i) => ({ at: at[i]!, width: c.width, text: cells[i] ?? "", right: c.right, bold }));
  const padded = fields.map((f) => pad(f.text, f.width, f.right));
  const text =
    style === "plain"
      ? padded.join(" ".repeat(t.gap)).trimEnd()
      : style === "sap"
        ? `|${padded.join("|")}|`
        : style === "psql"
          ? padded.join(" | ")
          : `| ${padded.join(" | ")} |`;
  return { text, fields: fields.filter((f) => f.text) };
}

function rule(t: ListingTable, style: Style, char: string, only?: (c: Column) => boolean): Printed {
  const { at, width } = grid(t, style);
  if (style === "sap") return { text: `|${"-".repeat(width - 2)}|`, fields: [] };
  if (style === "psql")
    return {
      text: t.columns
        .map((c) => "-".repeat(c.width + 2))
        .join("+")
        .slice(1),
      fields: [],
    };
  if (style === "mysql") return { text: `+${t.columns.map((c) => "-".repeat(c.width + 2)).join("+")}+`, fields: [] };
  if (!only) return { text: char.repeat(width), fields: [], rule: [0, width] };
  const chars = Array.from({ length: width }, () => " ");
  const cols = t.columns.map((c, i) => ({ c, at: at[i]! })).filter(({ c }) => only(c));
  for (const { c, at: a } of cols) for (let k = 0; k < c.width; k++) chars[a + k] = char;
  const first = cols[0]!;
  const last = cols[cols.length - 1]!;
  return { text: chars.join("").trimEnd(), fields: [], rule: [first.at, last.at + last.c.width] };
}

const blank: Printed = { text: "", fields: [] };

/** The pages of a listing as printed lines. */
/** A text line printed alone, flush left (a "continued" note, the end of the listing). */
const note = (text: string): Printed => ({ text, fields: [{ at: 0, width: text.length, text, right: false, bold: false }] });

/** The running head of page `n`, its lines `width` characters wide at least. */
function headLines(doc: ListingSpec, width: number, n: number): Printed[] {
  return doc.head.map(([l, c, r]) => {
    const right = r.replace("{page}", String(n).padStart(4));
    // The title centred on the line, the line as wide as the table or as the head needs.
    const full = Math.max(width, 2 * l.length + c.length + 4, c.length + 2 * right.length + 4);
    const text = `${l.padEnd(Math.floor((full - c.length) / 2))}${c}`;
    const line = `${text.padEnd(full - right.length)}${right}`;
    // A report writer sets the head's parts flush left, centred and flush right on the line.
    const parts = [
      { text: l, at: 0, right: false, centre: false },
      { text: c, at: line.indexOf(c, l.length), right: false, centre: true },
      { text: right, at: line.length - right.length, right: true, centre: false },
    ];
    return { text: line, fields: parts.filter((p) => p.text).map((p) => ({ ...p, width: p.text.length, bold: true })) };
  });
}

/** A table's header lines and the rules its style draws around them. */
function tableHead(t: ListingTable, style: Style): Printed[] {
  const depth = Math.max(...t.columns.map((c) => c.header.length));
  const lines = Array.from({ length: depth }, (_, k) =>
    row(
      t,
      style,
      t.columns.map((c) => c.header[k - (depth - c.header.length)] ?? ""),
      true,
    ),
  );
  if (style === "plain") {
    if (t.rule === "dashes") lines.push(rule(t, style, "-"));
    if (t.rule === "equals") lines.push(rule(t, style, "="));
    if (t.rule === "columns") lines.push(rule(t, style, "-", () => true));
    return lines;
  }
  if (style === "psql") return [...lines, rule(t, style, "-")];
  return [rule(t, style, "-"), ...lines, rule(t, style, "-")];
}

/** One line of a table as printed, with the rules over subtotals and totals and the blank line after a subtotal. */
function printedLine(t: ListingTable, style: Style, line: Line): Printed[] {
  const over =
    style === "plain" && line.role === "subtotal"
      ? [rule(t, style, "-", (c) => c.kind === "amount")]
      : style === "plain" && line.role === "total"
        ? [rule(t, style, "=", (c) => c.kind === "amount")]
        : style !== "plain" && line.role === "total"
          ? [rule(t, style, "-")]
          : [];
  return [...over, row(t, style, line.cells, line.role !== "data"), ...(line.role === "subtotal" ? [blank] : [])];
}

/** The pages of a listing as printed lines. */
export function printedPages(doc: ListingSpec): Printed[][] {
  const pages: Printed[][] = [];
  const width = Math.max(...doc.tables.map((t) => grid(t, doc.style).width));
  const boxed = doc.style === "sap" || doc.style === "mysql";
  let page: Printed[] = [];
  const newPage = (): void => {
    if (page.length) pages.push(page);
    page = [...headLines(doc, width, pages.length + 1), ...(doc.head.length ? [blank] : [])];
  };
  newPage();
  for (const [k, t] of doc.tables.entries()) {
    if (k > 0) page.push(blank, blank);
    page.push(...tableHead(t, doc.style));
    let onPage = 0;
    for (const [i, line] of t.lines.entries()) {
      if (onPage >= doc.perPage && i < t.lines.length - 1) {
        if (boxed) page.push(rule(t, doc.style, "-"));
        if (doc.continued) page.push(blank, note("CONTINUED ON NEXT PAGE"));
        newPage();
        page.push(...tableHead(t, doc.style));
        onPage = 0;
      }
      page.push(...printedLine(t, doc.style, line));
      onPage++;
    }
    if (boxed) page.push(rule(t, doc.style, "-"));
    if (doc.style === "psql") page.push({ text: `(${t.lines.length} rows)`, fields: [] });
  }
  if (doc.endLine) page.push(blank, note(doc.endLine));
  pages.push(page);
  return pages;
}

// ---- printing: the three producers -------------------------------------------------------------

/**
 * Type size and page that hold the longest page's lines 1.2 em apart within half-inch margins, a
 * character `em` wide: Courier's 0.6, a report writer's field grid in proportional type wider,
 * for capitals in bold.
 */
function paperFor(pages: readonly Printed[][], em = 0.6): { size: number; page: [number, number] } {
  const chars = Math.max(...pages.flat().map((l) => l.text.length));
  const lines = Math.max(...pages.map((p) => p.length)) + 2;
  const page: [number, number] = chars * em > 57 ? [842, 595] : [595, 842];
  const fit = Math.min((page[0] - 80) / (chars * em), (page[1] - 80) / (lines * 1.2));
  return { size: Math.min(10, Math.floor(fit * 2) / 2), page };
}

async function drawnPdf(doc: ListingSpec, pages: Printed[][], out: string): Promise<void> {
  const pdf = await PDFDocument.create();
  const fontName = {
    Courier: [StandardFonts.Courier, StandardFonts.CourierBold],
    Helvetica: [StandardFonts.Helvetica, StandardFonts.HelveticaBold],
    Times: [StandardFonts.TimesRoman, StandardFonts.TimesRomanBold],
  }[doc.font];
  const [regular, bold] = await Promise.all(fontName.map((f) => pdf.embedFont(f)));
  const em = doc.producer === "report-writer" && doc.font !== "Courier" ? 0.78 : 0.6;
  const { size, page: paper } = paperFor(pages, em);
  const cw = size * em;
  const pitch = size * 1.2;
  for (const lines of pages) {
    const page: PDFPage = pdf.addPage(paper);
    let y = paper[1] - 36 - size;
    for (const line of lines) {
      if (doc.producer === "line-printer") page.drawText(line.text, { x: 36, y, size, font: regular! });
      else if (line.rule)
        page.drawLine({
          start: { x: 36 + line.rule[0] * cw, y: y + size * 0.3 },
          end: { x: 36 + line.rule[1] * cw, y: y + size * 0.3 },
          thickness: 0.5,
          color: rgb(0, 0, 0),
        });
      else {
        for (const f of line.fields) {
          const font: PDFFont = f.bold ? bold! : regular!;
          const w = font.widthOfTextAtSize(f.text, size);
          const x = 36 + (f.right ? (f.at + f.width) * cw - w : f.centre ? (f.at + f.width / 2) * cw - w / 2 : f.at * cw);
          page.drawText(f.text, { x, y, size, font });
        }
      }
      y -= pitch;
    }
  }
  await writeFile(out, await pdf.save());
}

async function enscriptPdf(doc: ListingSpec, pages: Printed[][], out: string, dir: string): Promise<void> {
  const txt = path.join(dir, `${doc.name}.txt`);
  await writeFile(txt, Buffer.from(pages.map((p) => p.map((l) => l.text).join("\n")).join("\n\f"), "latin1"));
  const { size, page } = paperFor(pages);
  const ps = path.join(dir, `${doc.name}.ps`);
  const header = doc.enscriptHeader ? [`--header=${doc.name}|$D|Page $% of $=`] : ["-B"];
  await run("enscript", [
    "-q",
    ...header,
    `-f`,
    `Courier${size}`,
    "-M",
    "A4",
    ...(page[0] > page[1] ? ["-r"] : []),
    "--margins=36:36:36:36",
    "-X",
    "latin1",
    "-o",
    ps,
    txt,
  ]);
  await run("ps2pdf", ["-sPAPERSIZE=a4", ps, out]);
}

/** Builds the listings' corpus in `dir` (30 listings from seed 101 unless told) and returns its truth tables. */
export const buildListingRoundTrip = memoisedCorpus({ count: 30, seed: 101 }, async (dir, count, seed) => {
  await mkdir(dir, { recursive: true });
  const out: TruthTable[] = [];
  for (const doc of listingSpecs(count, seed)) {
    const pdf = path.join(dir, `${doc.name}.pdf`);
    const pages = printedPages(doc);
    if (doc.producer === "enscript") await enscriptPdf(doc, pages, pdf, dir);
    else await drawnPdf(doc, pages, pdf);
    out.push(
      ...(await exportedTruth(
        pdf,
        doc,
        (k) => `listing/${doc.producer}/${doc.style}/${doc.name}#t${k + 1}`,
        (t, n) => listingClasses(doc, t, n),
      )),
    );
  }
  return out;
});
