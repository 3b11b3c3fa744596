/**
 * One JSON value per line, as the API and its runner workers speak over stdio (NDJSON). JSON
 * allows U+2028 and U+2029 raw inside strings (RFC 8259 §7), but Node's readline — and most line
 * readers that follow ECMAScript's idea of a line terminator — end a line at them, so a password
 * or a filename holding one split the message and failed the job (issue #10 item 11). Writers
 * escape them; the line is still the same JSON.
 */
export function jsonLine(value: unknown): string {
  return (
    JSON.stringify(value)
      .replace(/\u2028/g, "\\u2028")
      .replace(/\u2029/g, "\\u2029") + "\n"
  );
}
