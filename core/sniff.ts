/**
 * Content sniffing: what a file is, decided by its bytes and never by its name or the client's
 * Content-Type (API.md "Files"). The name only breaks ties the bytes cannot.
 *
 * The rule is to accept what LibreOffice opens (issue #13): Office files come from many producers,
 * and their zips vary — backslashes or a leading slash in entry names, entries in any order, sizes
 * in data descriptors, ZIP64, data prepended to the archive. So zips are judged by their central
 * directory when the end of the file is at hand (the runner; the API passes its last bytes when it
 * has them), else by the local headers at the start; OOXML by [Content_Types].xml's main part type,
 * else by its folders; ODF by the mimetype entry, else the manifest; OLE2 compound files by their
 * stream names (WordDocument, Workbook, PowerPoint Document), else by the name; flat ODF (one XML
 * file, .fodt/.fods/.fodp) by its office:mimetype attribute; RTF after an optional byte order mark.
 */
import { inflateRawSync } from "node:zlib";
import { localHeaders, normalizeZipName, readZipDirectory, type ZipEntryInfo, type ZipRead } from "./zip-directory.ts";

export type DocKind =
  "pdf" | "docx" | "xlsx" | "pptx" | "odt" | "ods" | "odp" | "doc" | "xls" | "ppt" | "rtf" | ImageKind | "html" | "markdown" | "zip";

/** Raster images Folio reads (OCR, images → PDF, stamps). */
export type ImageKind = "png" | "jpeg" | "tiff";
export const IMAGE_KINDS: readonly DocKind[] = ["png", "jpeg", "tiff"];

export const CONTENT_TYPES: Record<DocKind, string> = {
  pdf: "application/pdf",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  odt: "application/vnd.oasis.opendocument.text",
  ods: "application/vnd.oasis.opendocument.spreadsheet",
  odp: "application/vnd.oasis.opendocument.presentation",
  doc: "application/msword",
  xls: "application/vnd.ms-excel",
  ppt: "application/vnd.ms-powerpoint",
  rtf: "application/rtf",
  png: "image/png",
  jpeg: "image/jpeg",
  tiff: "image/tiff",
  html: "text/html",
  markdown: "text/markdown",
  zip: "application/zip",
};

/** How many leading (and, where available, trailing) bytes sniff() wants to see. */
export const SNIFF_BYTES = 64 * 1024;
/**
 * How many trailing bytes sniff() wants of a zip: the end record's search window (22 bytes and a
 * comment of up to 64 KiB, APPNOTE §4.3.16) and, before it, the central directory and the last parts.
 */
export const SNIFF_TAIL_BYTES = 2 * SNIFF_BYTES;

const OLE2 = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const ZIP = Buffer.from("PK\x03\x04", "latin1");
/** Small parts sniffing reads: [Content_Types].xml, mimetype, the ODF manifest. */
const MAX_PART = 1024 * 1024;

const ODF_KINDS = { text: "odt", spreadsheet: "ods", presentation: "odp" } as const;
/** ODF 1.2 part 1 §2.2.4 / part 3 §3.3: documents and their templates; drawings, charts, formulas are not accepted. */
const ODF_MIME = /application\/vnd\.oasis\.opendocument\.(text|spreadsheet|presentation)(?:-template)?(?![\w-])/;

/**
 * ECMA-376 part 2 content types of the main part, macro-enabled, template and binary variants
 * included (LibreOffice opens them all; .xlsb through its binary Excel filter).
 */
const OOXML_MAIN: [RegExp, DocKind][] = [
  [/wordprocessingml\.(document|template)\.main\+xml|ms-word\.(document|template)\.macroenabled(template)?\.main\+xml/i, "docx"],
  [/spreadsheetml\.(sheet|template)\.main\+xml|ms-excel\.(sheet|template)\.(binary\.)?macroenabled\.main/i, "xlsx"],
  [
    /presentationml\.(presentation|slideshow|template)\.main\+xml|ms-powerpoint\.(presentation|slideshow|template)\.macroenabled\.main\+xml/i,
    "pptx",
  ],
];
const OOXML_FOLDERS: [string, DocKind][] = [
  ["word/", "docx"],
  ["xl/", "xlsx"],
  ["ppt/", "pptx"],
];

/** The bytes of one small entry (stored or deflated), or null when they are not at hand. */
function entryData(read: ZipRead, e: ZipEntryInfo): Buffer | null {
  if (e.compressedSize > MAX_PART || e.size > MAX_PART) return null;
  const local = read(e.localOffset, 30);
  if (!local || local.readUInt32LE(0) !== 0x04034b50) return null;
  const data = read(e.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28), e.compressedSize);
  if (!data) return null;
  if (e.method === 0) return data;
  if (e.method !== 8) return null;
  try {
    return inflateRawSync(data, { maxOutputLength: MAX_PART });
  } catch {
    return null;
  }
}

