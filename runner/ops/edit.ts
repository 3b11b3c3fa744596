/**
 * edit: an ordered list of steps on one PDF (core/schemas/edit-options.ts) — rotate, delete,
 * select (reorder, extract), watermark and stamp (text or image), page numbers, header and footer,
 * flatten, metadata, unlock, repair — in ONE qpdf run, whatever the number of steps:
 *
 *   qpdf [--password-file=F] IN [--update-from-json=INFO] [--pages . LIST --] [--rotate=+A:PAGES]…
 *        [--underlay U --to=… --from=… --] [--overlay O --to=… --from=… --]
 *        [--generate-appearances --flatten-annotations=all] [--decrypt] OUT
 *
 * qpdf applies them in that order (page selection, rotation, under/overlay, transformations), and
 * the plan (edit-plan.ts) has already folded the steps into the final page list, so the order of
 * the client's steps is honoured. Marks are drawn into overlay/underlay PDFs (edit-draw.ts).
 * Inputs after the first are the images that watermark and stamp steps name by index.
 */
import { randomBytes } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { JobError } from "../../core/errors.ts";
import { toQpdfRange } from "../../core/pages.ts";
import type { EditOptions } from "../../core/schemas/edit-options.ts";
import { IMAGE_KINDS } from "../../core/sniff.ts";
import { commitOutput, discard, partialPath, type PdfOutputFile } from "./outfile.ts";
import { pageBoxes, type PageBox } from "../pdf/page-boxes.ts";
import { writePdf } from "../pdf/pdf-writer.ts";
import { blameInput, qpdf, QpdfError, type QpdfContext } from "../engines/qpdf.ts";
import { loadPdfImage, rasterInfo } from "../engines/raster.ts";
import { drawLayer, type Layer } from "./edit-draw.ts";
import { planEdit, type EditPlan } from "./edit-plan.ts";
import { documentInfoUpdate } from "./edit-info.ts";
import type { OpContext, OpDefinition, OpResult } from "./types.ts";

const file = (ctx: OpContext<EditOptions>, name: string): string => path.join(ctx.work, `${name}-${randomBytes(6).toString("hex")}`);

/** The input's page boxes; a document that needs its password is first decrypted for pdfinfo. */
async function boxesOf(ctx: OpContext<EditOptions>, qctx: QpdfContext, input: string, pages: number, pw: string[]): Promise<PageBox[]> {
  if (pw.length === 0) return pageBoxes(input, pages, ctx.signal);
  const open = file(ctx, "open.pdf");
  await qpdf(qctx, [...pw, input, "--decrypt", "--object-streams=preserve", open]);
  try {
    return await pageBoxes(open, pages, ctx.signal);
  } finally {
    await rm(open, { force: true });
  }
}

/** Image inputs by index (1…), with their sizes; checked against the pixel limit before decoding. */
async function stampImages(
  ctx: OpContext<EditOptions>,
): Promise<Map<number, { width: number; height: number; load: () => ReturnType<typeof loadPdfImage> }>> {
  const images = new Map<number, { width: number; height: number; load: () => ReturnType<typeof loadPdfImage> }>();
  for (const [i, input] of ctx.inputs.entries()) {
    if (i === 0) continue;
    if (!IMAGE_KINDS.includes(input.kind)) {
      throw new JobError(
        "unsupported_input",
        `Input "${input.filename}" is not a PNG, JPEG or TIFF image; edit takes one PDF and images for stamps.`,
      );
    }
    const info = await rasterInfo(input.path, input.filename, ctx.limits.max_image_pixels);
    images.set(i, { width: info.width, height: info.height, load: () => loadPdfImage(input.path, ctx.limits.max_image_pixels) });
  }
  return images;
}

/**
 * qpdf arguments for one layer: its PDF written into the work directory. A layer of one page (the
 * same stamp everywhere) is repeated (`--from= --repeat=1`) rather than listed once per page: a
 * `--from` of 5,000 ones costs qpdf about 5 % more CPU than `--repeat` on a 5,000-page document.
 */
async function layerArgs(ctx: OpContext<EditOptions>, flag: "--overlay" | "--underlay", layer: Layer | null): Promise<string[]> {
  if (!layer) return [];
  const pdf = file(ctx, `${flag.slice(2)}.pdf`);
  await writePdf(pdf, layer.doc);
  const from = layer.doc.pages.length === 1 ? ["--from=", "--repeat=1"] : [`--from=${toQpdfRange(layer.from)}`];
  return [flag, pdf, `--to=${toQpdfRange(layer.to)}`, ...from, "--"];
}

