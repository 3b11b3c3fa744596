/**
 * Options of `POST /v1/pdf/convert` (API.md lists `to`; issue #15 adds the rest, additively).
 * Every added field is optional without a default in the schema, so a job's echoed options show
 * what the client asked for; the runner applies the documented defaults.
 *
 * Directions: Office → PDF; PDF → DOCX/XLSX; HTML (a file, a zip with index.html and its assets),
 * Markdown or a `url` → PDF with Chromium; images → PDF; PDF → PNG/JPEG per page; PDF or Office →
 * PDF/A-1b, -2b or -3b, validated.
 */
import { z } from "zod";
import { PageRangeSpec } from "./page-range.ts";

export const CONVERT_TARGETS = ["docx", "xlsx", "pdf", "png", "jpeg", "pdf/a-1b", "pdf/a-2b", "pdf/a-3b"] as const;
export const PDFA_TARGETS = ["pdf/a-1b", "pdf/a-2b", "pdf/a-3b"] as const;
export type PdfaTarget = (typeof PDFA_TARGETS)[number];
export const isPdfa = (to: string): to is PdfaTarget => (PDFA_TARGETS as readonly string[]).includes(to);

export const PAPER_SIZES = {
  letter: [8.5, 11],
  legal: [8.5, 14],
  tabloid: [11, 17],
  a3: [11.69, 16.54],
  a4: [8.27, 11.69],
  a5: [5.83, 8.27],
} as const;

const Inches = z.number().min(0).max(10);

export const ConvertOptions = z
  .strictObject({
    to: z.enum(CONVERT_TARGETS).meta({ description: "The target format." }),
    // --- PDF → images
    dpi: z.int().min(10).max(600).optional().meta({ description: "PDF → PNG/JPEG: resolution (default 150)." }),
    quality: z.int().min(1).max(100).optional().meta({ description: "PDF → JPEG: quality (default 85)." }),
    pages: PageRangeSpec.optional().meta({ description: "PDF → PNG/JPEG: the pages to render (default: all)." }),
    // --- images → PDF
    page_size: z.enum(["image", "a4", "letter"]).optional().meta({
      description:
        "Images → PDF: a page the size of each image at its resolution (default; 96 DPI when it has none), or A4/Letter with the image fitted.",
    }),
    // --- PDF → DOCX/XLSX
    ocr: z
      .enum(["off", "auto"])
      .optional()
      .meta({ description: 'PDF → DOCX/XLSX: "auto" runs OCR first when the PDF has no text (a scan); default "off".' }),
    // --- HTML / Markdown / URL → PDF (Chromium)
    url: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .meta({ description: "A web page to convert instead of an input file. Its host and every sub-resource must be public addresses." }),
    paper_size: z
      .enum(Object.keys(PAPER_SIZES) as [keyof typeof PAPER_SIZES])
      .optional()
      .meta({ description: "Default a4." }),
    landscape: z.boolean().optional(),
    margins: z
      .strictObject({ top: Inches.optional(), right: Inches.optional(), bottom: Inches.optional(), left: Inches.optional() })
      .optional()
      .meta({ description: "In inches; default 0.4 each." }),
    scale: z.number().min(0.1).max(2).optional().meta({ description: "Rendering scale (default 1)." }),
    print_background: z.boolean().optional().meta({ description: "Print background colours and images (default false)." }),
    media: z.enum(["print", "screen"]).optional().meta({ description: "CSS media type to emulate (default print)." }),
    header_template: z.string().max(50_000).optional().meta({
      description:
        'HTML of the header on every page; elements with class "pageNumber", "totalPages", "title", "date" or "url" are filled in. Scripts do not run in it.',
    }),
    footer_template: z.string().max(50_000).optional().meta({ description: "HTML of the footer; see header_template." }),
    wait_for_selector: z.string().min(1).max(500).optional().meta({ description: "Wait until an element matches this CSS selector." }),
    wait_for_network_idle: z.boolean().optional().meta({ description: "Wait until no request has been in flight for 500 ms." }),
    wait_timeout: z.number().min(0).max(60).optional().meta({
      description:
        "Cap in seconds on waiting for the page (load, selector, network idle); default 10. Past it the page is printed as it is.",
    }),
  })
  .superRefine((o, ctx) => {
    const only = (keys: (keyof typeof o)[], when: boolean, what: string): void => {
      for (const k of keys)
        if (o[k] !== undefined && !when) ctx.addIssue({ code: "custom", path: [k], message: `only applies to ${what}` });
    };
    only(["dpi", "pages"], o.to === "png" || o.to === "jpeg", 'to: "png" or "jpeg"');
    only(["quality"], o.to === "jpeg", 'to: "jpeg"');
    only(["ocr"], o.to === "docx" || o.to === "xlsx", 'to: "docx" or "xlsx"');
    only(["url", "page_size"], o.to === "pdf" || isPdfa(o.to), 'to: "pdf" or PDF/A');
  })
  .meta({ id: "ConvertOptions" });
export type ConvertOptions = z.infer<typeof ConvertOptions>;
