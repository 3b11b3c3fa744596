/**
 * Typing a table cell's printed text for a spreadsheet: numbers (any of the usual thousands and
 * decimal separators, negatives with a sign or in parentheses, percentages, a currency sign), dates
 * (ISO, day.month.year, month/day/year or day/month/year, "15 Mar 2024", "15-Mar-24",
 * "Mar 15, 2024"; a month name must be one, "Marble" is not March) and booleans become typed values with a number format that prints them as the PDF did; anything else
 * stays text. Separators are read without a locale: with both "," and "." the last is the decimal
 * point; a lone "," followed by exactly three digits groups thousands, otherwise it is a decimal
 * comma; a lone "." is a decimal point; every group of thousands follows the same separator ("7.497
 * 948,10" is two numbers in one cell, text). A number cell always holds a finite number. Pure.
 */

export type CellValue = { value: number; numFmt?: string } | { value: Date; numFmt: string } | { value: boolean } | { value: string };

/** ISO 4217 codes seen before amounts: any other three capitals ("ABN 48 123 123 124") are a label, not a currency. */
const CODES =
  "USD|EUR|GBP|JPY|CHF|CAD|AUD|NZD|CNY|HKD|SGD|INR|SEK|NOK|DKK|PLN|CZK|HUF|RUB|BRL|MXN|ZAR|KRW|TRY|AED|SAR|ILS|THB|TWD|IDR|MYR|PHP";
