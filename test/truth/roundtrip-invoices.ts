/**
 * Truth at scale, part 5: invoices printed from HTML by Chromium, the way web shops, billing
 * services and accounting apps make them (an HTML template printed to PDF is the most common
 * producer of the invoices users convert). A page holds the seller's address, the invoice's number
 * and dates, "Bill to" and "Ship to" blocks side by side, the line items, a totals block under the
 * amounts, payment terms and bank details. The line items vary as templates do: which columns
 * (a row number, an item code, a unit, a discount, a tax rate), how the table is drawn (every cell
 * ruled, a rule under each row, striped rows with no rules, a dark header band, nothing at all),
 * descriptions wrapped or with a smaller detail line under them, amounts in several currency
 * notations (thousands grouped by spaces and a local sign after them too: "2 076,00 zł"), totals in a table of their own or as rows of the items table under the amounts, long
 * invoices over pages with the header repeated (Chromium repeats a <thead>). Chromium writes tagged
 * PDF; half the corpus has its structure tree taken out, as untagged producers (wkhtmltopdf, older
 * browsers) write, so that both the tagged reading and the geometric one are tested.
 *
 * The truth is the text each cell shows (a description and its detail line joined by a space).
 * Checked word by word against poppler's text of the PDF before it is used (roundtrip.ts
 * exportedTruth). The header, addresses and notes are not scored as tables, but their words are
 * on the page, so the recall checks cover them.
 */
import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { PDFDocument, PDFName } from "pdf-lib";
import { prng } from "../helpers/prng.ts";
import type { TableClass, TruthTable } from "../helpers/table-truth.ts";
import { exportedTruth, memoisedCorpus } from "./roundtrip.ts";
import { chance, group, pick, words, type Rand, type SpecCell } from "./roundtrip-specs.ts";

const run = promisify(execFile);

type Column = "no" | "code" | "description" | "qty" | "unit" | "price" | "discount" | "tax" | "amount";
type Style = "grid" | "lines" | "zebra" | "band" | "plain";

export interface InvoiceTable {
  kind: "items" | "totals";
  /** Header row (items only) then data rows; every cell present. */
  rows: (SpecCell | null)[][];
  columns: Column[];
  /** Rows (indices) that are totals set under the amounts inside the items table. */
  totalRows: number[];
  wrapped: boolean;
}

export interface InvoiceSpec {
  name: string;
  split: "tune" | "holdout";
  tables: InvoiceTable[];
  style: Style;
  font: string;
  fontSize: number;
  paper: "A4" | "Letter";
  /** Totals as rows of the items table (under the amounts) rather than a table of their own. */
  inlineTotals: boolean;
  /** Chromium's structure tree kept (its default), or taken out as untagged producers write (wkhtmltopdf, older browsers). */
  tagged: boolean;
  turn: "none";
  seller: string[];
  billTo: string[];
  shipTo: string[] | null;
  meta: [string, string][];
  notes: string[];
}

const FONTS = ["Liberation Sans", "Liberation Serif", "DejaVu Sans", "Carlito", "Nimbus Sans", "Caladea"];
const STYLES: Style[] = ["grid", "lines", "zebra", "band", "plain"];
const HEADERS: Record<Column, string[]> = {
  no: ["#", "No.", "Line"],
  code: ["Item code", "SKU", "Part no.", "Ref."],
  description: ["Description", "Item", "Service", "Product / service"],
  qty: ["Qty", "Quantity", "Hours"],
  unit: ["Unit", "UoM"],
  price: ["Unit price", "Rate", "Price"],
  discount: ["Disc.", "Discount"],
  tax: ["VAT", "Tax", "GST"],
  amount: ["Amount", "Total", "Line total", "Net amount"],
};
const UNITS = ["pcs", "ea", "h", "kg", "box", "m", "set"];
const CITIES = ["Rotterdam", "Leeds", "Lyon", "Porto", "Austin", "Graz", "Aarhus", "Dundee", "Tampere"];
const STREETS = ["Harbour Road", "Mill Lane", "Station Street", "Quay Side", "Orchard Way", "Market Square"];

