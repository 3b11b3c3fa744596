/**
 * The options of every operation, exactly as API.md defines them. These zod schemas are the single
 * source of truth: the API validates requests with them, the OpenAPI document and the PdfJob CRD
 * are generated from them, and the runner re-validates the spec it is given.
 */
import { z } from "zod";
import { ConvertOptions } from "./convert-options.ts";
import { EditOptions } from "./edit-options.ts";
import { OcrOptions } from "./ocr-options.ts";
import { PageRangeSpec } from "./page-range.ts";

export const OPERATIONS = ["compress", "merge", "split", "convert", "protect", "edit", "ocr"] as const;
export const Operation = z.enum(OPERATIONS);
export type Operation = z.infer<typeof Operation>;

export { PageRangeSpec };

/**
 * Compression levels. The lossy levels only recompress images, downsampled to the target
 * resolution at their placed size on the page; text, fonts, forms, links and bookmarks are kept.
 */
export const COMPRESS_LEVELS = {
  lossless: { dpi: null, jpegQuality: null },
  low: { dpi: 200, jpegQuality: 85 },
  medium: { dpi: 150, jpegQuality: 75 },
  high: { dpi: 100, jpegQuality: 60 },
} as const;

export const CompressOptions = z
  .strictObject({
    level: z.enum(["lossless", "low", "medium", "high"]).default("medium").meta({
      description:
        "lossless: object streams and stream recompression only. low: images to 200 DPI, JPEG quality 85. medium: 150 DPI, quality 75. high: 100 DPI, quality 60.",
    }),
    linearize: z.boolean().default(false).meta({ description: "Write a linearized (fast web view) PDF." }),
  })
  .meta({ id: "CompressOptions" });
export type CompressOptions = z.infer<typeof CompressOptions>;

export const MergeOptions = z
  .strictObject({
    outline: z.enum(["keep", "per_file", "none"]).default("keep").meta({
      description: "keep: every input's bookmarks are kept; per_file: one bookmark per input, titled by its filename; none: no bookmarks.",
    }),
  })
  .meta({ id: "MergeOptions" });
export type MergeOptions = z.infer<typeof MergeOptions>;

export const SplitOptions = z
  .discriminatedUnion("mode", [
    z.strictObject({ mode: z.literal("ranges"), ranges: PageRangeSpec }),
    z.strictObject({ mode: z.literal("every"), every: z.int().min(1).max(100_000) }),
    z.strictObject({ mode: z.literal("pages") }),
  ])
  .meta({ id: "SplitOptions" });
export type SplitOptions = z.infer<typeof SplitOptions>;

export { ConvertOptions };

/**
 * PDF passwords. AES-256 (PDF 2.0, security handler revision 6) takes UTF-8 passwords of up to
 * 127 bytes (ISO 32000-2 §7.6.4.3.3); AES-128 (revision 4) takes PDFDocEncoding passwords of which
 * only the first 32 bytes count, so longer or unencodable ones are refused rather than truncated.
 */
const Password = z.string().min(1).max(127);
const utf8Length = (s: string): number => Buffer.byteLength(s, "utf8");

export const Permissions = z
  .strictObject({
    print: z.enum(["full", "low", "none"]).default("full"),
    modify: z.boolean().default(true),
    copy: z.boolean().default(true),
    annotate: z.boolean().default(true),
    fill_forms: z.boolean().default(true),
    assemble: z.boolean().default(true),
    accessibility: z.boolean().default(true),
  })
  .meta({ id: "Permissions" });

export const ProtectOptions = z
  .strictObject({
    user_password: Password.meta({ description: "Required to open the document.", writeOnly: true }),
    owner_password: Password.optional().meta({
      description: "Grants full access. Default: a random password that is never returned.",
      writeOnly: true,
    }),
    encryption: z.enum(["aes-256", "aes-128"]).default("aes-256"),
    permissions: Permissions.prefault({}),
  })
  .superRefine((o, ctx) => {
    for (const key of ["user_password", "owner_password"] as const) {
      const pw = o[key];
      if (pw === undefined) continue;
      if (o.encryption === "aes-256" && utf8Length(pw) > 127) {
        ctx.addIssue({ code: "custom", path: [key], message: "must be at most 127 bytes in UTF-8 for aes-256" });
      }
      // PDFDocEncoding covers Latin-1 closely enough for a conservative check.
      if (o.encryption === "aes-128" && (pw.length > 32 || /[^\u0020-\u007e\u00a1-\u00ff]/.test(pw))) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: "must be at most 32 Latin-1 characters for aes-128; use aes-256 for longer or non-Latin passwords",
        });
      }
    }
  })
  .meta({ id: "ProtectOptions" });
export type ProtectOptions = z.infer<typeof ProtectOptions>;

export const OPTIONS_SCHEMAS = {
  compress: CompressOptions,
  merge: MergeOptions,
  split: SplitOptions,
  convert: ConvertOptions,
  protect: ProtectOptions,
  edit: EditOptions,
  ocr: OcrOptions,
} as const;

export type OptionsOf<O extends Operation> = z.infer<(typeof OPTIONS_SCHEMAS)[O]>;

/** Removes the secrets from an operation's options (for job records, logs and webhooks). */
export function redactOptions(operation: Operation, options: Record<string, unknown>): Record<string, unknown> {
  if (operation === "edit") {
    const { password: _p, ...rest } = options;
    return rest;
  }
  if (operation !== "protect") return options;
  const { user_password: _u, owner_password: _o, ...rest } = options;
  return rest;
}
