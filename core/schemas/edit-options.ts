/**
 * Options of `POST /v1/pdf/edit`: an ordered list of steps applied to one PDF, each seeing the
 * document the previous steps left (a page number stamped before a `delete` stays on the pages
 * that are kept; `{total}` counts the pages at the moment of its step).
 *
 * Where the issue is silent we follow what users of Gotenberg and Stirling-PDF expect: a
 * `watermark` is drawn behind the page's content, a `stamp` over it (Gotenberg's two words), and
 * positions are named after the nine points of a page, measured on the page as it is displayed
 * (after its /Rotate).
 */
import { z } from "zod";
import { PageRangeSpec } from "./page-range.ts";

/** Text drawn with the standard Helvetica font (WinAnsi: Latin-1 plus the typographic quotes, €, –, —). */
const WIN_ANSI_EXTRA = "€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ";
export const isWinAnsi = (s: string): boolean => [...s].every((c) => /[\u0020-\u007e\u00a0-\u00ff]/.test(c) || WIN_ANSI_EXTRA.includes(c));

const StampText = z
  .string()
  .min(1)
  .max(500)
  .refine(isWinAnsi, { message: "only Latin-1 text (plus € ‘ ’ “ ” – — •) can be drawn with the standard font" });

const Color = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'must be a color like "#808080"')
  .meta({ examples: ["#808080"] });

export const POSITIONS = ["center", "top-left", "top", "top-right", "left", "right", "bottom-left", "bottom", "bottom-right"] as const;
export const Position = z.enum(POSITIONS).meta({ description: "A point of the page as displayed (after its rotation)." });

const Pages = PageRangeSpec.optional().meta({ description: 'Pages the step applies to, e.g. "1-3,7" (default: all).' });

const RotateStep = z
  .strictObject({
    type: z.literal("rotate"),
    angle: z.union([z.literal(90), z.literal(180), z.literal(270), z.literal(-90)]).meta({ description: "Clockwise degrees." }),
    pages: Pages,
  })
  .meta({ id: "EditRotate", description: "Turn pages clockwise (the page's /Rotate; nothing is re-rendered)." });

const DeleteStep = z
  .strictObject({ type: z.literal("delete"), pages: PageRangeSpec })
  .meta({ id: "EditDelete", description: "Remove pages. Removing every page is invalid_page_range." });

const SelectStep = z
  .strictObject({
    type: z.literal("select"),
    pages: PageRangeSpec.meta({ description: 'The pages to keep, in this order: "3,1,2" reorders, "5-10" extracts; a page may repeat.' }),
  })
  .meta({ id: "EditSelect", description: "Reorder or extract pages." });

/** Watermarks and stamps: text or an image (another input of the job), placed at a position. */
const markShape = {
  text: StampText.optional().meta({ description: "The text to draw (one of text or image_input)." }),
  image_input: z.int().min(1).max(9).optional().meta({
    description: "Index in `inputs` (0-based; 0 is the PDF) of a PNG or JPEG to draw instead of text.",
  }),
  position: Position.default("center"),
  opacity: z.number().min(0).max(1).default(0.5),
  rotation: z.number().min(-360).max(360).default(0).meta({ description: "Counter-clockwise degrees around the mark's centre." }),
  font_size: z.number().min(4).max(400).default(48),
  color: Color.default("#808080"),
  image_width: z.number().gt(0).max(1).default(0.4).meta({ description: "Image width as a share of the page width." }),
  margin: z.number().min(0).max(500).default(36).meta({ description: "Distance from the page edges, in points." }),
  pages: Pages,
};
const exactlyOne = (s: { text?: string | undefined; image_input?: number | undefined }): boolean =>
  (s.text === undefined) !== (s.image_input === undefined);
const ONE_OF = { message: "give exactly one of text or image_input", path: ["text"] };

