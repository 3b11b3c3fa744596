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
const MAX_OBJECT_BYTES = 256 * 1024 * 1024;

interface Subsection {
  first: number;
  count: number;
  /** Offset of the first entry inside `xrefText`. */
  at: number;
}

/** A new or replaced object for an update: `body` is its value in PDF syntax, one char per byte. */
export interface UpdateObject {
  num: number;
  gen: number;
  body: string;
}

/** A PDF written by qpdf, opened for reading its structure and appending one update. */
export class QpdfWrittenPdf {
  private readonly fh: FileHandle;
  readonly fileSize: number;
  /** Where qpdf's cross-reference table starts: the new trailer's /Prev. */
  readonly xrefOffset: number;
  private readonly xrefText: string;
  private readonly subsections: Subsection[];
  readonly trailer: PdfDict;

  private constructor(fh: FileHandle, fileSize: number, xrefOffset: number, xrefText: string, subsections: Subsection[], trailer: PdfDict) {
    this.fh = fh;
    this.fileSize = fileSize;
    this.xrefOffset = xrefOffset;
    this.xrefText = xrefText;
    this.subsections = subsections;
    this.trailer = trailer;
  }

  static async open(file: string): Promise<QpdfWrittenPdf> {
    const fh = await open(file, "r+");
    try {
      const { size } = await fh.stat();
      const tailLen = Math.min(size, 1024);
      const tail = await readAt(fh, size - tailLen, tailLen);
      const m = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(tail);
      if (!m) throw new PdfSyntaxError("no startxref at the end of the file");
      const xrefOffset = Number(m[1]);
      if (xrefOffset >= size) throw new PdfSyntaxError("startxref points past the end of the file");
      const xrefText = await readAt(fh, xrefOffset, size - xrefOffset);
      const lex = new PdfLexer(xrefText);
      if (!xrefText.startsWith("xref")) throw new PdfSyntaxError("not a cross-reference table (an xref stream?)");
      lex.pos = 4;
      const subsections: Subsection[] = [];
      for (;;) {
        lex.skipSpace();
        const word = lex.regular();
        if (word === "trailer") break;
        lex.skipSpace();
        const count = Number(lex.regular());
        if (!/^\d+$/.test(word) || !Number.isInteger(count)) throw new PdfSyntaxError("bad xref subsection header");
        // The header line ends with one EOL; entries follow.
        while (xrefText[lex.pos] === " ") lex.pos++;
        if (xrefText[lex.pos] === "\r") lex.pos++;
        if (xrefText[lex.pos] === "\n") lex.pos++;
        subsections.push({ first: Number(word), count, at: lex.pos });
        lex.pos += count * XREF_ENTRY;
      }
      const trailer = lex.value();
      if (trailer.kind !== "dict") throw new PdfSyntaxError("trailer is not a dictionary");
      return new QpdfWrittenPdf(fh, size, xrefOffset, xrefText, subsections, trailer);
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
    if (size === null) throw new PdfSyntaxError("trailer has no /Size");
    return size;
  }

  get rootRef(): PdfRef {
    const root = this.trailer.entries.get("/Root");
    if (root?.kind !== "ref") throw new PdfSyntaxError("trailer has no /Root reference");
    return root;
  }

  private offsetOf(ref: PdfRef): number {
    for (const s of this.subsections) {
      if (ref.num < s.first || ref.num >= s.first + s.count) continue;
      const entry = this.xrefText.slice(s.at + (ref.num - s.first) * XREF_ENTRY, s.at + (ref.num - s.first + 1) * XREF_ENTRY);
      const m = /^(\d{10}) (\d{5}) n/.exec(entry);
      if (!m || Number(m[2]) !== ref.gen) break;
      return Number(m[1]);
    }
    throw new PdfSyntaxError(`object ${ref.num} ${ref.gen} is not in use`);
  }

  /** Reads the value of an object that is not a stream (catalog, page tree nodes). */
  async readObject(ref: PdfRef): Promise<PdfValue> {
    const offset = this.offsetOf(ref);
    for (let len = 16 * 1024; ; len *= 4) {
      const text = await readAt(this.fh, offset, Math.min(len, this.fileSize - offset));
      const lex = new PdfLexer(text);
      try {
        lex.expect(`${ref.num} ${ref.gen} obj`);
        return lex.value();
      } catch (err) {
        // Only a value cut short by our read window is worth a bigger read.
        const truncated = err instanceof PdfSyntaxError && /end of data|unterminated/.test(err.message);
        if (!truncated || offset + len >= this.fileSize || len >= MAX_OBJECT_BYTES) throw err;
      }
    }
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