/** An Office zip's entries by normalized name, the first of duplicates winning, with their text. */
class ZipIndex {
  readonly byName = new Map<string, ZipEntryInfo>();
  readonly #read: ZipRead;
  constructor(entries: readonly ZipEntryInfo[], read: ZipRead) {
    this.#read = read;
    for (const e of entries) if (!this.byName.has(normalizeZipName(e.name))) this.byName.set(normalizeZipName(e.name), e);
  }
  has(name: string): boolean {
    return this.byName.has(name);
  }
  text(name: string): string | null {
    const e = this.byName.get(name);
    return e ? (entryData(this.#read, e)?.toString("utf8") ?? null) : null;
  }
}

/**
 * ODF: the mimetype entry, else the manifest's root media type (ODF 1.2 part 3, §3.3, §4.2).
 * Undefined when the zip says neither (not ODF); null for an ODF type Folio does not accept.
 */
function odfKind(zip: ZipIndex): DocKind | null | undefined {
  const mimetype = zip.has("mimetype") ? zip.text("mimetype") : null;
  if (mimetype !== null) {
    const m = ODF_MIME.exec(mimetype.trim());
    return m && m.index === 0 ? ODF_KINDS[m[1] as keyof typeof ODF_KINDS] : null;
  }
  const manifest = zip.text("meta-inf/manifest.xml");
  const root = manifest && /<manifest:file-entry\b[^>]*manifest:full-path="\/"[^>]*>/.exec(manifest);
  const rootType = root && /manifest:media-type="([^"]*)"/.exec(root[0]);
  if (!rootType) return undefined;
  const m = ODF_MIME.exec(rootType[1]!);
  return m ? ODF_KINDS[m[1] as keyof typeof ODF_KINDS] : null;
}

/** OOXML: [Content_Types].xml must be there (ECMA-376 part 2, §10.1.2); it names the main part, else a part folder tells. */
function ooxmlKind(zip: ZipIndex): DocKind | null {
  if (!zip.has("[content_types].xml")) return null;
  const types = zip.text("[content_types].xml");
  for (const [re, kind] of OOXML_MAIN) if (types && re.test(types)) return kind;
  const names = [...zip.byName.keys()];
  for (const [folder, kind] of OOXML_FOLDERS) if (names.some((n) => n.startsWith(folder))) return kind;
  return null;
}

/** The kind of an Office zip from its entries, or null when it is no Office document we accept. */
export function officeZipKind(entries: readonly ZipEntryInfo[], read: ZipRead): DocKind | null {
  const zip = new ZipIndex(entries, read);
  const odf = odfKind(zip);
  return odf === undefined ? ooxmlKind(zip) : odf;
}

/**
 * What a zip is: an Office document, or — without a mimetype entry or [Content_Types].xml — an
 * archive (a web page with its assets, for convert: what it holds is checked by the runner); null
 * for an Office-looking zip of a kind Folio does not accept (an ODF drawing).
 */
export function zipKind(entries: readonly ZipEntryInfo[], read: ZipRead): DocKind | null {
  const office = officeZipKind(entries, read);
  if (office) return office;
  const names = new Set(entries.map((e) => normalizeZipName(e.name)));
  return names.has("mimetype") || names.has("[content_types].xml") || names.has("meta-inf/manifest.xml") ? null : "zip";
}

/** The kind of an OLE2 compound file (MS-CFB) from its stream names, else from the file name. */
export function ole2Kind(streamNames: readonly string[], filename: string | undefined): DocKind {
  const names = new Set(streamNames);
  if (names.has("WordDocument")) return "doc";
  if (names.has("Workbook") || names.has("Book")) return "xls";
  if (names.has("PowerPoint Document")) return "ppt";
  const ext = filename?.toLowerCase().split(".").pop();
  if (ext === "xls" || ext === "xlt" || ext === "xlsx" || ext === "xlsm") return "xls";
  if (ext === "ppt" || ext === "pps" || ext === "pot" || ext === "pptx") return "ppt";
  return "doc";
}

/**
 * Stream names in the first directory sector of a compound file (MS-CFB §2.2, §2.6), when `read`
 * has it: sniffing's best effort; the runner reads the whole directory (office-encryption.ts).
 */
function firstDirectoryNames(read: ZipRead): string[] {
  const header = read(0, 512);
  if (!header) return [];
  const shift = header.readUInt16LE(0x1e);
  if (shift !== 9 && shift !== 12) return [];
  const sector = read((header.readUInt32LE(0x30) + 1) << shift, 1 << shift);
  const names: string[] = [];
  for (let off = 0; sector && off + 128 <= sector.length; off += 128) {
    const len = Math.min(64, sector.readUInt16LE(off + 0x40));
    if (len >= 2) names.push(sector.toString("utf16le", off, off + len - 2));
  }
  return names;
}

