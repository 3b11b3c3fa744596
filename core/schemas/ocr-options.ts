/**
 * Options of `POST /v1/pdf/ocr` (issue #15): a scanned PDF or images (PNG, JPEG, TIFF) become a
 * searchable PDF — an invisible text layer over the original page images — by OCRmyPDF and
 * Tesseract. Languages are Tesseract codes; the runner image carries a documented set
 * (FOLIO_OCR_LANGUAGES), and asking for another is the job's `unsupported_input`.
 */
import { z } from "zod";

export const OcrOptions = z
  .strictObject({
    languages: z
      .array(z.string().regex(/^[a-z]{3}(_[a-z]{3,4})?$/, 'a Tesseract language code such as "eng", "deu" or "chi_sim"'))
      .min(1)
      .max(5)
      .default(["eng"])
      .meta({ description: "Languages on the pages, most frequent first (Tesseract codes)." }),
    deskew: z
      .boolean()
      .default(false)
      .meta({ description: "Straighten pages scanned askew (the output pages are the straightened images)." }),
    rotate_pages: z
      .boolean()
      .default(false)
      .meta({ description: "Turn pages scanned sideways or upside down upright (by the text's orientation)." }),
    skip_text: z.boolean().default(true).meta({
      description: "Leave pages that already have text as they are (default). false: rasterize every page and OCR it all again.",
    }),
    pdfa: z.boolean().default(false).meta({ description: "Write PDF/A-2b (validated) instead of a plain PDF." }),
  })
  .meta({ id: "OcrOptions" });
export type OcrOptions = z.infer<typeof OcrOptions>;
