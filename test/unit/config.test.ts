import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_KEYS, ConfigError, loadConfig } from "../../core/config.ts";
import { renderConfigDocs } from "../../core/config-docs.ts";
import { ROOT } from "../helpers/tools.ts";

describe("configuration", () => {
  it("parses defaults into a frozen object", () => {
    const cfg = loadConfig({});
    expect(cfg.FOLIO_MAX_PAGES).toBe(2000);
    expect(cfg.FOLIO_LOG_LEVEL).toBe("info");
    expect(Object.isFrozen(cfg)).toBe(true);
  });

  it("coerces numbers and booleans from the environment", () => {
    const cfg = loadConfig({ FOLIO_MAX_PAGES: "10", FOLIO_PRETTY_LOGS: "yes", FOLIO_SOFFICE_POOL_SIZE: "0" });
    expect(cfg.FOLIO_MAX_PAGES).toBe(10);
    expect(cfg.FOLIO_PRETTY_LOGS).toBe(true);
    expect(cfg.FOLIO_SOFFICE_POOL_SIZE).toBe(0);
  });

  it("names every bad variable in one error", () => {
    const attempt = () => loadConfig({ FOLIO_MAX_PAGES: "lots", FOLIO_LOG_LEVEL: "loud" });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/FOLIO_MAX_PAGES[\s\S]*FOLIO_LOG_LEVEL|FOLIO_LOG_LEVEL[\s\S]*FOLIO_MAX_PAGES/);
  });

  it("parses JSON settings, taking Helm's null for absent and naming the variable when invalid", () => {
    const cfg = loadConfig({
      FOLIO_RUNNER_RESOURCES: '{"requests":{"cpu":"1","memory":512}}',
      FOLIO_RUNNER_NODE_SELECTOR: "null",
      FOLIO_RUNNER_TOLERATIONS: "[]",
    });
    expect(cfg.FOLIO_RUNNER_RESOURCES).toEqual({ requests: { cpu: "1", memory: "512" } });
    expect(cfg.FOLIO_RUNNER_NODE_SELECTOR).toBeUndefined();
    expect(cfg.FOLIO_RUNNER_TOLERATIONS).toEqual([]);
    expect(() => loadConfig({ FOLIO_RUNNER_RESOURCES: "{cpu" })).toThrow(/FOLIO_RUNNER_RESOURCES: must be JSON/);
    expect(() => loadConfig({ FOLIO_RUNNER_RESOURCES: '{"requets":{}}' })).toThrow(/FOLIO_RUNNER_RESOURCES/);
  });

  it("documents every key in docs/configuration.md, generated from the keys themselves", () => {
    const docs = readFileSync(`${ROOT}/docs/configuration.md`, "utf8");
    expect(docs, "docs/configuration.md is stale: run make docs").toBe(renderConfigDocs());
    for (const key of Object.keys(CONFIG_KEYS)) expect(docs, key).toContain(`| \`${key}\` |`);
  });
});