/** A flat ODF document (one XML file): office:document with an office:mimetype we accept. */
function flatOdfKind(head: Buffer): DocKind | null {
  const text = head.subarray(0, 8192).toString("utf8");
  if (!/^(\ufeff)?\s*<\?xml/.test(text) && !/^(\ufeff)?\s*<[\w.-]+:document\b/.test(text)) return null;
  const doc = /<([\w.-]+:)?document\b[^>]*?\bmimetype="([^"]*)"/.exec(text);
  const m = doc && ODF_MIME.exec(doc[2]!);
  return m && m.index === 0 ? ODF_KINDS[m[1] as keyof typeof ODF_KINDS] : null;
}

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const TIFF_LE = Buffer.from("II*\0", "latin1");
const TIFF_BE = Buffer.from("MM\0*", "latin1");

/** Magic numbers: PNG (RFC 2083 §3.1), JPEG SOI + a marker (ITU T.81 B.1.1.2), TIFF (TIFF 6.0 §2). */
function sniffImage(head: Buffer): DocKind | null {
  if (head.subarray(0, 8).equals(PNG)) return "png";
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "jpeg";
  const four = head.subarray(0, 4);
  if (four.equals(TIFF_LE) || four.equals(TIFF_BE)) return "tiff";
  return null;
}

/**
 * Text that is HTML by its bytes (WHATWG HTML §13.1: a doctype or the html/head/body start tags
 * after an optional BOM, whitespace and comments), or by its name when the bytes are text (a
 * fragment "<p>hi</p>" in page.html); Markdown has no signature, so a text file named .md is it.
 * Text means valid UTF-8 without NUL bytes (a multi-byte character cut by the end of the head is fine).
 */
function sniffText(head: Buffer, ext: string | undefined): DocKind | null {
  if (head.length === 0 || head.includes(0)) return null;
  try {
    // stream: an incomplete sequence at the end is held back, not an error.
    new TextDecoder("utf-8", { fatal: true }).decode(head, { stream: true });
  } catch {
    return null;
  }
  const start = head
    .subarray(0, 2048)
    .toString("utf8")
    .replace(/^\uFEFF/, "")
    .replace(/^(\s|<!--[\s\S]*?-->)*/, "")
    .toLowerCase();
  if (/^<(!doctype\s+html|html[\s>]|head[\s>]|body[\s>])/.test(start)) return "html";
  if (ext === "html" || ext === "htm" || ext === "xhtml") return "html";
  if (ext === "md" || ext === "markdown") return "markdown";
  return null;
}

/** The last bytes of a file, for the zip central directory: `bytes` end at `size`. */
export interface Tail {
  bytes: Buffer;
  size: number;
}

/** Reads from the head or the tail, or null for bytes neither holds. */
function reader(head: Buffer, tail: Tail | undefined): ZipRead {
  return (offset, length) => {
    if (offset < 0 || length < 0) return null;
    if (offset + length <= head.length) return head.subarray(offset, offset + length);
    const tailStart = tail ? tail.size - tail.bytes.length : Infinity;
    if (tail && offset >= tailStart && offset + length <= tail.size)
      return tail.bytes.subarray(offset - tailStart, offset - tailStart + length);
    return null;
  };
}

/**
 * The kind of document whose first bytes are `head` (SNIFF_BYTES of them) and, when given, whose
 * last bytes are `tail` (SNIFF_TAIL_BYTES of them); null when it is none Folio accepts. A PDF header may be preceded by up to
 * 1024 bytes of junk (ISO 32000-1 §7.5.2, as readers tolerate it).
 */
export function sniff(head: Buffer, filename?: string, tail?: Tail): DocKind | null {
  if (head.subarray(0, 1024).includes("%PDF-")) return "pdf";
  const read = reader(head, tail);
  if (head.subarray(0, 8).equals(OLE2)) return ole2Kind(firstDirectoryNames(read), filename);
  if (head.subarray(0, 4).equals(ZIP)) {
    const dir = tail ? readZipDirectory(read, tail.size) : null;
    return zipKind(dir?.entries.length ? dir.entries : localHeaders(head), read);
  }
  if (/^(\xef\xbb\xbf)?[\s]*\{\\rtf/.test(head.subarray(0, 64).toString("latin1"))) return "rtf";
  return flatOdfKind(head) ?? sniffImage(head) ?? sniffText(head, filename?.toLowerCase().split(".").pop());
}

export const OFFICE_KINDS: readonly DocKind[] = ["docx", "xlsx", "pptx", "odt", "ods", "odp", "doc", "xls", "ppt", "rtf"];
