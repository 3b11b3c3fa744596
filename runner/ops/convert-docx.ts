/**
 * PDF → DOCX writer: the analysed layout (runner/pdf-layout) as a Word document, with the `docx`
 * package. Everything is in the flow — paragraphs with Word's Heading styles, bullet lists with
 * Word numbering, real tables (merged cells as spans), inline images — never in positioned frames
 * or text boxes, so the result edits like a document someone typed. Each PDF page starts a new
 * page; the page size is the PDF's and the margins are those of its text.
 *
 * Numbered list items keep their number as text (with the list's hanging indent) rather than Word
 * auto-numbering: renumbering could change the document's words, and the text must stay exact.
 */
import { writeFile } from "node:fs/promises";
import {
  AlignmentType,
  Document,
  HeadingLevel,
  ImageRun,
  Packer,
  PageBreak,
  Paragraph,
  Table,
  TableBorders,
  TableCell,
  TableRow,
  TextRun,
  WidthType,
} from "docx";
import type { DocumentLayout } from "../pdf-layout/index.ts";
import { paragraphRuns } from "../pdf-layout/paragraphs.ts";
import { disjointCells } from "../pdf-layout/tables.ts";
import type { Cell, PngImage, PageLayout, Paragraph as LayoutParagraph, Table as LayoutTable } from "../pdf-layout/types.ts";

/** Points → twentieths of a point (twips), Word's unit for page geometry and spacing. */
const twips = (pt: number): number => Math.round(pt * 20);
const HEADINGS = [
  HeadingLevel.HEADING_1,
  HeadingLevel.HEADING_2,
  HeadingLevel.HEADING_3,
  HeadingLevel.HEADING_4,
  HeadingLevel.HEADING_5,
  HeadingLevel.HEADING_6,
] as const;
const ALIGN = {
  left: AlignmentType.LEFT,
  center: AlignmentType.CENTER,
  right: AlignmentType.RIGHT,
  justify: AlignmentType.JUSTIFIED,
} as const;

/** "LiberationSerif-BoldItalic" → "Liberation Serif"; "TimesNewRomanPSMT" → "Times New Roman". */
function fontFamily(psName: string): string | undefined {
  const base = psName
    .split(/[-,]/)[0]!
    .replace(/(PS)?MT$/, "")
    .replace(/PS$/, "");
  if (!base) return undefined;
  return base.replace(/([a-z])([A-Z])/g, "$1 $2");
}

function runsOf(p: LayoutParagraph): TextRun[] {
  return paragraphRuns(p).map(
    (r) =>
      new TextRun({ text: r.text, bold: r.bold, italics: r.italic, size: Math.max(2, Math.round(r.size * 2)), font: fontFamily(r.font) }),
  );
}

function paragraphOf(p: LayoutParagraph, pageBreak: boolean): Paragraph {
  const firstLine = p.firstLine > 1 ? { firstLine: twips(p.firstLine) } : p.firstLine < -1 ? { hanging: twips(-p.firstLine) } : {};
  const indent = p.list?.kind === "bullet" ? undefined : { left: twips(p.indent + (p.firstLine < -1 ? -p.firstLine : 0)), ...firstLine };
  return new Paragraph({
    children: runsOf(p),
    ...(p.heading ? { heading: HEADINGS[p.heading - 1] } : {}),
    ...(p.list?.kind === "bullet" ? { bullet: { level: p.list.level } } : {}),
    alignment: ALIGN[p.align],
    ...(indent && (indent.left > 0 || p.firstLine !== 0) ? { indent } : {}),
    spacing: { before: twips(p.spaceBefore), after: 0 },
    pageBreakBefore: pageBreak,
  });
}

function cellParagraph(cell: Cell): Paragraph {
  const pseudo: LayoutParagraph = {
    type: "paragraph",
    lines: cell.lines,
    heading: null,
    list: null,
    align: "left",
    indent: 0,
    firstLine: 0,
    spaceBefore: 0,
    top: 0,
    bottom: 0,
  };
  return new Paragraph({ children: runsOf(pseudo) });
}

