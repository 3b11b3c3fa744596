/**
 * Client file names: decoded as the client meant them, cleaned so they cannot lie, and sent back
 * in a Content-Disposition every client reads (issue #10 items 11 and 14).
 *
 * Decoding (RFC 7578 §4.2): a multipart `filename` is UTF-8 in practice, but busboy hands header
 * parameters over as latin1, which garbled `résumé.pdf` into `rÃ©sumÃ©.pdf`. The latin1 string is
 * the raw bytes; they are decoded as UTF-8 when they are valid UTF-8, and kept as latin1 when
 * they are not (an old client really sending ISO-8859-1). A `filename*` (RFC 5987/8187) wins over
 * `filename` (RFC 6266 §4.3) and busboy has already decoded it by its declared charset; such a
 * name may hold characters above U+00FF and is left as it is.
 *
 * Cleaning: only the last path segment; NFC; no control characters (Cc), no format characters
 * (Cf: the bidi embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069, the marks
 * U+200E/U+200F/U+061C, zero-width characters, BOM), no line or paragraph separators (U+2028/
 * U+2029), no lone surrogates, no `"`. Stripping the bidi controls is what defeats extension
 * spoofing: `invoice\u202Efdp.exe` would *display* as `invoiceexe.pdf`; cleaned it is the honest
 * `invoicefdp.exe`. At most 255 characters, never cutting a surrogate pair.
 */
const STRIP = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}"]/gu;

/** The client's file name from what busboy reports (see the module comment). */
export function decodeMultipartFilename(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  // Above U+00FF: busboy decoded an RFC 8187 filename* already.
  if (/[^\u0000-\u00ff]/.test(raw)) return raw;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(raw, "latin1"));
  } catch {
    return raw;
  }
}

/** A file name safe to store, show and send back; "" when nothing is left. */
export function safeFilename(name: string): string {
  const leaf = name.split(/[\\/]/).pop() ?? "";
  const clean = leaf.normalize("NFC").replace(STRIP, "").trim();
  return Array.from(clean).slice(0, 255).join("");
}

/** RFC 8187 attr-char: what may stand unescaped in `filename*`. */
const ATTR_CHAR = /[A-Za-z0-9!#$&+\-.^_`|~]/;

/**
 * `attachment; filename="…"; filename*=UTF-8''…` (RFC 6266 §4.3): an ASCII fallback for old
 * clients (accents dropped, anything else non-ASCII as `_`) and the exact name for every client
 * that reads `filename*`.
 */
export function contentDisposition(filename: string): string {
  const ascii =
    filename
      .normalize("NFKD")
      .replace(/\p{M}/gu, "")
      .replace(/[^\x20-\x7e]/g, "_")
      .replace(/["\\]/g, "_") || "download";
  const encoded = Array.from(Buffer.from(filename, "utf8"))
    .map((b) =>
      ATTR_CHAR.test(String.fromCharCode(b)) && b < 0x80 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, "0")}`,
    )
    .join("");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
