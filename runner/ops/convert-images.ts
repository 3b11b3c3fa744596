/**
 * convert between images and PDF:
 *  - images → PDF: PNG, JPEG and TIFF inputs (every frame of a multi-page TIFF), one page each, in
 *    input order. A JPEG goes in untouched (DCTDecode, as img2pdf does: no loss, no decoding);
 *    anything else is decoded once to 8-bit gray or RGB (plus a soft mask for transparency) and
 *    Flate-compressed. `page_size: "image"` (default) makes each page the image's size at its
 *    resolution (96 DPI when the file does not say, as img2pdf); A4 and Letter fit the image in.
 *  - PDF → PNG or JPEG: each page rendered by poppler's pdftoppm at `dpi` (150), one image per
 *    page; several pages come back as one zip (stored: PNG and JPEG do not deflate), one page as
 *    the image itself. A page whose rendering would pass the image pixel limit is limit_exceeded
 *    before anything is rendered.
 */
import { availableParallelism } from "node:os";
import { readdir, rename } from "node:fs/promises";
import path from "node:path";
import { JobError } from "../../core/errors.ts";
import { parsePageRanges, resolvePageRanges, toQpdfRange } from "../../core/pages.ts";
import type { ConvertOptions } from "../../core/schemas/convert-options.ts";
import { CONTENT_TYPES, IMAGE_KINDS } from "../../core/sniff.ts";
import { exec } from "../engines/exec.ts";
import { commitOutput, discard, partialPath, stagingDir, type PdfOutputFile } from "./outfile.ts";
import { pageBoxes } from "../pdf/page-boxes.ts";
import { mapLimit } from "../pdf/outline.ts";
import { num, writePdf, type PdfPage } from "../pdf/pdf-writer.ts";
import { loadPdfImage, rasterInfo } from "../engines/raster.ts";
import { writeZip } from "../engines/zip.ts";
import type { OpContext, OpOutputFile, OpResult } from "./types.ts";

const PAGE_POINTS = { a4: [595.28, 841.89], letter: [612, 792] } as const;

/** Images → one PDF. */
export async function imagesToPdf(ctx: OpContext<ConvertOptions>): Promise<OpResult> {
  const pages: PdfPage[] = [];
  const images = new Map<string, () => ReturnType<typeof loadPdfImage>>();
  for (const input of ctx.inputs) {
    if (!IMAGE_KINDS.includes(input.kind)) {
      throw new JobError(
        "unsupported_input",
        `Input "${input.filename}" is not an image; several inputs convert to PDF only when all are images.`,
      );
    }
    const info = await rasterInfo(input.path, input.filename, ctx.limits.max_image_pixels);
    for (let frame = 0; frame < info.pages; frame++) {
      if (pages.length >= ctx.limits.max_pages)
        throw new JobError("limit_exceeded", `The images make more than ${ctx.limits.max_pages} pages.`);
      const name = `Im${images.size}`;
      images.set(name, () => loadPdfImage(input.path, ctx.limits.max_image_pixels, frame));
      const dpi = info.dpi ?? 96;
      const [iw, ih] = [(info.width * 72) / dpi, (info.height * 72) / dpi];
      const size = ctx.options.page_size ?? "image";
      if (size === "image") {
        pages.push({ width: iw, height: ih, content: `q ${num(iw)} 0 0 ${num(ih)} 0 0 cm /${name} Do Q` });
        continue;
      }
      // The paper turned to the image's orientation, the image fitted and centred.
      const [a, b] = PAGE_POINTS[size];
      const [pw, ph] = iw > ih ? [b, a] : [a, b];
      const k = Math.min(pw / iw, ph / ih);
      const [w, h] = [iw * k, ih * k];
      pages.push({
        width: pw,
        height: ph,
        content: `q ${num(w)} 0 0 ${num(h)} ${num((pw - w) / 2)} ${num((ph - h) / 2)} cm /${name} Do Q`,
      });
    }
  }
  const tmp = partialPath(ctx.outDir, ".pdf");
  try {
    await writePdf(tmp, { pages, opacities: new Set(), images });
    const filename = `${ctx.baseName}.pdf`;
    const out: PdfOutputFile = {
      path: await commitOutput(tmp, ctx.outDir, filename),
      filename,
      content_type: CONTENT_TYPES.pdf,
      pages: pages.length,
    };
    return { files: [out], figures: { source_format: ctx.inputs[0]!.kind, images: ctx.inputs.length, pages: pages.length } };
  } finally {
    await discard(tmp);
  }
}

