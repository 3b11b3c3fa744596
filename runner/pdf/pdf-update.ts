/**
 * Incremental updates (ISO 32000-1 §7.5.6) to PDFs that qpdf has just written.
 *
 * Why: qpdf's page selection (`--empty --pages …`, `--split-pages`) writes no outline, and
 * rewriting a 5,000-page merge a second time only to add bookmarks would double the job's time.
 * Appending the new objects plus a new catalog, with an xref section that points back (/Prev) to
 * qpdf's, costs only the bytes of the bookmarks; every reader applies updates like this one, as
 * they do for signatures and form saves.
 *
 * This reads only what qpdf itself writes for a document assembled from an empty PDF: a classic
 * cross-reference table (qpdf's default for such outputs; callers also pass
 * --object-streams=disable) and, normally, a flat page tree (any other tree is walked). Anything
 * else is refused with PdfSyntaxError (an internal error) instead of being guessed at.
 */
import { open, type FileHandle } from "node:fs/promises";
import { PdfLexer, PdfSyntaxError, asInt, dictGet, serialize, type PdfDict, type PdfRef, type PdfValue } from "./pdf-syntax.ts";

/** §7.5.4: every cross-reference entry is exactly 20 bytes. */
const XREF_ENTRY = 20;
/** A catalog or page tree node is never near this; a larger one is not a file qpdf wrote for us. */
const MAX_OBJECT_BYTES = 256 * 1024 * 1024;
/** Where the search for `startxref` begins: qpdf ends its files with it, so one read is the rule. */
const FIRST_TAIL = 1024;

/** A new or replaced object for an update: `body` is its value in PDF syntax, one char per byte. */
export interface UpdateObject {
  num: number;
  gen: number;
  body: string;
}

/** One in-use entry of the cross-reference table. */
interface XrefEntry {
  offset: number;
  gen: number;
}

/**
 * A PDF written by qpdf, opened for reading its structure and appending one update.
 *
 * Objects are read whole, never through a window: each one runs from its offset to the next
 * object's offset (or the cross-reference table), which the table itself tells (§7.5.4), so a
 * catalog or page-tree node of any size parses exactly as written.
 */
export class QpdfWrittenPdf {
  private readonly fh: FileHandle;
  readonly fileSize: number;
  /** Where qpdf's cross-reference table starts: the new trailer's /Prev. */
  readonly xrefOffset: number;
  private readonly entries: Map<number, XrefEntry>;
  /** Every in-use offset, ascending: where each object ends is where the next one starts. */
  private readonly starts: number[];
  readonly trailer: PdfDict;

  private constructor(fh: FileHandle, fileSize: number, xrefOffset: number, entries: Map<number, XrefEntry>, trailer: PdfDict) {
    this.fh = fh;
    this.fileSize = fileSize;
    this.xrefOffset = xrefOffset;
    this.entries = entries;
    this.starts = [...new Set([...entries.values()].map((e) => e.offset))].sort((a, b) => a - b);
    this.trailer = trailer;
  }

