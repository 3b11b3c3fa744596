import { describe, expect, it } from "vitest";
import { parseRunArgs, UsageError } from "../../runner/cli.ts";

describe("folio run arguments", () => {
  it("takes the options as JSON exactly as the API does", () => {
    const a = parseRunArgs(["split", "--options", '{"mode": "every", "every": 5}', "in.pdf", "-o", "out"]);
    expect(a).toMatchObject({ operation: "split", options: { mode: "every", every: 5 }, outDir: "out" });
    expect(a.inputs).toEqual([{ path: "in.pdf", filename: "in.pdf" }]);
  });

  it("turns kebab-case flags into snake_case options, with dotted nesting and typed values", () => {
    const a = parseRunArgs([
      "protect",
      "--user-password",
      "--secret--",
      "--permissions.print",
      "none",
      "--permissions.copy=false",
      "x.pdf",
      "-o",
      "o",
    ]);
    expect(a.options).toEqual({ user_password: "--secret--", permissions: { print: "none", copy: false } });
  });

  it("reads options from stdin or a file so passwords stay off the command line", () => {
    const a = parseRunArgs(["protect", "--options", "-", "x.pdf", "-o", "o"], () => '{"user_password": "s3cret"}');
    expect(a.options).toEqual({ user_password: "s3cret" });
  });

  it("takes per-input pages as INPUT@RANGE", () => {
    const a = parseRunArgs(["merge", "a.pdf@1-3,7", "dir/b.pdf@last", "c.pdf", "-o", "o"]);
    expect(a.inputs).toEqual([
      { path: "a.pdf", filename: "a.pdf", pages: "1-3,7" },
      { path: "dir/b.pdf", filename: "b.pdf", pages: "last" },
      { path: "c.pdf", filename: "c.pdf" },
    ]);
  });

  it.each([
    ["no operation", []],
    ["an unknown operation", ["explode", "a.pdf", "-o", "o"]],
    ["no output directory", ["compress", "a.pdf"]],
    ["no input", ["compress", "-o", "o"]],
    ["options that are not JSON", ["compress", "--options", "{level", "a.pdf", "-o", "o"]],
    ["options that are a JSON array", ["compress", "--options", "[]", "a.pdf", "-o", "o"]],
    ["a flag without its value", ["compress", "a.pdf", "-o"]],
  ])("refuses %s", (_why, argv) => {
    expect(() => parseRunArgs(argv, () => "")).toThrow(UsageError);
  });
});