/** How a money amount is written: the sign, the separators, where the sign stands. */
interface Money {
  format: (v: number) => string;
  code: string;
}
const money = (v: number, thousands: string, decimal: string): string => {
  const cents = Math.round(Math.abs(v) * 100);
  return `${v < 0 ? "-" : ""}${group(Math.floor(cents / 100), thousands)}${decimal}${String(cents % 100).padStart(2, "0")}`;
};
const MONEY: Money[] = [
  { code: "USD", format: (v) => (v < 0 ? `-$${money(-v, ",", ".")}` : `$${money(v, ",", ".")}`) },
  { code: "GBP", format: (v) => (v < 0 ? `-£${money(-v, ",", ".")}` : `£${money(v, ",", ".")}`) },
  { code: "EUR", format: (v) => `${money(v, ".", ",")} €` },
  { code: "EUR", format: (v) => `€${money(v, ",", ".")}` },
  { code: "USD", format: (v) => money(v, ",", ".") },
  { code: "CHF", format: (v) => `CHF ${money(v, "'", ".")}` },
  { code: "EUR", format: (v) => `${money(v, "\u202f", ",")} €` },
  { code: "SEK", format: (v) => `${money(v, " ", ",")} kr` },
  { code: "PLN", format: (v) => `${money(v, "\u00a0", ",")} zł` },
];

const cell = (text: string): SpecCell => ({ value: text, text });
const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

function address(rand: Rand): string[] {
  return [
    `${words(rand, 2, false)} ${pick(rand, ["Ltd", "GmbH", "B.V.", "Inc.", "S.A.", "Oy"])}`,
    `${1 + Math.floor(rand() * 240)} ${pick(rand, STREETS)}`,
    `${Math.floor(rand() * 9000 + 1000)} ${pick(rand, CITIES)}`,
  ];
}

/** Which columns an invoice's items have: a description, a quantity, a price and an amount always. */
function itemColumns(rand: Rand): Column[] {
  const columns: Column[] = [];
  if (chance(rand, 0.4)) columns.push("no");
  if (chance(rand, 0.45)) columns.push("code");
  columns.push("description", "qty");
  if (chance(rand, 0.35)) columns.push("unit");
  columns.push("price");
  if (chance(rand, 0.25)) columns.push("discount");
  if (chance(rand, 0.35)) columns.push("tax");
  columns.push("amount");
  return columns;
}

/** How an invoice's item rows are drawn: quantities in hours, detail lines, long descriptions, one tax rate. */
interface ItemStyle {
  decimalQty: boolean;
  details: boolean;
  long: boolean;
  taxRate: number;
}

/** Item row `i`: its cells, its amount, and whether its description takes more than a line. */
function itemRow(
  rand: Rand,
  m: Money,
  columns: readonly Column[],
  i: number,
  st: ItemStyle,
): { cells: SpecCell[]; amount: number; wrapped: boolean } {
  const qty = st.decimalQty ? Math.round(rand() * 40 * 4) / 4 + 0.25 : 1 + Math.floor(rand() ** 2 * 120);
  const price = Math.round((rand() ** 2 * 2400 + 0.5) * 100) / 100;
  const disc = columns.includes("discount") && chance(rand, 0.4) ? pick(rand, [5, 10, 15, 25]) : 0;
  const amount = Math.round(qty * price * (1 - disc / 100) * 100) / 100;
  let description = capital(words(rand, st.long ? 5 + Math.floor(rand() * 8) : 2 + Math.floor(rand() * 3), false).toLowerCase());
  let wrapped = st.long && description.split(" ").length > 7;
  if (st.details && chance(rand, 0.6)) {
    description += ` ${pick(rand, ["Period", "Batch", "Serial", "Order"])}: ${Math.floor(rand() * 90000 + 10000)}`;
    wrapped = true;
  }
  const text: Record<Column, () => string> = {
    no: () => String(i + 1),
    code: () => `${pick(rand, ["AX", "KT", "PR", "SV"])}-${Math.floor(rand() * 90000 + 10000)}`,
    description: () => description,
    qty: () => (st.decimalQty ? qty.toFixed(2) : String(qty)),
    unit: () => pick(rand, UNITS),
    price: () => m.format(price),
    discount: () => (disc ? `${disc}%` : "—"),
    tax: () => `${st.taxRate}%`,
    amount: () => m.format(amount),
  };
  return { cells: columns.map((c) => cell(text[c]())), amount, wrapped };
}

