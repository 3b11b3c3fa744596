/**
 * Just enough PDF object syntax (ISO 32000-1 §7.2 lexical conventions, §7.3 objects) to read the
 * catalog, page tree and trailer of a file that qpdf has just written, and to write new objects
 * for an incremental update. It is not a general PDF parser: arbitrary inputs are always opened
 * by qpdf. Literal tokens (numbers, names, strings, booleans, null) are kept byte for byte as
 * written, so an object read here is written back unchanged except for what we edit on purpose.
 *
 * Text is handled as latin1 JavaScript strings: one char per byte, so slicing and re-encoding
 * with Buffer.from(text, "latin1") never alters a byte.
 */

/** A PDF value as read from qpdf's output. */
export type PdfValue =
  | { kind: "dict"; entries: Map<string, PdfValue> }
  | { kind: "array"; items: PdfValue[] }
  | { kind: "ref"; num: number; gen: number }
  | { kind: "token"; text: string };

export type PdfDict = Extract<PdfValue, { kind: "dict" }>;
export type PdfRef = Extract<PdfValue, { kind: "ref" }>;

/** The input is not the PDF syntax we expected; always an internal error, never a client's. */
export class PdfSyntaxError extends Error {
  override readonly name = "PdfSyntaxError";
}

// §7.2.2: white-space characters and delimiters.
const WHITESPACE = new Set(["\0", "\t", "\n", "\f", "\r", " "]);
const DELIMITERS = new Set(["(", ")", "<", ">", "[", "]", "{", "}", "/", "%"]);
const INTEGER = /^[+-]?\d+$/;
/**
 * §7.3.3 numbers. Written so that no input backtracks more than linearly: the older
 * /^[+-]?(\d+\.?\d*|\.\d+)$/ took seconds on a 20,000-digit token ending in a letter (found by
 * the fuzzer, test/unit/parser-fuzz.test.ts).
 */
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
/** Deepest nesting of arrays and dictionaries we follow (qpdf's own JSON limit is similar). */
const MAX_NESTING = 500;

/** A cursor over latin1 text. */
export class PdfLexer {
  readonly text: string;
  pos: number;

  constructor(text: string, pos = 0) {
    this.text = text;
    this.pos = pos;
  }

  skipSpace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t[this.pos]!;
      if (WHITESPACE.has(c)) this.pos++;
      else if (c === "%") {
        while (this.pos < t.length && t[this.pos] !== "\n" && t[this.pos] !== "\r") this.pos++;
      } else break;
    }
  }

  /** The next regular token (a run of non-white, non-delimiter characters), or "" at a delimiter. */
  regular(): string {
    const start = this.pos;
    const t = this.text;
    while (this.pos < t.length && !WHITESPACE.has(t[this.pos]!) && !DELIMITERS.has(t[this.pos]!)) this.pos++;
    return t.slice(start, this.pos);
  }

  /** Reads `keyword`, failing otherwise. */
  expect(keyword: string): void {
    this.skipSpace();
    if (!this.text.startsWith(keyword, this.pos)) throw new PdfSyntaxError(`expected "${keyword}" at ${this.pos}`);
    this.pos += keyword.length;
  }

  /** Reads one value (§7.3); `num gen R` becomes a reference. */
  value(depth = 0): PdfValue {
    if (depth > MAX_NESTING) throw new PdfSyntaxError("objects nested too deeply");
    this.skipSpace();
    const c = this.text[this.pos];
    if (c === undefined) throw new PdfSyntaxError("unexpected end of data");
    return this.delimited(c, depth) ?? this.word(c);
  }

  /** A value that starts with a delimiter: a dictionary, array, string or name; null for any other. */
  private delimited(c: string, depth: number): PdfValue | null {
    if (this.text.startsWith("<<", this.pos)) return this.dict(depth);
    if (c === "[") return this.array(depth);
    if (c === "(") return { kind: "token", text: this.literalString() };
    if (c === "<") return { kind: "token", text: this.hexString() };
    if (c === "/") {
      this.pos++;
      return { kind: "token", text: `/${this.regular()}` };
    }
    return null;
  }

  /** A value that is a regular token: a reference, a number, true, false or null. */
  private word(c: string): PdfValue {
    const word = this.regular();
    if (word === "") throw new PdfSyntaxError(`unexpected "${c}" at ${this.pos}`);
    if (INTEGER.test(word)) {
      const ref = this.tryRef(word);
      if (ref) return ref;
    }
    if (NUMBER.test(word) || word === "true" || word === "false" || word === "null") return { kind: "token", text: word };
    throw new PdfSyntaxError(`unexpected token "${word.slice(0, 20)}"`);
  }

  private tryRef(num: string): PdfRef | null {
    const save = this.pos;
    this.skipSpace();
    const gen = this.regular();
    if (INTEGER.test(gen)) {
      this.skipSpace();
      if (this.regular() === "R") return { kind: "ref", num: Number(num), gen: Number(gen) };
    }
    this.pos = save;
    return null;
  }

  private dict(depth: number): PdfDict {
    this.pos += 2;
    const entries = new Map<string, PdfValue>();
    for (;;) {
      this.skipSpace();
      if (this.text.startsWith(">>", this.pos)) {
        this.pos += 2;
        return { kind: "dict", entries };
      }
      if (this.text[this.pos] !== "/") throw new PdfSyntaxError(`expected a name key at ${this.pos}`);
      this.pos++;
      const key = `/${this.regular()}`;
      entries.set(key, this.value(depth + 1));
    }
  }

  private array(depth: number): PdfValue {
    this.pos++;
    const items: PdfValue[] = [];
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] === "]") {
        this.pos++;
        return { kind: "array", items };
      }
      items.push(this.value(depth + 1));
    }
  }

  /** §7.3.4.2: balanced parentheses, backslash escapes. Returns the token as written. */
  private literalString(): string {
    const t = this.text;
    const start = this.pos;
    let depth = 0;
    for (; this.pos < t.length; this.pos++) {
      const c = t[this.pos];
      if (c === "\\") this.pos++;
      else if (c === "(") depth++;
      else if (c === ")" && --depth === 0) return t.slice(start, ++this.pos);
    }
    throw new PdfSyntaxError("unterminated string");
  }

  /** §7.3.4.3. */
  private hexString(): string {
    const end = this.text.indexOf(">", this.pos);
    if (end < 0) throw new PdfSyntaxError("unterminated hex string");
    const token = this.text.slice(this.pos, end + 1);
    this.pos = end + 1;
    return token;
  }
}

