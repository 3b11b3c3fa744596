/**
 * What a spreadsheet shows for a cell: its value printed through its number format, the way Excel
 * and LibreOffice print it in the en-US locale (ECMA-376 Part 1 §18.8.31, numFmt codes). The
 * quality measures compare this text with what the PDF showed, so that a number stored as a number
 * ("1234.5" with "#,##0.00") counts as the "1,234.50" printed on the page, as it would for a person
 * looking at the workbook. Written here from the format grammar, independently of Folio's writer.
 *
 * Supported: up to four sections (positive;negative;zero;text), quoted literals, backslash escapes,
 * "_x" and "*x" (padding: dropped), digit placeholders 0 # ?, thousands separators, decimals,
 * percent, scientific E+/E-, and the date tokens y m d (with "m" after h or before s as minutes)
 * h s AM/PM. "General" prints up to 11 significant digits. Pure.
 */

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** Splits a format into sections at semicolons outside quotes. */
function sections(fmt: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quoted = false;
  for (let i = 0; i < fmt.length; i++) {
    const ch = fmt[i]!;
    if (ch === '"') quoted = !quoted;
    if (ch === "\\" && !quoted) {
      cur += ch + (fmt[i + 1] ?? "");
      i++;
      continue;
    }
    if (ch === ";" && !quoted) {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

/** The format's tokens: literals (already unquoted) and code characters. */
function tokens(section: string): { lit: boolean; text: string }[] {
  const out: { lit: boolean; text: string }[] = [];
  for (let i = 0; i < section.length; i++) {
    const ch = section[i]!;
    if (ch === '"') {
      const end = section.indexOf('"', i + 1);
      out.push({ lit: true, text: section.slice(i + 1, end < 0 ? undefined : end) });
      i = end < 0 ? section.length : end;
    } else if (ch === "\\") {
      out.push({ lit: true, text: section[i + 1] ?? "" });
      i++;
    } else if (ch === "_" || ch === "*") i++;
    else if (ch === "[") {
      const end = section.indexOf("]", i);
      const inner = section.slice(i + 1, end < 0 ? undefined : end);
      // [$€-407] is a currency symbol; [Red], [>=100] and other brackets print nothing.
      const currency = /^\$([^-\]]*)/.exec(inner);
      if (currency) out.push({ lit: true, text: currency[1]! });
      i = end < 0 ? section.length : end;
    } else out.push({ lit: false, text: ch });
  }
  return out;
}

const isDateCode = (section: string): boolean =>
  /[ymdhs]/i.test(
    tokens(section)
      .filter((t) => !t.lit)
      .map((t) => t.text)
      .join(""),
  );

function general(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e11) return String(n);
  const s = Number(n.toPrecision(11)).toString();
  return s;
}

function groupThousands(int: string): string {
  return int.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

interface NumberSpec {
  percent: number;
  scientific: boolean;
  /** The exponent's least digits: the placeholders after E+ or E- ("0.00E+00" two, "0E+0" one). */
  expDigits: number;
  /** "E+" signs a positive exponent too, "E-" only a negative one. */
  expPlus: boolean;
  scale: number;
  decimals: number;
  minDecimals: number;
  minInt: number;
  grouped: boolean;
}

/** What a numeric section's placeholders ask for. */
function numberSpec(code: string): NumberSpec {
  const sci = /E[+-]/i.exec(code);
  const numberPart = code.replace(/[^0#?.,E+-]/gi, "");
  const [intSpec = "", fracSpec = ""] = (sci ? numberPart.slice(0, sci.index) : numberPart).split(".");
  return {
    percent: (code.match(/%/g) ?? []).length,
    scientific: sci !== null,
    expPlus: sci?.[0].endsWith("+") ?? false,
    expDigits: sci ? Math.max(1, /^[0#?]+/.exec(numberPart.slice(numberPart.search(/E[+-]/i) + 2))?.[0].length ?? 1) : 0,
    // Trailing commas scale by thousands ("#,##0," shows thousands).
    scale: /,+$/.exec(intSpec)?.[0].length ?? 0,
    decimals: (fracSpec.match(/[0#?]/g) ?? []).length,
    minDecimals: (fracSpec.match(/0/g) ?? []).length,
    minInt: (intSpec.replace(/,+$/, "").match(/0/g) ?? []).length,
    grouped: intSpec.replace(/,+$/, "").includes(","),
  };
}

/** The digits of a non-negative number as the spec prints them. */
function digitsOf(value: number, spec: NumberSpec): string {
  if (spec.scientific) {
    const exp = value === 0 ? 0 : Math.floor(Math.log10(Math.abs(value)));
    const mant = (value / 10 ** exp).toFixed(spec.decimals);
    return `${mant}E${exp < 0 ? "-" : spec.expPlus ? "+" : ""}${String(Math.abs(exp)).padStart(spec.expDigits, "0")}`;
  }
  let [int = "", frac = ""] = value.toFixed(spec.decimals).split(".");
  while (frac.length > spec.minDecimals && frac.endsWith("0")) frac = frac.slice(0, -1);
  if (int === "0" && spec.minInt === 0) int = "";
  int = int.padStart(spec.minInt, "0");
  if (spec.grouped) int = groupThousands(int);
  return frac ? `${int}.${frac}` : int;
}

/** A number through one numeric section (sign handled by the caller). */
function formatNumber(n: number, section: string): string {
  const toks = tokens(section);
  const spec = numberSpec(
    toks
      .filter((t) => !t.lit)
      .map((t) => t.text)
      .join(""),
  );
  const digits = digitsOf((n * 100 ** spec.percent) / 1000 ** spec.scale, spec);
  // The digits replace the run of placeholders; every other code character prints as itself.
  const isPlaceholder = (t: { lit: boolean; text: string }): boolean =>
    !t.lit && (/[0#?.,]/.test(t.text) || (spec.scientific && /[Ee+-]/.test(t.text)));
  const first = toks.findIndex(isPlaceholder);
  if (first < 0) return toks.map((t) => t.text).join("") + digits;
  let last = toks.length - 1;
  while (!isPlaceholder(toks[last]!)) last--;
  const around = (ts: { lit: boolean; text: string }[]): string => ts.map((t) => t.text).join("");
  return around(toks.slice(0, first)) + digits + around(toks.slice(last + 1));
}

function pad2(n: number): string {
  return String(n).padStart(2, "0");
}

/** One run of a date code letter ("yyyy", "mmm", "d"…) printed for `d`; `minutes`: an "m" after h or before s. */
function dateCode(ch: string, run: number, d: Date, minutes: boolean, twelveHour: boolean): string {
  const month = d.getUTCMonth();
  switch (ch) {
    case "y":
      return run <= 2 ? pad2(d.getUTCFullYear() % 100) : String(d.getUTCFullYear());
    case "m":
      if (minutes && run <= 2) return run === 1 ? String(d.getUTCMinutes()) : pad2(d.getUTCMinutes());
      return [String(month + 1), pad2(month + 1), MONTHS[month]!.slice(0, 3), MONTHS[month]!, MONTHS[month]![0]!][Math.min(run, 5) - 1]!;
    case "d":
      return [String(d.getUTCDate()), pad2(d.getUTCDate()), DAYS[d.getUTCDay()]!.slice(0, 3), DAYS[d.getUTCDay()]!][Math.min(run, 4) - 1]!;
    case "h": {
      const h = twelveHour ? d.getUTCHours() % 12 || 12 : d.getUTCHours();
      return run === 1 ? String(h) : pad2(h);
    }
    case "s":
      return run === 1 ? String(d.getUTCSeconds()) : pad2(d.getUTCSeconds());
    default:
      return ch.repeat(run);
  }
}

/** A date (UTC, as exceljs reads it) through a date section. */
function formatDate(d: Date, section: string): string {
  // "AM/PM" is a literal for this purpose, printed as the half of the day.
  const parts = section.split(/(AM\/PM)/i);
  const twelveHour = parts.length > 1;
  const toks = parts.flatMap((p, i) => (i % 2 ? [{ lit: true, text: d.getUTCHours() < 12 ? "AM" : "PM" }] : tokens(p)));
  const letters = toks.map((t, i) => ({ t, i })).filter(({ t }) => !t.lit && /[a-z]/i.test(t.text));
  let out = "";
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    const ch = t.text.toLowerCase();
    if (t.lit || !/[ymdhs]/.test(ch)) {
      out += t.text;
      continue;
    }
    let run = 1;
    while (toks[i + run] && !toks[i + run]!.lit && toks[i + run]!.text.toLowerCase() === ch) run++;
    const before = letters
      .filter(({ i: k }) => k < i)
      .at(-1)
      ?.t.text.toLowerCase();
    const after = letters.find(({ i: k }) => k >= i + run)?.t.text.toLowerCase();
    out += dateCode(ch, run, d, before === "h" || after === "s", twelveHour);
    i += run - 1;
  }
  return out;
}

/** A string under a format: its text section (the fourth) with "@" standing for the string, else the string itself. */
function displayString(value: string, fmt: string): string {
  const textSection = fmt ? sections(fmt)[3] : undefined;
  if (!textSection) return value;
  return tokens(textSection)
    .map((t) => (t.lit ? t.text : t.text === "@" ? value : ""))
    .join("");
}

/** A number under a format: as a date when the format is one, else by the section for its sign (negative, zero, positive). */
function displayNumber(value: number, fmt: string): string {
  if (!fmt) return general(value);
  const secs = sections(fmt);
  if (isDateCode(secs[0]!)) {
    // A serial day number shown as a date (1900 system; exceljs gives Dates for these normally).
    return formatDate(new Date(Date.UTC(1899, 11, 30) + value * 86_400_000), secs[0]!);
  }
  if (value < 0 && secs[1] !== undefined) return formatNumber(-value, secs[1]);
  if (value === 0 && secs[2] !== undefined) return formatNumber(0, secs[2]);
  const text = formatNumber(Math.abs(value), secs[0]!);
  return value < 0 ? `-${text}` : text;
}

/** The text a spreadsheet shows for `value` under `numFmt` (undefined or "General": the plain value). */
export function displayText(value: number | string | boolean | Date, numFmt?: string): string {
  if (typeof value === "boolean") return value ? "TRUE" : "FALSE";
  const fmt = numFmt && numFmt !== "General" && numFmt !== "@" ? numFmt : "";
  if (typeof value === "string") return displayString(value, fmt);
  if (value instanceof Date) return fmt ? formatDate(value, sections(fmt)[0]!) : value.toISOString().slice(0, 10);
  return displayNumber(value, fmt);
}