const WatermarkStep = z
  .strictObject({ type: z.literal("watermark"), ...markShape })
  .refine(exactlyOne, ONE_OF)
  .meta({ id: "EditWatermark", description: "Text or an image drawn behind the page's content." });
const StampStep = z
  .strictObject({ type: z.literal("stamp"), ...markShape })
  .refine(exactlyOne, ONE_OF)
  .meta({ id: "EditStamp", description: "Text or an image drawn over the page's content." });

/** Header and footer text: {n} is the page's number, {total} the count of numbered pages. */
const numberingShape = {
  start: z.int().min(0).max(1_000_000).default(1).meta({ description: "Number of the first numbered page." }),
  skip_first: z.boolean().default(false).meta({ description: "Leave the first page (a cover) unnumbered; numbering starts on page 2." }),
  font_size: z.number().min(4).max(72).default(10),
  color: Color.default("#000000"),
  margin: z.number().min(0).max(300).default(28).meta({ description: "Distance of the text's baseline area from the edge, in points." }),
  pages: Pages,
};
const Template = StampText.meta({ description: 'Text with placeholders: "Page {n} of {total}".' });

const PageNumbersStep = z
  .strictObject({
    type: z.literal("page_numbers"),
    format: Template.default("{n}"),
    position: z.enum(["top-left", "top", "top-right", "bottom-left", "bottom", "bottom-right"]).default("bottom"),
    ...numberingShape,
  })
  .meta({ id: "EditPageNumbers", description: "Page numbers, e.g. {format: 'Page {n} of {total}'}." });

const Band = z.strictObject({ left: Template.optional(), center: Template.optional(), right: Template.optional() });
const HeaderFooterStep = z
  .strictObject({ type: z.literal("header_footer"), header: Band.optional(), footer: Band.optional(), ...numberingShape })
  .refine((s) => s.header !== undefined || s.footer !== undefined, { message: "give a header, a footer or both", path: ["header"] })
  .meta({ id: "EditHeaderFooter", description: "Text in the header and footer bands (left, center, right), with {n} and {total}." });

const FlattenStep = z
  .strictObject({ type: z.literal("flatten") })
  .meta({ id: "EditFlatten", description: "Draw form fields and annotations into the page content; they can no longer be edited." });

const MetaValue = z.string().max(2000).nullable();
const MetadataStep = z
  .strictObject({
    type: z.literal("metadata"),
    title: MetaValue.optional(),
    author: MetaValue.optional(),
    subject: MetaValue.optional(),
    keywords: MetaValue.optional(),
    creator: MetaValue.optional(),
    producer: MetaValue.optional(),
  })
  .meta({ id: "EditMetadata", description: "Set (a string) or remove (null) document information entries; others are kept." });

const UnlockStep = z.strictObject({ type: z.literal("unlock") }).meta({
  id: "EditUnlock",
  description: "Write the output without encryption (give the top-level `password` if one is needed to open it).",
});

const RepairStep = z
  .strictObject({ type: z.literal("repair") })
  .meta({ id: "EditRepair", description: "Rewrite the file with a rebuilt cross-reference table (qpdf's recovery)." });

export const EditStep = z.discriminatedUnion("type", [
  RotateStep,
  DeleteStep,
  SelectStep,
  WatermarkStep,
  StampStep,
  PageNumbersStep,
  HeaderFooterStep,
  FlattenStep,
  MetadataStep,
  UnlockStep,
  RepairStep,
]);
export type EditStep = z.infer<typeof EditStep>;

export const EditOptions = z
  .strictObject({
    steps: z.array(EditStep).min(1).max(50).meta({ description: "Applied in order." }),
    password: z.string().min(1).max(127).optional().meta({
      description: "Opens an input protected with a user password (with `unlock`, the output has none). Never stored in job records.",
      writeOnly: true,
    }),
  })
  .meta({ id: "EditOptions" });
export type EditOptions = z.infer<typeof EditOptions>;