function itemsTable(rand: Rand, m: Money, count: number, inline: boolean): { items: InvoiceTable; totals: InvoiceTable } {
  const columns = itemColumns(rand);
  const st: ItemStyle = {
    decimalQty: chance(rand, 0.3),
    details: chance(rand, 0.35),
    long: chance(rand, 0.35),
    taxRate: pick(rand, [5, 7, 10, 19, 20, 21, 25]),
  };
  let net = 0;
  let tax = 0;
  let wrapped = false;
  const body: SpecCell[][] = [];
  for (let i = 0; i < count; i++) {
    const row = itemRow(rand, m, columns, i, st);
    net += row.amount;
    tax += (row.amount * st.taxRate) / 100;
    wrapped ||= row.wrapped;
    body.push(row.cells);
  }
  const shipping = chance(rand, 0.3) ? Math.round(rand() * 9000) / 100 + 5 : 0;
  const totalRows: [string, string][] = [
    [pick(rand, ["Subtotal", "Net total", "Total excl. tax"]), m.format(net)],
    ...(shipping ? [[pick(rand, ["Shipping", "Freight", "Delivery"]), m.format(shipping)] as [string, string]] : []),
    [`${pick(rand, ["VAT", "Tax", "Sales tax"])} ${st.taxRate}%`, m.format(tax)],
    [pick(rand, ["Total", "Total due", "Amount due", `Total ${m.code}`]), m.format(net + shipping + tax)],
  ];
  const header = columns.map((c) => cell(pick(rand, HEADERS[c])));
  const width = columns.length;
  const items: InvoiceTable = {
    kind: "items",
    rows: [
      header,
      ...body,
      // Inline totals: the label under the unit price, the amount under the amounts.
      ...(inline ? totalRows.map(([l, v]) => columns.map((_, c) => cell(c === width - 2 ? l : c === width - 1 ? v : ""))) : []),
    ],
    columns,
    totalRows: inline ? totalRows.map((_, k) => 1 + body.length + k) : [],
    wrapped,
  };
  const totals: InvoiceTable = {
    kind: "totals",
    rows: totalRows.map(([l, v]) => [cell(l), cell(v)]),
    columns: [],
    totalRows: [],
    wrapped: false,
  };
  return { items, totals };
}

/** The invoices of the corpus: `count` documents from `seed`; every third is held out. */
export function invoiceSpecs(count: number, seed = 61): InvoiceSpec[] {
  const rand = prng(seed);
  return Array.from({ length: count }, (_, i): InvoiceSpec => {
    const m = pick(rand, MONEY);
    const inlineTotals = chance(rand, 0.35);
    const lines = chance(rand, 0.2) ? 28 + Math.floor(rand() * 25) : 2 + Math.floor(rand() * 12);
    const { items, totals } = itemsTable(rand, m, lines, inlineTotals);
    const day = 1 + Math.floor(rand() * 27);
    const month = pick(rand, ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]);
    return {
      name: `invoice-${String(i + 1).padStart(3, "0")}`,
      split: i % 3 === 2 ? "holdout" : "tune",
      tables: inlineTotals ? [items] : [items, totals],
      style: pick(rand, STYLES),
      font: pick(rand, FONTS),
      fontSize: pick(rand, [10, 11, 12, 13, 14]),
      paper: chance(rand, 0.6) ? "A4" : "Letter",
      inlineTotals,
      tagged: chance(rand, 0.5),
      turn: "none",
      seller: [...address(rand), `VAT no. ${pick(rand, ["GB", "NL", "DE", "FR"])}${Math.floor(rand() * 9e8 + 1e8)}`],
      billTo: address(rand),
      shipTo: chance(rand, 0.5) ? address(rand) : null,
      meta: [
        [
          pick(rand, ["Invoice no.", "Invoice number", "Invoice #"]),
          `INV-2026-${String(Math.floor(rand() * 9000 + 100)).padStart(4, "0")}`,
        ],
        ["Date", `${day} ${month} 2026`],
        ["Due date", `${day} ${month} 2027`],
        ...(chance(rand, 0.5) ? [["Customer ID", `C${Math.floor(rand() * 90000 + 10000)}`] as [string, string]] : []),
      ],
      notes: [
        `Payment terms: ${pick(rand, ["30", "14", "60"])} days net. Please quote the invoice number with your payment.`,
        `IBAN ${pick(rand, ["GB29", "NL91", "DE89"])} ${Math.floor(rand() * 9000 + 1000)} ${Math.floor(rand() * 9000 + 1000)} ${Math.floor(rand() * 9000 + 1000)} · BIC ${pick(rand, ["ABNANL2A", "DEUTDEFF", "NWBKGB2L"])}`,
        `${words(rand, 8, false)}.`,
      ],
    };
  });
}

