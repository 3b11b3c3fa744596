/**
 * A small PDF content-stream tokenizer (ISO 32000-1 §7.2 lexical conventions, §7.8.2 content
 * streams): enough to follow the operators that decide where images land on a page (q, Q, cm, Do)
 * while skipping everything else correctly — literal strings with nested parentheses and escapes,
 * hex strings, comments, arrays, dictionaries and inline images, whose binary data must never be
 * read as operators.
 */

/** An operand as far as we care: a number, a name (decoded), or anything else. */
export type Operand = number | { name: string } | null;

/** Called once per operator with its operands (in order). */
export type OperatorHandler = (op: string, operands: readonly Operand[]) => void;

// ISO 32000-1 Table 1 (white-space) and Table 2 (delimiters).
const WHITE = new Uint8Array(256);
for (const c of [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]) WHITE[c] = 1;
const DELIM = new Uint8Array(256);
for (const c of "()<>[]{}/%") DELIM[c.charCodeAt(0)] = 1;

const isRegular = (c: number): boolean => WHITE[c] === 0 && DELIM[c] === 0;

function hexVal(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/** Decodes a name token's bytes (without the slash); `#xx` is a hex escape (§7.3.5, PDF 1.2+). */
function decodeName(b: Uint8Array, start: number, end: number): string {
  let s = "";
  for (let i = start; i < end; i++) {
    const c = b[i]!;
    if (c === 0x23 && i + 2 < end && hexVal(b[i + 1]!) >= 0 && hexVal(b[i + 2]!) >= 0) {
      s += String.fromCharCode(hexVal(b[i + 1]!) * 16 + hexVal(b[i + 2]!));
      i += 2;
    } else {
      s += String.fromCharCode(c);
    }
  }
  return s;
}

/** Index just past a literal string starting at `i` (which is the opening parenthesis). */
function skipLiteralString(b: Uint8Array, i: number): number {
  let depth = 0;
  for (; i < b.length; i++) {
    const c = b[i];
    if (c === 0x5c)
      i++; // backslash escapes the next byte, including parentheses
    else if (c === 0x28) depth++;
    else if (c === 0x29 && --depth === 0) return i + 1;
  }
  return b.length;
}

/**
 * Index just past the `EI` that ends an inline image whose data starts at `i` (§8.9.7). Without a
 * length (/L, PDF 2.0) the data has no declared end, so, like other readers, we take the first
 * `EI` between white-space that is followed by text that looks like content, not binary data.
 */
function skipInlineData(b: Uint8Array, i: number, length: number | null): number {
  const declared = length !== null && length >= 0 ? endAtLength(b, i + length) : null;
  if (declared !== null) return declared;
  for (let j = i; j + 1 < b.length; j++) if (isEndOfData(b, i, j)) return j + 2;
  return b.length;
}

/** Index past an `EI` found (after white-space) where the declared length ends the data, else null. */
function endAtLength(b: Uint8Array, j: number): number | null {
  const m = /^\s*EI(?=[\s]|$)/.exec(Buffer.from(b.subarray(j, j + 16)).toString("latin1"));
  return m ? j + m[0].length : null;
}

/** Whether the `EI` at `j` ends data that started at `i`: white-space on both sides, and no binary bytes in the 32 after it. */
function isEndOfData(b: Uint8Array, i: number, j: number): boolean {
  if (b[j] !== 0x45 || b[j + 1] !== 0x49) return false;
  if (j > i && WHITE[b[j - 1]!] === 0) return false;
  if (j + 2 < b.length && WHITE[b[j + 2]!] === 0) return false;
  for (let k = j + 2; k < Math.min(b.length, j + 34); k++) {
    const c = b[k]!;
    if ((c < 0x20 && WHITE[c] === 0) || c > 0x7e) return false;
  }
  return true;
}

type Token =
  | { kind: "open" }
  | { kind: "close" }
  | { kind: "string" }
  | { kind: "name"; value: string }
  | { kind: "number"; value: number }
  | { kind: "keyword"; value: string };

interface Lexer {
  b: Uint8Array;
  i: number;
}

/**
 * §7.3.3 numbers. Written so that no input backtracks more than linearly: the older
 * /^[+-]?(\d+\.?\d*|\.\d+)$/ took seconds on a 20,000-digit token ending in a letter (found by
 * the fuzzer, test/unit/parser-fuzz.test.ts).
 */
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/** A token that starts with a delimiter (§7.2.2), or null for a stray one (skipped). */
function lexDelimited(l: Lexer, c: number): Token | null {
  const b = l.b;
  const next = b[l.i + 1];
  if (c === 0x28) {
    l.i = skipLiteralString(b, l.i);
    return { kind: "string" };
  }
  if ((c === 0x3c && next === 0x3c) || (c === 0x3e && next === 0x3e)) {
    l.i += 2;
    return { kind: c === 0x3c ? "open" : "close" };
  }
  if (c === 0x3c) {
    while (l.i < b.length && b[l.i] !== 0x3e) l.i++;
    l.i++;
    return { kind: "string" };
  }
  l.i++;
  if (c === 0x5b || c === 0x7b) return { kind: "open" };
  if (c === 0x5d || c === 0x7d) return { kind: "close" };
  return null; // a stray ")" or ">"
}

/** The next token, or null at the end. Strings, hex strings and comments are skipped whole. */
function lex(l: Lexer): Token | null {
  const b = l.b;
  while (l.i < b.length) {
    const c = b[l.i]!;
    if (WHITE[c]) {
      l.i++;
    } else if (c === 0x25) {
      while (l.i < b.length && b[l.i] !== 0x0a && b[l.i] !== 0x0d) l.i++;
    } else if (c === 0x2f) {
      const start = ++l.i;
      while (l.i < b.length && isRegular(b[l.i]!)) l.i++;
      return { kind: "name", value: decodeName(b, start, l.i) };
    } else if (DELIM[c]) {
      const t = lexDelimited(l, c);
      if (t) return t;
    } else {
      const start = l.i;
      while (l.i < b.length && isRegular(b[l.i]!)) l.i++;
      const token = Buffer.from(b.subarray(start, l.i)).toString("latin1");
      return NUMBER.test(token) ? { kind: "number", value: Number(token) } : { kind: "keyword", value: token };
    }
  }
  return null;
}

/** What the tokens since the last operator left: its operands, and what an inline image needs. */
interface ScanState {
  lexer: Lexer;
  onOperator: OperatorHandler;
  operands: Operand[];
  /** Inside [ ] or << >>: tokens are parts of one operand. */
  nesting: number;
  inlineLength: number | null;
  lastName: string | null;
}

/** A token that is (part of) an operand. Arrays and dictionaries count as one operand, their content unread (null). */
function operandToken(s: ScanState, t: Exclude<Token, { kind: "keyword" }>): void {
  if (t.kind === "open") s.nesting++;
  else if (t.kind === "close") {
    if (s.nesting > 0 && --s.nesting === 0) s.operands.push(null);
  } else if (t.kind === "string") {
    if (!s.nesting) s.operands.push(null);
  } else if (t.kind === "name") {
    s.lastName = t.value;
    if (!s.nesting) s.operands.push({ name: t.value });
  } else {
    if (!s.nesting) s.operands.push(t.value);
    // Inside an inline image dictionary, /L (or /Length) gives the data length (PDF 2.0).
    if (s.lastName === "L" || s.lastName === "Length") s.inlineLength = t.value;
  }
}

/** A keyword: true/false/null as an operand, the inline image's ID (its data skipped, reported as EI), or an operator. */
function keywordToken(s: ScanState, value: string): void {
  if (s.nesting) return; // true/false/null or junk inside an array or dictionary
  if (value === "true" || value === "false" || value === "null") {
    s.operands.push(null);
  } else if (value === "ID") {
    // One white-space byte separates ID from the data (§8.9.7).
    s.lexer.i = skipInlineData(s.lexer.b, s.lexer.i + 1, s.inlineLength);
    s.operands.length = 0;
    s.onOperator("EI", []);
  } else {
    if (value === "BI") s.inlineLength = null;
    s.onOperator(value, s.operands);
    s.operands.length = 0;
  }
}

/**
 * Tokenizes `bytes` and calls `onOperator` for each operator. Never throws on malformed input: an
 * unterminated token simply ends the stream, as a viewer would stop drawing there.
 */
export function forEachOperator(bytes: Uint8Array, onOperator: OperatorHandler): void {
  const s: ScanState = { lexer: { b: bytes, i: 0 }, onOperator, operands: [], nesting: 0, inlineLength: null, lastName: null };
  for (let t = lex(s.lexer); t; t = lex(s.lexer)) {
    if (t.kind === "keyword") keywordToken(s, t.value);
    else operandToken(s, t);
  }
}
