import { describe, expect, it } from "vitest";
import { CompressOptions, MergeOptions, ProtectOptions, redactOptions, SplitOptions } from "../../core/schemas/options.ts";

describe("operation options (exactly API.md)", () => {
  it("fills documented defaults", () => {
    expect(CompressOptions.parse({})).toEqual({ level: "medium", linearize: false });
    expect(MergeOptions.parse({})).toEqual({ outline: "keep" });
    expect(ProtectOptions.parse({ user_password: "x" })).toEqual({
      user_password: "x",
      encryption: "aes-256",
      permissions: { print: "full", modify: true, copy: true, annotate: true, fill_forms: true, assemble: true, accessibility: true },
    });
  });

  it.each([
    ["an unknown option", CompressOptions, { level: "medium", quality: 3 }],
    ["an unknown level", CompressOptions, { level: "extreme" }],
    ["split ranges without ranges", SplitOptions, { mode: "ranges" }],
    ["split every 0", SplitOptions, { mode: "every", every: 0 }],
    ["split every 2.5", SplitOptions, { mode: "every", every: 2.5 }],
    ["a malformed range", SplitOptions, { mode: "ranges", ranges: "3-1" }],
    ["an unknown mode", SplitOptions, { mode: "halves" }],
    ["protect without a user password", ProtectOptions, {}],
    ["an empty password", ProtectOptions, { user_password: "" }],
    ["a 128-character password", ProtectOptions, { user_password: "a".repeat(128) }],
    ["127 characters that are more than 127 UTF-8 bytes", ProtectOptions, { user_password: "é".repeat(127) }],
    ["a non-Latin password with aes-128", ProtectOptions, { user_password: "密码", encryption: "aes-128" }],
    ["a 33-character password with aes-128", ProtectOptions, { user_password: "a".repeat(33), encryption: "aes-128" }],
    ["an unknown permission", ProtectOptions, { user_password: "x", permissions: { teleport: true } }],
    ["print: maybe", ProtectOptions, { user_password: "x", permissions: { print: "maybe" } }],
  ])("rejects %s", (_why, schema, value) => {
    expect(schema.safeParse(value).success).toBe(false);
  });

  it("accepts tricky AES-256 passwords: dashes, spaces, quotes, non-ASCII, 127 characters", () => {
    for (const pw of ["--help", "-o out.pdf", "a b  c", `"'\\`, "pässwörd 密码", "x".repeat(127)]) {
      expect(ProtectOptions.safeParse({ user_password: pw }).success, pw).toBe(true);
    }
  });

  it("removes passwords from options kept in records", () => {
    const opts = ProtectOptions.parse({ user_password: "u", owner_password: "o" });
    const kept = redactOptions("protect", opts);
    expect(JSON.stringify(kept)).not.toMatch(/"u"|"o"/);
    expect(kept).toHaveProperty("encryption", "aes-256");
  });
});