/** An invoice's tables' classes: how the items are drawn, "multi-line" for wrapped descriptions, "invoice". */
export function invoiceClasses(doc: InvoiceSpec, t: InvoiceTable, pages: number): TableClass[] {
  const ruled = t.kind === "totals" ? "unruled" : doc.style === "grid" ? "ruled" : doc.style === "lines" ? "partly-ruled" : "unruled";
  const out: TableClass[] = [ruled, "invoice"];
  if (t.wrapped) out.push("multi-line");
  if (doc.tables.length > 1) out.push("multi-table");
  if (pages > 1 && t.kind === "items") out.push("multi-page");
  return out;
}

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const STYLE_CSS: Record<Style, string> = {
  // Totals set as rows of a ruled table keep its rules (drawn outside the grid, they would be a
  // block of their own).
  grid: "table.items td, table.items th { border: 1px solid #444; } table.items tr.total td.num { border: 1px solid #444; }",
  lines: "table.items td, table.items th { border-bottom: 1px solid #999; } table.items th { border-bottom: 2px solid #222; }",
  zebra: "table.items tbody tr:nth-child(even) td { background: #eef1f5; } table.items th { background: #dde3ea; }",
  band: "table.items th { background: #1f3a5f; color: #fff; } table.items tbody tr:nth-child(odd) td { background: #f4f4f4; }",
  plain: "table.items th { font-weight: bold; }",
};