/** `--rotate=+A:PAGES` for each angle added to some output pages. */
function rotateArgs(plan: EditPlan): string[] {
  const byAngle = new Map<number, number[]>();
  for (const [i, p] of plan.pages.entries()) if (p.added) byAngle.set(p.added, [...(byAngle.get(p.added) ?? []), i + 1]);
  return [...byAngle].map(([angle, pages]) => `--rotate=+${angle}:${toQpdfRange(pages)}`);
}

/**
 * qpdf reads the content of every page it lays a mark over (to name the mark's resources apart
 * from the page's), and gives up on content that does not parse; its message names no file, so
 * blameInput leaves it an internal error. It is the input's damage (qpdf corpus
 * shared-images-errors.pdf): invalid_pdf.
 */
function unmarkable(err: unknown, filename: string): unknown {
  if (!(err instanceof QpdfError) || !/errors while decoding content stream/i.test(err.stderr)) return err;
  return new JobError("invalid_pdf", `Input "${filename}" has page content that cannot be read, so marks cannot be laid on it.`, {
    cause: err,
  });
}

export const edit: OpDefinition<EditOptions> = {
  operation: "edit",
  accepts: "any",
  minInputs: 1,
  maxInputs: 10,
  // One qpdf run, whose output is written last: the runner may start it before the input's page
  // tree is walked and throw the output away if the walk finds damage (engines/repair.ts openEarly).
  opensEarly: true,
  async run(ctx: OpContext<EditOptions>): Promise<OpResult> {
    const source = ctx.inputs[0]!;
    if (source.kind !== "pdf") throw new JobError("invalid_pdf", `Input "${source.filename}" is not a PDF; edit takes a PDF first.`);
    const qctx: QpdfContext = { qpdf: ctx.config.FOLIO_QPDF, work: ctx.work, signal: ctx.signal };
    const input = path.resolve(source.path);
    const images = await stampImages(ctx);
    const pw: string[] = [];
    if (ctx.options.password !== undefined) {
      const pwFile = file(ctx, "password");
      await writeFile(pwFile, ctx.options.password, { mode: 0o600, flag: "wx" });
      pw.push(`--password-file=${pwFile}`);
    }
    const count = source.pages ?? 0;
    const marked = ctx.options.steps.some((s) => ["watermark", "stamp", "page_numbers", "header_footer"].includes(s.type));
    // Page geometry (boxes and the pages' own /Rotate) is only needed to draw marks; a rotation
    // alone is relative (qpdf's --rotate=+angle adds to each page's /Rotate), so it reads none.
    const boxes = marked ? await boxesOf(ctx, qctx, input, count, pw) : null;
    const plan = planEdit(ctx.options, count, (src) => boxes?.[src - 1]?.rotate ?? 0, images.size);
    if (plan.pages.length > ctx.limits.max_pages) {
      throw new JobError(
        "limit_exceeded",
        `The edited document would have ${plan.pages.length} pages; the limit is ${ctx.limits.max_pages}.`,
      );
    }
    const args = [...pw, input];
    if (Object.keys(plan.info).length) {
      const update = file(ctx, "info.json");
      await writeFile(update, JSON.stringify(await documentInfoUpdate(qctx, pw, input, plan.info)), { flag: "wx" });
      args.push(`--update-from-json=${update}`);
    }
    if (plan.reordered) args.push("--pages", ".", toQpdfRange(plan.pages.map((p) => p.src)), "--");
    args.push(...rotateArgs(plan));
    if (boxes) {
      args.push(...(await layerArgs(ctx, "--underlay", drawLayer("under", plan.pages, boxes, images))));
      args.push(...(await layerArgs(ctx, "--overlay", drawLayer("over", plan.pages, boxes, images))));
    }
    if (plan.flatten) args.push("--generate-appearances", "--flatten-annotations=all");
    if (plan.decrypt) args.push("--decrypt");
    const tmp = partialPath(ctx.outDir, ".pdf");
    try {
      await qpdf(qctx, [...args, "--remove-unreferenced-resources=no", tmp]).catch((err: unknown) => {
        throw unmarkable(blameInput(err, ctx.inputs), source.filename);
      });
      const filename = `${ctx.baseName}.pdf`;
      const out: PdfOutputFile = {
        path: await commitOutput(tmp, ctx.outDir, filename),
        filename,
        content_type: "application/pdf",
        pages: plan.pages.length,
      };
      const marks = plan.pages.reduce((n, p) => n + p.marks.length, 0);
      const encrypted = source.encrypted || ctx.options.password !== undefined;
      return {
        files: [out],
        figures: {
          steps: ctx.options.steps.length,
          pages_in: count,
          pages: plan.pages.length,
          marks,
          encrypted: encrypted && !plan.decrypt,
        },
      };
    } finally {
      await discard(tmp);
    }
  },
};
