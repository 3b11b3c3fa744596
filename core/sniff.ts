/**
 * Content sniffing: what a file is, decided by its bytes and never by its name or the client's
 * Content-Type (API.md "Files"). The name only breaks ties the bytes cannot (the legacy OLE2
 * formats DOC/XLS/PPT share one container signature).
 */

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

/** How many leading bytes sniff() wants to see. */
export const SNIFF_BYTES = 64 * 1024;

const OLE2 = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const ZIP = Buffer.from("PK\x03\x04", "latin1");

function sniffZip(head: Buffer): DocKind | null {
  const text = head.toString("latin1");
  // ODF: the first entry is an uncompressed "mimetype" file (ODF 1.2 part 3, §3.3). Its bytes
  // start after the local file header's name and extra field (APPNOTE 4.3.7) and run for its
  // stored size; the next entry's header follows at once.
  if (text.startsWith("mimetype", 30) && head.length >= 30) {
    const start = 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
    const mime = text.slice(start, start + Math.min(head.readUInt32LE(18), 100));
    const odf = /^application\/vnd\.oasis\.opendocument\.(text|spreadsheet|presentation)$/.exec(mime);
    return odf ? ({ text: "odt", spreadsheet: "ods", presentation: "odp" } as const)[odf[1] as "text"] : null;
  }
  // OOXML: the part names in the local file headers tell the document type. Any other zip is an
  // archive (a web page with its assets, for convert): what it holds is checked by the runner.
  if (!text.includes("[Content_Types].xml")) return "zip";
  if (/word\/(document|_rels)/.test(text)) return "docx";
  if (/xl\/(workbook|_rels|worksheets)/.test(text)) return "xlsx";
  if (/ppt\/(presentation|_rels|slides)/.test(text)) return "pptx";
  return null;
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

function sniffOle2(filename: string | undefined): DocKind {
  const ext = filename?.toLowerCase().split(".").pop();
  if (ext === "xls" || ext === "xlt") return "xls";
  if (ext === "ppt" || ext === "pps" || ext === "pot") return "ppt";
  return "doc";
}

/**
 * The kind of document in `head` (the first SNIFF_BYTES of a file), or null when it is none Folio
 * accepts. A PDF header may be preceded by up to 1024 bytes of junk (ISO 32000-1 §7.5.2, as
 * readers tolerate it).
 */
export function sniff(head: Buffer, filename?: string): DocKind | null {
  if (head.subarray(0, 1024).includes("%PDF-")) return "pdf";
  if (head.subarray(0, 8).equals(OLE2)) return sniffOle2(filename);
  if (head.subarray(0, 4).equals(ZIP)) return sniffZip(head);
  if (head.subarray(0, 5).toString("latin1") === "{\\rtf") return "rtf";
  return sniffImage(head) ?? sniffText(head, filename?.toLowerCase().split(".").pop());
}

export const OFFICE_KINDS: readonly DocKind[] = ["docx", "xlsx", "pptx", "odt", "ods", "odp", "doc", "xls", "ppt", "rtf"];