/** Writes a value back in PDF syntax. */
export function serialize(v: PdfValue): string {
  switch (v.kind) {
    case "token":
      return v.text;
    case "ref":
      return `${v.num} ${v.gen} R`;
    case "array":
      return `[ ${v.items.map(serialize).join(" ")} ]`;
    case "dict": {
      const parts: string[] = [];
      for (const [k, val] of v.entries) parts.push(`${k} ${serialize(val)}`);
      return `<< ${parts.join(" ")} >>`;
    }
  }
}

/** A real number as PDF writes it (§7.3.3: no exponent form). */
export function pdfNumber(n: number): string {
  if (!Number.isFinite(n)) return "0";
  if (Number.isInteger(n)) return String(n);
  const s = n.toFixed(4).replace(/0+$/, "").replace(/\.$/, "");
  return s === "-0" ? "0" : s;
}

/**
 * A text string (§7.9.2.2): printable ASCII as it is, anything else as UTF-16BE with a byte order
 * mark, which every conforming reader decodes. Both are literal strings (§7.3.4.2) with `\`, `(`
 * and `)` escaped, and CR and LF escaped too, since a reader turns an unescaped CR into LF; raw
 * UTF-16 bytes are half the size of hex, which counts with thousands of bookmarks.
 */
export function pdfTextString(s: string): string {
  if (/^[\x20-\x7e]*$/.test(s)) return `(${s.replace(/[\\()]/g, (c) => `\\${c}`)})`;
  const buf = Buffer.alloc(2 + s.length * 2);
  buf[0] = 0xfe;
  buf[1] = 0xff;
  for (let i = 0; i < s.length; i++) buf.writeUInt16BE(s.charCodeAt(i), 2 + i * 2);
  const escaped = buf.toString("latin1").replace(/[\\()\r\n]/g, (c) => (c === "\r" ? "\\r" : c === "\n" ? "\\n" : `\\${c}`));
  return `(${escaped})`;
}

/** The entry `key` of a dictionary value, if `v` is one. */
export function dictGet(v: PdfValue | undefined, key: string): PdfValue | undefined {
  return v?.kind === "dict" ? v.entries.get(key) : undefined;
}

/** The integer a token holds, or null. */
export function asInt(v: PdfValue | undefined): number | null {
  return v?.kind === "token" && INTEGER.test(v.text) ? Number(v.text) : null;
}
