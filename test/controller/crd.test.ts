/**
 * The PdfJob CRD: the committed YAML is what the generator writes from the zod schemas (the
 * "crds/ is stale" check), its schema is structural, and the converter refuses what a CRD
 * cannot express.
 */
import { readFileSync } from "node:fs";
// js-yaml comes with @kubernetes/client-node; the test only reads YAML back.
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { accessRequestCrd, crdYaml, pdfJobCrd, re2, structuralOf, tenantCrd, toStructural, toYaml } from "../../controller/crd.ts";
import { CRD_FILE, CRD_FILES } from "../../controller/gen-crd.ts";
import { INPUT_KEYS_RULE, SECRET_REF_RULE } from "../../core/schemas/pdfjob.ts";

type Json = Record<string, any>;

const crdObject = (): Json => pdfJobCrd();
const schema = (): Json => crdObject().spec.versions[0].schema.openAPIV3Schema;

/** Every schema node with its path. */
function* nodes(node: Json, path = "$"): Generator<[string, Json]> {
  yield [path, node];
  for (const [k, v] of Object.entries(node.properties ?? {})) yield* nodes(v as Json, `${path}.${k}`);
  if (node.items) yield* nodes(node.items, `${path}[]`);
  if (node.additionalProperties && typeof node.additionalProperties === "object") yield* nodes(node.additionalProperties, `${path}.*`);
}

describe("crds/pdfjobs.folio.dev.yaml", () => {
  it("should be exactly what the generator writes (run `make crds` when this fails)", () => {
    expect(readFileSync(CRD_FILE, "utf8")).toBe(crdYaml());
  });

  it("should read back as the CRD object", () => {
    const docs = crdYaml().split(/^---$/m);
    expect(load(docs[1]!)).toEqual(pdfJobCrd());
  });
});

describe("crds/tenants.folio.dev.yaml and crds/accessrequests.folio.dev.yaml", () => {
  it.each(CRD_FILES.map((c) => [c.file.split("/").pop()!, c] as const))("%s is what the generator writes, in the chart too", (name, c) => {
    expect(readFileSync(c.file, "utf8")).toBe(c.yaml());
    expect(readFileSync(new URL(`../../helm/folio/crds/${name}`, import.meta.url), "utf8")).toBe(c.yaml());
  });

  it("names Tenant (ft) and AccessRequest (far), namespaced, with structural schemas", () => {
    for (const [crd, kind, short] of [
      [tenantCrd(), "Tenant", "ft"],
      [accessRequestCrd(), "AccessRequest", "far"],
    ] as const) {
      const c: Json = crd;
      expect(c.spec.names).toMatchObject({ kind, shortNames: [short] });
      expect(c.spec.scope).toBe("Namespaced");
      for (const [path, node] of nodes(c.spec.versions[0].schema.openAPIV3Schema)) expect(node.type, path).toBeTypeOf("string");
    }
    const tenant: Json = tenantCrd();
    expect(tenant.spec.versions[0].schema.openAPIV3Schema.properties.spec.required).toEqual(["plan", "webhookSecretRef"]);
  });
});

