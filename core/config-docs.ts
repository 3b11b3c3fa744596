/**
 * docs/configuration.md, rendered from CONFIG_KEYS (core/config.ts): every variable with its
 * default and meaning, so the reference cannot drift from the code. `make docs` writes it; a test
 * fails when it is stale.
 */
import { CONFIG_KEYS } from "./config.ts";

interface KeyDoc {
  schema: { safeParse(v: unknown): { success: boolean; data?: unknown } };
  doc: string;
  defaultDoc?: string;
}

/** The default as the table shows it: a described default, the schema's default, or a dash. */
function defaultCell(entry: KeyDoc): string {
  if (entry.defaultDoc) return entry.defaultDoc;
  const parsed = entry.schema.safeParse(undefined);
  const value = parsed.success ? parsed.data : undefined;
  if (value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) return "—";
  return `\`${typeof value === "string" ? value : JSON.stringify(value)}\``;
}

/** The whole of docs/configuration.md. */
export function renderConfigDocs(): string {
  const rows = Object.entries(CONFIG_KEYS as Record<string, KeyDoc>).map(
    ([key, entry]) => `| \`${key}\` | ${defaultCell(entry)} | ${entry.doc.replace(/\|/g, "\\|")} |`,
  );
  return [
    "# Configuration",
    "",
    "<!-- Generated from core/config.ts by `make docs`; edit the `doc` there, not this file. -->",
    "",
    "Every key is read once at start-up from the environment (`core/config.ts`); a bad value stops the",
    "process with a message naming the variable. Nothing else in the code reads `process.env`.",
    "",
    "| variable | default | meaning |",
    "|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}
