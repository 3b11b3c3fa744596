/**
 * SigV4 presigning (core/storage/presign.ts) against the example AWS publishes for query-string
 * authentication, and the shape of a POST policy. The real proof — MinIO accepting a presigned GET
 * and a POST upload under the prefix, and refusing everything else — is in
 * test/e2e/runner-isolation.e2e.ts, from inside a runner pod.
 */
import { describe, expect, it } from "vitest";
import { presignGet, presignPost, uriEncode } from "../../core/storage/presign.ts";

const example = { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" };

describe("presigned GET (AWS SigV4 query-string authentication)", () => {
  it("reproduces the signature of AWS's documented example (examplebucket/test.txt, 24 h)", () => {
    const url = presignGet(
      { bucket: "examplebucket", region: "us-east-1", endpoint: "https://s3.amazonaws.com" },
      example,
      "test.txt",
      86_400,
      new Date("2013-05-24T00:00:00Z"),
    );
    expect(url).toBe(
      "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256" +
        "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z" +
        "&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
    );
  });

  it("addresses a path-style server with its port, encodes the key once, and caps the expiry at 7 days", () => {
    const url = new URL(
      presignGet(
        { bucket: "folio", region: "us-east-1", endpoint: "http://127.0.0.1:9000", forcePathStyle: true },
        example,
        "ten_1/file a+b.pdf",
        30 * 86_400,
        new Date("2030-01-01T00:00:00Z"),
      ),
    );
    expect(url.origin).toBe("http://127.0.0.1:9000");
    expect(url.pathname).toBe("/folio/ten_1/file%20a%2Bb.pdf");
    expect(url.searchParams.get("X-Amz-Expires")).toBe("604800");
  });

  it("encodes like SigV4's UriEncode", () => {
    expect(uriEncode("a b/c~d*")).toBe("a%20b%2Fc~d%2A");
    expect(uriEncode("a b/c", true)).toBe("a%20b/c");
  });
});

describe("POST policy (browser-based uploads)", () => {
  it("limits uploads to the prefix and the size, with the SigV4 fields, until it expires", () => {
    const p = presignPost(
      { bucket: "folio", region: "us-east-1", endpoint: "http://127.0.0.1:9000", forcePathStyle: true },
      example,
      "outputs/ten_1/job_1/",
      1024,
      600,
      new Date("2030-01-01T00:00:00Z"),
    );
    expect(p.url).toBe("http://127.0.0.1:9000/folio");
    const policy = JSON.parse(Buffer.from(p.fields.policy!, "base64").toString("utf8")) as { expiration: string; conditions: unknown[] };
    expect(policy.expiration).toBe("2030-01-01T00:10:00.000Z");
    expect(policy.conditions).toContainEqual(["starts-with", "$key", "outputs/ten_1/job_1/"]);
    expect(policy.conditions).toContainEqual(["content-length-range", 0, 1024]);
    expect(policy.conditions).toContainEqual({ bucket: "folio" });
    expect(p.fields["x-amz-credential"]).toBe("AKIAIOSFODNN7EXAMPLE/20300101/us-east-1/s3/aws4_request");
    expect(p.fields["x-amz-signature"]).toMatch(/^[0-9a-f]{64}$/);
  });
});
