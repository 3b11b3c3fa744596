/**
 * Mutations of real files for fuzzing (fast-check arbitraries): the damage real PDFs and zips
 * carry — flipped and overwritten bytes, cut and inserted runs, truncation — plus structural
 * damage a byte-level fuzzer rarely finds alone: PDF delimiters and keywords dropped anywhere,
 * numbers (offsets, counts, lengths) replaced by others, and runs repeated thousands of times
 * (nesting bombs such as "[[[[…" or "<<<<…").
 */
import fc from "fast-check";

export type Mutation =
  | { kind: "flip"; at: number; bit: number }
  | { kind: "set"; at: number; byte: number }
  | { kind: "delete"; at: number; len: number }
  | { kind: "insert"; at: number; bytes: Uint8Array }
  | { kind: "token"; at: number; token: string }
  | { kind: "repeat"; at: number; len: number; times: number }
  | { kind: "number"; at: number; value: string }
  | { kind: "truncate"; at: number };

/** PDF syntax a mutation may drop in (ISO 32000-1 §7.2, §7.3, §7.5). */
const TOKENS = [
  "<<",
  ">>",
  "[",
  "]",
  "(",
  ")",
  "<",
  ">",
  "/",
  "%",
  "\\",
  " R ",
  " 0 R ",
  " obj\n",
  "\nendobj\n",
  "stream\n",
  "\nendstream",
  "xref\n",
  "trailer",
  "startxref\n",
  "%%EOF",
  "\n",
  "\r",
  "\0",
  "#",
  "/Type /Pages",
  "/Kids [",
  "/Count -1",
  "PK\x03\x04",
  "PK\x01\x02",
  "PK\x05\x06",
];
const NUMBERS = ["0", "-1", "1", "4294967295", "999999999999", "2147483648", "00000", "1e9", "65536", "NaN", "3.5", "-0"];

const at = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant("set" as const), at, byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant("delete" as const), at, len: fc.integer({ min: 1, max: 256 }) }),
  fc.record({ kind: fc.constant("insert" as const), at, bytes: fc.uint8Array({ minLength: 1, maxLength: 32 }) }),
  fc.record({ kind: fc.constant("token" as const), at, token: fc.constantFrom(...TOKENS) }),
  fc.record({ kind: fc.constant("repeat" as const), at, len: fc.integer({ min: 1, max: 8 }), times: fc.integer({ min: 2, max: 5000 }) }),
  fc.record({ kind: fc.constant("number" as const), at, value: fc.constantFrom(...NUMBERS) }),
  fc.record({ kind: fc.constant("truncate" as const), at }),
);

export const mutations: fc.Arbitrary<Mutation[]> = fc.array(mutation, { minLength: 1, maxLength: 6 });

/** The bytes with one mutation applied; `at` is a fraction of the length, so it fits any file. */
export function mutate(bytes: Buffer, m: Mutation): Buffer {
  const i = Math.floor(m.at * bytes.length);
  switch (m.kind) {
    case "flip": {
      const out = Buffer.from(bytes);
      if (i < out.length) out[i]! ^= 1 << m.bit;
      return out;
    }
    case "set": {
      const out = Buffer.from(bytes);
      if (i < out.length) out[i] = m.byte;
      return out;
    }
    case "delete":
      return Buffer.concat([bytes.subarray(0, i), bytes.subarray(i + m.len)]);
    case "insert":
      return Buffer.concat([bytes.subarray(0, i), Buffer.from(m.bytes), bytes.subarray(i)]);
    case "token":
      return Buffer.concat([bytes.subarray(0, i), Buffer.from(m.token, "latin1"), bytes.subarray(i)]);
    case "repeat": {
      const run = bytes.subarray(i, i + m.len);
      return Buffer.concat([bytes.subarray(0, i), ...Array<Buffer>(m.times).fill(run), bytes.subarray(i)]);
    }
    case "number": {
      // The next run of digits at or after i, replaced: offsets, counts, lengths, object numbers.
      const text = bytes.toString("latin1");
      const found = /\d+/.exec(text.slice(i));
      if (!found) return bytes;
      const start = i + found.index;
      return Buffer.concat([bytes.subarray(0, start), Buffer.from(m.value, "latin1"), bytes.subarray(start + found[0].length)]);
    }
    case "truncate":
      return bytes.subarray(0, i);
  }
}

export function mutateAll(bytes: Buffer, ms: readonly Mutation[]): Buffer {
  return ms.reduce(mutate, bytes);
}