/** Signs of one character, printed against the digits or a space apart ("$12", "12 €", "₽ 100"). */
export const CURRENCY_SIGNS = "$€£¥₹₽₺₩₪₫₴₦₱฿₡₲₵₸";
/** Local signs of letters, a space apart from the digits ("R$ 10,00", "1 234,50 kr", "100 zł", "Rs. 1,200"). */
const WORD_SIGNS = String.raw`R\$|Rp|RM|Rs\.?|zł|kr|Kč|Ft|lei|лв`;
const CURRENCY = new RegExp(
  `^([${CURRENCY_SIGNS}]|(?:${CODES}|${WORD_SIGNS})\\s)?\\s*(.*?)\\s*([${CURRENCY_SIGNS}]|\\s(?:${CODES}|${WORD_SIGNS}))?$`,
  "u",
);
/** Groups of three digits, each after the same separator ("1 234 567"; "7.497 948" is two numbers), and a decimal part. */
const GROUPED = /^\d{1,3}([,.\u00a0\u202f' ])\d{3}(?:\1\d{3})*(?:([.,])(\d+))?$/u;
const PLAIN = /^(\d+)(?:([.,])(\d+))?$/;

/** A number in scientific notation as papers print it ("3e-5", "1.5E+10"): the mantissa's decimals, the exponent's sign. */
const SCIENTIFIC = /^\d+(?:\.(\d+))?[eE]([+-]?)\d+$/;

/** `scientific`: printed in scientific notation, its exponent signed "+" when positive or not. */
type ParsedNumber = { value: number; decimals: number; grouped: boolean; scientific?: { plus: boolean } };

/** Digits with a thousands separator and maybe a decimal part; null when both separators are the same. */
function groupedNumber(s: string, [, group, dec, frac]: RegExpExecArray): ParsedNumber | null {
  if (dec && dec === group) return null;
  const intPart = (dec ? s.slice(0, s.length - (frac!.length + 1)) : s).split(group!).join("");
  return { value: Number(`${intPart}${frac ? "." + frac : ""}`), decimals: frac?.length ?? 0, grouped: true };
}

/** Digits with maybe a decimal part; null for a zero-led integer ("007": an identifier, not a number). */
function plainNumber([, int, , frac]: RegExpExecArray): ParsedNumber | null {
  if (int!.length > 1 && int!.startsWith("0") && !frac) return null;
  return { value: Number(`${int}${frac ? "." + frac : ""}`), decimals: frac?.length ?? 0, grouped: false };
}

/** A number written with separators, or null. Returns its decimals and whether it was grouped. */
function parseNumber(s: string): ParsedNumber | null {
  const grouped = GROUPED.exec(s);
  // A single "." before three digits is a decimal point ("1.234"), not a thousands separator.
  const loneDot = grouped?.[1] === "." && !grouped[2] && s.split(".").length === 2;
  if (grouped && !loneDot) return groupedNumber(s, grouped);
  const plain = PLAIN.exec(s);
  if (plain) return plainNumber(plain);
  const sci = SCIENTIFIC.exec(s);
  if (sci) return { value: Number(s), decimals: sci[1]?.length ?? 0, grouped: false, scientific: { plus: sci[2] === "+" } };
  return null;
}

/** A currency sign or code as printed: the text, and whether it stood after the digits and a space apart from them. */
interface Currency {
  code: string;
  after: boolean;
  spaced: boolean;
}

function numberFormat(
  decimals: number,
  grouped: boolean,
  currency: Currency | undefined,
  percent: boolean,
  negatives: Negatives,
): string | undefined {
  let fmt = (grouped ? "#,##0" : "0") + (decimals > 0 ? "." + "0".repeat(decimals) : "");
  if (percent) fmt += "%";
  // The sign or code where it was printed, against the digits or a space apart ("$12", "EUR 12", "12 €", "12€").
  if (currency) {
    const { code, after, spaced } = currency;
    fmt = after ? `${fmt}"${spaced ? " " : ""}${code}"` : `"${code}${spaced ? " " : ""}"${fmt}`;
  }
  if (negatives === "parens") fmt = `${fmt};(${fmt})`;
  if (negatives === "after") fmt = `${fmt};${fmt}-`;
  return fmt === "0" ? undefined : fmt;
}

/**
 * The format that prints a number in scientific notation as the PDF did: "3e-5" as 3E-5, "1.50e+10"
 * as 1.50E+10, "2e4" as 2E4 (the mantissa's decimals kept, "E+" signing a positive exponent and
 * "E-" only a negative one; a spreadsheet's General format would print 0.00003 and 20000).
 */
const scientificFormat = (decimals: number, plus: boolean): string =>
  (decimals > 0 ? "0." + "0".repeat(decimals) : "0") + (plus ? "E+0" : "E-0");

/** How a number prints its sign when negative: before it, in parentheses, or after it ("1,234.56-"). */
type Negatives = "sign" | "parens" | "after";

/** A printed number's text without its decorations, and what they were. */
interface Stripped {
  digits: string;
  negative: boolean;
  parens: boolean;
  /** Signed after its digits ("1,234.56-", "1.234,56-"), as SAP lists and mainframe reports print a negative amount. */
  after: boolean;
  percent: boolean;
  currency: Currency | undefined;
}

/** A currency sign or code before or after the digits, taken off: the digits left, and the currency. */
function stripCurrency(s: string): { digits: string; currency: Currency | undefined } {
  const cur = CURRENCY.exec(s);
  const before = cur?.[1];
  const behind = cur?.[3];
  if (!cur || !(before || behind)) return { digits: s, currency: undefined };
  const [sign, rest] = before ? [before, s.slice(before.length)] : [behind!, s.slice(0, s.length - behind!.length)];
  const spaced = /\s/.test(sign) || (before ? /^\s/.test(rest) : /\s$/.test(rest));
  return { digits: cur[2]!, currency: { code: sign.trim(), after: !before, spaced } };
}

/** Takes off parentheses, a sign (before or after a currency, or after the digits), a percent sign and a currency sign or code. */
function stripDecorations(text: string): Stripped {
  let s = text.trim().replace(/\u2212/g, "-");
  const parens = /^\(.*\)$/.test(s);
  if (parens) s = s.slice(1, -1).trim();
  let negative = false;
  if (s.startsWith("-")) [negative, s] = [true, s.slice(1).trim()];
  const after = !negative && !parens && /\d-$/u.test(s);
  if (after) s = s.slice(0, -1);
  const percent = s.endsWith("%");
  if (percent) s = s.slice(0, -1).trim();
  const { digits, currency } = stripCurrency(s);
  s = digits;
  if (s.startsWith("-") && !negative) [negative, s] = [true, s.slice(1)];
  return { digits: s, negative, parens, after, percent, currency };
}

/**
 * The number of a cell's digits; an amount (with a currency sign, or grouped) may end with the
 * period of a sentence, as US Government tables end their last column ("$6,205."): punctuation,
 * not a decimal point. A plain "12." stays text (an item's number).
 */
function parseAmount(digits: string, currency: Currency | undefined): ParsedNumber | null {
  const n = parseNumber(digits);
  if (n || !/\d\.$/.test(digits)) return n;
  const before = parseNumber(digits.slice(0, -1));
  return before && (before.grouped || currency) ? before : null;
}

/** The numeric value of a printed number with sign, parentheses, percent and currency, or null. */
function typedNumber(text: string): { value: number; numFmt?: string } | null {
  const { digits, negative, parens, after, percent, currency } = stripDecorations(text);
  const n = parseAmount(digits, currency);
  // A number cell always holds a number: what Number() cannot read stays text. Signed after, only
  // an amount (decimals or groups): "2019-" is a year and what follows it.
  if (!n || !Number.isFinite(n.value) || (after && !n.grouped && !n.decimals)) return null;
  let value = n.value * (negative || parens || after ? -1 : 1);
  if (percent) value = Number((value / 100).toPrecision(15));
  const numFmt = n.scientific
    ? scientificFormat(n.decimals, n.scientific.plus)
    : numberFormat(n.decimals, n.grouped, currency, percent, parens ? "parens" : after ? "after" : "sign");
  return numFmt ? { value, numFmt } : { value };
}

const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];

/** 1–12 for a month name or its abbreviation ("Mar", "Sept", "March"), 0 for any other word. */
function monthOf(word: string): number {
  const w = word.toLowerCase();
  return w.length >= 3 ? MONTHS.findIndex((m) => m.startsWith(w)) + 1 : 0;
}

function validDate(y: number, m: number, d: number): Date | null {
  if (m < 1 || m > 12 || d < 1) return null;
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCMonth() === m - 1 && date.getUTCDate() === d ? date : null;
}

/** Two-digit years as spreadsheets read them: 00–29 → 2000s, 30–99 → 1900s. */
const fullYear = (y: string): number => (y.length === 2 ? (Number(y) < 30 ? 2000 : 1900) + Number(y) : Number(y));

type TypedDate = { value: Date; numFmt: string };

/** 2024-03-15 or 2024/03/15. */
function isoDate(m: RegExpExecArray, s: string): TypedDate | null {
  const date = validDate(Number(m[1]), Number(m[2]), Number(m[3]));
  return date ? { value: date, numFmt: s.includes("/") ? "yyyy/mm/dd" : "yyyy-mm-dd" } : null;
}

/** 15.03.2024, 3/15/24, 15-03-2024: numbers only. */
function numericDate(m: RegExpExecArray): TypedDate | null {
  const [a, sep, b, y] = [Number(m[1]), m[2]!, Number(m[3]), m[4]!];
  const yy = y.length === 2 ? "yy" : "yyyy";
  // Dots are day.month (European); slashes are month/day unless the first number cannot be a month.
  const dayFirst = sep === "." || a > 12;
  const date = dayFirst ? validDate(fullYear(y), b, a) : validDate(fullYear(y), a, b);
  // Printed without leading zeros ("5/3/2019") the format has none either (m/d/yyyy).
  const pad = m[1]!.length === 2 && m[3]!.length === 2;
  const [d, mo] = pad ? ["dd", "mm"] : ["d", "m"];
  const fmt = dayFirst ? `${d}${sep}${mo}${sep}${yy}` : `${mo}${sep}${d}${sep}${yy}`;
  return date ? { value: date, numFmt: fmt } : null;
}

/** 15 Mar 2024, 15-March-24. */
function dayMonthNameDate(m: RegExpExecArray): TypedDate | null {
  const [name, y] = [m[3]!, m[4]!];
  const month = monthOf(name);
  const date = month ? validDate(fullYear(y), month, Number(m[1])) : null;
  const fmt = [m[1]!.startsWith("0") ? "dd" : "d", name.length > 3 ? "mmmm" : "mmm", y.length === 2 ? "yy" : "yyyy"].join(m[2]);
  return date ? { value: date, numFmt: fmt } : null;
}

/** Mar 15, 2024. */
function monthNameDayDate(m: RegExpExecArray): TypedDate | null {
  const month = monthOf(m[1]!);
  const date = month ? validDate(Number(m[3]), month, Number(m[2])) : null;
  return date ? { value: date, numFmt: m[1]!.length > 3 ? "mmmm d, yyyy" : "mmm d, yyyy" } : null;
}

/** The date forms read, each with the reader of its match; the first form that matches decides. */
const DATE_FORMS: readonly [RegExp, (m: RegExpExecArray, s: string) => TypedDate | null][] = [
  [/^(\d{4})[-/](\d{1,2})[-/](\d{1,2})$/, isoDate],
  [/^(\d{1,2})([./-])(\d{1,2})\2(\d{4}|\d{2})$/, numericDate],
  [/^(\d{1,2})([ -])([A-Za-z]{3,9})\.?\2(\d{4}|\d{2})$/, dayMonthNameDate],
  [/^([A-Za-z]{3,9})\.? (\d{1,2}), (\d{4})$/, monthNameDayDate],
];

/** A printed date, or null. */
function typedDate(text: string): TypedDate | null {
  const s = text.trim();
  for (const [re, read] of DATE_FORMS) {
    const m = re.exec(s);
    if (m) return read(m, s);
  }
  return null;
}

/** The typed value of a cell's printed text. */
export function typeCell(text: string): CellValue {
  const s = text.trim();
  if (/^(true|false)$/i.test(s)) return { value: s.toLowerCase() === "true" };
  return typedDate(s) ?? typedNumber(s) ?? { value: s };
}
