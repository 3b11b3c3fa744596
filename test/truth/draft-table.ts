/**
 * A drafting aid for the hand-made truth tables of test/truth/real/: prints the words poppler
 * (`pdftotext -bbox`, an extractor Folio does not use) finds in a region of a page, cut into cells
 * by column edges and row edges chosen by hand, as JSON rows to paste into a truth file and then
 * correct by hand against the rendered page (wrapped cells joined, headers checked, …). Nothing in
 * it comes from Folio's own analysis, so the truth cannot inherit Folio's mistakes.
 *
 *   node test/truth/draft-table.ts FILE PAGE X0,Y0,X1,Y1 [COLS] [ROWS]
 *
 * Coordinates are pdftotext's: points from the top-left corner of the displayed page. COLS is a
 * comma list of x positions between columns, or "auto:G" to cut where no word crosses a gap of at
 * least G points; ROWS a comma list of y positions between rows, or "lines" (default: one row per
 * text line).
 */
import { execFileSync } from "node:child_process";

interface Word {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  text: string;
}

const decode = (s: string): string =>
  s
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'");

function words(file: string, page: number): Word[] {
  const html = execFileSync("pdftotext", ["-f", String(page), "-l", String(page), "-bbox", file, "-"], {
    encoding: "utf8",
    maxBuffer: 1 << 28,
  });
  return [...html.matchAll(/<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">([^<]*)<\/word>/g)].map((m) => ({
    x0: Number(m[1]),
    y0: Number(m[2]),
    x1: Number(m[3]),
    y1: Number(m[4]),
    text: decode(m[5]!),
  }));
}

function autoCols(ws: readonly Word[], gap: number): number[] {
  const spans = ws.map((w) => [w.x0, w.x1] as const).sort((a, b) => a[0] - b[0]);
  const cuts: number[] = [];
  let reach = Number.NEGATIVE_INFINITY;
  for (const [a, b] of spans) {
    if (reach > Number.NEGATIVE_INFINITY && a - reach >= gap) cuts.push((a + reach) / 2);
    reach = Math.max(reach, b);
  }
  return cuts;
}

function lineRows(ws: readonly Word[]): number[] {
  const sorted = [...ws].sort((a, b) => a.y0 - b.y0);
  const cuts: number[] = [];
  let bottom = Number.NEGATIVE_INFINITY;
  for (const w of sorted) {
    const mid = (w.y0 + w.y1) / 2;
    if (bottom > Number.NEGATIVE_INFINITY && mid > bottom) cuts.push((w.y0 + bottom) / 2);
    bottom = Math.max(mid > bottom ? w.y1 : bottom, bottom);
  }
  return cuts;
}

const [file, pageArg, regionArg, colsArg = "auto:6", rowsArg = "lines"] = process.argv.slice(2);
if (!file || !pageArg || !regionArg) {
  process.stderr.write("usage: node test/truth/draft-table.ts FILE PAGE X0,Y0,X1,Y1 [COLS] [ROWS]\n");
  process.exit(2);
}
const [rx0, ry0, rx1, ry1] = regionArg.split(",").map(Number) as [number, number, number, number];
const inRegion = words(file, Number(pageArg)).filter((w) => {
  const cx = (w.x0 + w.x1) / 2;
  const cy = (w.y0 + w.y1) / 2;
  return cx >= rx0 && cx <= rx1 && cy >= ry0 && cy <= ry1;
});
const cols = colsArg.startsWith("auto:") ? autoCols(inRegion, Number(colsArg.slice(5))) : colsArg.split(",").map(Number);
const rows = rowsArg === "lines" ? lineRows(inRegion) : rowsArg.split(",").map(Number);
const index = (cuts: readonly number[], v: number): number => cuts.filter((c) => c < v).length;
const grid: Word[][][] = Array.from({ length: rows.length + 1 }, () => Array.from({ length: cols.length + 1 }, () => []));
for (const w of inRegion) grid[index(rows, (w.y0 + w.y1) / 2)]![index(cols, (w.x0 + w.x1) / 2)]!.push(w);
const text = (cell: Word[]): string =>
  cell
    .sort((a, b) => (Math.abs(a.y0 - b.y0) > 0.5 * (a.y1 - a.y0) ? a.y0 - b.y0 : a.x0 - b.x0))
    .map((w) => w.text)
    .join(" ");
process.stderr.write(`columns cut at ${cols.map((c) => c.toFixed(1)).join(", ")}\n`);
process.stdout.write("[\n" + grid.map((r) => "  " + JSON.stringify(r.map(text))).join(",\n") + "\n]\n");
