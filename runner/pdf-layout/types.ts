/**
 * The shapes that flow through the layout pipeline (see index.ts for the pipeline itself).
 *
 * Every coordinate is in PDF points on the page as it is displayed: origin at the top-left corner,
 * y growing downwards, page rotation and crop box already applied (pdfjs' viewport transform).
 */

/** One run of text as pdfjs reports it, placed on the page. */
export interface TextItem {
  text: string;
  /** Left and right edges of the run. */
  x0: number;
  x1: number;
  /** Baseline. */
  base: number;
  /** Font size (the text matrix's vertical scale). */
  size: number;
  /** The font's PostScript name without the subset prefix ("LiberationSerif-Bold"). */
  font: string;
  bold: boolean;
  italic: boolean;
  /** Marked-content id ("p1R_mc4") that links the run to the structure tree, when tagged. */
  mcid: string | null;
  /** A glyph pdfjs has no Unicode for (typically a bullet in a symbol font): text is "". */
  opaque: boolean;
  /**
   * A space glyph is drawn just before the run, on its baseline: a word space, however little room
   * the producer left for it (the next word may even start back over the space).
   */
  spaceBefore?: boolean;
  /**
   * Parted from the run before it on its line by a move about its font's space wide, inside one
   * text-showing operator (glyphs.ts GlyphRun.spaceMove): a word space, or a tight table's next cell.
   */
  spaceMove?: boolean;
  /** Leader dots led from (or to) the run, and were taken off it (leaders.ts). */
  led?: boolean;
  /**
   * Drawn sideways (a column label turned 90°, a running head along the page's edge): x0–x1 and
   * base then stand for its bounding box (extract-worker.ts), whose top and bottom these are.
   */
  turned?: { top: number; bottom: number };
}

/** A straight horizontal or vertical line drawn on the page: a ruling line, a cell border. */
export interface Rule {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** A raster image placed on the page, as raw pixels from the worker (images.ts encodes it). */
export interface PageImage {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  width: number;
  height: number;
  channels: 1 | 3 | 4;
  pixels: Uint8Array;
}

/** A table read from the tagged-PDF structure tree: rows of cells, each a set of marked-content ids. */
export interface StructTable {
  rows: { mcids: string[]; header: boolean }[][];
}

/** What the extraction worker sends for one page. */
export interface RawPage {
  /** 1-based page number. */
  number: number;
  width: number;
  height: number;
  items: TextItem[];
  rules: Rule[];
  images: PageImage[];
  /** Image placements left out because the document's pixel budget was spent. */
  imagesOmitted: number;
  /** Heading level (1–6) by marked-content id, from H/H1…H6 structure elements. */
  headings: Record<string, number>;
  structTables: StructTable[];
}

/** Text items on one baseline, in reading order, with no gap wider than a word space or two. */
export interface Segment {
  items: TextItem[];
  x0: number;
  x1: number;
  base: number;
  /** Top and bottom of the glyph boxes (base − 0.8·size, base + 0.25·size). */
  top: number;
  bottom: number;
  size: number;
}

/** A table cell: its text lines, its grid position and span. */
export interface Cell {
  row: number;
  col: number;
  rowSpan: number;
  colSpan: number;
  /** The cell's text, one entry per line. */
  lines: Segment[];
  header: boolean;
}

export interface Table {
  kind: "structure" | "lattice" | "stream";
  rows: number;
  cols: number;
  cells: Cell[];
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  /** Column edges (cols + 1 values), for column widths. */
  colEdges: number[];
  /** Read right to left (its text is in a right-to-left script): column 0 is the rightmost. */
  rtl?: boolean;
}

export type ListKind = "bullet" | "number";

export interface Paragraph {
  type: "paragraph";
  lines: Segment[];
  /** 1–6 when the paragraph is a heading. */
  heading: number | null;
  list: { kind: ListKind; level: number } | null;
  align: "left" | "center" | "right" | "justify";
  /** Left indent and first-line offset (negative: hanging), in points. */
  indent: number;
  firstLine: number;
  /** Extra space above the paragraph beyond normal line spacing, in points. */
  spaceBefore: number;
  top: number;
  bottom: number;
}

/** An image ready for the document: its place on the page and its pixels as PNG (images.ts). */
export interface PngImage {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  png: Buffer;
}

export interface ImageBlock {
  type: "image";
  image: PngImage;
  top: number;
  bottom: number;
}

export interface TableBlock {
  type: "table";
  table: Table;
  top: number;
  bottom: number;
}

export type Block = Paragraph | ImageBlock | TableBlock;

/** One analysed page: its blocks in reading order. */
export interface PageLayout {
  number: number;
  width: number;
  height: number;
  blocks: Block[];
  /** The text's bounding box, for page margins. */
  frame: { x0: number; x1: number; top: number; bottom: number };
  /** Every text segment of the page in reading order (for the XLSX fallback sheet). */
  segments: Segment[][];
  /** The page begins with the rest of the previous page's last table, joined to it (continued.ts). */
  continued: boolean;
  /**
   * When `continued`: the table this page goes on with, where its rest stood in reading order (the
   * index in `blocks` of the block after it), and the text of the header rows the rest repeated,
   * which the joined table holds once.
   */
  rest?: { table: Table; at: number; header: string[][] };
}
