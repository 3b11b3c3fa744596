import { describe, expect, it } from "vitest";
import { sniff } from "../../core/sniff.ts";

const zipEntry = (name: string, body = ""): Buffer => {
  // A local file header (APPNOTE 4.3.7) with a stored entry: enough for sniffing.
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt32LE(body.length, 18); // compressed (= stored) size
  header.writeUInt32LE(body.length, 22);
  header.writeUInt16LE(name.length, 26);
  return Buffer.concat([header, Buffer.from(name, "latin1"), Buffer.from(body, "latin1")]);
};

describe("sniffing by bytes, never by name", () => {
  it.each([
    ["a PDF", Buffer.from("%PDF-1.7\n%âãÏÓ\n"), "x.bin", "pdf"],
    ["a PDF with junk before the header", Buffer.concat([Buffer.alloc(500, 0x20), Buffer.from("%PDF-1.4")]), "x", "pdf"],
    ["DOCX", Buffer.concat([zipEntry("[Content_Types].xml", "<Types/>"), zipEntry("word/document.xml")]), "a.pdf", "docx"],
    ["XLSX", Buffer.concat([zipEntry("[Content_Types].xml"), zipEntry("xl/workbook.xml")]), "a.docx", "xlsx"],
    ["PPTX", Buffer.concat([zipEntry("[Content_Types].xml"), zipEntry("ppt/presentation.xml")]), undefined, "pptx"],
    ["ODT", zipEntry("mimetype", "application/vnd.oasis.opendocument.text"), "a.ods", "odt"],
    ["ODS", zipEntry("mimetype", "application/vnd.oasis.opendocument.spreadsheet"), undefined, "ods"],
    // As LibreOffice writes it: the next entry's header follows the mimetype at once.
    [
      "ODT with the next entry right after",
      Buffer.concat([zipEntry("mimetype", "application/vnd.oasis.opendocument.text"), zipEntry("content.xml", "<x/>")]),
      undefined,
      "odt",
    ],
    ["ODP", zipEntry("mimetype", "application/vnd.oasis.opendocument.presentation"), undefined, "odp"],
    // LibreOffice opens templates as documents of their kind.
    ["an ODT template", zipEntry("mimetype", "application/vnd.oasis.opendocument.text-template"), "a.ott", "odt"],
    ["RTF", Buffer.from("{\\rtf1\\ansi hello}"), "a.txt", "rtf"],
    ["an OLE2 file named .xls", Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0]), "sheet.XLS", "xls"],
    ["an OLE2 file named .ppt", Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), "deck.ppt", "ppt"],
    ["an OLE2 file with any other name is taken as DOC", Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), undefined, "doc"],
    ["a PNG named .pdf", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), "a.pdf", "png"],
    ["a JPEG", Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]), "a.png", "jpeg"],
    ["a little-endian TIFF", Buffer.from("II*\0\x08\0\0\0", "latin1"), undefined, "tiff"],
    ["a big-endian TIFF", Buffer.from("MM\0*\0\0\0\x08", "latin1"), undefined, "tiff"],
    ["HTML by its doctype, whatever its name", Buffer.from("\uFEFF  <!-- hi -->\n<!DOCTYPE html><p>x"), "a.txt", "html"],
    ["HTML by its html tag", Buffer.from("<html lang=en><body>x</body></html>"), undefined, "html"],
    ["an HTML fragment named .html", Buffer.from("<p>Hello, <b>world</b></p>"), "frag.HTML", "html"],
    ["Markdown named .md", Buffer.from("# Title\n\nSome *text*, a ü and a 💡"), "readme.md", "markdown"],
    ["an ordinary zip (a web page with its assets)", zipEntry("index.html", "<p>hi</p>"), "a.docx", "zip"],
  ])("recognises %s", (_what, bytes, name, kind) => {
    expect(sniff(bytes, name)).toBe(kind);
  });

  it.each([
    ["plain text named .pdf", Buffer.from("hello, I am not a PDF"), "evil.pdf"],
    ["an empty file", Buffer.alloc(0), "a.pdf"],
    ["a PDF header past the first KiB", Buffer.concat([Buffer.alloc(2000, 0x20), Buffer.from("%PDF-1.4")]), "a.pdf"],
    ["an OpenDocument drawing (not accepted)", zipEntry("mimetype", "application/vnd.oasis.opendocument.graphics"), "a.odt"],
    ["an ODF mimetype with a suffix", zipEntry("mimetype", "application/vnd.oasis.opendocument.text-templatex"), "a.odt"],
    ["binary junk named .html", Buffer.from([0x00, 0x01, 0x02, 0x3c, 0x68]), "a.html"],
    ["text that is not UTF-8, named .md", Buffer.from([0x23, 0x20, 0xc3, 0x28, 0x41, 0x42, 0x43, 0x44]), "a.md"],
    ["plain text named .txt", Buffer.from("just words"), "notes.txt"],
  ])("refuses %s", (_what, bytes, name) => {
    expect(sniff(bytes, name)).toBeNull();
  });
});