function tableOf(t: LayoutTable, maxWidth: number): Table {
  const widths = t.colEdges.slice(1).map((x, i) => Math.max(12, x - t.colEdges[i]!));
  const scale = Math.min(1, maxWidth / widths.reduce((a, b) => a + b, 0));
  // Cells by row, grouped once (a table continued over many pages has thousands of rows); merged
  // areas never overlap (disjointCells), so no row is wider than the table.
  const byRow = new Map<number, Cell[]>();
  for (const c of disjointCells(t)) {
    const row = byRow.get(c.row);
    if (row) row.push(c);
    else byRow.set(c.row, [c]);
  }
  const rows: TableRow[] = [];
  for (let r = 0; r < t.rows; r++) {
    const cells = byRow.get(r);
    if (!cells) continue;
    rows.push(
      new TableRow({
        tableHeader: cells.every((c) => c.header),
        children: cells.map(
          (c) =>
            new TableCell({
              children: [cellParagraph(c)],
              columnSpan: c.colSpan,
              rowSpan: c.rowSpan,
              width: { size: twips(widths.slice(c.col, c.col + c.colSpan).reduce((a, b) => a + b, 0) * scale), type: WidthType.DXA },
            }),
        ),
      }),
    );
  }
  return new Table({
    rows,
    columnWidths: widths.map((w) => twips(w * scale)),
    width: { size: twips(widths.reduce((a, b) => a + b, 0) * scale), type: WidthType.DXA },
    ...(t.kind === "stream" ? { borders: TableBorders.NONE } : {}),
  });
}

function imageParagraph(im: PngImage, maxWidth: number, pageBreak: boolean): Paragraph {
  const scale = Math.min(1, maxWidth / (im.x1 - im.x0));
  // Word sizes inline images in pixels at 96 per inch.
  const px = (pt: number): number => Math.max(1, Math.round((pt * scale * 96) / 72));
  const run = new ImageRun({ type: "png", data: im.png, transformation: { width: px(im.x1 - im.x0), height: px(im.y1 - im.y0) } });
  return new Paragraph({ children: [run], pageBreakBefore: pageBreak });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const clampMargin = (pt: number): number => Math.max(18, Math.min(108, pt));

/** Page size and margins, from the first page's size and the median text frame. */
function pageSetup(pages: readonly PageLayout[]): {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
} {
  const first = pages[0]!;
  return {
    width: first.width,
    height: first.height,
    left: clampMargin(median(pages.map((p) => p.frame.x0))),
    right: clampMargin(median(pages.map((p) => p.width - p.frame.x1))),
    top: clampMargin(median(pages.map((p) => p.frame.top)) - 12),
    bottom: clampMargin(median(pages.map((p) => p.height - p.frame.bottom)) - 6),
  };
}

export interface DocxFigures {
  paragraphs: number;
  headings: number;
  tables: number;
  images: number;
  /** Images left out (past the document's image budget, unreadable, or on the textless pages of a scan-like PDF). */
  images_omitted: number;
}

/** Writes the layout as a DOCX file; checks the signal between pages. */
export async function writeDocx(layout: DocumentLayout, out: string, signal: AbortSignal): Promise<DocxFigures> {
  const setup = pageSetup(layout.pages);
  const maxWidth = setup.width - setup.left - setup.right;
  const children: (Paragraph | Table)[] = [];
  const figures: DocxFigures = { paragraphs: 0, headings: 0, tables: 0, images: 0, images_omitted: layout.imagesOmitted };
  for (const page of layout.pages) {
    signal.throwIfAborted();
    // A page that begins with the rest of a table flows on from it: Word breaks the table itself.
    let pageBreak = children.length > 0 && !page.continued;
    for (const block of page.blocks) {
      if (block.type === "paragraph") {
        children.push(paragraphOf(block, pageBreak));
        figures.paragraphs++;
        if (block.heading) figures.headings++;
      } else if (block.type === "table") {
        if (pageBreak) children.push(new Paragraph({ children: [new PageBreak()] }));
        children.push(tableOf(block.table, maxWidth));
        figures.tables++;
      } else {
        children.push(imageParagraph(block.image, maxWidth, pageBreak));
        figures.images++;
      }
      pageBreak = false;
    }
  }
  // A document that ends in a table needs a paragraph after it (OOXML: a body ends with w:p).
  children.push(new Paragraph({}));
  const doc = new Document({
    sections: [
      {
        properties: {
          page: {
            size: { width: twips(setup.width), height: twips(setup.height) },
            margin: { left: twips(setup.left), right: twips(setup.right), top: twips(setup.top), bottom: twips(setup.bottom) },
          },
        },
        children,
      },
    ],
  });
  signal.throwIfAborted();
  const bytes = await Packer.toBuffer(doc);
  // Packing cannot be interrupted: a deadline that passed meanwhile still ends the job.
  signal.throwIfAborted();
  await writeFile(out, bytes);
  return figures;
}