/** The pages to render (1-based), in order, from the `pages` option. */
function pagesToRender(spec: string | undefined, count: number): number[] {
  if (spec === undefined) return Array.from({ length: count }, (_, i) => i + 1);
  const parsed = parsePageRanges(spec);
  const resolved = typeof parsed === "string" ? parsed : resolvePageRanges(parsed, count);
  if (typeof resolved === "string") throw new JobError("invalid_page_range", `Pages "${spec}": ${resolved}.`);
  return [...new Set(resolved.flat())].sort((x, y) => x - y);
}

/** PDF → one PNG or JPEG per page. */
export async function pdfToImages(ctx: OpContext<ConvertOptions>, format: "png" | "jpeg"): Promise<OpResult> {
  const input = ctx.inputs[0]!;
  const count = input.pages ?? 0;
  const dpi = ctx.options.dpi ?? 150;
  const wanted = pagesToRender(ctx.options.pages, count);
  const boxes = await pageBoxes(path.resolve(input.path), count, ctx.signal);
  for (const p of wanted) {
    const b = boxes[p - 1]!;
    const pixels = Math.ceil((b.cropWidth * dpi) / 72) * Math.ceil((b.cropHeight * dpi) / 72);
    if (pixels > ctx.limits.max_image_pixels) {
      throw new JobError(
        "limit_exceeded",
        `Page ${p} at ${dpi} DPI would be ${pixels.toLocaleString("en-US")} pixels; the limit is ${ctx.limits.max_image_pixels.toLocaleString("en-US")}.`,
      );
    }
  }
  const staging = await stagingDir(ctx.outDir);
  const zipTmp = partialPath(ctx.outDir, ".zip");
  try {
    const fmt = format === "png" ? ["-png"] : ["-jpeg", "-jpegopt", `quality=${ctx.options.quality ?? 85},optimize=y`];
    // Runs of consecutive pages, rendered by as many pdftoppm processes as there are cores.
    const runs = toQpdfRange(wanted)
      .split(",")
      .flatMap((r) => splitRun(r, Math.max(1, Math.ceil(wanted.length / availableParallelism()))));
    await mapLimit(runs, availableParallelism(), async ([first, last]) => {
      const res = await exec(
        "pdftoppm",
        ["-r", String(dpi), ...fmt, "-f", String(first), "-l", String(last), path.resolve(input.path), path.join(staging, "p")],
        {
          signal: ctx.signal,
        },
      );
      if (res.code !== 0) throw new JobError("invalid_pdf", "A page could not be rendered.");
    });
    const ext = format === "png" ? "png" : "jpg";
    const width = String(count).length;
    const rendered = (await readdir(staging)).filter((f) => f.startsWith("p-")).sort();
    if (rendered.length !== wanted.length) throw new Error(`pdftoppm wrote ${rendered.length} images, expected ${wanted.length}`);
    const files: OpOutputFile[] = [];
    for (const f of rendered) {
      const page = Number(/^p-0*(\d+)\./.exec(f)![1]);
      const filename = `${ctx.baseName}-${String(page).padStart(width, "0")}.${ext}`;
      const at = path.join(staging, filename);
      await rename(path.join(staging, f), at);
      files.push({ path: at, filename, content_type: CONTENT_TYPES[format] });
    }
    const figures = { source_format: "pdf", format, dpi, pages: wanted.length };
    if (files.length === 1) {
      const only = files[0]!;
      return { files: [{ ...only, path: await commitOutput(only.path, ctx.outDir, only.filename) }], figures };
    }
    await writeZip(
      zipTmp,
      files.map((f) => ({ path: f.path, name: f.filename })),
      { signal: ctx.signal },
    );
    const zipName = `${ctx.baseName}.zip`;
    return {
      files: [{ path: await commitOutput(zipTmp, ctx.outDir, zipName), filename: zipName, content_type: CONTENT_TYPES.zip }],
      figures,
    };
  } finally {
    await discard(staging, zipTmp);
  }
}

/** "3-40" → [[3, 21], [22, 40]] in pieces of at most `size` pages. */
function splitRun(range: string, size: number): [number, number][] {
  const [a, b] = range.split("-").map(Number) as [number, number | undefined];
  const last = b ?? a;
  const out: [number, number][] = [];
  for (let first = a; first <= last; first += size) out.push([first, Math.min(last, first + size - 1)]);
  return out;
}