function invoiceHtml(doc: InvoiceSpec): string {
  const items = doc.tables[0]!;
  const numeric = new Set<Column>(["no", "qty", "price", "discount", "tax", "amount"]);
  const cls = (col: Column, total: boolean): string => (numeric.has(col) || total ? "num" : col === "code" || col === "unit" ? "code" : "");
  const [head, ...body] = items.rows;
  const th = head!.map((c, k) => `<th class="${cls(items.columns[k]!, false)}">${esc(c!.text)}</th>`).join("");
  const tr = (row: (SpecCell | null)[], r: number): string => {
    const total = items.totalRows.includes(r + 1);
    return `<tr${total ? ' class="total"' : ""}>${row
      .map((c, k) => {
        const col = items.columns[k]!;
        const text = c?.text ?? "";
        if (col === "description" && !total) {
          const m = /^(.*) ((?:Period|Batch|Serial|Order): \d+)$/.exec(text);
          if (m) return `<td>${esc(m[1]!)}<div class="detail">${esc(m[2]!)}</div></td>`;
        }
        return `<td class="${cls(col, total)}">${esc(text)}</td>`;
      })
      .join("")}</tr>`;
  };
  const totals = doc.inlineTotals
    ? ""
    : `<table class="totals">${doc.tables[1]!.rows.map((r, k, all) => `<tr${k === all.length - 1 ? ' class="grand"' : ""}><td>${esc(r[0]!.text)}</td><td class="num">${esc(r[1]!.text)}</td></tr>`).join("")}</table>`;
  const block = (title: string, lines: string[]): string =>
    `<div class="block"><h3>${title}</h3>${lines.map((l) => `<div>${esc(l)}</div>`).join("")}</div>`;
  return `<!doctype html><html><head><meta charset="utf-8"><title>${doc.name}</title><style>
@page { size: ${doc.paper}; margin: 16mm 14mm; }
body { font-family: "${doc.font}"; font-size: ${doc.fontSize}px; color: #222; }
.top { display: flex; justify-content: space-between; }
h1 { font-size: 2.2em; margin: 0 0 0.3em; letter-spacing: 0.05em; }
h3 { font-size: 1em; margin: 0 0 0.3em; color: #555; text-transform: uppercase; }
.meta td { padding: 1px 6px; } .meta td:first-child { color: #666; }
.parties { display: flex; gap: 40px; margin: 24px 0; } .block { min-width: 180px; }
table.items { width: 100%; border-collapse: collapse; margin-top: 8px; }
table.items th, table.items td { padding: 5px 6px; vertical-align: top; text-align: left; }
table.items .num { text-align: right; white-space: nowrap; } table.items .code { white-space: nowrap; }
table.items tr { break-inside: avoid; }
table.items tr.total td { border: none; background: none; font-weight: bold; }
.detail { font-size: 0.85em; color: #666; }
table.totals { margin: 12px 0 0 auto; border-collapse: collapse; min-width: 40%; }
table.totals td { padding: 3px 6px; } table.totals td.num { text-align: right; }
table.totals tr.grand td { font-weight: bold; border-top: 2px solid #222; }
.notes { margin-top: 28px; font-size: 0.9em; color: #444; }
${STYLE_CSS[doc.style]}
</style></head><body>
<div class="top"><div>${doc.seller.map((l, k) => (k ? `<div>${esc(l)}</div>` : `<div><b>${esc(l)}</b></div>`)).join("")}</div>
<div><h1>INVOICE</h1><table class="meta">${doc.meta.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join("")}</table></div></div>
<div class="parties">${block("Bill to", doc.billTo)}${doc.shipTo ? block("Ship to", doc.shipTo) : ""}</div>
<table class="items"><thead><tr>${th}</tr></thead><tbody>${body.map(tr).join("")}</tbody></table>
${totals}
<div class="notes">${doc.notes.map((n) => `<p>${esc(n)}</p>`).join("")}</div>
</body></html>`;
}

/** Prints one HTML file to PDF with Debian's Chromium, headless, no header or footer. */
async function printHtml(html: string, pdf: string): Promise<void> {
  await run(
    "chromium",
    [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-dev-shm-usage",
      "--no-pdf-header-footer",
      `--user-data-dir=${path.join(path.dirname(pdf), ".chromium")}`,
      `--print-to-pdf=${pdf}`,
      `file://${html}`,
    ],
    { timeout: 120_000 },
  );
}

/** Takes the structure tree out of a PDF: the page is then read by its geometry alone. */
async function untag(pdf: string): Promise<void> {
  const doc = await PDFDocument.load(await readFile(pdf), { updateMetadata: false });
  for (const key of ["StructTreeRoot", "MarkInfo"]) doc.catalog.delete(PDFName.of(key));
  await writeFile(pdf, await doc.save());
}

/** Builds the invoices' corpus in `dir` (30 invoices from seed 61 unless told) and returns its truth tables. */
export const buildInvoiceRoundTrip = memoisedCorpus({ count: 30, seed: 61 }, async (dir, count, seed) => {
  const htmlDir = path.join(dir, "html");
  await mkdir(htmlDir, { recursive: true });
  const out: TruthTable[] = [];
  for (const doc of invoiceSpecs(count, seed)) {
    const html = path.join(htmlDir, `${doc.name}.html`);
    const pdf = path.join(dir, `${doc.name}.pdf`);
    await writeFile(html, invoiceHtml(doc));
    await printHtml(html, pdf);
    if (!doc.tagged) await untag(pdf);
    out.push(
      ...(await exportedTruth(
        pdf,
        doc,
        (k) => `invoice/${doc.name}#${doc.tables[k]!.kind}${doc.tagged ? "-tagged" : ""}`,
        (t, pages) => invoiceClasses(doc, t, pages),
      )),
    );
  }
  return out;
});
