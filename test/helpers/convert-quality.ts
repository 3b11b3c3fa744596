/**
 * How good a PDF → DOCX or PDF → XLSX conversion is, measured the same way for Folio and for the
 * peers of the benchmark (pdf2docx, camelot): issue #6's figures. Pure functions over the output
 * files, plus one engine call (LibreOffice reopening a document, timed).
 *  - DOCX: the text of word/document.xml in body order (paragraphs, list labels as Word would
 *    number them, table cells, text boxes), word recall and word order against the source, the
 *    share of words locked in positioned frames or text boxes, headings, tables.
 *  - XLSX: each cell's value and type (number, date, text) against the ground truth grid, with
 *    the table found wherever it sits in the workbook; a missing cell counts as wrong.
 * A DOCX is a zip of XML parts: both are read here with node:zlib and a small tag scanner, so the
 * measure depends on no converter's code.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { inflateRawSync } from "node:zlib";
import ExcelJS from "exceljs";
import type { Heading, TruthCell } from "../fixtures/pdf-office-corpus.ts";
import { wordRecall } from "./tools.ts";
import { displayText } from "./xlsx-display.ts";

const execFileP = promisify(execFile);

// ---------------------------------------------------------------------------------------------
// Zip and XML

/** The entries of a zip file (stored or deflated; no zip64, which no DOCX needs). */
export function unzip(buf: Buffer): Map<string, Buffer> {
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error("not a zip file");
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const out = new Map<string, Buffer>();
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error("corrupt zip central directory");
    const method = buf.readUInt16LE(p + 10);
    const size = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.toString("utf8", p + 46, p + 46 + nameLen);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const data = buf.subarray(start, start + size);
    if (method !== 0 && method !== 8) throw new Error(`zip entry ${name}: unsupported method ${method}`);
    out.set(name, method === 8 ? inflateRawSync(data) : Buffer.from(data));
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

export interface XmlEvent {
  kind: "open" | "close" | "text";
  /** Qualified tag name (open/close). */
  name: string;
  attrs: Record<string, string>;
  /** Decoded character data (text). */
  text: string;
  /** An element written as <x/>: an open event immediately followed by its close. */
  selfClosing: boolean;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
export const decodeXml = (s: string): string =>
  s.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);/g, (m, e: string) =>
    e.startsWith("#x")
      ? String.fromCodePoint(parseInt(e.slice(2), 16))
      : e.startsWith("#")
        ? String.fromCodePoint(Number(e.slice(1)))
        : (ENTITIES[e] ?? m),
  );

