import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.ts";

function capture(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { stream, text: () => chunks.join("") };
}

describe("logger redaction", () => {
  it("never writes passwords, keys or secrets, at any depth we log", () => {
    const out = capture();
    const log = createLogger({ level: "info", destination: out.stream });
    const secrets = ["hunter2-user", "hunter2-owner", "folio_sk_abc_def", "whsec_c2VjcmV0", "Bearer folio_sk_x_y"];
    log.info({ user_password: secrets[0], options: { owner_password: secrets[1] } }, "protect");
    log.info({ spec: { options: { user_password: secrets[0] } }, key: secrets[2] }, "spec");
    log.info({ tenant: { webhook_secret: secrets[3] }, req: { headers: { authorization: secrets[4] } } }, "request");
    log.info({ headers: { authorization: secrets[4] } }, "headers");
    const text = out.text();
    expect(text.split("\n").filter(Boolean)).toHaveLength(4);
    for (const s of secrets) expect(text).not.toContain(s);
    expect(text).toContain("[redacted]");
  });
});