  static async open(file: string): Promise<QpdfWrittenPdf> {
    const fh = await open(file, "r+");
    try {
      const { size } = await fh.stat();
      const xrefOffset = await findStartxref(fh, size);
      const xrefText = await readAt(fh, xrefOffset, size - xrefOffset);
      const { entries, trailerAt } = parseXrefTable(xrefText, xrefOffset);
      const lex = new PdfLexer(xrefText, trailerAt);
      const trailer = lex.value();
      if (trailer.kind !== "dict") throw new PdfSyntaxError("trailer is not a dictionary");
      return new QpdfWrittenPdf(fh, size, xrefOffset, entries, trailer);
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.fh.close();
  }

  /** The trailer's /Size: one more than the highest object number in use. */
  get objectCount(): number {
    const size = asInt(this.trailer.entries.get("/Size"));
    if (size === null || size < 1) throw new PdfSyntaxError("trailer has no /Size");
    return size;
  }

  get rootRef(): PdfRef {
    const root = this.trailer.entries.get("/Root");
    if (root?.kind !== "ref") throw new PdfSyntaxError("trailer has no /Root reference");
    return root;
  }

  /** Where object `ref` starts and where the next object (or the xref table) starts. */
  private extentOf(ref: PdfRef): { start: number; end: number } {
    const entry = this.entries.get(ref.num);
    if (!entry || entry.gen !== ref.gen) throw new PdfSyntaxError(`object ${ref.num} ${ref.gen} is not in use`);
    const start = entry.offset;
    const next = this.starts[upperBound(this.starts, start)];
    const end = next !== undefined && next < this.xrefOffset ? next : this.xrefOffset;
    if (end <= start) throw new PdfSyntaxError(`object ${ref.num} ${ref.gen} lies past the cross-reference table`);
    if (end - start > MAX_OBJECT_BYTES) throw new PdfSyntaxError(`object ${ref.num} ${ref.gen} is larger than ${MAX_OBJECT_BYTES} bytes`);
    return { start, end };
  }

  /** Reads the value of an object that is not a stream (catalog, page tree nodes), whole. */
  async readObject(ref: PdfRef): Promise<PdfValue> {
    const { start, end } = this.extentOf(ref);
    const lex = new PdfLexer(await readAt(this.fh, start, end - start));
    lex.expect(`${ref.num} ${ref.gen} obj`);
    const value = lex.value();
    lex.expect("endobj");
    return value;
  }

  /**
   * References to every page, in order. qpdf flattens the page tree whenever it adds pages, so
   * the root /Pages node lists them all in /Kids; a tree qpdf did not flatten is walked instead.
   */
  async pageRefs(catalog: PdfValue): Promise<PdfRef[]> {
    const rootPages = dictGet(catalog, "/Pages");
    if (rootPages?.kind !== "ref") throw new PdfSyntaxError("catalog has no /Pages reference");
    const pages: PdfRef[] = [];
    const seen = new Set<number>();
    const stack: PdfRef[] = [rootPages];
    while (stack.length) {
      const ref = stack.pop()!;
      if (seen.has(ref.num)) throw new PdfSyntaxError("page tree has a loop");
      seen.add(ref.num);
      const node = await this.readObject(ref);
      const kids = dictGet(node, "/Kids");
      if (isName(dictGet(node, "/Type"), "/Page")) {
        pages.push(ref);
        continue;
      }
      if (kids?.kind !== "array" || kids.items.some((k) => k.kind !== "ref")) throw new PdfSyntaxError("page tree node without /Kids");
      const refs = kids.items as PdfRef[];
      if (ref === rootPages && (await this.isFlat(node, refs))) return refs;
      for (let i = refs.length - 1; i >= 0; i--) stack.push(refs[i]!);
    }
    return pages;
  }

  /** A flat tree: /Count equals the number of kids, and the first and last kid are pages. */
  private async isFlat(node: PdfValue, kids: PdfRef[]): Promise<boolean> {
    if (asInt(dictGet(node, "/Count")) !== kids.length || kids.length === 0) return false;
    for (const kid of [kids[0]!, kids[kids.length - 1]!]) {
      if (!isName(dictGet(await this.readObject(kid), "/Type"), "/Page")) return false;
    }
    return true;
  }

  /**
   * Appends an update section with `objects` (new numbers or replacements), a cross-reference
   * section for exactly those, and a trailer carrying the old one's entries with /Prev (§7.5.6).
   */
  async append(objects: readonly UpdateObject[]): Promise<void> {
    const sorted = [...objects].sort((a, b) => a.num - b.num);
    const chunks: string[] = ["\n"];
    let at = this.fileSize + 1;
    const offsets = new Map<number, number>();
    for (const o of sorted) {
      const text = `${o.num} ${o.gen} obj\n${o.body}\nendobj\n`;
      offsets.set(o.num, at);
      chunks.push(text);
      at += text.length;
    }
    const xrefAt = at;
    chunks.push("xref\n");
    for (let i = 0; i < sorted.length;) {
      let j = i;
      while (j + 1 < sorted.length && sorted[j + 1]!.num === sorted[j]!.num + 1) j++;
      chunks.push(`${sorted[i]!.num} ${j - i + 1}\n`);
      for (let k = i; k <= j; k++) {
        const o = sorted[k]!;
        chunks.push(`${String(offsets.get(o.num)).padStart(10, "0")} ${String(o.gen).padStart(5, "0")} n \n`);
      }
      i = j + 1;
    }
    const highest = sorted.length ? sorted[sorted.length - 1]!.num : 0;
    const trailer = new Map<string, PdfValue>([["/Size", { kind: "token", text: String(Math.max(this.objectCount, highest + 1)) }]]);
    for (const [k, v] of this.trailer.entries) if (k !== "/Size" && k !== "/Prev" && k !== "/XRefStm") trailer.set(k, v);
    trailer.set("/Prev", { kind: "token", text: String(this.xrefOffset) });
    chunks.push(`trailer\n${serialize({ kind: "dict", entries: trailer })}\nstartxref\n${xrefAt}\n%%EOF\n`);
    const data = Buffer.from(chunks.join(""), "latin1");
    await this.fh.write(data, 0, data.length, this.fileSize);
  }
}

function isName(v: PdfValue | undefined, name: string): boolean {
  return v?.kind === "token" && v.text === name;
}

/** Index of the first element of ascending `xs` greater than `x`. */
function upperBound(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The offset after the last `startxref` (§7.5.5). qpdf writes it in the last few bytes; the read
 * grows from there towards the start of the file instead of giving up at a fixed distance.
 */
async function findStartxref(fh: FileHandle, size: number): Promise<number> {
  for (let len = Math.min(size, FIRST_TAIL); ; len = Math.min(size, len * 4)) {
    const tail = await readAt(fh, size - len, len);
    const m = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(tail);
    if (m) {
      const offset = Number(m[1]);
      if (offset >= size) throw new PdfSyntaxError("startxref points past the end of the file");
      return offset;
    }
    if (len === size) throw new PdfSyntaxError("no startxref at the end of the file");
  }
}

/**
 * A classic cross-reference table (§7.5.4) up to its trailer keyword: the in-use entries by
 * object number, and where the trailer dictionary starts. Every count is checked against the
 * bytes present before any entry is read, so a damaged header cannot make us loop for long.
 */
function parseXrefTable(text: string, xrefOffset: number): { entries: Map<number, XrefEntry>; trailerAt: number } {
  if (!text.startsWith("xref")) throw new PdfSyntaxError("not a cross-reference table (an xref stream?)");
  const lex = new PdfLexer(text, 4);
  const entries = new Map<number, XrefEntry>();
  for (;;) {
    lex.skipSpace();
    const word = lex.regular();
    if (word === "trailer") return { entries, trailerAt: lex.pos };
    lex.skipSpace();
    const countWord = lex.regular();
    if (!/^\d{1,10}$/.test(word) || !/^\d{1,10}$/.test(countWord)) throw new PdfSyntaxError("bad xref subsection header");
    const first = Number(word);
    const count = Number(countWord);
    // The header line ends with one EOL; entries follow.
    while (text[lex.pos] === " ") lex.pos++;
    if (text[lex.pos] === "\r") lex.pos++;
    if (text[lex.pos] === "\n") lex.pos++;
    if (count * XREF_ENTRY > text.length - lex.pos) throw new PdfSyntaxError("xref subsection runs past the end of the file");
    for (let i = 0; i < count; i++, lex.pos += XREF_ENTRY) {
      const m = /^(\d{10}) (\d{5}) ([nf])/.exec(text.slice(lex.pos, lex.pos + XREF_ENTRY));
      if (!m) throw new PdfSyntaxError(`bad xref entry at ${lex.pos}`);
      const offset = Number(m[1]);
      if (m[3] === "n" && offset < xrefOffset) entries.set(first + i, { offset, gen: Number(m[2]) });
    }
  }
}

async function readAt(fh: FileHandle, position: number, length: number): Promise<string> {
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(buf, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return buf.subarray(0, done).toString("latin1");
}