/** Scans well-formed XML into open/close/text events (comments, PIs and declarations skipped). */
export function* xmlEvents(xml: string): Generator<XmlEvent> {
  const re = /<(\/?)([\w.:-]+)((?:\s+[\w.:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|<!\[CDATA\[([\s\S]*?)\]\]>|<[!?][\s\S]*?>|([^<]+)/g;
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    if (m[6] !== undefined || m[5] !== undefined) {
      yield { kind: "text", name: "", attrs: {}, text: m[5] ?? decodeXml(m[6]!), selfClosing: false };
      continue;
    }
    if (!m[2]) continue;
    if (m[1]) {
      yield { kind: "close", name: m[2], attrs: {}, text: "", selfClosing: false };
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of m[3]!.matchAll(/([\w.:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attrs[a[1]!] = decodeXml(a[2] ?? a[3] ?? "");
    const selfClosing = m[4] === "/";
    yield { kind: "open", name: m[2], attrs, text: "", selfClosing };
    if (selfClosing) yield { kind: "close", name: m[2], attrs: {}, text: "", selfClosing: true };
  }
}

// ---------------------------------------------------------------------------------------------
// DOCX

interface StyleInfo {
  name: string;
  basedOn?: string;
  outlineLvl?: number;
  numId?: string;
  ilvl?: number;
}

/** The style properties read, by element: each sets its field from the element's w:val. */
const STYLE_PROPS: Record<string, (s: StyleInfo, v: string | undefined) => void> = {
  "w:name": (s, v) => {
    s.name = v ?? "";
  },
  "w:basedOn": (s, v) => {
    s.basedOn = v;
  },
  "w:outlineLvl": (s, v) => {
    s.outlineLvl = Number(v);
  },
  "w:numId": (s, v) => {
    s.numId = v;
  },
  "w:ilvl": (s, v) => {
    s.ilvl = Number(v);
  },
};

/** Paragraph styles of styles.xml by id. */
function readStyles(xml: string | undefined): Map<string, StyleInfo> {
  const styles = new Map<string, StyleInfo>();
  if (!xml) return styles;
  let cur: StyleInfo | undefined;
  for (const e of xmlEvents(xml)) {
    if (e.kind === "open" && e.name === "w:style") {
      cur = e.attrs["w:type"] === "paragraph" && e.attrs["w:styleId"] ? { name: "" } : undefined;
      if (cur) styles.set(e.attrs["w:styleId"]!, cur);
    } else if (e.kind === "close" && e.name === "w:style") cur = undefined;
    else if (cur && e.kind === "open") STYLE_PROPS[e.name]?.(cur, e.attrs["w:val"]);
  }
  return styles;
}

/** Follows basedOn from `id` and returns the first value `get` finds. */
function inherited<T>(styles: Map<string, StyleInfo>, id: string | undefined, get: (s: StyleInfo) => T | undefined): T | undefined {
  for (let i = 0, cur = id; cur && i < 20; i++) {
    const s = styles.get(cur);
    if (!s) return undefined;
    const v = get(s);
    if (v !== undefined) return v;
    cur = s.basedOn;
  }
  return undefined;
}

interface Level {
  fmt: string;
  text: string;
  start: number;
}

/** Where numbering.xml is being read: the abstract numbering and level open, the w:num open. */
interface NumberingState {
  abstract: Map<string, Map<number, Level>>;
  nums: Map<string, Map<number, Level>>;
  levels?: Map<number, Level> | undefined;
  lvl?: Level | undefined;
  numId?: string | undefined;
}

/** What each element of numbering.xml does to the reading (attrs: its attributes, v: its w:val). */
const NUMBERING_ELEMENTS: Record<string, (st: NumberingState, attrs: Record<string, string>, v: string | undefined) => void> = {
  "w:abstractNum": (st, attrs) => {
    st.levels = new Map();
    st.abstract.set(attrs["w:abstractNumId"]!, st.levels);
  },
  "w:lvl": (st, attrs) => {
    if (!st.levels) return;
    st.lvl = { fmt: "decimal", text: "", start: 1 };
    st.levels.set(Number(attrs["w:ilvl"]), st.lvl);
  },
  "w:numFmt": (st, _attrs, v) => {
    if (st.lvl) st.lvl.fmt = v ?? "decimal";
  },
  "w:lvlText": (st, _attrs, v) => {
    if (st.lvl) st.lvl.text = v ?? "";
  },
  "w:start": (st, _attrs, v) => {
    if (st.lvl) st.lvl.start = Number(v);
  },
  "w:num": (st, attrs) => {
    st.numId = attrs["w:numId"];
    st.levels = st.lvl = undefined;
  },
  "w:abstractNumId": (st, _attrs, v) => {
    if (st.numId !== undefined) st.nums.set(st.numId, st.abstract.get(v ?? "") ?? new Map());
  },
};

/** numbering.xml: for each numId, its levels' format, label template and start. */
function readNumbering(xml: string | undefined): Map<string, Map<number, Level>> {
  const st: NumberingState = { abstract: new Map(), nums: new Map() };
  if (!xml) return st.nums;
  for (const e of xmlEvents(xml)) if (e.kind === "open") NUMBERING_ELEMENTS[e.name]?.(st, e.attrs, e.attrs["w:val"]);
  return st.nums;
}

const roman = (n: number): string => {
  const parts: [number, string][] = [
    [1000, "m"],
    [900, "cm"],
    [500, "d"],
    [400, "cd"],
    [100, "c"],
    [90, "xc"],
    [50, "l"],
    [40, "xl"],
    [10, "x"],
    [9, "ix"],
    [5, "v"],
    [4, "iv"],
    [1, "i"],
  ];
  let out = "";
  for (const [v, s] of parts) for (; n >= v; n -= v) out += s;
  return out;
};
const letter = (n: number): string => String.fromCharCode(97 + ((n - 1) % 26)).repeat(Math.floor((n - 1) / 26) + 1);

function formatNumber(n: number, fmt: string): string {
  if (fmt === "lowerRoman") return roman(n);
  if (fmt === "upperRoman") return roman(n).toUpperCase();
  if (fmt === "lowerLetter") return letter(n);
  if (fmt === "upperLetter") return letter(n).toUpperCase();
  if (fmt === "bullet" || fmt === "none") return "";
  return String(n);
}

/** Numbers list paragraphs as Word would: one counter per list and level. */
class ListCounter {
  private readonly counters = new Map<string, number[]>();
  private readonly nums: Map<string, Map<number, Level>>;
  constructor(nums: Map<string, Map<number, Level>>) {
    this.nums = nums;
  }

  label(numId: string, ilvl: number): string {
    const levels = this.nums.get(numId);
    const lvl = levels?.get(ilvl);
    if (!levels || !lvl || numId === "0") return "";
    const c = this.counters.get(numId) ?? [];
    c[ilvl] = (c[ilvl] ?? lvl.start - 1) + 1;
    c.length = ilvl + 1;
    this.counters.set(numId, c);
    if (lvl.fmt === "bullet") return lvl.text;
    return lvl.text.replace(/%(\d)/g, (_, d: string) => {
      const k = Number(d) - 1;
      return formatNumber(c[k] ?? levels.get(k)?.start ?? 1, levels.get(k)?.fmt ?? "decimal");
    });
  }
}

export interface DocxParagraph {
  text: string;
  /** Inside a text box, a frame (w:framePr) or a floating drawing (wp:anchor). */
  inFrame: boolean;
  /** Heading level (1 = top; 0 = Title), or undefined for body text. */
  heading?: number;
  /** Index of the table this paragraph is in (innermost), if any. */
  table?: number;
}

export interface DocxContent {
  paragraphs: DocxParagraph[];
  /** Each table's cell texts, row by row (nested tables listed on their own). */
  tables: string[][][];
  /** The whole text in body order, one paragraph a line. */
  text: string;
}

const FRAME_CONTAINERS = new Set(["w:txbxContent", "v:textbox", "wp:anchor"]);

function headingLevel(styles: Map<string, StyleInfo>, styleId: string | undefined, outlineLvl: number | undefined): number | undefined {
  const name = (inherited(styles, styleId, (s) => s.name || undefined) ?? styleId ?? "").toLowerCase();
  if (name === "title" || styleId === "Title") return 0;
  const named = /^heading\s*(\d)$/.exec(name) ?? /^Heading(\d)$/.exec(styleId ?? "");
  if (named) return Number(named[1]);
  const lvl = outlineLvl ?? inherited(styles, styleId, (s) => s.outlineLvl);
  return lvl !== undefined && lvl < 9 ? lvl + 1 : undefined;
}

interface OpenParagraph {
  text: string;
  styleId?: string;
  outlineLvl?: number;
  numId?: string;
  ilvl?: number;
  framePr: boolean;
  inFrame: boolean;
  table?: number;
  inPPr: boolean;
}

interface OpenTable {
  index: number;
  rows: string[][];
}

/**
 * Walks word/document.xml's events: paragraphs (nested ones, in text boxes, included), tables
 * (rows, cells), frames. mc:Fallback is skipped: it repeats mc:Choice's content for old readers.
 */
class BodyReader {
  readonly paragraphs: DocxParagraph[] = [];
  readonly tables: string[][][] = [];
  private readonly pStack: OpenParagraph[] = [];
  private readonly tStack: OpenTable[] = [];
  private frameDepth = 0;
  private skipDepth = 0;
  private inText = false;
  private readonly styles: Map<string, StyleInfo>;
  private readonly lists: ListCounter;

  constructor(styles: Map<string, StyleInfo>, lists: ListCounter) {
    this.styles = styles;
    this.lists = lists;
  }

  private get paragraph(): OpenParagraph | undefined {
    return this.pStack[this.pStack.length - 1];
  }

  private get table(): OpenTable | undefined {
    return this.tStack[this.tStack.length - 1];
  }

  event(e: XmlEvent): void {
    if (this.skipDepth > 0) {
      if (e.name === "mc:Fallback") this.skipDepth += e.kind === "open" ? 1 : e.kind === "close" ? -1 : 0;
    } else if (e.kind === "text") {
      if (this.inText && this.paragraph) this.paragraph.text += e.text;
    } else if (e.kind === "open") this.open(e);
    else this.close(e);
  }

  private open(e: XmlEvent): void {
    switch (e.name) {
      case "mc:Fallback":
        if (!e.selfClosing) this.skipDepth = 1;
        break;
      case "w:p":
        this.pStack.push({
          text: "",
          framePr: false,
          inFrame: this.frameDepth > 0,
          inPPr: false,
          ...(this.table ? { table: this.table.index } : {}),
        });
        break;
      case "w:t":
        this.inText = !e.selfClosing;
        break;
      case "w:tbl":
        this.tStack.push({ index: this.tables.length, rows: [] });
        this.tables.push([]);
        break;
      case "w:tr":
        this.table?.rows.push([]);
        break;
      case "w:tc":
        this.table?.rows[this.table.rows.length - 1]?.push("");
        break;
      default:
        this.openInParagraph(e, this.paragraph);
    }
  }

  /** Elements that matter inside a paragraph: its properties, tabs and breaks (as text); frames are counted wherever they open. */
  private openInParagraph(e: XmlEvent, p: OpenParagraph | undefined): void {
    switch (e.name) {
      case "w:pPr":
        if (p) p.inPPr = true;
        break;
      case "w:tab":
        if (p && !p.inPPr) p.text += "\t";
        break;
      case "w:br":
      case "w:cr":
        if (p) p.text += "\n";
        break;
      default:
        if (FRAME_CONTAINERS.has(e.name) && !e.selfClosing) this.frameDepth++;
        else if (p?.inPPr) readParagraphProperty(p, e);
    }
  }

  private close(e: XmlEvent): void {
    if (e.name === "w:p") this.closeParagraph(this.pStack.pop()!);
    else if (e.name === "w:pPr" && this.paragraph) this.paragraph.inPPr = false;
    else if (e.name === "w:t") this.inText = false;
    else if (e.name === "w:tbl") {
      const t = this.tStack.pop()!;
      this.tables[t.index] = t.rows;
    } else if (FRAME_CONTAINERS.has(e.name) && !e.selfClosing) this.frameDepth--;
  }

  private closeParagraph(p: OpenParagraph): void {
    const numId = p.numId ?? inherited(this.styles, p.styleId, (s) => s.numId);
    const ilvl = p.ilvl ?? inherited(this.styles, p.styleId, (s) => s.ilvl) ?? 0;
    const label = numId ? this.lists.label(numId, ilvl) : "";
    const text = label ? `${label} ${p.text}` : p.text;
    const heading = headingLevel(this.styles, p.styleId, p.outlineLvl);
    this.paragraphs.push({
      text,
      inFrame: p.inFrame || p.framePr,
      ...(heading !== undefined ? { heading } : {}),
      ...(p.table !== undefined ? { table: p.table } : {}),
    });
    const t = this.table;
    const row = t?.rows[t.rows.length - 1];
    if (t && row?.length && p.table === t.index) row[row.length - 1] = row[row.length - 1] ? `${row[row.length - 1]}\n${text}` : text;
  }
}

/** Reads a DOCX's body: paragraphs in order with their kind, and its tables. */
export function readDocx(buf: Buffer): DocxContent {
  const parts = unzip(buf);
  const doc = parts.get("word/document.xml")?.toString("utf8");
  if (!doc) throw new Error("no word/document.xml: not a DOCX");
  const reader = new BodyReader(
    readStyles(parts.get("word/styles.xml")?.toString("utf8")),
    new ListCounter(readNumbering(parts.get("word/numbering.xml")?.toString("utf8"))),
  );
  for (const e of xmlEvents(doc)) reader.event(e);
  return { paragraphs: reader.paragraphs, tables: reader.tables, text: reader.paragraphs.map((x) => x.text).join("\n") };
}

function readParagraphProperty(p: OpenParagraph, e: XmlEvent): void {
  const v = e.attrs["w:val"];
  if (e.name === "w:pStyle") p.styleId = v;
  else if (e.name === "w:outlineLvl") p.outlineLvl = Number(v);
  else if (e.name === "w:numId") p.numId = v;
  else if (e.name === "w:ilvl") p.ilvl = Number(v);
  else if (e.name === "w:framePr") p.framePr = true;
}

// ---------------------------------------------------------------------------------------------
// Word metrics

/** Lower-cased alphanumeric word tokens, as wordRecall counts them. */
export const tokens = (s: string): string[] => s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * Length of the longest common subsequence of two token lists (Hunt–Szymanski: O(matches · log n),
 * fast on prose where each word recurs a bounded number of times).
 */
export function lcsLength(a: readonly string[], b: readonly string[]): number {
  const positions = new Map<string, number[]>();
  for (let j = b.length - 1; j >= 0; j--) {
    const list = positions.get(b[j]!);
    if (list) list.push(j);
    else positions.set(b[j]!, [j]);
  }
  const tails: number[] = [];
  for (const t of a) {
    const list = positions.get(t);
    if (!list) continue;
    for (const j of list) {
      let lo = 0;
      let hi = tails.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (tails[mid]! < j) lo = mid + 1;
        else hi = mid;
      }
      tails[lo] = j;
    }
  }
  return tails.length;
}

/** Share of the reference's words that the candidate has in the same order (LCS / reference). */
export function wordOrder(reference: string, candidate: string): number {
  const ref = tokens(reference);
  return ref.length ? lcsLength(ref, tokens(candidate)) / ref.length : 1;
}

const norm = (s: string): string => s.replace(/\s+/g, " ").trim();
const normKey = (s: string): string => tokens(s).join(" ");

/** Share of the truth's headings found as heading paragraphs with the same text (level aside). */
export function headingRecall(truth: readonly Heading[], doc: DocxContent): { recall: number; levels: number; precision: number } {
  const found = doc.paragraphs.filter((p) => p.heading !== undefined && normKey(p.text));
  const byText = new Map<string, number[]>();
  for (const p of found) {
    const k = normKey(p.text);
    byText.set(k, [...(byText.get(k) ?? []), p.heading!]);
  }
  let hit = 0;
  let sameLevel = 0;
  for (const h of truth) {
    const levels = byText.get(normKey(h.text));
    if (!levels?.length) continue;
    hit++;
    const i = levels.indexOf(h.level);
    if (i >= 0) sameLevel++;
    levels.splice(Math.max(i, 0), 1);
  }
  const truthKeys = new Set(truth.map((h) => normKey(h.text)));
  const relevant = found.filter((p) => truthKeys.has(normKey(p.text))).length;
  return {
    recall: truth.length ? hit / truth.length : 1,
    levels: truth.length ? sameLevel / truth.length : 1,
    precision: found.length ? relevant / found.length : truth.length ? 0 : 1,
  };
}

/** Share of `truth`'s cells that `got` has at the same place, with the best offset between the two. */
export function gridAgreement<T, G>(
  truth: readonly (readonly T[])[],
  got: readonly (readonly (G | undefined)[])[],
  same: (t: T, g: G | undefined) => boolean,
): { share: number; dr: number; dc: number } {
  const rows = truth.length;
  const cols = Math.max(0, ...truth.map((r) => r.length));
  const cells = truth.reduce((n, r) => n + r.length, 0);
  const gotCols = Math.max(0, ...got.map((r) => r.length));
  let best = { hits: 0, dr: 0, dc: 0 };
  for (let dr = -(rows - 1); dr < got.length; dr++) {
    for (let dc = -(cols - 1); dc < gotCols; dc++) {
      let hits = 0;
      for (let r = 0; r < rows; r++) {
        const g = got[r + dr];
        if (!g) continue;
        truth[r]!.forEach((t, c) => (hits += same(t, g[c + dc]) ? 1 : 0));
      }
      if (hits > best.hits) best = { hits, dr, dc };
    }
  }
  return { share: cells ? best.hits / cells : 1, dr: best.dr, dc: best.dc };
}

/**
 * For each truth table, the best share of its cells found in one DOCX table (`whole`), and in one
 * table or up to three consecutive ones read as one (`found`: a table a page break cut in two is
 * still detected, though not whole). A table counts when the share is ≥ 90 %.
 */
export function tableRecall(truth: readonly string[][][], doc: DocxContent): { found: number; whole: number; cellShare: number[] } {
  const same = (t: string, g: string | undefined): boolean => g !== undefined && normKey(t) === normKey(g);
  const single = truth.map((t) => Math.max(0, ...doc.tables.map((g) => gridAgreement(t, g, same).share)));
  const stacked = truth.map((t, i) => {
    let best = single[i]!;
    for (let k = 0; k + 1 < doc.tables.length; k++) {
      for (const run of [2, 3])
        if (k + run <= doc.tables.length) best = Math.max(best, gridAgreement(t, doc.tables.slice(k, k + run).flat(), same).share);
    }
    return best;
  });
  return { found: stacked.filter((s) => s >= 0.9).length, whole: single.filter((s) => s >= 0.9).length, cellShare: stacked };
}

export interface DocxQuality {
  /** Multiset word recall against the reference text (pdftotext of the source PDF). */
  recall: number;
  /** LCS of word tokens / truth length, against the source's reading order. */
  order: number;
  /** Share of the output's words inside text boxes, frames or floating drawings. */
  frameShare: number;
  headings: { recall: number; levels: number; precision: number };
  /** Truth tables found (see tableRecall), found whole in one w:tbl, and how many w:tbl the DOCX has. */
  tables: { expected: number; found: number; whole: number; docxTables: number };
  paragraphs: number;
}

/** Every DOCX figure of issue #6 for one output. */
export function docxQuality(
  docx: Buffer,
  truth: { text: string; headings: readonly Heading[]; tables: readonly string[][][] },
  referenceText: string,
): DocxQuality {
  const doc = readDocx(docx);
  const all = doc.paragraphs.reduce((n, p) => n + tokens(p.text).length, 0);
  const framed = doc.paragraphs.filter((p) => p.inFrame).reduce((n, p) => n + tokens(p.text).length, 0);
  const tables = tableRecall(truth.tables, doc);
  return {
    recall: wordRecall(referenceText, doc.text),
    order: wordOrder(truth.text, doc.text),
    frameShare: all ? framed / all : 0,
    headings: headingRecall(truth.headings, doc),
    tables: { expected: truth.tables.length, found: tables.found, whole: tables.whole, docxTables: doc.tables.length },
    paragraphs: doc.paragraphs.length,
  };
}

// ---------------------------------------------------------------------------------------------
// XLSX

export interface GotCell {
  type: "number" | "date" | "text";
  value: number | string;
  /** The text the workbook shows: the value through its number format (readXlsx sets it). */
  display?: string;
}

/** One exceljs cell value as a typed cell (dates as "YYYY-MM-DD"), or undefined when empty. */
export function typedCell(v: ExcelJS.CellValue): GotCell | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === "number") return { type: "number", value: v };
  if (v instanceof Date) return { type: "date", value: v.toISOString().slice(0, 10) };
  if (typeof v === "string") return v.trim() ? { type: "text", value: v } : undefined;
  if (typeof v === "boolean") return { type: "text", value: String(v).toUpperCase() };
  if ("richText" in v) return typedCell(v.richText.map((r) => r.text).join(""));
  if ("result" in v) return typedCell(v.result);
  if ("text" in v) return typedCell(v.text);
  if ("error" in v) return { type: "text", value: String(v.error) };
  return undefined;
}

/** What a typed cell shows: a number or date through the cell's number format, else its text. */
function shownText(cell: ExcelJS.Cell, got: GotCell): string {
  const v = cell.value;
  const raw = v !== null && typeof v === "object" && !(v instanceof Date) && "result" in v ? v.result : v;
  if (got.type === "number" && typeof raw === "number") return displayText(raw, cell.numFmt);
  if (got.type === "date" && raw instanceof Date) return displayText(raw, cell.numFmt);
  return String(got.value);
}

/** The sheets of an XLSX as typed grids, in workbook order. */
export async function readXlsx(file: string): Promise<{ name: string; grid: (GotCell | undefined)[][] }[]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  return wb.worksheets.map((ws) => {
    const grid: (GotCell | undefined)[][] = [];
    ws.eachRow({ includeEmpty: true }, (row, r) => {
      const cells: (GotCell | undefined)[] = [];
      row.eachCell({ includeEmpty: true }, (cell, c) => {
        const got = typedCell(cell.value);
        cells[c - 1] = got && { ...got, display: shownText(cell, got) };
      });
      grid[r - 1] = Array.from(cells);
    });
    return { name: ws.name, grid: Array.from(grid, (r) => r ?? []) };
  });
}

const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

/** Same value and same type: a number is a number cell, a date a date cell, text a text cell. */
export function cellMatches(t: TruthCell, g: GotCell | undefined): boolean {
  if (!g || g.type !== t.type) return false;
  if (t.type === "number")
    return typeof g.value === "number" && [t.value as number, ...(t.alt ?? [])].some((v) => close(g.value as number, v));
  return norm(String(g.value)) === norm(String(t.value));
}

/** Same value whatever the type: a text cell showing the number's text counts (the peers' way). */
export function cellTextMatches(t: TruthCell, g: GotCell | undefined): boolean {
  return cellMatches(t, g) || (g !== undefined && norm(String(g.value)) === norm(t.text));
}

export interface XlsxQuality {
  /** Value and type right, over every truth cell (issue #6's cell accuracy). */
  accuracy: number;
  /** Value right whatever the type. */
  textAccuracy: number;
  /** Of the truth's number cells, the share that are number cells in the output (at the best offset). */
  numericShare: number;
  /** Of the truth's date cells, the share that are date cells in the output. */
  dateShare: number;
  sheets: number;
}

/**
 * Cell accuracy of a workbook against a truth grid. The sheets are stacked in order (a table split
 * over pages may come back as one sheet per page) and the truth is placed at the offset where most
 * cells agree.
 */
export function xlsxQuality(sheets: { grid: (GotCell | undefined)[][] }[], truth: readonly (readonly TruthCell[])[]): XlsxQuality {
  const stacked = sheets.flatMap((s) => s.grid);
  const typed = gridAgreement(truth, stacked, cellMatches);
  const text = gridAgreement(truth, stacked, cellTextMatches);
  const share = (type: TruthCell["type"]): number => {
    let n = 0;
    let ok = 0;
    truth.forEach((row, r) =>
      row.forEach((t, c) => {
        if (t.type !== type) return;
        n++;
        if (stacked[r + typed.dr]?.[c + typed.dc]?.type === type) ok++;
      }),
    );
    return n ? ok / n : 1;
  };
  return {
    accuracy: typed.share,
    textAccuracy: text.share,
    numericShare: share("number"),
    dateShare: share("date"),
    sheets: sheets.length,
  };
}

/**
 * A workbook's text as a reader sees it: every sheet's rows in order, each row's cells as they show
 * (readXlsx's display) joined by one space, rows by newlines. What word recall reads a workbook as.
 */
export function workbookText(sheets: readonly { grid: readonly (readonly ({ display?: string } | undefined)[])[] }[]): string {
  return sheets.flatMap((s) => s.grid.map((r) => r.map((c) => c?.display ?? "").join(" "))).join("\n");
}

/** The non-empty rows of every sheet as text, cells joined by one space. */
export function sheetRows(sheets: { grid: (GotCell | undefined)[][] }[]): string[] {
  return sheets.flatMap((s) => s.grid.map((r) => norm(r.map((c) => (c ? String(c.value) : "")).join(" ")))).filter(Boolean);
}

// ---------------------------------------------------------------------------------------------
// LibreOffice

export interface Reopen {
  ok: boolean;
  seconds: number;
  /** Pages of the PDF LibreOffice made from the document. */
  pages: number;
}

/**
 * Opens `file` (DOCX or XLSX) in LibreOffice and converts it to PDF, timed: what "reopens in
 * LibreOffice" means. `profile` is a LibreOffice user directory to reuse (first use makes it,
 * which takes a few seconds more); a timeout counts as not reopened.
 */
export async function reopenInLibreOffice(file: string, profile: string, timeoutMs = 120_000): Promise<Reopen> {
  const out = await mkdtemp(path.join(os.tmpdir(), "folio-reopen-"));
  const t = performance.now();
  try {
    await execFileP(
      "soffice",
      ["--headless", "--norestore", `-env:UserInstallation=${pathToFileURL(profile).href}`, "--convert-to", "pdf", "--outdir", out, file],
      { timeout: timeoutMs },
    );
    const seconds = (performance.now() - t) / 1000;
    const pdf = path.join(out, `${path.basename(file).replace(/\.[^.]+$/, "")}.pdf`);
    const { stdout } = await execFileP("pdfinfo", [pdf]);
    const pages = Number(/^Pages:\s+(\d+)/m.exec(stdout)?.[1] ?? 0);
    return { ok: pages > 0, seconds, pages };
  } catch {
    return { ok: false, seconds: (performance.now() - t) / 1000, pages: 0 };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}
