/**
 * What the OpenAPI document tells clients and fuzzers about the edge (issue #10 item 17):
 * downloads with their real content types, file ids with their pattern, webhook URLs as https URIs,
 * and every schema still accepted by the validator the server uses.
 */
import { describe, expect, it } from "vitest";
import { buildOpenApi } from "../../api/openapi.ts";
import { CommonRequestFields } from "../../core/schemas/api.ts";

const doc = buildOpenApi("test") as any;
const text = JSON.stringify(doc);

describe("the OpenAPI document", () => {
  it("declares downloads with their real content types, not octet-stream only", () => {
    const content = doc.paths["/v1/files/{id}/content"].get.responses["200"].content;
    expect(Object.keys(content)).toEqual(
      expect.arrayContaining([
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/zip",
      ]),
    );
    expect(content["application/octet-stream"]).toBeUndefined();
  });

  it("gives file_id its pattern and webhook_url an https URI format", () => {
    expect(text).toContain('"file_id":{"type":"string","pattern":"^file_[0-9A-Za-z]{24}$"}');
    const at = text.indexOf('"webhook_url":{');
    const webhook = JSON.parse(text.slice(at + '"webhook_url":'.length, text.indexOf("}", at) + 1));
    expect(webhook).toMatchObject({ type: "string", format: "uri", pattern: "^https://" });
  });

  it("the validator agrees with the pattern", () => {
    expect(CommonRequestFields.safeParse({ inputs: [{ file_id: "file_4fJ2kq9XcT1mZ8rB0aLw7eYd" }] }).success).toBe(true);
    expect(CommonRequestFields.safeParse({ inputs: [{ file_id: "file_../../x" }] }).success).toBe(false);
    expect(CommonRequestFields.safeParse({ webhook_url: "http://example.com/" }).success).toBe(false);
  });
});