describe("the PdfJob CRD", () => {
  it("should name the resource as ARCHITECTURE.md says: folio.dev/v1alpha1 PdfJob, namespaced, short name pj", () => {
    const crd = crdObject();
    expect(crd.metadata.name).toBe("pdfjobs.folio.dev");
    expect(crd.spec.scope).toBe("Namespaced");
    expect(crd.spec.names).toMatchObject({ kind: "PdfJob", plural: "pdfjobs", singular: "pdfjob", shortNames: ["pj"] });
    const v = crd.spec.versions[0];
    expect(v).toMatchObject({ name: "v1alpha1", served: true, storage: true, subresources: { status: {} } });
  });

  it("should print Operation, Tenant, Phase, Age and Reason, and the queue position with -o wide", () => {
    const cols: Json[] = crdObject().spec.versions[0].additionalPrinterColumns;
    expect(cols.map((c) => c.name)).toEqual(["Operation", "Tenant", "Phase", "Queue", "Age", "Reason"]);
    expect(cols.find((c) => c.name === "Queue")).toMatchObject({ type: "integer", jsonPath: ".status.queuePosition", priority: 1 });
    expect(cols.find((c) => c.name === "Age")).toMatchObject({ type: "date", jsonPath: ".metadata.creationTimestamp" });
  });

  it("should make spec immutable with a CEL rule", () => {
    expect(schema().properties.spec["x-kubernetes-validations"]).toEqual([
      { rule: "self == oldSelf", message: "spec is immutable" },
      { rule: INPUT_KEYS_RULE, message: expect.stringContaining("tenant's prefix") },
    ]);
    expect(schema()["x-kubernetes-validations"]).toEqual([{ rule: SECRET_REF_RULE, message: expect.stringContaining("own Secret") }]);
  });

  it("should be structural: a type on every node, no references or combinators", () => {
    for (const [path, node] of nodes(schema())) {
      expect(["object", "array", "string", "integer", "number", "boolean"], path).toContain(node.type);
      for (const banned of ["$ref", "anyOf", "oneOf", "allOf", "not", "$schema", "$defs", "definitions", "examples", "const"]) {
        expect(node, `${path} has ${banned}`).not.toHaveProperty(banned);
      }
      if (node.type === "array") expect(node.items, `${path} without items`).toBeDefined();
      if (node.properties) expect(node.additionalProperties, `${path} has properties and additionalProperties`).toBeUndefined();
      if (node.type === "object") expect(node.additionalProperties === false, path).toBe(false);
    }
  });

  it("should keep free-form options and figures with x-kubernetes-preserve-unknown-fields", () => {
    const s = schema();
    expect(s.properties.spec.properties.options).toMatchObject({ type: "object", "x-kubernetes-preserve-unknown-fields": true });
    expect(s.properties.status.properties.figures).toMatchObject({ type: "object", "x-kubernetes-preserve-unknown-fields": true });
  });

  it("should make conditions a map list keyed by type, a key every item must have", () => {
    const c = schema().properties.status.properties.conditions;
    expect(c).toMatchObject({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] });
    expect(c.items.required).toContain("type");
    expect(Object.keys(c.items.properties).sort()).toEqual([
      "lastTransitionTime",
      "message",
      "observedGeneration",
      "reason",
      "status",
      "type",
    ]);
  });

  it("should bound every string and list of the spec (CEL cost estimates need bounds)", () => {
    for (const [path, node] of nodes(schema().properties.spec)) {
      if (node.type === "string" && !node.enum) expect(node.maxLength, path).toBeGreaterThan(0);
      if (node.type === "array") expect(node.maxItems, path).toBeGreaterThan(0);
    }
  });

  it("should write patterns in RE2 syntax, which the API server compiles them with", () => {
    for (const [path, node] of nodes(schema())) {
      if (typeof node.pattern !== "string") continue;
      expect(node.pattern, path).not.toMatch(/\\u[0-9a-fA-F]{4}/);
      expect(() => new RegExp(node.pattern.replace(/\\x\{([0-9a-f]{4})\}/gi, "\\u$1")), path).not.toThrow();
    }
  });
});

describe("zod JSON Schema → structural schema", () => {
  it("should inline references and turn nullable into nullable: true", () => {
    const Shared = z.object({ x: z.string() }).meta({ id: "SharedForCrdTest" });
    const s = structuralOf(z.object({ a: Shared, b: Shared, n: z.string().nullable() }));
    expect(s.properties).toEqual({
      a: { type: "object", required: ["x"], properties: { x: { type: "string" } } },
      b: { type: "object", required: ["x"], properties: { x: { type: "string" } } },
      n: { type: "string", nullable: true },
    });
  });

  it("should refuse a union, which a structural schema cannot express", () => {
    expect(() => structuralOf(z.object({ u: z.union([z.string(), z.int()]) }))).toThrow(/anyOf|oneOf/);
  });

  it("should refuse a node without a type", () => {
    expect(() => toStructural({ description: "anything" }, {})).toThrow(/needs a type/);
  });

  it("should turn a literal into a one-value enum and drop zod's safe-integer bounds", () => {
    expect(structuralOf(z.object({ k: z.literal("PdfJob"), n: z.int() })).properties).toEqual({
      k: { type: "string", enum: ["PdfJob"] },
      n: { type: "integer" },
    });
  });

  it("should map a string record to additionalProperties and an unknown record to preserve-unknown-fields", () => {
    expect(structuralOf(z.object({ m: z.record(z.string(), z.string()), f: z.record(z.string(), z.unknown()) })).properties).toEqual({
      m: { type: "object", additionalProperties: { type: "string" } },
      f: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
    });
  });

  it.each([
    ["a \\u escape becomes \\x{…}", String.raw`^[^\u0000-\u001f]+$`, String.raw`^[^\x{0000}-\x{001f}]+$`],
    ["an escaped slash becomes a slash", String.raw`^https:\/\/`, "^https://"],
    ["an escaped backslash before u stays", String.raw`a\\u0041`, String.raw`a\\u0041`],
  ])("re2: %s", (_what, input, output) => {
    expect(re2(input)).toBe(output);
  });
});

describe("the YAML emitter", () => {
  it.each([
    ["words stay plain", "spec", "spec\n"],
    ["YAML booleans are quoted", "True", '"True"\n'],
    ["yes/no/on/off are quoted (YAML 1.1 readers)", "on", '"on"\n'],
    ["numbers as strings are quoted", "1.0", '"1.0"\n'],
    ["the empty string is quoted", "", '""\n'],
    ["colons and hashes are quoted", "a: #b", '"a: #b"\n'],
    ["numbers stay numbers", 86400, "86400\n"],
  ])("%s", (_what, value, yaml) => {
    expect(toYaml(value)).toBe(yaml);
  });

  it("should round-trip nested lists and maps, empty ones and unicode", () => {
    const value = { a: [{ b: [1, [2, 3]], c: {} }, []], "x-y": 'ten_… "q" \\ \n', t: true, n: null };
    expect(load(toYaml(value))).toEqual(value);
  });
});
