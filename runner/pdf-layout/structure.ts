/**
 * The tagged-PDF structure tree (ISO 32000-1 §14.7–14.8), as pdfjs' page.getStructTree() gives it:
 * headings (H, H1…H6) and tables (Table → [THead|TBody|TFoot] → TR → TH|TD) with the marked-content
 * ids of their text. When a producer tags its tables, the cells are exact: no geometry guessing.
 * Runs in the extraction worker; pure.
 */
import type { StructTable } from "./types.ts";

export interface StructNode {
  role?: string;
  type?: string;
  id?: string;
  children?: StructNode[];
}

/** Every marked-content id below a node, in document order. */
function contentIds(node: StructNode, out: string[] = []): string[] {
  if (node.type === "content" && node.id) out.push(node.id);
  for (const child of node.children ?? []) contentIds(child, out);
  return out;
}

/** The TR elements of a table, looking through THead/TBody/TFoot. */
function tableRows(table: StructNode): StructNode[] {
  const rows: StructNode[] = [];
  for (const child of table.children ?? []) {
    if (child.role === "TR") rows.push(child);
    else if (child.role === "THead" || child.role === "TBody" || child.role === "TFoot") rows.push(...tableRows(child));
  }
  return rows;
}

function readTable(table: StructNode): StructTable | null {
  const rows = tableRows(table).map((tr) =>
    (tr.children ?? []).filter((c) => c.role === "TD" || c.role === "TH").map((c) => ({ mcids: contentIds(c), header: c.role === "TH" })),
  );
  const nonEmpty = rows.filter((r) => r.length > 0);
  return nonEmpty.length > 0 ? { rows: nonEmpty } : null;
}

const HEADING = /^H([1-6])?$/;

/** Headings by marked-content id and tables, from a page's structure tree (null when untagged). */
export function readStructure(root: StructNode | null): { headings: Record<string, number>; tables: StructTable[] } {
  const headings: Record<string, number> = {};
  const tables: StructTable[] = [];
  const visit = (node: StructNode): void => {
    const heading = node.role ? HEADING.exec(node.role) : null;
    if (heading) {
      for (const id of contentIds(node)) headings[id] = Number(heading[1] ?? 1);
      return;
    }
    if (node.role === "Table") {
      const table = readTable(node);
      if (table) tables.push(table);
      return;
    }
    for (const child of node.children ?? []) visit(child);
  };
  if (root) visit(root);
  return { headings, tables };
}
