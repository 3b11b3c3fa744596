/**
 * Content sniffing: what a file is, decided by its bytes and never by its name or the client's
 * Content-Type (API.md "Files"). The name only breaks ties the bytes cannot (the legacy OLE2
 * formats DOC/XLS/PPT share one container signature).
 */

export type DocKind = "pdf" | "docx" | "xlsx" | "pptx" | "odt" | "ods" | "odp" | "doc" | "xls" | "ppt" | "rtf";

export const CONTENT_TYPES: Record<DocKind | "zip", string> = {
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
  // OOXML: the part names in the local file headers tell the document type.
  if (!text.includes("[Content_Types].xml")) return null;
  if (/word\/(document|_rels)/.test(text)) return "docx";
  if (/xl\/(workbook|_rels|worksheets)/.test(text)) return "xlsx";
  if (/ppt\/(presentation|_rels|slides)/.test(text)) return "pptx";
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
  return null;
}

export const OFFICE_KINDS: readonly DocKind[] = ["docx", "xlsx", "pptx", "odt", "ods", "odp", "doc", "xls", "ppt", "rtf"];
